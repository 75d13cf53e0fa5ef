"""Compile log: one row per compiling call, with why it compiled and where the time went.

Plain data in: the columns are objects with ``key``, ``title``, ``format(value)`` and ``align`` (the app
passes ``app.core.report.columns.COMPILE_COLUMNS``); :meth:`CompileLog.add_row` takes one dict keyed by those
keys (a ``reason`` key gets the stretching column and a tool tip with ``input_shapes``; ``disk_cache``
True is tinted green).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QPainter
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem, QWidget

MAX_ROWS = 5000
DISK_BRUSH = QBrush(QColor("#d1fae5"))
DISK_TEXT = QBrush(QColor("#065f46"))


class CompileLog(QTableWidget):
    """The table; newest row at the bottom (scrolled into view)."""

    def __init__(self, columns: Sequence[Any], parent: QWidget | None = None) -> None:
        super().__init__(0, len(columns), parent)
        self.columns = list(columns)
        self.setObjectName("compileLog")
        self.setHorizontalHeaderLabels([c.title for c in self.columns])
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setAlternatingRowColors(True)
        self.setShowGrid(False)
        self.setWordWrap(False)
        self.verticalHeader().setVisible(False)
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        header = self.horizontalHeader()
        for col, column in enumerate(self.columns):
            mode = QHeaderView.ResizeMode.Stretch if column.key == "reason" else QHeaderView.ResizeMode.ResizeToContents
            header.setSectionResizeMode(col, mode)
        self._placeholder = "Compiling calls appear here with the reason JAX compiled them."

    def add_row(self, row: dict[str, Any]) -> None:
        """Append one compiling call (the oldest row goes past :data:`MAX_ROWS`)."""
        if self.rowCount() >= MAX_ROWS:
            self.removeRow(0)
        r = self.rowCount()
        self.insertRow(r)
        shapes = ", ".join(f"{k} {tuple(v)}" for k, v in (row.get("input_shapes") or {}).items())
        for col, column in enumerate(self.columns):
            item = QTableWidgetItem(column.text(row))
            if column.align == "right":
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            if column.key == "reason":
                item.setToolTip(f"{item.text()}\n{shapes}" if shapes else item.text())
            if column.key == "disk_cache" and row.get("disk_cache"):
                item.setBackground(DISK_BRUSH)
                item.setForeground(DISK_TEXT)
            self.setItem(r, col, item)
        self.scrollToBottom()

    def rows(self) -> list[dict[str, str]]:
        """Every row as ``{column title: text}`` (for tests and exports)."""
        return [
            {col.title: (self.item(r, c).text() if self.item(r, c) else "") for c, col in enumerate(self.columns)}
            for r in range(self.rowCount())
        ]

    def paintEvent(self, event: Any) -> None:
        super().paintEvent(event)
        if self.rowCount() == 0:
            painter = QPainter(self.viewport())
            painter.setPen(QColor("#9ca3af"))
            painter.drawText(self.viewport().rect(), Qt.AlignmentFlag.AlignCenter, self._placeholder)
