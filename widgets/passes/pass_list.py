"""XLA's passes in pipeline order: one row per pass name and pipeline with its compile time (summed over its
runs), how many times it changed the module and the module's instruction and fusion counts after it; "Hide
passes that changed nothing" keeps the passes that wrote a snapshot. Click a column header to sort.

Plain data in: :meth:`PassList.set_rows` takes the dicts of ``app.core.passes.query.pass_rows`` (``pipeline``,
``pass``, ``index`` — dump index of its last snapshot or None —, ``changed``, ``ms``, ``runs``,
``n_instructions``, ``n_fusions``, ``fusion_kinds``). Signal (GUI thread): ``passSelected(dict)`` with the
row's dict when the current row changes.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QTableWidget,
    QVBoxLayout,
    QWidget,
)

from widgets.common.tables import SortCell, cell, read_only
from widgets.common.typed_qt import named

ROW_ROLE = Qt.ItemDataRole.UserRole + 1
#: The title of the column counting the module's fusions.
FUSIONS_TITLE = "fusions"
#: (key, title, numeric, tooltip)
COLUMNS: tuple[tuple[str, str, bool, str], ...] = (
    ("order", "#", True, "order of the pass's first run"),
    ("pipeline", "pipeline", False, "the HLO pass pipeline it ran in"),
    ("pass", "pass", False, "the HLO pass"),
    ("ms", "ms", True, "compile time of the pass, summed over its runs (profiler events)"),
    ("runs", "runs", True, "how many times the pass ran (fixpoint pipelines rerun passes)"),
    ("changed", "Δ", True, "snapshots the pass wrote: how many times it changed the module (blank: never)"),
    ("n_instructions", "instr.", True, "instructions in the module after the pass's last change"),
    ("n_fusions", FUSIONS_TITLE, True, "fusions in the module after the pass's last change"),
)

UNCHANGED_COLOR = QColor("#9e9e9e")


def _cell(key: str, value: Any) -> str:
    if value is None:
        return ""
    if key == "ms":
        return f"{value:.2f}" if value < 100 else f"{value:,.0f}"
    if key == "changed":
        return f"✓ {value}" if value else ""
    return f"{value:,}" if isinstance(value, int) else str(value)


class PassList(QWidget):
    """The pass table with its "hide passes that changed nothing" switch and a count."""

    passSelected = Signal(dict)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._rows: list[dict[str, Any]] = []
        self.hide_unchanged = named(QCheckBox("Hide passes that changed nothing"), "passHideUnchanged")
        self.hide_unchanged.setToolTip("Keep only the passes that changed the module (wrote a snapshot)")
        self.count = named(QLabel(""), "passCount")
        self.table = named(QTableWidget(0, len(COLUMNS)), "passTable")
        self.table.setHorizontalHeaderLabels([c[1] for c in COLUMNS])
        for j, (_, _, _, tip) in enumerate(COLUMNS):
            header = self.table.horizontalHeaderItem(j)
            assert header is not None, "setHorizontalHeaderLabels made it"
            header.setToolTip(tip)
        read_only(self.table, row_height=self.fontMetrics().height() + 6,
                  resize=QHeaderView.ResizeMode.Interactive, stretch_last=False)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.hide_unchanged)
        top.addStretch(1)
        top.addWidget(self.count)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(top)
        layout.addWidget(self.table, 1)
        self.hide_unchanged.toggled.connect(self._fill)
        self.table.currentCellChanged.connect(self._on_current)

    # -- public API ---------------------------------------------------------------------------------
    def set_rows(self, rows: list[dict[str, Any]]) -> None:
        """Show ``rows`` (pass rows, pipeline order)."""
        self._rows = [dict(r, order=i + 1) for i, r in enumerate(rows)]
        self._fill()

    def rows(self) -> list[dict[str, Any]]:
        """The rows shown, top to bottom."""
        return [cell(self.table, i, 0).data(ROW_ROLE) for i in range(self.table.rowCount())]

    def select_index(self, index: int) -> bool:
        """Select the row of the pass that wrote snapshot ``index`` (its last one, or failing that the row
        of that pass name and pipeline given by ``select_pass``). False when no row shows it."""
        for i in range(self.table.rowCount()):
            row = cell(self.table, i, 0).data(ROW_ROLE)
            if row.get("index") == index:
                self._select(i)
                return True
        return False

    def select_pass(self, pipeline: str, name: str) -> bool:
        """Select the row of pass ``name`` in ``pipeline`` (False when not shown)."""
        for i in range(self.table.rowCount()):
            row = cell(self.table, i, 0).data(ROW_ROLE)
            if row.get("pass") == name and _same(row.get("pipeline", ""), pipeline):
                self._select(i)
                return True
        return False

    def current_row(self) -> dict[str, Any] | None:
        item = self.table.item(self.table.currentRow(), 0) if self.table.currentRow() >= 0 else None
        return item.data(ROW_ROLE) if item is not None else None

    # -- internals ----------------------------------------------------------------------------------
    def _select(self, i: int) -> None:
        self.table.blockSignals(True)
        self.table.setCurrentCell(i, 0)
        self.table.blockSignals(False)
        self.table.scrollToItem(cell(self.table, i, 0), QAbstractItemView.ScrollHint.PositionAtCenter)

    @Slot()
    def _fill(self) -> None:
        rows = [r for r in self._rows if r.get("changed") or not self.hide_unchanged.isChecked()]
        table = self.table
        table.setSortingEnabled(False)
        table.blockSignals(True)
        table.setRowCount(len(rows))
        for i, row in enumerate(rows):
            for j, (key, _, numeric, _) in enumerate(COLUMNS):
                value = row.get(key)
                item = SortCell(_cell(key, value), value, numeric)
                if not row.get("changed"):
                    item.setForeground(UNCHANGED_COLOR)
                if j == 0:
                    item.setData(ROW_ROLE, row)
                if key in ("pipeline", "pass"):
                    item.setToolTip(str(value))
                if key == "n_fusions" and row.get("fusion_kinds"):
                    item.setToolTip(", ".join(f"{k} {n}" for k, n in sorted(row["fusion_kinds"].items())))
                table.setItem(i, j, item)
        table.blockSignals(False)
        table.setSortingEnabled(True)
        table.sortItems(0, Qt.SortOrder.AscendingOrder)
        table.resizeColumnsToContents()
        for j, (key, *_rest) in enumerate(COLUMNS):  # long pipeline and pass names: elided, full in the tooltip
            if key in ("pipeline", "pass"):
                table.setColumnWidth(j, min(table.columnWidth(j), 100 if key == "pipeline" else 130))
        changed = sum(1 for r in self._rows if r.get("changed"))
        self.count.setText(f"{len(rows)} of {len(self._rows)} passes · {changed} changed the module")

    @Slot(int, int, int, int)
    def _on_current(self, row: int, _col: int, _prev_row: int, _prev_col: int) -> None:
        item = self.table.item(row, 0) if row >= 0 else None
        if item is not None:
            self.passSelected.emit(dict(item.data(ROW_ROLE)))


def _same(a: str, b: str) -> bool:
    return a.replace("-", " ").replace("_", " ").lower() == b.replace("-", " ").replace("_", " ").lower()
