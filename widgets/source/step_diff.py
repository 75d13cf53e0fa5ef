"""Prefill-versus-decode comparison: two tables (per source line, per primitive) with counts, output
shapes and estimated flops side by side, and the primitive histogram of both steps. Rows whose shapes
differ only in the sequence length are told apart from structural differences (other primitives or
counts): each kind has its tint and its filter. Plain data in (``app.core.inspect.source_diff.DiffRow``-shaped
rows: ``key, a_count, b_count, a_shapes, b_shapes, a_flops, b_flops, status``, optionally
``primitive_change()``). No JAX.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.core.inspect.views import MODEL_STEPS
from app.core.units import flops as format_flops
from widgets.common.tables import SortCell, cell, read_only
from widgets.source.primitive_chart import PrimitiveChart

STATUS_COLORS = {"count": "#fce8e6", "ops": "#fce8e6", "shape": "#fef7e0", "seq": "#f4f6f8",
                 "only a": "#e6f4ea", "only b": "#e8f0fe"}
STATUS_TEXT = {"seq": "sequence length", "ops": "other ops", "count": "count", "shape": "shape", "same": "same"}
ROLE_STATUS = Qt.ItemDataRole.UserRole + 1


def _num(value: float, text: str) -> SortCell:
    """A count or FLOPs cell: right-aligned, sorting by ``value`` (its number also in ``Qt.UserRole``)."""
    item = SortCell(text, value, numeric=True)
    item.setData(Qt.ItemDataRole.UserRole, value)
    return item


class StepDiff(QWidget):
    """``set_rows(primitive_rows, line_rows, counts, names=MODEL_STEPS)``.
    ``lineActivated(str, int)``: file and line of a double-clicked source-line row (GUI thread)."""

    lineActivated = Signal(str, int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.names: tuple[str, str] = MODEL_STEPS
        self.chart = PrimitiveChart()
        self.only_diff = QCheckBox("Only rows that differ")
        self.only_diff.setObjectName("onlyDifferences")
        self.only_structural = QCheckBox("Only structural differences")
        self.only_structural.setObjectName("onlyStructural")
        self.only_structural.setToolTip("Hide rows whose shapes differ only in the sequence length")
        self.summary = QLabel()
        self.summary.setObjectName("diffSummary")
        self.summary.setWordWrap(True)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.primitives = self._table("primitiveDiff")
        self.lines = self._table("lineDiff")
        self.tabs.addTab(self.lines, "Per source line")
        self.tabs.addTab(self.primitives, "Per primitive")
        self.tabs.addTab(self.chart, "Histogram")
        filters = QHBoxLayout()
        filters.setContentsMargins(4, 0, 4, 0)
        filters.addWidget(self.only_diff)
        filters.addWidget(self.only_structural)
        filters.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 2, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.summary)
        layout.addLayout(filters)
        layout.addWidget(self.tabs, 1)
        self._line_rows: list[Any] = []
        self.only_diff.toggled.connect(self._apply_filter)
        self.only_structural.toggled.connect(self._apply_filter)
        self.lines.cellDoubleClicked.connect(self._on_line_double_clicked)

    def _table(self, name: str) -> QTableWidget:
        t = QTableWidget(0, 8)
        t.setObjectName(name)
        read_only(t, selection="rows", sorting=True, wrap=True, row_height="line",
                  column_resize={0: QHeaderView.ResizeMode.Interactive})
        t.setColumnWidth(0, 280)
        t.setTextElideMode(Qt.TextElideMode.ElideLeft)  # cut the module path, keep "file.py:243 · aten::op" (full in the tool tip)
        t.setMinimumHeight(t.verticalHeader().defaultSectionSize() * 6 + 30)  # header and ≥ 6 rows
        return t

    def set_rows(self, primitive_rows: list[Any], line_rows: list[Any], counts: dict[str, dict[str, int]],
                 names: tuple[str, str] = MODEL_STEPS, empty: str = "") -> None:
        """Show the comparison's rows; without rows, the summary says ``empty`` (why there is nothing)."""
        a, b = self.names = names
        self.chart.set_counts(counts)
        self._fill(self.primitives, primitive_rows, "Primitive")
        self._fill(self.lines, line_rows, "Module  source line  ATen op")
        self._line_rows = list(line_rows)
        seq = next((r.seq for r in line_rows if getattr(r, "seq", None)), None)
        n_seq = sum(r.status == "seq" for r in line_rows)
        n_struct = sum(r.status not in ("same", "seq") for r in line_rows)
        seq_text = f" ({a} {seq[0]} → {b} {seq[1]})" if seq else ""
        text = (
            f"<b>{len(line_rows)}</b> source-line groups (layers folded): <b>{n_struct}</b> differ in structure, "
            f"{n_seq} only in sequence length{seq_text}, {len(line_rows) - n_seq - n_struct} the same · "
            f"{sum(r.status != 'same' for r in primitive_rows)} of {len(primitive_rows)} primitives differ in count"
        )
        self.summary.setText(text if line_rows else empty)
        self._apply_filter()

    def _fill(self, table: QTableWidget, rows: list[Any], first: str) -> None:
        a, b = self.names
        table.setSortingEnabled(False)
        table.clearContents()
        table.setRowCount(len(rows))
        table.setHorizontalHeaderLabels([first, f"{a} eqns", f"{b} eqns", f"{a} shapes", f"{b} shapes",
                                         f"{a} FLOPs", f"{b} FLOPs", "difference"])
        for r, row in enumerate(rows):
            status: str = row.status
            text = STATUS_TEXT.get(status, status.replace("only a", f"only {a}").replace("only b", f"only {b}"))
            change = row.primitive_change() if hasattr(row, "primitive_change") else ""
            items = [
                QTableWidgetItem(row.key), _num(row.a_count, str(row.a_count)), _num(row.b_count, str(row.b_count)),
                QTableWidgetItem(" ".join(row.a_shapes)), QTableWidgetItem(" ".join(row.b_shapes)),
                _num(row.a_flops, format_flops(row.a_flops)), _num(row.b_flops, format_flops(row.b_flops)),
                QTableWidgetItem(f"{text}: {change}" if change else text),
            ]
            items[7].setData(ROLE_STATUS, status)
            items[7].setToolTip(f"{text}: {change}" if change else text)
            items[0].setData(Qt.ItemDataRole.UserRole, r)
            items[0].setToolTip(row.key)
            color = STATUS_COLORS.get(status)
            for c, item in enumerate(items):
                if color:
                    item.setBackground(QBrush(QColor(color)))
                table.setItem(r, c, item)
        table.setSortingEnabled(True)

    def status(self, table: QTableWidget, row: int) -> str:
        """The status of ``row`` (``same``, ``seq``, ``ops``, ``count``, ``shape``, ``only a``/``only b``)."""
        item = table.item(row, 7)
        return item.data(ROLE_STATUS) if item is not None else "same"

    @Slot()
    def _apply_filter(self, _checked: bool = False) -> None:
        only, structural = self.only_diff.isChecked(), self.only_structural.isChecked()
        for table in (self.primitives, self.lines):
            for r in range(table.rowCount()):
                status = self.status(table, r)
                table.setRowHidden(r, (only and status == "same") or (structural and status in ("same", "seq")))

    def visible_rows(self, table: QTableWidget) -> list[str]:
        return [cell(table, r, 0).text() for r in range(table.rowCount()) if not table.isRowHidden(r)]

    @Slot(int, int)
    def _on_line_double_clicked(self, row: int, _col: int) -> None:
        index = cell(self.lines, row, 0).data(Qt.ItemDataRole.UserRole)
        if index is not None and 0 <= index < len(self._line_rows):
            r = self._line_rows[index]
            self.lineActivated.emit(r.file, r.line)
