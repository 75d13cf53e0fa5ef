"""The source-map panel: structure explorer on the left; on the right a dataflow graph of the selected node
and the prefill-versus-decode comparison. Plain data in; the graph layout function is injected
(``graph_builder(source_map, equation_indexes, expanded) -> laid-out graph``, e.g.
``lambda sm, eqns, expanded: layout(build_dataflow(sm, eqns, expanded=expanded))`` from
``app.core.inspect.dataflow``; ``expanded`` is ``None`` for the overview or the set of open box ids) so this
widget imports neither JAX nor app.core. Double-clicking a box of the graph opens or closes it. Signals are emitted on the GUI thread.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.core.units import source_label
from widgets.common.splitters import splitter
from widgets.source.dataflow_graph import DataflowGraph
from widgets.source.source_explorer import SourceExplorer
from widgets.source.step_diff import StepDiff

GraphBuilder = Callable[[Any, list[int], Any], Any]

#: The smallest on-screen height (px) of a line of node text a newly drawn graph starts at (``text_scale``):
#: a graph that fits the view only smaller starts at this size (Fit shows it whole, on request).
MIN_TEXT_PX = 9.0
#: The explorer's narrowest width (px): the graph's side never squeezes it below (its counts stay in view).
EXPLORER_MIN_PX = 300
#: each side's least height when the explorer is laid above the graph (:meth:`SourceInspector.fit_width`)
STACKED_MIN_PX = 220


def count(n: int, word: str) -> str:
    """``1 equation``, ``2 equations``, ``1 closed box``, ``3 closed boxes`` (``word`` singular)."""
    if n == 1:
        return f"1 {word}"
    return f"{n:,} {word}es" if word.endswith(("x", "s", "ch", "sh")) else f"{n:,} {word}s"


class SourceInspector(QWidget):
    """``linesSelected(dict)``: view → ``(first, last)`` line ranges to highlight in the IR views of the
    shown step; ``stepChanged(str)``: the step whose map is shown."""

    linesSelected = Signal(dict)
    stepChanged = Signal(str)

    def __init__(self, graph_builder: GraphBuilder | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.graph_builder = graph_builder
        self.maps: dict[str, Any] = {}
        self._from_graph = False
        self._stale = False  # a map arrived while hidden: the explorer is built when the panel is shown
        self.step = QComboBox()
        self.step.setObjectName("sourceMapStep")
        self.explorer = SourceExplorer()
        self.graph = DataflowGraph()
        self.graph_info = QLabel()
        self.diff = StepDiff()
        self.graph_info.setObjectName("graphInfo")
        # cut to the room it has, never wider (issue 29, flaw 17: a long text widened the graph's side, and the
        # splitter narrowed the explorer from 510 to 225 px, its columns gone); the whole text in its tool tip
        self.graph_info.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.graph_info.installEventFilter(self)
        self._graph_text = ""
        self._eqns: list[int] = []
        self._graph: Any = None
        self.tabs = QTabWidget()
        self.tabs.addTab(self._build_graph_page(), "Dataflow graph")
        self.tabs.addTab(self.diff, "Prefill vs decode")
        self._sized = False
        # both sides grow and shrink in proportion (40 : 60) when the tab changes width (the Run workspace's
        # dock, then Inspect's whole width): the explorer keeps its share, and its columns
        self.split = splitter(Qt.Orientation.Horizontal, self._build_explorer_side(), self.tabs, sizes=[520, 980],
                              stretch=[2, 3], name="sourceMapSplit")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.split)
        self.step.currentTextChanged.connect(self._on_step)
        self.explorer.linesSelected.connect(self.linesSelected)
        self.diff.lineActivated.connect(self._on_diff_line)
        self.explorer.equationsSelected.connect(self._on_equations)
        self.graph.nodeClicked.connect(self._on_node_clicked)
        self.graph.groupToggled.connect(self._on_group_toggled)

    def _build_graph_page(self) -> QWidget:
        """The graph's tab: its info line and buttons (Overview, Fit, SVG…, PNG…) over the graph."""
        overview = QPushButton("Overview")
        overview.setObjectName("graphOverview")
        overview.setToolTip("Close every box again (the first view of the selection)")
        fit, svg, png = QPushButton("Fit"), QPushButton("SVG…"), QPushButton("PNG…")
        svg.setToolTip("Export the graph as SVG")
        png.setToolTip("Export the graph as PNG")
        bar = QHBoxLayout()
        bar.setContentsMargins(4, 2, 4, 2)
        for w in (self.graph_info, overview, fit, svg, png):
            bar.addWidget(w, 1 if w is self.graph_info else 0)
        graph_page = QWidget()
        gl = QVBoxLayout(graph_page)
        gl.setContentsMargins(0, 0, 0, 0)
        gl.addLayout(bar)
        gl.addWidget(self.graph)
        overview.clicked.connect(self._on_overview)
        fit.clicked.connect(self.graph.fit)
        svg.clicked.connect(self._export_svg)
        png.clicked.connect(self._export_png)
        return graph_page

    def _build_explorer_side(self) -> QWidget:
        """The left side: the step picker over the structure explorer, never narrower than EXPLORER_MIN_PX."""
        left = QWidget()
        left.setMinimumWidth(EXPLORER_MIN_PX)
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        head = QHBoxLayout()
        head.addWidget(QLabel("Step"))
        head.addWidget(self.step, 1)
        ll.addLayout(head)
        ll.addWidget(self.explorer)
        return left

    @Slot(str, int)
    def _on_diff_line(self, file: str, line: int) -> None:
        """A double-clicked source-line row of Prefill vs decode selects that line in the explorer (which
        cross-links it to every IR view); issue 29, flaw 8: the signal reached nothing."""
        self.explorer.select_location(source_label(file, line))

    def set_source_map(self, step: str, source_map: Any) -> None:
        """Add or replace the map of ``step``; shows it if it is the current (or first) step."""
        self.maps[step] = source_map
        if self.step.findText(step) < 0:
            self.step.addItem(step)
        if self.step.currentText() == step:
            self._on_step(step)

    def set_measure(self, measure: Callable[[Any], Any] | None) -> None:
        """Measured columns for the explorer (see :meth:`SourceExplorer.set_measure`); built now when the
        panel is shown, else when it is next shown."""
        shown = self.isVisible() or self.explorer.shown_map() is None
        self.explorer.set_measure(measure, rebuild=shown)
        if not shown:
            self._stale = self.step.currentText() in self.maps

    def set_diff(self, primitive_rows: list[Any], line_rows: list[Any], counts: dict[str, dict[str, int]],
                 empty: str = "") -> None:
        """The Prefill vs decode tab's rows; ``empty``: why it has none (shown in their place)."""
        self.diff.set_rows(primitive_rows, line_rows, counts, empty=empty)

    def clear(self) -> None:
        self._stale = False
        self.maps.clear()
        self.step.clear()
        self.explorer.set_source_map(None)
        self.graph.clear_graph("No source map yet: run a jitted mode with IR capture")

    def select_for_line(self, view: str, line_no: int) -> bool:
        """Select the explorer node of ``line_no`` in ``view`` of the shown step (see SourceExplorer)."""
        self.ensure_built()
        return self.explorer.select_for_line(view, line_no)

    @Slot(str)
    def _on_step(self, step: str) -> None:
        if step in self.maps:
            if self.isVisible():
                self._show(step)
            else:  # building the tree of a 12-layer step takes ~0.1 s: not while the panel is hidden
                self._stale = True
            self.stepChanged.emit(step)

    def _show(self, step: str) -> None:
        self._stale = False
        self.explorer.set_source_map(self.maps[step])
        self.graph.clear_graph("Select a node in the explorer to draw its dataflow graph")

    def ensure_built(self) -> None:
        """Build the explorer for the current step now if a map arrived while the panel was hidden."""
        if self._stale and self.step.currentText() in self.maps:
            self._show(self.step.currentText())

    def fit_width(self, width: int) -> None:
        """Lay the explorer beside the graph and diff tabs when ``width`` px (the room the inspector is shown in)
        holds both at their least widths, else above them (the Code workspace's IR card at 1024×600 is ~490 px:
        side by side the graph's buttons were drawn over the explorer's "Fold repeated layers")."""
        least = sum(w.minimumSizeHint().width() for i in range(self.split.count()) if (w := self.split.widget(i)))
        side_by_side = width >= least + self.split.handleWidth()
        orientation = Qt.Orientation.Horizontal if side_by_side else Qt.Orientation.Vertical
        if self.split.orientation() != orientation:
            self.split.setOrientation(orientation)
            for i in range(self.split.count()):  # stacked, each side keeps rows to read; the inspector scrolls
                if side := self.split.widget(i):
                    side.setMinimumHeight(0 if side_by_side else STACKED_MIN_PX)
            self.split.setSizes([400, 600] if side_by_side else [300, 300])

    def showEvent(self, event: Any) -> None:
        super().showEvent(event)
        side_by_side = self.split.orientation() == Qt.Orientation.Horizontal
        if not self._sized and self.width() > 200 and side_by_side:  # first shown: explorer 40%, graph and diff 60%
            self._sized = True
            self.split.setSizes([int(self.width() * 0.4), int(self.width() * 0.6)])
        self.ensure_built()

    @Slot(list)
    def _on_equations(self, eqns: list) -> None:
        if self._from_graph:
            self.graph.highlight_equations(eqns)
            return
        self._eqns = list(eqns)
        self._draw(None)

    def _draw(self, expanded: Any, keep_view: str = "") -> None:
        """Build and show the graph of the selected equations with the boxes ``expanded`` open. A new graph
        is fitted to the view, but never with its text under :data:`MIN_TEXT_PX`; ``keep_view``: the id of
        the box just opened or closed — the zoom stays as it was, centred on that box (issue 29, flaw 17:
        opening ``self_attn`` refitted the text to ~7 px)."""
        sm = self.explorer.shown_map()
        if self.graph_builder is None or sm is None or not self._eqns:
            return
        before = self.graph.transform()
        df = self._graph = self.graph_builder(sm, self._eqns, expanded)
        self.graph.set_graph(df)
        item = self.graph.node_items.get(keep_view) if keep_view else None
        if item is not None:
            self.graph.setTransform(before)
            self.graph.centerOn(item)
        elif 0 < self.graph.text_scale() < MIN_TEXT_PX:
            factor = MIN_TEXT_PX / self.graph.text_scale()
            self.graph.scale(factor, factor)
            rect = self.graph.sceneRect()
            self.graph.centerOn(rect.center().x(), rect.top() + self.graph.viewport().height() / 2 / self.graph.zoom_factor())
        boxes = sum(n.kind in ("module", "layer", "call", "line") and not n.expanded for n in df.nodes)
        eqns = sum(n.kind == "eqn" for n in df.nodes)
        parts = [count(len(self._eqns), "equation"), count(boxes, "closed box") if boxes else "",
                 f"{eqns:,} shown" if eqns else ""]
        text = " · ".join(p for p in parts if p)
        text += f" ({df.note})" if getattr(df, "note", "") else ""
        self.set_graph_info(text + (" — double-click a box to open it" if boxes else ""))

    def set_graph_info(self, text: str) -> None:
        """The line above the graph: cut at its end to the room it has, the whole text in its tool tip."""
        self._graph_text = text
        self._fit_graph_info()

    def graph_info_text(self) -> str:
        """The whole line above the graph (the label may show it cut)."""
        return self._graph_text

    def _fit_graph_info(self) -> None:
        metrics = self.graph_info.fontMetrics()
        shown = metrics.elidedText(self._graph_text, Qt.TextElideMode.ElideRight, max(0, self.graph_info.width() - 4))
        self.graph_info.setText(shown)
        self.graph_info.setToolTip(self._graph_text if shown != self._graph_text else "")

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt override)
        if watched is self.graph_info and event.type() == QEvent.Type.Resize:
            self._fit_graph_info()
        return False

    @Slot(str)
    def _on_group_toggled(self, node_id: str) -> None:
        if self._graph is None:
            return
        opened = set(getattr(self._graph, "expanded", ()))
        opened ^= {node_id}
        self._draw(frozenset(opened), keep_view=node_id)

    @Slot()
    def _on_overview(self) -> None:
        self._draw(None)

    @Slot(list)
    def _on_node_clicked(self, eqns: list) -> None:
        self._from_graph = True
        try:
            self.explorer.select_equations(list(eqns))
        finally:
            self._from_graph = False

    @Slot()
    def _export_svg(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export graph as SVG or PDF", "dataflow.svg",
                                              "SVG (*.svg);;PDF (*.pdf)")
        if path:
            self.graph.export_svg(path)

    @Slot()
    def _export_png(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export graph as PNG", "dataflow.png", "PNG (*.png)")
        if path:
            self.graph.export_png(path)
