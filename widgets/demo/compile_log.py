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
from PySide6.QtWidgets import QHeaderView, QTableWidget, QTableWidgetItem, QWidget

from widgets.common.tables import cell, read_only

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
        fit, stretch = QHeaderView.ResizeMode.ResizeToContents, QHeaderView.ResizeMode.Stretch
        modes = {col: stretch if column.key == "reason" else fit for col, column in enumerate(self.columns)}
        read_only(self, selection="rows", alternating=True, grid=False, row_height="line", column_resize=modes)
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

    def annotate(self, where: dict[str, Any], note: str, tooltip: str = "", *, key: str) -> bool:
        """Add ``note`` to column ``key``'s cell (the app: the compile's phases, ``CallRecord.compile_phases``) of the newest row whose cells show ``where``'s values (the
        columns named by its keys, formatted as in :meth:`add_row`), and ``tooltip`` on every cell of that
        row — e.g. a recorded compile's split (HLO passes / backend / other) on the step's compiling call.
        A second note on the same row replaces the first. Returns False when no row matches."""
        cols = {c.key: i for i, c in enumerate(self.columns)}
        if key not in cols or any(k not in cols for k in where):
            return False
        wanted = {cols[k]: self.columns[cols[k]].text(where) for k in where}
        for r in range(self.rowCount() - 1, -1, -1):
            if all((item := self.item(r, c)) is not None and item.text() == t for c, t in wanted.items()):
                target = cell(self, r, cols[key])
                base = target.data(Qt.ItemDataRole.UserRole) or target.text()
                target.setData(Qt.ItemDataRole.UserRole, base)
                target.setText(f"{base} ‖ {note}" if note else base)
                for c in range(self.columnCount()):
                    if (item := self.item(r, c)) is not None and tooltip:
                        item.setToolTip(tooltip)
                return True
        return False

    def rows(self) -> list[dict[str, str]]:
        """Every row as ``{column title: text}`` (for tests and exports)."""
        return [
            {col.title: (item.text() if (item := self.item(r, c)) else "") for c, col in enumerate(self.columns)}
            for r in range(self.rowCount())
        ]

    def paintEvent(self, event: Any) -> None:
        super().paintEvent(event)
        if self.rowCount() == 0:
            painter = QPainter(self.viewport())
            painter.setPen(QColor("#9ca3af"))
            painter.drawText(self.viewport().rect(), Qt.AlignmentFlag.AlignCenter, self._placeholder)
