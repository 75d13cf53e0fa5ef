"""The read-only table base: one sortable cell (:class:`SortCell`) and tree row (:class:`SortTreeItem`) with
one sort rule, one setup of a read-only ``QTableWidget`` or ``QTreeWidget`` (:func:`read_only`), and the item
of a filled cell (:func:`cell`).

Sort rule (the one every read-only table and tree of the widgets sorts by):

- a numeric cell sorts by its number, not by its text (``"1,200"`` after ``"900"``);
- **a missing number (None) sorts below every number**: first in an ascending sort, last in a descending one
  (a profile sorted by µs / step, largest first, lists the rows without a figure at the bottom);
- any other cell sorts by its text (a :class:`SortCell` by the text of the value it was given; None: empty).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QTableView,
    QTableWidget,
    QTableWidgetItem,
    QTreeView,
    QTreeWidgetItem,
)

#: the sort value of a missing number: below every number
MISSING = -math.inf
RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
#: ``read_only(selection=…)``: one row at a time, rows (extended selection), or nothing (and no focus)
Selection = Literal["row", "rows", "none"]


def sort_key(value: Any, numeric: bool) -> float | str:
    """The value a cell sorts by: a number (``MISSING`` for None) in a numeric column, else text."""
    if numeric:
        return MISSING if value is None else float(value)
    return "" if value is None else str(value)


def less(mine: float | str, theirs: float | str) -> bool:
    """``mine < theirs`` under the module's sort rule (two numbers numerically, else as text)."""
    if isinstance(mine, float) and isinstance(theirs, float):
        return mine < theirs
    return str(mine) < str(theirs)


class SortCell(QTableWidgetItem):
    """A table cell showing ``text`` that sorts by ``value`` (the module's sort rule), not by its text.

    ``numeric``: ``value`` is a number or None, and the cell is right-aligned."""

    def __init__(self, text: str, value: Any, numeric: bool = False) -> None:
        super().__init__(text)
        self.sort_key = sort_key(value, numeric)
        if numeric:
            self.setTextAlignment(RIGHT)

    def __lt__(self, other: QTableWidgetItem) -> bool:
        return less(self.sort_key, getattr(other, "sort_key", other.text()))


class SortTreeItem(QTreeWidgetItem):
    """A tree row that sorts its ``numeric_columns`` by the number in their ``Qt.UserRole`` data (the module's
    sort rule: None below every number) and every other column by its text. Subclasses name the columns."""

    numeric_columns: tuple[int, ...] = ()

    def __lt__(self, other: QTreeWidgetItem) -> bool:
        col = self.treeWidget().sortColumn() if self.treeWidget() else 0
        if col in self.numeric_columns:
            role = Qt.ItemDataRole.UserRole
            return less(sort_key(self.data(col, role), True), sort_key(other.data(col, role), True))
        return self.text(col) < other.text(col)


def read_only(
    view: QTableView | QTreeView,
    *,
    selection: Selection = "row",
    sorting: bool = False,
    alternating: bool = False,
    grid: bool = True,
    wrap: bool = False,
    row_header: bool = False,
    row_height: int | Literal["line"] | None = None,
    resize: QHeaderView.ResizeMode | None = None,
    column_resize: Mapping[int, QHeaderView.ResizeMode] | None = None,
    stretch_last: bool | None = None,
) -> None:
    """Set ``view`` up as a read-only table (or tree): no edit triggers and ``selection`` (``"row"``: whole
    rows, one at a time; ``"rows"``: whole rows, several; ``"none"``: no selection and no focus); ``sorting``
    by a header click; ``alternating`` row colours; the cell ``grid`` and word ``wrap`` (tables); the row
    header shown or not and a fixed ``row_height`` (px, or ``"line"``: a line of text and 6 px; None: Qt's)
    of a table's rows; the column header's ``resize`` mode for every section, ``column_resize`` for some,
    and whether it stretches its last section (None leaves Qt's default)."""
    view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    if selection == "none":
        view.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        view.setFocusPolicy(Qt.FocusPolicy.NoFocus)
    else:
        view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        if selection == "row":
            view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    view.setSortingEnabled(sorting)
    view.setAlternatingRowColors(alternating)
    view.setWordWrap(wrap)
    if isinstance(view, QTableView):
        view.setShowGrid(grid)
        view.verticalHeader().setVisible(row_header)
        if row_height is not None:
            height = view.fontMetrics().height() + 6 if row_height == "line" else row_height
            view.verticalHeader().setDefaultSectionSize(height)
        header = view.horizontalHeader()
    else:
        header = view.header()
    if resize is not None:
        header.setSectionResizeMode(resize)
    for col, mode in (column_resize or {}).items():
        header.setSectionResizeMode(col, mode)
    if stretch_last is not None:
        header.setStretchLastSection(stretch_last)


def cell(table: QTableWidget, row: int, column: int) -> QTableWidgetItem:
    """The item of cell (``row``, ``column``), which the table's filling gave one: each table here sets an
    item in every cell of a row it adds (``QTableWidget.item`` types every cell as possibly empty)."""
    item = table.item(row, column)
    name = table.objectName() or type(table).__name__
    assert item is not None, f"{name}: cell ({row}, {column}) has no item"
    return item
