"""Sortable table of profile rows: µs per step, % of the step, achieved GB/s and GFLOP/s, calls, kind,
source line and module. A "top 10" switch keeps the ten rows that take the most wall time.

Plain data in: the columns (objects with ``key``, ``title``, ``format(value) -> str`` and ``align``: the
profile's one column table, ``app.core.profile.columns.PROFILE_COLUMNS``) and the first column's title per
aggregation (``BY_TITLES``) are given to the constructor; :meth:`ProfileTable.set_rows` takes one dict per row with the keys of
``app.core.profile.model.ProfileRow`` (``key``, ``us_per_step``, ``wall_us_per_step``, ``share``,
``gbs``, ``bandwidth_share``, ``gflops``, ``calls_per_step``, ``kind``, ``source``, ``module``, …); missing
figures show as ``–`` and sort below every number. Signals (GUI thread): ``rowActivated(dict)`` with the
row's dict when a row is double-clicked or Enter is pressed on it; ``rowSelected(dict)`` with the row's dict
when the user selects a row (a click, the arrow keys), not when the rows are refilled.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.core.units import csv_text
from widgets.common.tables import SortCell, cell, read_only
from widgets.common.typed_qt import named

TOP_N = 10
ROW_ROLE = Qt.ItemDataRole.UserRole + 1


class ProfileTable(QWidget):
    """The rows of one aggregation (``by``), sortable by any column (click a header).

    Signals: ``rowActivated(dict)`` — the activated row's dict (double-click, Enter); ``rowSelected(dict)`` —
    the row the user selected (a click, the arrow keys); both on the GUI thread."""

    rowActivated = Signal(dict)
    rowSelected = Signal(dict)

    def __init__(self, columns: Sequence[Any], by_titles: dict[str, str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("profileTable")
        #: (row key, header, formatter, numeric?) of every column, left to right; column 0's header follows ``by``.
        self.columns = [(c.key, c.title, c.format, c.align == "right") for c in columns]
        self.by_titles = dict(by_titles)
        #: each column's meaning (``help``), shown as its header's tool tip
        self.helps = [getattr(c, "help", "") for c in columns]
        self.top_only = named(QCheckBox(f"top {TOP_N} only"), "profileTopOnly")
        self.count = named(QLabel(""), "profileRowCount")
        self.table = named(QTableWidget(0, len(self.columns)), "profileTableView")
        read_only(self.table, alternating=True, resize=QHeaderView.ResizeMode.Interactive, stretch_last=True)
        top = QHBoxLayout()
        top.addWidget(self.count, 1)
        top.addWidget(self.top_only)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.table, 1)
        self._rows: list[dict[str, Any]] = []
        self._by = "line"
        self._filling = False
        self.top_only.toggled.connect(self._on_top_toggled)
        self.table.itemActivated.connect(self._on_item_activated)
        self.table.itemSelectionChanged.connect(self._on_selection_changed)
        self._set_headers()

    def set_rows(self, rows: list[dict[str, Any]], by: str = "line") -> None:
        """Show ``rows`` (dicts, see the module docstring), aggregated ``by`` ``line``/``op``/``fusion``/
        ``module`` (the first column's title). Sorted by µs / step, largest first."""
        self._rows = [dict(r) for r in rows]
        self._by = by
        self._set_headers()
        self._fill()

    def rows(self) -> list[dict[str, Any]]:
        """The rows shown, top to bottom (after sorting and the top-10 filter)."""
        return [cell(self.table, i, 0).data(ROW_ROLE) for i in range(self.table.rowCount())]

    def set_top_only(self, on: bool) -> None:
        self.top_only.setChecked(on)

    def sort_by(self, key: str, descending: bool = True) -> None:
        """Sort by the column of row key ``key`` (as clicking its header does)."""
        col = [c[0] for c in self.columns].index(key)
        order = Qt.SortOrder.DescendingOrder if descending else Qt.SortOrder.AscendingOrder
        self.table.sortItems(col, order)
        self.table.horizontalHeader().setSortIndicator(col, order)

    def activate_row(self, index: int) -> None:
        """Emit ``rowActivated`` for shown row ``index`` (keyboard and tests)."""
        self._on_item_activated(self.table.item(index, 0))

    # -- export -------------------------------------------------------------------------------------
    def csv_text(self, shown_only: bool = False) -> str:
        """CSV of the rows (all, or only those shown); lists joined with spaces, missing values empty."""
        rows = self.rows() if shown_only else self._rows
        keys = list(dict.fromkeys(k for r in rows for k in r)) or [c[0] for c in self.columns]
        return csv_text(keys, ([r.get(k) for k in keys] for r in rows))

    def json_text(self, shown_only: bool = False) -> str:
        """JSON list of the rows (all, or only those shown)."""
        return json.dumps(self.rows() if shown_only else self._rows, indent=1)

    def export(self, path: str | Path, shown_only: bool = False) -> Path:
        """Write the rows to ``path``: JSON for ``.json``, else CSV. Returns the path; raises OSError."""
        path = Path(path)
        text = self.json_text(shown_only) if path.suffix.lower() == ".json" else self.csv_text(shown_only)
        path.write_text(text, encoding="utf-8")
        return path

    # -- internals ----------------------------------------------------------------------------------
    def _set_headers(self) -> None:
        titles = [self.by_titles.get(self._by, self._by)] + [c[1] for c in self.columns[1:]]
        self.table.setHorizontalHeaderLabels(titles)
        for j, text in enumerate(self.helps):
            if text and (item := self.table.horizontalHeaderItem(j)) is not None:
                item.setToolTip(text)

    def _fill(self) -> None:
        self._filling = True  # a refill's selection changes are no user's choice
        try:
            self._fill_rows()
        finally:
            self._filling = False

    def _fill_rows(self) -> None:
        rows = sorted(self._rows, key=lambda r: -(r.get("wall_us_per_step") or r.get("us_per_step") or 0.0))
        if self.top_only.isChecked():
            rows = rows[:TOP_N]
        self.table.clearSelection()
        self.table.setSortingEnabled(False)
        self.table.setRowCount(len(rows))
        for i, row in enumerate(rows):
            for j, (key, _, formatter, numeric) in enumerate(self.columns):
                value = row.get(key)
                item = SortCell(formatter(value), value, numeric)
                if j == 0:
                    item.setData(ROW_ROLE, row)
                    item.setToolTip(str(value))
                self.table.setItem(i, j, item)
        self.table.setSortingEnabled(True)
        self.sort_by("us_per_step")
        self.table.resizeColumnsToContents()
        self.count.setText(f"{len(rows)} of {len(self._rows)} rows")

    @Slot(bool)
    def _on_top_toggled(self, _on: bool) -> None:
        self._fill()

    @Slot()
    def _on_selection_changed(self) -> None:
        items = self.table.selectedItems()
        if self._filling or not items:
            return
        row = cell(self.table, items[0].row(), 0).data(ROW_ROLE)
        if row is not None:
            self.rowSelected.emit(dict(row))

    @Slot(QTableWidgetItem)
    def _on_item_activated(self, item: QTableWidgetItem | None) -> None:
        if item is None:
            return
        row = cell(self.table, item.row(), 0).data(ROW_ROLE)
        if row is not None:
            self.rowActivated.emit(dict(row))

