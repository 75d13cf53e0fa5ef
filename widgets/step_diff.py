"""Prefill-versus-decode comparison: the primitive histogram of both steps, and two tables (per primitive,
per source line) with counts, output shapes and estimated flops side by side; rows that differ are
tinted and can be shown alone. Plain data in (``app.core.source_diff.DiffRow``-shaped rows: ``key,
a_count, b_count, a_shapes, b_shapes, a_flops, b_flops, status``). No JAX.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHeaderView,
    QLabel,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.core.units import flops as format_flops
from widgets.primitive_chart import PrimitiveChart

STATUS_COLORS = {"count": "#fce8e6", "shape": "#fef7e0", "only a": "#e6f4ea", "only b": "#e8f0fe"}


class _Num(QTableWidgetItem):
    def __init__(self, value: float, text: str) -> None:
        super().__init__(text)
        self.setData(Qt.UserRole, value)
        self.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)

    def __lt__(self, other: QTableWidgetItem) -> bool:
        return (self.data(Qt.UserRole) or 0) < (other.data(Qt.UserRole) or 0)


class StepDiff(QWidget):
    """``set_rows(primitive_rows, line_rows, counts, names=("prefill", "decode"))``.
    ``lineActivated(str, int)``: file and line of a double-clicked source-line row (GUI thread)."""

    lineActivated = Signal(str, int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.names = ("prefill", "decode")
        self.chart = PrimitiveChart()
        self.only_diff = QCheckBox("Only rows that differ")
        self.only_diff.setObjectName("onlyDifferences")
        self.summary = QLabel()
        self.tabs = QTabWidget()
        self.primitives = self._table("primitiveDiff")
        self.lines = self._table("lineDiff")
        self.tabs.addTab(self.primitives, "Per primitive")
        self.tabs.addTab(self.lines, "Per source line")
        bottom = QWidget()
        lay = QVBoxLayout(bottom)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.summary)
        lay.addWidget(self.only_diff)
        lay.addWidget(self.tabs)
        split = QSplitter(Qt.Vertical)
        split.addWidget(self.chart)
        split.addWidget(bottom)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split)
        self._line_rows: list[Any] = []
        self.only_diff.toggled.connect(self._apply_filter)
        self.lines.cellDoubleClicked.connect(self._on_line_double_clicked)

    def _table(self, name: str) -> QTableWidget:
        t = QTableWidget(0, 8)
        t.setObjectName(name)
        t.setEditTriggers(QAbstractItemView.NoEditTriggers)
        t.setSelectionBehavior(QAbstractItemView.SelectRows)
        t.setSortingEnabled(True)
        t.verticalHeader().setVisible(False)
        t.horizontalHeader().setSectionResizeMode(0, QHeaderView.Interactive)
        t.setColumnWidth(0, 380)
        return t

    def set_rows(self, primitive_rows: list[Any], line_rows: list[Any], counts: dict[str, dict[str, int]],
                 names: tuple[str, str] = ("prefill", "decode")) -> None:
        self.names = names
        self.chart.set_counts(counts)
        self._fill(self.primitives, primitive_rows, "Primitive")
        self._fill(self.lines, line_rows, "Module  source line  ATen op")
        self._line_rows = list(line_rows)
        n_diff = sum(r.status != "same" for r in line_rows)
        self.summary.setText(f"{len(line_rows)} source-line groups (layers folded), {n_diff} differ; "
                             f"{sum(r.status != 'same' for r in primitive_rows)} of {len(primitive_rows)} "
                             "primitives differ in count")
        self._apply_filter(self.only_diff.isChecked())

    def _fill(self, table: QTableWidget, rows: list[Any], first: str) -> None:
        a, b = self.names
        table.setSortingEnabled(False)
        table.clearContents()
        table.setRowCount(len(rows))
        table.setHorizontalHeaderLabels([first, f"{a} eqns", f"{b} eqns", f"{a} shapes", f"{b} shapes",
                                         f"{a} FLOPs", f"{b} FLOPs", "difference"])
        for r, row in enumerate(rows):
            status = row.status.replace("only a", f"only {a}").replace("only b", f"only {b}")
            items = [
                QTableWidgetItem(row.key), _Num(row.a_count, str(row.a_count)), _Num(row.b_count, str(row.b_count)),
                QTableWidgetItem(" ".join(row.a_shapes)), QTableWidgetItem(" ".join(row.b_shapes)),
                _Num(row.a_flops, format_flops(row.a_flops)), _Num(row.b_flops, format_flops(row.b_flops)),
                QTableWidgetItem(status),
            ]
            items[0].setData(Qt.UserRole, r)
            items[0].setToolTip(row.key)
            color = STATUS_COLORS.get(row.status)
            for c, item in enumerate(items):
                if color:
                    item.setBackground(QBrush(QColor(color)))
                table.setItem(r, c, item)
        table.setSortingEnabled(True)

    @Slot(bool)
    def _apply_filter(self, only: bool) -> None:
        for table in (self.primitives, self.lines):
            for r in range(table.rowCount()):
                status = table.item(r, 7).text() if table.item(r, 7) else "same"
                table.setRowHidden(r, only and status == "same")

    def visible_rows(self, table: QTableWidget) -> list[str]:
        return [table.item(r, 0).text() for r in range(table.rowCount()) if not table.isRowHidden(r)]

    @Slot(int, int)
    def _on_line_double_clicked(self, row: int, _col: int) -> None:
        index = self.lines.item(row, 0).data(Qt.UserRole)
        if index is not None and 0 <= index < len(self._line_rows):
            r = self._line_rows[index]
            self.lineActivated.emit(r.file, r.line)
