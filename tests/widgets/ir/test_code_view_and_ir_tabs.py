"""The IR views with synthetic data (no engine): the IR lexer, the code view (lazy highlighting, 1 MB under a
second, source references cut before their line number, a draggable gutter), the find bar and the IR tabs
(steps, summary, missing text, both compilers of a step)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import time  # noqa: E402
from types import SimpleNamespace  # noqa: E402

from PySide6.QtWidgets import QPlainTextEdit  # noqa: E402

from widgets.ir.code_view import CodeView  # noqa: E402
from widgets.ir.find_bar import FindBar, find_all  # noqa: E402
from widgets.ir.ir_lexer import lex_line  # noqa: E402
from widgets.ir.ir_tabs import IRTabs  # noqa: E402

HLO_LINE = (
    "  ROOT %fusion.1 = f32[1,5,768]{2,1,0} fusion(f32[1,5]{1,0} %p0), kind=kLoop, calls=%fused, "
    'metadata={op_name="jit(decode)/aten::mm/dot_general" source_file="modeling_llama.py" source_line=12}\n'
)


JAXPR = (
    "{ lambda ; a:f32[1,5] b:f32[5,7]. let\n"
    "    c:f32[1,7] = dot_general[dimension_numbers=(([1], [0]), ([], []))] a b\n"
    "  in (c,) }\n"
)


def test_lexer_finds_ops_types_and_keywords():
    kinds = {JAXPR.splitlines()[1][s : s + n]: k for s, n, k in lex_line(JAXPR.splitlines()[1])}
    assert kinds["dot_general"] == "op"
    assert kinds["f32[1,7]"] == "type"
    hlo = {HLO_LINE[s : s + n]: k for s, n, k in lex_line(HLO_LINE)}
    assert hlo["ROOT"] == "keyword" and hlo["fusion"] == "op" and hlo["%fusion.1"] == "var"


def test_code_view_highlights_visible_lines(qtbot):
    view = CodeView()
    qtbot.addWidget(view)
    view.resize(800, 400)
    view.show()
    view.set_code(JAXPR * 50)
    assert view.highlighted_blocks() > 0
    formats = view.document().findBlockByNumber(1).layout().formats()
    assert any(f.format.foreground().color().name() != "#000000" for f in formats)


def test_code_view_opens_one_megabyte_under_a_second(qtbot):
    view = CodeView()
    qtbot.addWidget(view)
    view.resize(1000, 700)
    view.show()
    text = HLO_LINE * (1_000_000 // len(HLO_LINE) + 1)
    t0 = time.perf_counter()
    view.set_code(text)
    qtbot.wait(1)
    view.verticalScrollBar().setValue(view.verticalScrollBar().maximum() // 2)
    qtbot.wait(1)
    elapsed = time.perf_counter() - t0
    assert elapsed < 1.0, f"1 MB took {elapsed:.2f} s"
    assert view.highlighted_blocks() < 500  # lazy: only what was on screen


def test_find_bar_counts_and_cycles(qtbot):
    view = CodeView()
    qtbot.addWidget(view)
    view.set_code(JAXPR * 3)
    bar = FindBar(view)
    qtbot.addWidget(bar)
    bar.set_query("DOT_GENERAL")
    assert bar.match_count() == 3
    assert bar.count_label.text() == "1 / 3"
    assert view.textCursor().selectedText() == "dot_general"
    bar.find_next()
    bar.find_next()
    assert bar.count_label.text() == "3 / 3"
    bar.find_next()
    assert bar.current_index() == 0
    bar.find_previous()
    assert bar.current_index() == 2
    bar.set_query("no such thing")
    assert bar.match_count() == 0 and bar.count_label.text() == "no match"
    assert find_all("aaaa", "aa") == [0, 2]


def _ir(step: str, hlo: str | None = "HloModule jit_step\n" + HLO_LINE):
    return SimpleNamespace(
        jaxpr=JAXPR,
        jaxpr_source=JAXPR.replace("a b\n", "a b  # modeling_llama.py:377\n"),
        stablehlo="module @jit_step {\n}\n",
        hlo=hlo,
        cost={"flops": 2.5e9, "bytes accessed": 3.0 * 2**20},
        memory={"argument": 1024, "output": 2048, "temp": 0},
        n_equations=1,
        n_stablehlo_ops=2,
        n_hlo_instructions=3,
        input_labels=["weights", "cache"],
    )


def test_ir_tabs_show_steps_summary_and_missing_text(qtbot, tmp_path):
    tabs = IRTabs()
    qtbot.addWidget(tabs)
    tabs.set_ir("prefill", _ir("prefill"))
    assert "dot_general" in tabs.panels["jaxpr"].view.toPlainText()  # the visible tab: at once
    assert tabs.pending()  # hidden tabs: a few event-loop turns later
    qtbot.waitUntil(lambda: not tabs.pending(), timeout=1000)
    assert "HloModule" in tabs.panels["hlo"].view.toPlainText()
    summary = tabs.summary.text().replace("&nbsp;", " ")  # a figure's name and number are kept on one line
    assert "FLOPs <b>2.50 G</b>" in summary and "jaxpr eqns <b>1</b>" in summary
    assert "jaxpr&nbsp;eqns&nbsp;<b>1</b>" in tabs.summary.text()
    assert tabs.current_step() == "prefill"
    tabs.set_ir("decode", _ir("decode", hlo=None))
    tabs.show_step("decode")
    tabs.tabs.setCurrentIndex(2)  # switching to a tab applies its pending text at once
    assert "not available on this backend" in tabs.panels["hlo"].view.toPlainText()
    assert tabs.panels["hlo"].text() is None
    tabs.step_buttons["prefill"].click()
    assert tabs.current_step() == "prefill"
    tabs.tabs.setCurrentIndex(0)
    tabs.source_check.setChecked(True)
    view = tabs.panels["jaxpr"].view  # the source line goes to the gutter, the code keeps its lines
    assert "modeling_llama.py:377" in view.notes()[1] and view.toPlainText() == JAXPR
    tabs.hold_hidden(True)
    tabs.set_ir("prefill", _ir("prefill", hlo="HloModule held\n"))
    qtbot.wait(200)
    assert tabs.panels["hlo"].has_pending()  # held while a run streams
    tabs.hold_hidden(False)
    qtbot.waitUntil(lambda: "HloModule held" in tabs.panels["hlo"].view.toPlainText(), timeout=1000)
    tabs.panels["jaxpr"].save_to(tmp_path / "x.jaxpr")
    assert "dot_general" in (tmp_path / "x.jaxpr").read_text()
    assert tabs.findChild(CodeView, "jaxprView") is tabs.panels["jaxpr"].view


def test_ir_tabs_keep_both_compilers_of_a_step(qtbot):
    from app.core.inspect.ir import StepIR

    tabs = IRTabs()
    qtbot.addWidget(tabs)
    tabs.show()
    tabs.set_ir("decode", StepIR(jaxpr="{ lambda ; a:f32[]. let b = sin a in (b,) }", hlo="HloModule m", n_fusions=3),
                "run 3 · jit-static")
    tabs.set_ir("decode", StepIR(compiler="inductor", fx_graph="def forward(self, x): ...",
                                 inductor_code="cpp_fused_add_0 = async_compile.cpp_pybinding(...)", n_kernels=1),
                "run 4 · torch-compile")
    for key in tabs.panels:
        tabs.tabs.setCurrentWidget(tabs.panels[key])
    qtbot.waitUntil(lambda: not tabs.pending(), timeout=2000)
    views = {name: tabs.findChild(QPlainTextEdit, name).toPlainText()
             for name in ("jaxprView", "hloView", "fxGraphView", "inductorCodeView")}
    assert "sin a" in views["jaxprView"] and views["hloView"] == "HloModule m"
    assert "def forward" in views["fxGraphView"] and "cpp_fused_add_0" in views["inductorCodeView"]
    # each tab names the run and mode it shows, with that compiler's figures only (never mixed)
    tabs.tabs.setCurrentWidget(tabs.panels["jaxpr"])
    assert tabs.origin_text() == "run 3 · jit-static · decode" and "run 3 · jit-static" in tabs.origin.text()
    summary = tabs.summary.text().replace("&nbsp;", " ")
    assert "XLA fusions <b>3</b>" in summary and "Inductor kernels" not in summary
    tabs.tabs.setCurrentWidget(tabs.panels["inductor_code"])
    assert tabs.origin_text() == "run 4 · torch-compile · decode"
    summary = tabs.summary.text().replace("&nbsp;", " ")
    assert "Inductor kernels <b>1</b>" in summary and "XLA fusions" not in summary


def test_source_references_keep_their_line_number_when_cut(qtbot):
    """A cut source reference loses its scope, then the start of its path, never its line number; the gutter
    can be dragged wider; the Source map and the prefill/decode diff cut at the start."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QFontMetrics

    from widgets.ir.code_view import CodeView, fit_label
    from widgets.source.source_explorer import SourceExplorer
    from widgets.source.step_diff import StepDiff

    view = CodeView()
    qtbot.addWidget(view)
    metrics = QFontMetrics(view.font())
    label = "modeling_llama.py:243 aten::scaled_dot_product_attention"
    wide = fit_label(label, metrics.horizontalAdvance(label) + 5, metrics)
    assert wide == label
    no_scope = fit_label(label, metrics.horizontalAdvance("modeling_llama.py:243 aten…"), metrics)
    assert no_scope.startswith("modeling_llama.py:243") and no_scope.endswith("…")
    tight = fit_label(label, metrics.horizontalAdvance("ng_llama.py:243"), metrics)
    assert tight.endswith("py:243") and tight.startswith("…")
    view.resize(800, 300)
    view.set_code("a\nb", notes=["/x/modeling_llama.py:243:7 (f) [aten::mm]", ""])
    auto = view.gutter_width()
    view.set_gutter_width(auto + 100)
    assert view.gutter_width() == auto + 100
    view.set_gutter_width(None)
    assert view.gutter_width() == auto
    explorer = SourceExplorer()
    qtbot.addWidget(explorer)
    assert explorer.tree.textElideMode() == Qt.TextElideMode.ElideLeft
    diff = StepDiff()
    qtbot.addWidget(diff)
    assert diff.lines.textElideMode() == Qt.TextElideMode.ElideLeft
