"""The Source map's inspector laid out at 1280x720 (offscreen), on a real map of the tiny Llama: the graph keeps
the explorer's width as its note changes, opening a box keeps the zoom with the text readable, and the
counts take their plurals."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402


def test_plurals():
    from widgets.source.source_inspector import count

    assert count(1, "equation") == "1 equation" and count(2, "equation") == "2 equations"
    assert count(1, "closed box") == "1 closed box" and count(21, "closed box") == "21 closed boxes"
    assert count(1_234, "equation") == "1,234 equations"


# -- the Source map's graph on a real map of the tiny Llama ---------------------------------------------
@pytest.fixture(scope="module")
def decode_map(llama_engine):
    from app.core.events import IREvent
    from app.core.inspect.source_map import build_source_map
    from app.core.settings import GenerationSettings

    llama_engine.clear_compiled()
    events = llama_engine.generate("The jit function", GenerationSettings(max_new_tokens=3))
    ir = next(llama_engine.ir[(e.mode, e.step)] for e in events if isinstance(e, IREvent) and e.step == "decode")
    return build_source_map(ir, "decode", llama_engine.loaded.model)


@pytest.fixture
def inspector(qtbot, decode_map):
    from app.core.inspect.dataflow import build_dataflow, layout
    from widgets.source.source_inspector import SourceInspector

    w = SourceInspector(lambda sm, eqns, expanded=None: layout(build_dataflow(sm, eqns, expanded=expanded)))
    qtbot.addWidget(w)
    w.resize(1270, 560)  # the Source map tab in the Inspect workspace at 1280x720
    w.set_source_map("decode", decode_map)
    w.show()
    qtbot.waitExposed(w)
    return w


def _item(tree, predicate):
    from PySide6.QtWidgets import QTreeWidgetItemIterator

    it = QTreeWidgetItemIterator(tree)
    while it.value():
        if predicate(it.value()):
            return it.value()
        it += 1
    return None


def test_the_explorer_keeps_its_width_as_the_graph_changes(qtbot, inspector):
    """Issue 29, flaw 17: a long line above the graph widened the graph's side and the splitter narrowed the
    explorer (510 → 225 px, its columns gone)."""
    from widgets.source.source_inspector import EXPLORER_MIN_PX

    tree = inspector.explorer.tree
    before = inspector.split.sizes()
    assert before[0] >= 500
    tree.setCurrentItem(tree.topLevelItem(0))
    inspector.set_graph_info("464 equations · 11 closed boxes · 2 shown (" + "a long note " * 40 + ")")
    qtbot.wait(20)
    assert inspector.split.sizes() == before
    assert inspector.graph_info_text().endswith(")") and inspector.graph_info.toolTip() == inspector.graph_info_text()
    assert inspector.graph_info.width() < inspector.graph_info.fontMetrics().horizontalAdvance(inspector.graph_info_text())
    inspector.resize(700, 560)  # a narrow dock: the explorer keeps its share and never goes under its minimum
    qtbot.wait(20)
    assert inspector.split.sizes()[0] >= EXPLORER_MIN_PX
    inspector.resize(1270, 560)  # back to the whole width: its share again, not the narrow width
    qtbot.wait(20)
    assert inspector.split.sizes()[0] >= 450


def test_opening_a_box_keeps_the_zoom_and_text_starts_readable(qtbot, inspector):
    """Issue 29, flaw 17: opening ``self_attn`` refitted the whole graph, its text to ~7 px; and one
    equation read "1 equations"."""
    from widgets.source.source_inspector import MIN_TEXT_PX

    tree = inspector.explorer.tree
    graph = inspector.graph
    tree.setCurrentItem(_item(tree, lambda it: it.text(0) == "model"))
    assert graph.text_scale() >= MIN_TEXT_PX - 1e-6  # a large graph starts readable (Fit shows it whole)
    layer = next(n for n in graph.node_items if n.endswith("layers.0"))
    graph.groupToggled.emit(layer)
    zoom = graph.zoom_factor()
    attn = next(n for n in graph.node_items if n.endswith("layers.0.self_attn"))
    graph.groupToggled.emit(attn)
    assert graph.zoom_factor() == pytest.approx(zoom)  # not refitted
    assert graph.text_scale() >= MIN_TEXT_PX - 1e-6
    shown = graph.mapToScene(graph.viewport().rect()).boundingRect()
    assert shown.contains(graph.node_items[attn].sceneBoundingRect().center())  # the opened box in view
    tree.setCurrentItem(_item(tree, lambda it: it.text(0).startswith("#")))
    assert inspector.graph_info_text().startswith("1 equation ·") or inspector.graph_info_text() == "1 equation"
