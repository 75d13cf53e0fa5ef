"""Issue 29, flaws 16 and 17, in the widgets (offscreen): the timeline's line shows the profile's own "ops
running" figure, the note on rows above the read bandwidth counts the rows it is given, a selected profile
row is signalled, the measured-time labels sit in a gutter beside the HLO text (never over it), and the
Source map's graph keeps the explorer's width, its zoom when a box opens, and its plurals."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from types import SimpleNamespace  # noqa: E402

import pytest  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402

from app.core.profile.columns import BY_TITLES, PROFILE_COLUMNS, bandwidth_note, profile_summary  # noqa: E402

TIMELINE = {"step_us": 1000.0, "threads": ["XLAEigen 1"],
            "bars": [{"thread": "XLAEigen 1", "start_us": 100.0, "duration_us": 800.0, "name": "dot.1",
                      "kind": "dot", "source": "m.py:1"}],
            "gaps": [[0.0, 100.0], [900.0, 100.0]]}


def _profile(**kw):
    base = dict(step="decode", step_ms=1.7, n_steps=5, attributed_share=0.45, idle_share=0.55, host_share=0.52,
                between_ops_share=0.03, bound_ms=None, bytes_per_step=0.0, bandwidth_gbs=22.6)
    return SimpleNamespace(**{**base, **kw})


def test_one_ops_running_figure_for_the_header_and_the_timeline(qtbot):
    """The header's figure (over all steps) is the timeline's: the drawn median step (80 % busy here) gives
    no second percentage."""
    from app.core.profile.columns import ops_running, timeline_ops_running
    from widgets.profile.timeline import StepTimeline

    p = _profile()
    view = StepTimeline()
    qtbot.addWidget(view)
    view.set_timeline(TIMELINE, timeline_ops_running(p))
    text = view.summary.text()
    assert ops_running(p) == "ops running 45%" and ops_running(p) in profile_summary(p)
    assert text.startswith("ops running 45% of the wall time of the 5 steps"), text
    assert "80%" not in text and "%" not in text.split("steps", 1)[1], text  # no figure of the drawn step in %
    assert "1 op" in text and "1 ops" not in text and "2 gaps" in text


def test_rows_above_the_read_bandwidth_are_counted_over_the_rows_given():
    from app.core.profile.columns import rows_over_bandwidth

    rows = [{"bandwidth_share": 1.2}, {"bandwidth_share": 0.9}, {"bandwidth_share": 2.0}]
    assert rows_over_bandwidth(rows) == [rows[0], rows[2]]
    assert bandwidth_note(rows, 22.6).startswith("2 rows above 100 % of read BW (up to 200%)")


def test_a_selected_profile_row_is_signalled_a_refill_is_not(qtbot):
    from widgets.profile.profile_table import ProfileTable

    table = ProfileTable(PROFILE_COLUMNS, BY_TITLES)
    qtbot.addWidget(table)
    table.resize(900, 300)
    table.show()
    rows = [{"key": f"dot.{i}", "us_per_step": 10.0 - i, "hlo_line": 5 + i} for i in range(4)]
    with qtbot.assertNotEmitted(table.rowSelected):
        table.set_rows(rows, "fusion")
    view = table.table
    with qtbot.waitSignal(table.rowSelected, timeout=2000) as blocker:
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.visualItemRect(view.item(2, 0)).center())
    assert blocker.args[0]["key"] == "dot.2"
    with qtbot.assertNotEmitted(table.rowSelected):
        table.set_top_only(True)


def test_measured_labels_sit_in_a_gutter_beside_the_text(qtbot):
    """Issue 29, flaw 16: the labels were drawn at the viewport's right edge, over long HLO lines."""
    from widgets.ir.code_view import CodeView
    from widgets.ir.line_tints import LineTints

    view = CodeView()
    qtbot.addWidget(view)
    view.resize(600, 300)
    view.show()
    view.set_code("\n".join(f"%dot.{i} = f32[8,256]{{1,0}} dot(%a, %b), metadata={{op_name=\"x\" " + "y" * 200
                            for i in range(50)))
    qtbot.waitExposed(view)
    tints = LineTints(view)
    labels = {3: "200.0 µs · 20.0%", 4: "1.0 µs · 0.1%"}
    tints.set_line_tints({3: 0.2, 4: 0.001}, labels)
    qtbot.wait(20)
    port = view.viewport().geometry()
    rects = tints.label_rects()
    assert set(rects) == {3, 4} and tints.gutter.isVisible()
    assert all(r.left() > port.right() for r in rects.values()), (rects, port)  # right of the text, not over it
    assert tints.gutter.geometry().right() <= view.rect().right()
    assert tints.gutter.width() >= view.fontMetrics().horizontalAdvance(labels[3])
    view.resize(800, 300)  # the gutter follows the view
    qtbot.waitUntil(lambda: tints.gutter.geometry().left() == view.viewport().geometry().right() + 1, timeout=2000)
    tints.set_line_tints({})
    assert not tints.gutter.isVisible() and view.viewport().geometry().right() > port.right()


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
