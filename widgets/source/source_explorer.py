"""Structure explorer of a source map: module → source line → ATen op → equations, with counts, estimated
flops and output shapes; sortable, searchable, layers foldable. With a profile of the shown step
(:meth:`SourceExplorer.set_measure`) it adds measured columns — µs per step, % of the step, achieved GB/s —
per ATen op, line and module, and a row for the time on no line of the map.

Plain data in (an ``app.core.inspect.source_map.SourceMap``-shaped object: ``groups``, ``equations``,
``group_lines(group, view)``, ``groups_for_line(view, line)``, ``fold_layers()``); no JAX. Links both ways:
selecting a node emits the lines to highlight in each IR view; :meth:`select_for_line` selects the node of a
line clicked in an IR view. Signals are emitted on the GUI thread.
"""

from __future__ import annotations

import linecache
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QPlainTextEdit,
    QTreeWidget,
    QTreeWidgetItem,
    QTreeWidgetItemIterator,
    QVBoxLayout,
    QWidget,
)

from app.core.inspect.views import HLO, JAXPR, JAXPR_SOURCE, STABLEHLO
from app.core.units import short_file, source_label
from widgets.common.splitters import splitter
from widgets.common.tables import read_only
from widgets.source.source_rows import (  # noqa: F401  (the column and role constants are this view's API)
    COLUMNS,
    GBS_COL,
    MEASURED_TIPS,
    NUMERIC_COLS,
    ROLE_EQNS,
    ROLE_GROUPS,
    ROLE_KIND,
    ROLE_MEASURED,
    SHARE_COL,
    US_COL,
    aggregate,
    fill_counts,
    module_item,
    new_item,
    rest_item,
    to_ranges,
)


class SourceExplorer(QWidget):
    """``linesSelected(dict)``: view name → list of ``(first, last)`` line ranges to highlight.
    ``equationsSelected(list)``: equation indexes of the selected node (for the dataflow graph).
    ``sourceLineSelected(str, int)``: Python file and line of the selected node (0 if none).

    Measured columns: :meth:`set_measure` takes ``measure(shown_map)`` returning an object with
    ``groups`` (group index → object with ``busy_us``, ``wall_us``, ``bytes``, ``share``) and ``rest``
    (same fields), e.g. :func:`app.core.profile.source.measure_source_map` bound to a profile; it is
    called again whenever the tree is rebuilt (folding layers)."""

    linesSelected = Signal(dict)
    equationsSelected = Signal(list)
    sourceLineSelected = Signal(str, int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._map: Any = None
        self._shown: Any = None
        self._eqn_items: dict[int, QTreeWidgetItem] = {}
        self._group_items: dict[int, QTreeWidgetItem] = {}
        self._measure: Callable[[Any], Any] | None = None
        self.search = QLineEdit(placeholderText="Search modules, lines, ops, primitives…", clearButtonEnabled=True)
        self.search.setObjectName("sourceSearch")
        self.fold = QCheckBox("Fold repeated layers")
        self.fold.setObjectName("foldLayers")
        self.tree = QTreeWidget()
        self.tree.setObjectName("sourceTree")
        self.tree.setColumnCount(len(COLUMNS))
        self.tree.setHeaderLabels(list(COLUMNS))
        read_only(self.tree, sorting=True, column_resize={0: QHeaderView.ResizeMode.Interactive})
        self.tree.sortByColumn(-1, Qt.SortOrder.AscendingOrder)
        self.tree.setUniformRowHeights(True)
        self.tree.setColumnWidth(0, 320)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideLeft)  # "…/masking_utils.py:243  fn": the line stays
        self.tree.installEventFilter(self)  # a wider tree (the Inspect workspace) widens the name column
        for col, tip in MEASURED_TIPS.items():
            self.tree.headerItem().setToolTip(col, tip)
            self.tree.header().moveSection(self.tree.header().visualIndex(col), col - 3)  # after Name
            self.tree.setColumnWidth(col, 70 if col == US_COL else 62)
            self.tree.setColumnHidden(col, True)
        self.source = QPlainTextEdit(readOnly=True)
        self.source.setObjectName("pythonSource")
        self.source.setMaximumBlockCount(200)
        self.source.setPlaceholderText("Select a source line to see the Python code")
        top = QHBoxLayout()
        top.addWidget(self.search, 1)
        top.addWidget(self.fold)
        self.source.setMinimumHeight(48)  # may shrink below its size hint: the tree comes first
        # the tree gets most of a short tab; the source pane shows ~7 lines
        split = splitter(Qt.Orientation.Vertical, self.tree, self.source, sizes=[400, 100], stretch=[4, 1], collapsible=True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(split)
        self.search.textChanged.connect(self._on_search)
        self.fold.toggled.connect(self._on_fold)
        self.tree.itemSelectionChanged.connect(self._on_selection)

    # ------------------------------------------------------------------ data
    def set_source_map(self, source_map: Any) -> None:
        """Show ``source_map`` (``None`` clears). Keeps the fold setting."""
        self._map = source_map
        self._rebuild()

    def set_measure(self, measure: Callable[[Any], Any] | None, rebuild: bool = True) -> None:
        """Show measured columns computed by ``measure(shown_map)`` (None, or ``measure`` returning None,
        hides them); rebuilds the tree unless ``rebuild`` is False (then at the next rebuild)."""
        self._measure = measure
        if rebuild:
            self._rebuild()

    def has_measure(self) -> bool:
        """True while the tree shows measured columns."""
        return not self.tree.isColumnHidden(US_COL)

    def shown_map(self) -> Any:
        """The map the tree shows (the folded one when layers are folded)."""
        return self._shown

    def _rebuild(self) -> None:
        self.tree.clear()
        self._eqn_items.clear()
        self._group_items.clear()
        self.source.clear()
        sm = self._map
        if sm is None:
            self._shown = None
            for col in MEASURED_TIPS:
                self.tree.setColumnHidden(col, True)
            return
        self._shown = sm.fold_layers() if self.fold.isChecked() else sm
        self.tree.setSortingEnabled(False)
        modules: dict[str, QTreeWidgetItem] = {}
        lines: dict[tuple, QTreeWidgetItem] = {}
        for gi, g in enumerate(self._shown.groups):
            mod_item = module_item(self.tree, g.module, modules)
            line_key = (g.module, g.file, g.line)
            line_item = lines.get(line_key)
            if line_item is None:
                text = f"{source_label(g.file, g.line)}  {g.function}" if g.file else "(no source)"
                line_item = lines[line_key] = new_item(mod_item, text, "line")
                line_item.setData(0, ROLE_EQNS, (g.file, g.line))
            label = g.scope or "(no ATen scope)"
            if g.repeats > 1:
                label += f"  ×{g.repeats}"
            op_item = new_item(line_item, label, "group")
            op_item.setData(0, ROLE_GROUPS, [gi])
            self._group_items[gi] = op_item
            fill_counts(op_item, len(g.equations), g.flops, g.out_shapes)
            for ei in g.equations:
                e = self._shown.equations[ei]
                eq_item = new_item(op_item, f"#{ei} {e.primitive}", "eqn")
                eq_item.setData(0, ROLE_GROUPS, [gi])
                eq_item.setData(0, ROLE_EQNS, [ei])
                fill_counts(eq_item, 1, e.flops, e.out_shapes)
                self._eqn_items[ei] = eq_item
        measured = self._measure(self._shown) if self._measure is not None else None
        if measured is not None:
            for gi, item in self._group_items.items():
                m = measured.groups.get(gi)
                item.setData(0, ROLE_MEASURED, [m.busy_us, m.wall_us, m.bytes, m.share] if m else [0.0] * 4)
            rest_item(self.tree.invisibleRootItem(), measured.rest)
        for col in MEASURED_TIPS:
            self.tree.setColumnHidden(col, measured is None)
        aggregate(self.tree.invisibleRootItem(), top=True)
        self.tree.setSortingEnabled(True)
        for i in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(i)
            assert top is not None, "i < topLevelItemCount()"
            top.setExpanded(True)
        self._on_search(self.search.text())
        self.fit_name_column()

    def fit_name_column(self) -> None:
        """The name column as wide as its rows need, between 250 px and 55 % of the tree (the counts stay in
        view; a cut name keeps its line number and shows whole in its tool tip)."""
        room = self.tree.viewport().width()
        wanted = self.tree.sizeHintForColumn(0) + 8
        self.tree.setColumnWidth(0, int(max(250, min(wanted, 0.55 * room))))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if watched is self.tree and event.type() == QEvent.Type.Resize:
            self.fit_name_column()
        return False

    def measured_of(self, item: QTreeWidgetItem) -> dict[str, float] | None:
        """``{"busy_us", "wall_us", "bytes", "share"}`` per step of a node, None without a measure."""
        m = item.data(0, ROLE_MEASURED)
        return dict(zip(("busy_us", "wall_us", "bytes", "share"), m)) if m is not None else None

    # ------------------------------------------------------------- selection
    def lines_for_item(self, item: QTreeWidgetItem) -> dict[str, list[tuple[int, int]]]:
        """View → line ranges of the equations/groups under ``item``."""
        sm = self._shown
        eqns = item.data(0, ROLE_EQNS) if item.data(0, ROLE_KIND) == "eqn" else None
        out: dict[str, list[int]] = {v: [] for v in sm.views}
        if eqns:
            e = sm.equations[eqns[0]]
            for v in (JAXPR, JAXPR_SOURCE):
                if e.lines.get(v):
                    out[v] = list(range(e.lines[v][0], e.lines[v][1] + 1))
            out[STABLEHLO] = list(e.lines.get(STABLEHLO, []))
            out[HLO] = sm.group_lines(sm.groups[item.data(0, ROLE_GROUPS)[0]], HLO)
        else:
            for gi in item.data(0, ROLE_GROUPS) or []:
                for v in sm.views:
                    out[v] += sm.group_lines(sm.groups[gi], v)
        return {v: to_ranges(lines) for v, lines in out.items()}

    def equations_for_item(self, item: QTreeWidgetItem) -> list[int]:
        if item.data(0, ROLE_KIND) == "eqn":
            return list(item.data(0, ROLE_EQNS))
        sm = self._shown
        return sorted(i for gi in item.data(0, ROLE_GROUPS) or [] for i in sm.groups[gi].equations)

    @Slot()
    def _on_selection(self) -> None:
        items = self.tree.selectedItems()
        if not items or self._shown is None:
            return
        item = items[0]
        self.linesSelected.emit(self.lines_for_item(item))
        self.equationsSelected.emit(self.equations_for_item(item))
        file, line = self._python_location(item)
        self._show_python(file, line)
        self.sourceLineSelected.emit(file, line)

    def _python_location(self, item: QTreeWidgetItem) -> tuple[str, int]:
        node: QTreeWidgetItem | None = item  # up to its line row (None past the top)
        while node is not None and node.data(0, ROLE_KIND) not in ("line", "module"):
            node = node.parent()
        if node is None or node.data(0, ROLE_KIND) != "line":
            return "", 0
        file, line = node.data(0, ROLE_EQNS)
        return file, int(line)

    def _show_python(self, file: str, line: int, context: int = 3) -> None:
        if not file or not line:
            self.source.setPlainText("")
            return
        rows = [f"# {short_file(file)}"]
        for n in range(max(1, line - context), line + context + 1):
            text = linecache.getline(file, n).rstrip("\n")
            rows.append(f"{'→' if n == line else ' '} {n:5d}  {text}")
        self.source.setPlainText("\n".join(rows))

    def select_for_line(self, view: str, line_no: int) -> bool:
        """Select the node linked to ``line_no`` (1-based) of ``view`` (``jaxpr``, ``jaxpr_source``,
        ``stablehlo`` or ``hlo``): the equation for jaxpr texts, else its group. False if none."""
        sm = self._shown
        if sm is None:
            return False
        target = None
        if view in (JAXPR, JAXPR_SOURCE):
            for ei, item in self._eqn_items.items():
                span = sm.equations[ei].lines.get(view)
                if span and span[0] <= line_no <= span[1]:
                    target = item
                    break
        if target is None:
            groups = sm.groups_for_line(view, line_no)
            if view == STABLEHLO:
                hits = [e.index for e in sm.equations if line_no in e.lines.get(STABLEHLO, ())]
                target = self._eqn_items.get(hits[0]) if hits else None
            if target is None and groups:
                target = self._group_items.get(groups[0])
        if target is None:
            return False
        self._reveal(target)
        self.tree.setCurrentItem(target)
        target.setSelected(True)
        self.tree.scrollToItem(target)
        return True

    def select_equations(self, eqns: list[int]) -> bool:
        """Select the smallest node holding all of ``eqns`` (one equation: its own row)."""
        if not eqns or eqns[0] not in self._eqn_items:
            return False
        item = self._eqn_items[eqns[0]]
        wanted = set(eqns)
        while (len(wanted) > 1 and (parent := item.parent()) is not None
               and not wanted <= set(self.equations_for_item(item))):
            item = parent
        self._reveal(item)
        self.tree.setCurrentItem(item)
        self.tree.scrollToItem(item)
        return True

    def select_groups(self, groups: list[int]) -> bool:
        """Select the row of the first of ``groups`` (indexes into the shown map). False if none."""
        item = next((self._group_items[gi] for gi in groups if gi in self._group_items), None)
        if item is None:
            return False
        self._select(item)
        return True

    def select_location(self, location: str) -> bool:
        """Select the source-line row of ``location`` (``file:line``, the file shortened as
        :func:`app.core.units.short_file` does) with the most measured time (the first without a
        measure). False if no row has that line."""
        hits = [item for item in self._line_items() if self._location(item) == location]
        if not hits:
            return False
        self._select(max(hits, key=lambda it: (self.measured_of(it) or {}).get("wall_us", 0.0)))
        return True

    def _line_items(self) -> list[QTreeWidgetItem]:
        out, it = [], QTreeWidgetItemIterator(self.tree)
        while it.value():
            if it.value().data(0, ROLE_KIND) == "line":
                out.append(it.value())
            it += 1
        return out

    @staticmethod
    def _location(item: QTreeWidgetItem) -> str:
        file, line = item.data(0, ROLE_EQNS)
        return source_label(file, line)

    def _select(self, item: QTreeWidgetItem) -> None:
        self._reveal(item)
        self.tree.setCurrentItem(item)
        item.setSelected(True)
        self.tree.scrollToItem(item)

    def _reveal(self, item: QTreeWidgetItem) -> None:
        parent = item.parent()
        while parent is not None:
            parent.setHidden(False)
            parent.setExpanded(True)
            parent = parent.parent()
        item.setHidden(False)

    # ---------------------------------------------------------------- search
    @Slot(str)
    def _on_search(self, text: str) -> None:
        needle = text.strip().lower()
        it = QTreeWidgetItemIterator(self.tree)
        while it.value():
            it.value().setHidden(bool(needle))
            it += 1
        if not needle:
            return
        it = QTreeWidgetItemIterator(self.tree)
        while it.value():
            item = it.value()
            if needle in item.text(0).lower() or needle in item.toolTip(0).lower() or needle in item.text(3).lower():
                self._reveal(item)
                self._show_subtree(item)
            it += 1

    def _show_subtree(self, item: QTreeWidgetItem) -> None:
        for i in range(item.childCount()):
            child = item.child(i)
            assert child is not None, "i < childCount()"
            child.setHidden(False)
            if child.data(0, ROLE_KIND) != "eqn":
                self._show_subtree(child)

    @Slot(bool)
    def _on_fold(self, _on: bool) -> None:
        self._rebuild()

    def visible_items(self) -> list[QTreeWidgetItem]:
        out = []
        it = QTreeWidgetItemIterator(self.tree)
        while it.value():
            if not it.value().isHidden():
                out.append(it.value())
            it += 1
        return out
