"""The Code workspace's views speak of programs (issue 21): the latency plot's key and the stats strip say
"call" / "steady call" / "first call" for a program run; a shape sweep (and its power-of-two buckets) draws
two runs, one compile per distinct shape and per bucket, each with its reason in the compile log."""

from __future__ import annotations

import pytest
from programs_helpers import code_window_fixture  # noqa: F401 (the code_window fixture)

from tests.conftest import RUN_TIMEOUT_MS

pytest.importorskip("pytestqt")


def _example(stem: str) -> str:
    from app.core.programs.gallery import example

    return example(stem).path


def _run(qtbot, win) -> None:
    assert win.programs.run()
    qtbot.waitUntil(lambda: not win.is_busy(), timeout=RUN_TIMEOUT_MS)
    qtbot.waitUntil(lambda: not win.ui.ir_tabs.pending(), timeout=5000)


def test_program_run_speaks_of_calls(qtbot, code_window):
    win = code_window
    win.programs.open_example(_example("jit_speedup"))
    win.programs.panel.calls.setValue(4)
    _run(qtbot, win)
    plot, stats = win.ui.plot, win.ui.stats
    key = plot.key_text()
    assert "● call" in key and "compiling call" in key
    assert "prefill" not in key and "decode" not in key and "tok/s" not in key
    assert "steady call" in key and " ms" in plot.median_text()
    assert [stats.caption(k) for k in ("ttft", "tps", "tokens", "compiles")] == [
        "first call", "steady call", "calls", "compiles"]
    assert stats.cards["steady"].isHidden()
    assert stats.text("tokens") == "4" and stats.text("compiles") == "1"
    assert stats.text("ttft").endswith("ms") and stats.text("tps").endswith("ms")
    # a model run's words come back
    plot.set_program(False)
    stats.set_program(False)
    # (a short plot keeps its key to one line, in its terse wording: "┄ steady 6.9 ms"; issue 55)
    assert "■ prefill" in plot.key_text() and "● decode" in plot.key_text() and "┄ steady" in plot.key_text()
    assert stats.caption("ttft") == "TTFT" and not stats.cards["steady"].isHidden()


def test_sweep_compiles_per_shape_and_per_bucket(qtbot, code_window):
    win = code_window
    win.programs.open_example(_example("static_shapes"))
    win.programs.panel.set_values({"sweep": "1:9", "bucket": True})
    _run(qtbot, win)
    plain, padded = win.session.runs[-2:]
    assert plain.mode == "jit" and padded.mode != "jit" and plain.program == padded.program == "normalize"
    assert win.ui.plot.run_count() == 2  # side by side on one plot
    assert len(plain.records) == len(padded.records) == 9
    assert sum(r.compiled for r in plain.records) == 9  # one per distinct shape
    assert sum(r.compiled for r in padded.records) == 5  # buckets 1, 2, 4, 8, 16
    reasons = [r.compile_reason for r in plain.records if r.compiled][1:]
    assert "new input shape: arg 0 f32[1,128] → f32[2,128]" in reasons[0]
    log = win.demo.log.rows()
    assert any("f32[7,128] → f32[8,128]" in " ".join(row.values()) for row in log)


def _set_text(win, text: str) -> None:
    win.programs.editor.setPlainText(text)


LIVE_GOOD = '''import jax.numpy as jnp


def f(x):
    y = jnp.sin(x)
    return y * 2


def f_args():
    return (jnp.ones(4),)
'''


def test_retrace_as_you_type(qtbot, code_window):
    from app.gui.panels.programs.wiring import LIVE_DELAY_MS

    win = code_window
    panel, tabs = win.programs.panel, win.ui.ir_tabs
    assert 500 <= LIVE_DELAY_MS <= 1000
    n_runs = len(win.session.runs)
    win.workspaces.show("Code")  # live compiles follow the Code workspace's editor
    win.programs.set_program(LIVE_GOOD, name="live.py")
    assert panel.live.isChecked()  # on by default
    qtbot.waitUntil(lambda: "sin" in (tabs.text_of("f", "jaxpr") or ""), timeout=20_000)
    qtbot.waitUntil(lambda: not win.is_busy(), timeout=RUN_TIMEOUT_MS)
    assert len(win.session.runs) == n_runs  # a trace, no timed calls
    assert "as you type" in tabs.origin_text()
    assert "Live: f traced, lowered and compiled" in panel.status.text()

    # an edit that does not parse: the line is marked, the views keep the last good jaxpr
    _set_text(win, LIVE_GOOD.replace("y * 2", "y *"))
    qtbot.waitUntil(lambda: win.programs.editor.error_line() == 6, timeout=20_000)
    qtbot.waitUntil(lambda: not win.is_busy(), timeout=RUN_TIMEOUT_MS)
    assert "sin" in tabs.text_of("f", "jaxpr")
    # an edit that parses but does not trace (Python control flow on a traced value)
    _set_text(win, LIVE_GOOD.replace("    y = jnp.sin(x)\n", "    y = jnp.sin(x)\n    if y.sum() > 0:\n        y = -y\n"))
    qtbot.waitUntil(lambda: win.programs.editor.error_line() == 6, timeout=20_000)
    qtbot.waitUntil(lambda: not win.is_busy(), timeout=RUN_TIMEOUT_MS)
    assert "sin" in tabs.text_of("f", "jaxpr") and "cos" not in tabs.text_of("f", "jaxpr")
    # a good edit: traced again, the error gone
    _set_text(win, LIVE_GOOD.replace("jnp.sin", "jnp.cos"))
    qtbot.waitUntil(lambda: "cos" in (tabs.text_of("f", "jaxpr") or ""), timeout=20_000)
    qtbot.waitUntil(lambda: not win.is_busy(), timeout=RUN_TIMEOUT_MS)
    assert win.programs.editor.error_line() == 0
    assert len(win.session.runs) == n_runs
    # Ctrl+Enter still runs and times it, compiling cold (the trace's executable is not the run's)
    panel.calls.setValue(3)
    assert win.programs.run()
    qtbot.waitUntil(lambda: len(win.session.runs) == n_runs + 1 and not win.is_busy(), timeout=RUN_TIMEOUT_MS)
    run = win.session.runs[-1]
    assert len(run.records) == 3 and run.records[0].compiled
    # Stop during a stuck trace as you type still ends it
    _set_text(win, LIVE_GOOD.replace("    y = jnp.sin(x)\n", "    while True:\n        pass\n    y = jnp.sin(x)\n"))
    qtbot.waitUntil(lambda: win.is_busy(), timeout=5000)
    import time

    t0 = time.perf_counter()
    win.stop()
    qtbot.waitUntil(lambda: not win.is_busy(), timeout=5000)
    assert time.perf_counter() - t0 < 1.5


def test_profile_measures_the_program(qtbot, code_window):
    import os

    win = code_window
    path = _example("jit_speedup")
    win.programs.open_example(path)
    win.programs.panel.calls.setValue(2)
    _run(qtbot, win)
    assert win.profile.program_request() is not None  # the Code workspace shows: Profile is about the program
    win.profile.steps.setValue(5)
    win.profile.request()
    qtbot.waitUntil(lambda: win.profile.last is not None and not win.is_busy(), timeout=RUN_TIMEOUT_MS)
    profile = win.profile.last.profile
    assert profile.step == "selu" and profile.n_steps == 5
    assert "selu" in win.profile.summary.text() and "5 calls" in win.profile.summary.text()
    keys = [r["key"] for r in win.profile.last.rows["line"]]
    assert any(f"{os.path.basename(path)}:" in k for k in keys), keys
    # a row of the program's line selects it in the editor
    row = next(r for r in win.profile.last.rows["line"] if os.path.basename(path) in r["key"])
    win.profile.on_row(row)
    line = int(row["key"].rsplit(":", 1)[1])
    qtbot.waitUntil(lambda: win.programs.editor.current_line() == line, timeout=2000)


def test_passes_records_the_programs_entry_point(qtbot, code_window):
    """In the Code workspace, Record (Passes tab) records the program's entry point: its fusions carry the
    program's own file:line, and the compile log's row of its first call gets the split."""
    import os

    win = code_window
    path = _example("jit_speedup")
    win.programs.open_example(path)
    win.programs.panel.calls.setValue(2)
    _run(qtbot, win)
    assert win.passes.record()
    qtbot.waitUntil(lambda: win.passes.last is not None and not win.is_busy(), timeout=RUN_TIMEOUT_MS)
    ready = win.passes.last
    assert ready.step == "selu" and ready.mode == "jit" and ready.rows
    sources = [a[2] for f in ready.fusions for a in f["absorbed"]]
    assert any(s.startswith(os.path.basename(path) + ":") for s in sources), sources
    # A program's kernels' LLVM IR one click away (recorded for programs: app.core.backends.CPU.kernel_ir_options)
    passes = win.passes
    kernel = next(f["name"] for f in ready.fusions if f["has_llvm_ir"])
    passes.fusions.select(kernel)
    assert passes.fusions.llvm_button.isEnabled()
    passes.fusions.llvm_button.click()
    dialog = passes.llvm_dialog
    assert "define" in dialog.views[0].toPlainText() and kernel in dialog.windowTitle()
    dialog.close()


def test_entry_list_follows_typing_sweep_does_not_leak_and_new_program(qtbot, code_window):
    """Issue 29, flaw 13: the entry list follows new functions typed in the editor; one example's sweep does not
    leak into the next; File ▸ New program (Ctrl+N) opens an untitled program that runs."""
    win = code_window
    programs, panel = win.programs, win.programs.panel
    programs.open_example(_example("jit_speedup"))
    panel.set_values({"sweep": "1:8", "bucket": True})
    before = [panel.entry.itemText(i) for i in range(panel.entry.count())]
    programs.editor.set_code(programs.editor.code() + "\n\ndef brand_new(x):\n    return x * 2\n\n\n"
                             "def brand_new_args():\n    return (2.0,)\n")
    qtbot.waitUntil(lambda: panel.entry.findText("brand_new") >= 0, timeout=5000)
    assert [panel.entry.itemText(i) for i in range(panel.entry.count())][: len(before)] == before
    programs.editor.document().setModified(False)  # the edits are not the point here
    assert programs.open_example(_example("loops"))
    assert panel.values()["sweep"] == "" and not panel.values()["bucket"]
    assert "&New program" in [a.text() for a in win.findChildren(type(programs.new_action))]
    programs.editor.document().setModified(False)
    assert programs.new_program()
    assert programs.name == "untitled.py" and "def f_args" in programs.editor.code()
    _run(qtbot, win)
    assert win.session.runs and win.session.runs[-1].program == "f"
