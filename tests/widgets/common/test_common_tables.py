"""The shared building blocks of widgets/common: the read-only table base (one sort rule: numbers numerically,
a missing number below every number; one read-only setup) and the splitter helper."""

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTreeWidget,
)

from widgets.common.splitters import splitter
from widgets.common.tables import MISSING, SortCell, SortTreeItem, read_only, sort_key


def _column(table: QTableWidget, col: int = 0) -> list[str]:
    return [table.item(r, col).text() for r in range(table.rowCount())]


def test_sort_key_numbers_missing_and_text():
    assert sort_key(3, numeric=True) == 3.0 and sort_key(None, numeric=True) == MISSING
    assert sort_key(None, numeric=False) == "" and sort_key("dce", numeric=False) == "dce"


def test_a_numeric_column_sorts_by_value_with_missing_numbers_below_every_number(qtbot):
    table = QTableWidget(0, 2)
    qtbot.addWidget(table)
    read_only(table)
    values = [900, None, 1200, 5, None]
    table.setRowCount(len(values))
    for i, v in enumerate(values):
        table.setItem(i, 0, SortCell("–" if v is None else f"{v:,}", v, numeric=True))
        table.setItem(i, 1, SortCell(str(i), f"row{i}"))
    table.setSortingEnabled(True)
    table.sortItems(0, Qt.SortOrder.AscendingOrder)
    assert _column(table) == ["–", "–", "5", "900", "1,200"]  # numerically, not "1,200" < "5" < "900"
    table.sortItems(0, Qt.SortOrder.DescendingOrder)
    assert _column(table) == ["1,200", "900", "5", "–", "–"]
    assert table.item(0, 0).textAlignment() == int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    table.sortItems(1, Qt.SortOrder.DescendingOrder)  # a text column: by the value's text
    assert _column(table, 1) == ["4", "3", "2", "1", "0"]


def test_a_tree_sorts_its_numeric_columns_by_value(qtbot):
    class Row(SortTreeItem):
        numeric_columns = (1,)

    tree = QTreeWidget()
    qtbot.addWidget(tree)
    tree.setColumnCount(2)
    read_only(tree, sorting=True)
    for name, value in (("a", 10.0), ("b", None), ("c", 2.0)):
        item = Row(tree, [name, "" if value is None else str(value)])
        item.setData(1, Qt.ItemDataRole.UserRole, value)
    tree.sortByColumn(1, Qt.SortOrder.AscendingOrder)
    assert [tree.topLevelItem(i).text(0) for i in range(3)] == ["b", "c", "a"]
    tree.sortByColumn(0, Qt.SortOrder.DescendingOrder)
    assert [tree.topLevelItem(i).text(0) for i in range(3)] == ["c", "b", "a"]


def test_read_only_setup(qtbot):
    table = QTableWidget(2, 3)
    qtbot.addWidget(table)
    read_only(table, alternating=True, grid=False, row_height="line", resize=QHeaderView.ResizeMode.Stretch,
              column_resize={0: QHeaderView.ResizeMode.ResizeToContents}, stretch_last=True)
    assert table.editTriggers() == QAbstractItemView.EditTrigger.NoEditTriggers
    assert table.selectionBehavior() == QAbstractItemView.SelectionBehavior.SelectRows
    assert table.selectionMode() == QAbstractItemView.SelectionMode.SingleSelection
    assert table.alternatingRowColors() and not table.showGrid() and not table.wordWrap()
    assert table.verticalHeader().isHidden() and not table.isSortingEnabled()
    assert table.verticalHeader().defaultSectionSize() == table.fontMetrics().height() + 6
    header = table.horizontalHeader()
    assert header.sectionResizeMode(0) == QHeaderView.ResizeMode.ResizeToContents
    assert header.sectionResizeMode(1) == QHeaderView.ResizeMode.Stretch and header.stretchLastSection()
    none = QTableWidget(1, 1)
    qtbot.addWidget(none)
    read_only(none, selection="none", row_header=True, row_height=20)
    assert none.selectionMode() == QAbstractItemView.SelectionMode.NoSelection
    assert none.focusPolicy() == Qt.FocusPolicy.NoFocus and not none.verticalHeader().isHidden()
    assert none.verticalHeader().defaultSectionSize() == 20


def test_splitter_builds_a_configured_splitter(qtbot):
    a, b = QLabel("a"), QLabel("b")
    split = splitter(Qt.Orientation.Vertical, a, b, sizes=[300, 100], stretch=[3, 1], name="testSplit")
    qtbot.addWidget(split)
    split.resize(200, 400)
    assert split.objectName() == "testSplit" and split.orientation() == Qt.Orientation.Vertical
    assert [split.widget(i) for i in range(split.count())] == [a, b]
    assert not split.childrenCollapsible()
    assert a.sizePolicy().verticalStretch() == 3 and b.sizePolicy().verticalStretch() == 1
    plain = splitter(Qt.Orientation.Horizontal, QLabel("c"), collapsible=True)
    qtbot.addWidget(plain)
    assert plain.childrenCollapsible() and plain.objectName() == ""
