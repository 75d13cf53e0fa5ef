"""Compile log: one row per compiling call, with why it compiled and where the time went.

Plain data in: :meth:`CompileLog.add_record` reads a call record by attribute (``index``, ``step``,
``compiled``, ``compile_reason``, ``trace_ms``, ``lower_ms``, ``compile_ms``, ``persistent_cache_hit``,
``input_shapes``); calls that did not compile are ignored.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QPainter
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem, QWidget

from widgets.format import ms

COLUMNS = ("run", "call", "step", "why it compiled", "trace", "lower", "compile", "disk cache")
REASON_COLUMN = 3
MAX_ROWS = 5000
DISK_BRUSH = QBrush(QColor("#d1fae5"))
DISK_TEXT = QBrush(QColor("#065f46"))


class CompileLog(QTableWidget):
    """The table; newest row at the bottom (scrolled into view)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(0, len(COLUMNS), parent)
        self.setObjectName("compileLog")
        self.setHorizontalHeaderLabels(list(COLUMNS))
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setAlternatingRowColors(True)
        self.setShowGrid(False)
        self.setWordWrap(False)
        self.verticalHeader().setVisible(False)
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        header = self.horizontalHeader()
        for col in range(len(COLUMNS)):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(REASON_COLUMN, QHeaderView.ResizeMode.Stretch)
        self._placeholder = "Compiling calls appear here with the reason JAX compiled them."

    def add_record(self, run: str, record: Any) -> bool:
        """Append ``record`` under run label ``run`` if it compiled; returns whether a row was added."""
        if not getattr(record, "compiled", False):
            return False
        if self.rowCount() >= MAX_ROWS:
            self.removeRow(0)
        g = lambda name: getattr(record, name, None)
        hit = g("persistent_cache_hit")
        cells = (
            run,
            str(g("index")),
            str(g("step")),
            g("compile_reason") or "–",
            ms(g("trace_ms")),
            ms(g("lower_ms")),
            ms(g("compile_ms")),
            "◆ hit" if hit else ("miss" if hit is False else "–"),
        )
        row = self.rowCount()
        self.insertRow(row)
        shapes = ", ".join(f"{k} {tuple(v)}" for k, v in (g("input_shapes") or {}).items())
        for col, text in enumerate(cells):
            item = QTableWidgetItem(text)
            if col in (1, 4, 5, 6):
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            if col == REASON_COLUMN:
                item.setToolTip(f"{text}\n{shapes}" if shapes else text)
            if hit and col == len(cells) - 1:
                item.setBackground(DISK_BRUSH)
                item.setForeground(DISK_TEXT)
            self.setItem(row, col, item)
        self.scrollToBottom()
        return True

    def clear_log(self) -> None:
        self.setRowCount(0)

    def rows(self) -> list[dict[str, str]]:
        """Every row as ``{column title: text}`` (for tests and exports)."""
        return [
            {title: (self.item(r, c).text() if self.item(r, c) else "") for c, title in enumerate(COLUMNS)}
            for r in range(self.rowCount())
        ]

    def paintEvent(self, event: Any) -> None:
        super().paintEvent(event)
        if self.rowCount() == 0:
            painter = QPainter(self.viewport())
            painter.setPen(QColor("#9ca3af"))
            painter.drawText(self.viewport().rect(), Qt.AlignmentFlag.AlignCenter, self._placeholder)
