"""The Run workspace's widgets with synthetic data (no engine): the token view (hover data, compiled marks,
batched inserts), the stats strip, the model picker and the generation form (max new tokens as typed)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtGui import QTextCharFormat  # noqa: E402

from widgets.run.generation_form import GenerationForm  # noqa: E402
from widgets.run.model_picker import ModelPicker  # noqa: E402
from widgets.run.stats_strip import StatsStrip  # noqa: E402
from widgets.run.token_view import CallInfo, TokenView  # noqa: E402


def test_token_view_hover_data_and_compiled_marks(qtbot):
    view = TokenView()
    qtbot.addWidget(view)
    view.start("Prompt:")
    view.add_call(CallInfo(0, "prefill", 1200.0, True, 760.0))
    view.add_call(CallInfo(1, "decode", 9.8, False))
    view.add_token(0, 101, " hello", 0)
    view.add_token(1, 102, " world", 1)
    with qtbot.waitSignal(view.tokensFlushed, timeout=1000):
        pass
    assert view.toPlainText() == "Prompt: hello world"
    tok = view.token_at(len("Prompt: he"))
    assert tok.token_id == 101 and tok.call_index == 0
    tip = view.tooltip_for(tok)
    assert "id 101" in tip and "1.20 s" in tip and "compiled" in tip
    assert "9.8 ms" in view.tooltip_for(view.token_at(len("Prompt: hello w")))
    cursor = view.textCursor()
    cursor.setPosition(len("Prompt: h") + 1)
    assert cursor.charFormat().underlineStyle() == QTextCharFormat.UnderlineStyle.SingleUnderline
    cursor.setPosition(len("Prompt: hello w") + 1)
    assert cursor.charFormat().underlineStyle() == QTextCharFormat.UnderlineStyle.NoUnderline
    view.highlight_call(1)
    assert len(view.extraSelections()) == 1


def test_token_view_batches_inserts(qtbot):
    view = TokenView()
    qtbot.addWidget(view)
    view.start("")
    flushes = []
    view.tokensFlushed.connect(flushes.append)
    for i in range(200):
        view.add_token(i, i, "x", i)
    qtbot.waitUntil(lambda: view.toPlainText() == "x" * 200, timeout=1000)
    assert len(flushes) <= 2


def test_stats_strip(qtbot):
    strip = StatsStrip()
    qtbot.addWidget(strip)
    strip.set_stats(1234.0, 98.7, 12, 2, 10.1)
    assert strip.text("ttft") == "1.23 s" and strip.text("tps") == "98.7" and strip.text("compiles") == "2"


def test_model_picker_and_generation_form(qtbot):
    picker = ModelPicker()
    qtbot.addWidget(picker)
    picker.set_models({"pydoc-llama": "built-in"}, ["random:gpt2-small-shape"], ["org/recent"])
    picker.set_current_model("pydoc-llama")
    assert picker.current_model() == "pydoc-llama"
    from PySide6.QtCore import Qt

    # the box shows the name alone (a cut "— bui" suffix at 1280x720; issue 29, flaw 22), "built-in" in the tip
    assert picker.combo.currentText() == "pydoc-llama"
    assert picker.combo.itemData(picker.combo.currentIndex(), Qt.ItemDataRole.ToolTipRole).startswith("built-in")
    picker.combo.setEditText("some-org/some-model")
    with qtbot.waitSignal(picker.loadRequested) as blocker:
        picker.load_button.click()
    assert blocker.args == ["some-org/some-model"]
    form = GenerationForm(("torch", "jit-static"), {}, ("float32", "bfloat16"), "jit-static")
    qtbot.addWidget(form)
    assert form.values()["mode"] == "jit-static" and form.values()["temperature"] == 0.0
    form.set_values(
        {
            "mode": "torch",
            "temperature": 0.7,
            "top_k": 5,
            "top_p": 0.9,
            "seed": 3,
            "max_new_tokens": 9,
            "max_cache_len": 256,
            "dtype": "bfloat16",
        }
    )
    v = form.values()
    assert v["max_cache_len"] == 256
    assert (v["mode"], v["temperature"], v["top_k"], v["seed"], v["dtype"]) == (
        "torch",
        0.7,
        5,
        3,
        "bfloat16",
    )
    assert form.temperature.isEnabled()
    form.set_values({"max_cache_len": None})
    assert form.values()["max_cache_len"] is None and form.cache_len.text() == "auto"


def test_max_new_tokens_takes_what_is_typed(qtbot):
    """Issue 29, flaw 20: typing 100000 gave 1000 (the box's maximum was 4,096); the KV cache is the cap."""
    from PySide6.QtCore import Qt

    from widgets.run.generation_form import GenerationForm

    form = GenerationForm(("jit-static",), {}, ("float32",), "jit-static")
    qtbot.addWidget(form)
    box = form.max_new_tokens
    box.selectAll()
    qtbot.keyClicks(box.lineEdit(), "100000")
    qtbot.keyClick(box.lineEdit(), Qt.Key.Key_Return)
    assert box.value() == 100_000


def test_stats_strip_figures_are_never_cut_at_its_minimum_width(qtbot):
    """Issue 37, seen at 1024×600: "648 ms" and "1173.0" were drawn as "648 m" and "1173." — the strip's minimum
    was taken while its cards showed "–"."""
    strip = StatsStrip()
    qtbot.addWidget(strip)
    strip.show()
    strip.resize(strip.minimumSizeHint())
    strip.set_stats(648.0, 1173.04, 11, 2, 0.9)
    strip.set_host({"dispatch": 0.2, "wait": 0.7})
    qtbot.wait(10)
    assert strip.text("tps") == "1173"
    cut = {k: (v.text(), v.width(), v.fontMetrics().horizontalAdvance(v.text())) for k, v in strip.values.items()
           if v.isVisible() and v.width() < v.fontMetrics().horizontalAdvance(v.text())}
    assert not cut, cut


def test_the_bandwidth_gauge_says_why_a_step_beats_the_memory_bound(qtbot):
    """A small model's weights sit in the CPU's caches: its steady step can beat the DRAM bound (pydoc-llama showed
    "126 % of mem BW" with a tool tip saying no step can be faster)."""
    strip = StatsStrip()
    qtbot.addWidget(strip)
    strip.set_bound(1.26, "20 MB of weights ÷ 30 GB/s = 0.7 ms per token")
    assert strip.values["bound"].text() == "126 %"
    assert "read from the CPU's caches" in strip.cards["bound"].toolTip()
    strip.set_bound(0.71, "538 MB of weights ÷ 30.5 GB/s = 17.6 ms per token")
    assert "caches" not in strip.cards["bound"].toolTip()


def test_stats_strip_keeps_its_width_whatever_the_figures(qtbot, app_look):
    """Issue 55 (walk seed 2 at 1280×720: two stopped runs): TTFT "52.2 ms" then "118 ms" changed the strip's
    minimum width, which is the token column's, and Run, Stop and the plot moved 7 px between the two runs (the
    app's look: big bold figures over small captions)."""
    strip = StatsStrip()
    qtbot.addWidget(strip)
    strip.show()
    widths = set()
    for figures in ((52.2, 264.0, 204, 0, 3.8), (118.0, 283.0, 32, 0, 3.5), (12345.0, 0.4, 3, 2, 2402.7),
                    (0.012, 1173.04, 1000, 12, 88.8)):
        strip.set_stats(*figures)
        strip.set_host({"dispatch": 0.2, "wait": 0.7})
        strip.set_bound(1.26, "")
        qtbot.wait(1)
        widths.add(strip.minimumSizeHint().width())
    assert len(widths) == 1, widths
    strip.set_program(True)
    strip.set_calls(428.0, 21.4, 5, 1)
    qtbot.wait(1)
    assert strip.minimumSizeHint().width() in widths  # a program's figures in the same room
