"""Source-map views in pytest-qt (offscreen) on real maps of the tiny Llama: explorer tree, search, fold,
highlights and links both ways, dataflow graph (click, export), primitive chart and prefill/decode diff."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from app.core.events import IREvent  # noqa: E402
from app.core.inspect.dataflow import build_dataflow, layout  # noqa: E402
from app.core.inspect.source_diff import line_diff, primitive_diff  # noqa: E402
from app.core.inspect.source_map import build_source_map  # noqa: E402
from app.core.settings import GenerationSettings  # noqa: E402


@pytest.fixture(scope="module")
def maps_and_texts(llama_engine):
    llama_engine.clear_compiled()
    events = llama_engine.generate("The jit function", GenerationSettings(max_new_tokens=3))
    irs = {e.step: llama_engine.ir[(e.mode, e.step)] for e in events if isinstance(e, IREvent)}
    model = llama_engine.loaded.model
    maps = {step: build_source_map(ir, step, model) for step, ir in irs.items()}
    texts = {step: {v: getattr(ir, v) for v in ("jaxpr", "jaxpr_source", "stablehlo", "hlo")}
             for step, ir in irs.items()}
    return maps, texts


def _graph(sm, eqns, expanded=None):
    return layout(build_dataflow(sm, eqns, expanded=expanded))


@pytest.fixture
def inspector(qtbot, maps_and_texts):
    from widgets.source.source_inspector import SourceInspector

    maps, _ = maps_and_texts
    w = SourceInspector(_graph)
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.set_source_map("decode", maps["decode"])
    w.set_source_map("prefill", maps["prefill"])
    p, d = maps["prefill"], maps["decode"]
    w.set_diff(primitive_diff(p, d), line_diff(p, d), {"prefill": p.primitive_counts(), "decode": d.primitive_counts()})
    w.show()
    return w


def _find(tree, predicate):
    from PySide6.QtWidgets import QTreeWidgetItemIterator

    it = QTreeWidgetItemIterator(tree)
    while it.value():
        if predicate(it.value()):
            return it.value()
        it += 1
    return None


def test_tree_levels_counts_and_sorting(inspector, maps_and_texts):
    from PySide6.QtCore import Qt

    tree = inspector.explorer.tree
    root = tree.topLevelItem(0)
    total = sum(len(g.equations) for g in maps_and_texts[0]["decode"].groups)
    top_sum = sum(int(tree.topLevelItem(i).text(1)) for i in range(tree.topLevelItemCount()))
    assert top_sum == total
    attn = _find(tree, lambda it: it.text(0) == "self_attn")
    assert attn is not None and attn.parent().text(0) == "0" and attn.parent().parent().text(0) == "layers"
    line = attn.child(0)
    assert line.text(0).startswith("transformers/models/llama/modeling_llama.py:")
    op = line.child(0)
    assert op.child(0).text(0).startswith("#")
    tree.sortByColumn(2, Qt.DescendingOrder)
    flops = [root.child(i).data(2, Qt.UserRole) for i in range(root.childCount())]
    assert flops == sorted(flops, reverse=True)


def test_selection_emits_lines_and_python_source(inspector, qtbot, maps_and_texts):
    _, texts = maps_and_texts
    tree = inspector.explorer.tree
    bmm = _find(tree, lambda it: it.text(0).endswith("aten::bmm") and it.parent().text(0).startswith(
        "transformers/integrations/sdpa_attention.py"))
    assert bmm is not None
    with qtbot.waitSignal(inspector.linesSelected) as blocker:
        tree.setCurrentItem(bmm)
    lines = blocker.args[0]
    assert set(lines) == {"jaxpr", "jaxpr_source", "stablehlo", "hlo"}
    jaxpr = texts["decode"]["jaxpr"].split("\n")
    highlighted = [jaxpr[n - 1] for a, b in lines["jaxpr"] for n in range(a, b + 1)]
    assert sum("dot_general" in s for s in highlighted) == 2
    hlo = texts["decode"]["hlo"].split("\n")
    assert any(" dot(" in hlo[a - 1] for a, _ in lines["hlo"])
    src = inspector.explorer.source.toPlainText()
    assert "scaled_dot_product_attention(" in src and "→" in src
    assert inspector.graph.node_items, "the dataflow graph of the selection is drawn"


def test_clicking_an_ir_line_selects_its_node(inspector, maps_and_texts):
    maps, texts = maps_and_texts
    sm = maps["decode"]
    dot = next(e for e in sm.equations if e.primitive == "dot_general" and "aten::bmm" in e.scope)
    first = dot.lines["jaxpr"][0]
    assert inspector.select_for_line("jaxpr", first)
    assert inspector.explorer.tree.currentItem().text(0) == f"#{dot.index} dot_general"
    assert inspector.select_for_line("stablehlo", dot.lines["stablehlo"][0])
    assert inspector.explorer.tree.currentItem().text(0) == f"#{dot.index} dot_general"
    group = next(g for g in sm.groups if dot.index in g.equations)
    assert inspector.select_for_line("hlo", group.hlo_lines[0])
    assert "aten::bmm" in inspector.explorer.tree.currentItem().text(0)
    assert not inspector.select_for_line("jaxpr", 1)


def test_search_and_fold(inspector, qtbot):
    ex = inspector.explorer
    ex.search.setText("rsqrt")
    visible = ex.visible_items()
    assert any(it.text(0) == "aten::rsqrt" for it in visible)
    assert not any(it.text(0) == "aten::bmm" for it in visible)
    ex.search.clear()
    ex.fold.setChecked(True)
    assert _find(ex.tree, lambda it: it.text(0) == "*") is not None
    folded = _find(ex.tree, lambda it: "×2" in it.text(0))
    assert folded is not None


def test_graph_click_links_back_and_exports(inspector, qtbot, tmp_path, maps_and_texts):
    tree = inspector.explorer.tree
    mlp = _find(tree, lambda it: it.text(0) == "mlp" and it.parent().text(0) == "0")
    tree.setCurrentItem(mlp)
    graph = inspector.graph
    dots = [nid for nid, item in graph.node_items.items() if item.node.label.startswith("dot_general")]
    assert len(dots) == 3
    with qtbot.waitSignal(graph.nodeClicked) as blocker:
        graph.click_node(dots[0])
    eqn = blocker.args[0][0]
    assert tree.currentItem().text(0) == f"#{eqn} dot_general"
    assert len(graph.node_items) > 3, "the graph was not rebuilt by its own click"
    zoom = graph.zoom_factor()
    from PySide6.QtCore import QPoint, QPointF, Qt
    from PySide6.QtGui import QWheelEvent

    ev = QWheelEvent(QPointF(50, 50), QPointF(50, 50), QPoint(0, 0), QPoint(0, 120), Qt.NoButton,
                     Qt.NoModifier, Qt.NoScrollPhase, False)
    graph.wheelEvent(ev)
    assert graph.zoom_factor() > zoom
    graph.export_svg(tmp_path / "g.svg")
    graph.export_png(tmp_path / "g.png")
    assert "<svg" in (tmp_path / "g.svg").read_text()[:500]
    assert (tmp_path / "g.png").read_bytes()[:4] == b"\x89PNG"


def test_whole_step_graph_collapses_layers(maps_and_texts):
    sm = maps_and_texts[0]["decode"]
    df = _graph(sm, None)
    layers = [n for n in df.nodes if n.kind == "layer"]
    assert [n.label.split("\n")[0] for n in layers] == ["layers.0", "layers.1"]
    assert [n.tooltip for n in layers] == ["model.layers.0", "model.layers.1"]
    assert "m:model" in df.expanded and all(n.parent == "m:model" for n in layers)  # the overview opens model
    assert all(n.x >= 0 and n.y >= 0 for n in df.nodes) and df.width > 0


def test_diff_tables_and_chart(inspector):
    diff = inspector.diff
    assert diff.chart.categories[0] and len(diff.chart.bars) == 2
    assert diff.primitives.rowCount() > 5 and diff.lines.rowCount() > 10
    headers = [diff.lines.horizontalHeaderItem(c).text() for c in range(diff.lines.columnCount())]
    assert headers[1:3] == ["prefill eqns", "decode eqns"]
    diff.only_diff.setChecked(True)
    shown = diff.visible_rows(diff.lines)
    assert shown and len(shown) < diff.lines.rowCount()
    statuses = {diff.status(diff.lines, r) for r in range(diff.lines.rowCount()) if not diff.lines.isRowHidden(r)}
    assert "same" not in statuses and "seq" in statuses  # decode: the same lines, one position
    diff.only_structural.setChecked(True)
    structural = [r for r in range(diff.lines.rowCount()) if not diff.lines.isRowHidden(r)]
    assert structural and all(diff.status(diff.lines, r) not in ("same", "seq") for r in structural)


def test_ir_linker_highlights_and_clicks_both_ways(inspector, qtbot, maps_and_texts):
    from PySide6.QtCore import QPoint, Qt

    from widgets.ir.code_view import CodeView
    from widgets.ir.line_links import IRLinker

    maps, texts = maps_and_texts
    inspector.step.setCurrentText("decode")
    views = {}
    for name in ("jaxpr", "stablehlo", "hlo"):
        views[name] = CodeView()
        views[name].set_code(texts["decode"][name])
        views[name].resize(700, 400)
        views[name].show()
        qtbot.addWidget(views[name])
    linker = IRLinker(inspector, views)
    sm = maps["decode"]
    dot = next(e for e in sm.equations if e.primitive == "dot_general" and "aten::bmm" in e.scope)
    assert inspector.select_for_line("jaxpr", dot.lines["jaxpr"][0])
    jaxpr_hl = linker.highlighters["jaxpr"]
    assert jaxpr_hl.is_highlighted(dot.lines["jaxpr"][0]) and not jaxpr_hl.is_highlighted(1)
    assert linker.highlighters["stablehlo"].is_highlighted(dot.lines["stablehlo"][0])
    assert linker.highlighters["hlo"].ranges()
    views["jaxpr"].grab()  # paints the overlay without error
    # A click on a StableHLO line of another equation selects that equation.
    other = next(e for e in sm.equations if e.primitive == "dot_general" and e.index != dot.index
                 and e.lines.get("stablehlo"))
    edit = views["stablehlo"]
    line = other.lines["stablehlo"][0]
    edit.verticalScrollBar().setValue(line - 1)
    block = edit.document().findBlockByNumber(line - 1)
    y = int(edit.blockBoundingGeometry(block).translated(edit.contentOffset()).center().y())
    with qtbot.waitSignal(linker.filters["stablehlo"].lineClicked) as blocker:
        qtbot.mouseClick(edit.viewport(), Qt.LeftButton, pos=QPoint(40, y))
    assert blocker.args == [line]
    assert inspector.explorer.tree.currentItem().text(0) == f"#{other.index} dot_general"


def test_folded_group_graph_shows_one_layer(maps_and_texts):
    sm = maps_and_texts[0]["decode"].fold_layers()
    g = next(g for g in sm.groups if g.module == "model.layers.*.mlp" and g.scope.startswith("linear"))
    df = _graph(sm, g.equations)
    assert "model.layers.0, 1 of 2" in df.note
    assert sum(n.kind == "eqn" for n in df.nodes) == 3


def test_views_read_at_1280x720(inspector, qtbot, maps_and_texts):
    """The inspection view at the size it gets in a 1280×720 window: the graph of one attention block
    at Fit shows labelled boxes in readable text; the diff table shows several rows."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QPushButton, QWidget

    from widgets.ir.code_view import CodeView

    inspector.resize(940, 560)
    tree = inspector.explorer.tree
    attn = _find(tree, lambda it: it.text(0) == "self_attn" and it.parent().text(0) == "0")
    tree.setCurrentItem(attn)
    graph = inspector.graph
    graph.fit()
    groups = [item for item in graph.node_items.values() if item.node.kind in ("line", "call", "module")]
    assert len(groups) >= 4 and all(item.node.label for item in groups)
    assert graph.text_scale() >= 11, "node text at Fit is at least 11 px tall"
    view_rect = graph.mapToScene(graph.viewport().rect()).boundingRect()
    assert all(view_rect.contains(item.sceneBoundingRect()) for item in groups)
    # Double-click opens a box (its children are drawn), Overview closes it again.
    call = next(item for item in groups if item.node.kind == "call")
    with qtbot.waitSignal(graph.groupToggled):
        qtbot.mouseDClick(graph.viewport(), Qt.LeftButton, pos=graph.mapFromScene(call.sceneBoundingRect().center()))
    assert any(item.node.parent == call.node.id for item in graph.node_items.values())
    inspector.findChild(QPushButton, "graphOverview").click()
    assert not any(item.node.parent for item in graph.node_items.values())

    inspector.tabs.setCurrentWidget(inspector.diff)
    table = inspector.diff.lines
    qtbot.waitUntil(lambda: table.isVisible())
    rows_shown = table.viewport().height() // table.rowHeight(0)
    assert rows_shown >= 6, rows_shown
    # The source-line gutter of the jaxpr view: short labels beside the code, inside the view.
    _, texts = maps_and_texts
    view = CodeView()
    qtbot.addWidget(view)
    from widgets.ir.code_view import split_notes

    code, notes = split_notes(texts["decode"]["jaxpr_source"])
    assert code.split("\n") == [s.rstrip() for s in split_notes(texts["decode"]["jaxpr"])[0].split("\n")]
    view.set_code(code, notes=notes)
    view.resize(900, 400)
    view.show()
    first = next(i for i, n in enumerate(notes) if "modeling_llama.py" in n)
    view.verticalScrollBar().setValue(first)
    qtbot.wait(10)
    shown = view.visible_notes()
    assert shown and all("modeling_llama.py" in label or "cache_utils" in label or ":" in label for _, label in shown)
    gutter = view.findChild(QWidget, "sourceGutter")
    assert gutter.isVisible() and gutter.geometry().right() < view.width() * 0.5
    assert "#" not in code.split("\n")[first], "the annotation left the code"
