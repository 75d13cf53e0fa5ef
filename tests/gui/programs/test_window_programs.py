"""The Code workspace (issue 21): your own program in the window — an example run call by call on the plot,
its jaxpr naming the user's file and linked both ways with the editor, errors at the user's line, Stop inside a
stuck Python loop, the draft kept across sessions."""

from __future__ import annotations

import time

import pytest
from programs_helpers import code_window_fixture  # noqa: F401 (the code_window fixture)

from tests.conftest import RUN_TIMEOUT_MS

pytest.importorskip("pytestqt")

STUCK = '''import jax.numpy as jnp


def f(x):
    while True:
        pass
    return x


def f_args():
    return (jnp.ones(4),)
'''

BROKEN = '''import jax.numpy as jnp


def f(x):
    return x +


def f_args():
    return (jnp.ones(4),)
'''

TRACE_ERROR = '''import jax.numpy as jnp


def f(x):
    if x.sum() > 0:
        return x
    return -x


def f_args():
    return (jnp.ones(4),)
'''


def _example(stem: str) -> str:
    from app.core.programs.gallery import example

    return example(stem).path


def _run(qtbot, win) -> None:
    assert win.programs.run()
    qtbot.waitUntil(lambda: not win.is_busy(), timeout=RUN_TIMEOUT_MS)
    qtbot.waitUntil(lambda: not win.ui.ir_tabs.pending(), timeout=5000)


def test_example_runs_and_links_with_jaxpr(qtbot, code_window):
    win = code_window
    path = _example("jit_speedup")
    assert win.programs.open_example(path)
    assert win.workspaces.current() == "Code"
    win.programs.panel.calls.setValue(5)
    _run(qtbot, win)

    run = win.session.current
    assert run.program == "selu" and run.label.endswith("· jit · selu")
    assert len(run.records) == 5 and run.records[0].compiled and not any(r.compiled for r in run.records[1:])
    assert len(win.ui.plot.points()) == 5 and win.ui.plot.points()[0].compiled
    assert "selu" in win.ui.plot.run_labels()[-1]
    jaxpr = win.ui.ir_tabs.text_of("selu", "jaxpr")
    assert jaxpr and "exp" in jaxpr
    assert "01_jit_speedup.py" in win.ui.ir_tabs.text_of("selu", "jaxpr_source")
    assert "selu" in win.ui.ir_tabs.origin_text()
    assert "first call" in win.programs.panel.status.text()
    # the Run compiled this text: the live pause from opening it compiles nothing after the Run, whose figures
    # stay in the status line (a live compile there said "not run" right after a run)
    from app.gui.panels.programs.live import LIVE_DELAY_MS

    assert not win.programs.live.timer.isActive() and not win.programs.live.compile()
    qtbot.wait(LIVE_DELAY_MS + 200)
    assert not win.is_busy() and "first call" in win.programs.panel.status.text()

    qtbot.waitUntil(lambda: "selu" in win.inspect.maps, timeout=10_000)
    sm = win.inspect.maps["selu"]
    exp = next(e for e in sm.equations if e.primitive == "exp")
    assert exp.file == path and exp.line == 13
    # jaxpr line → the editor's line
    win.inspect.linker.filters["jaxpr"].lineClicked.emit(exp.lines["jaxpr"][0])
    assert win.programs.editor.current_line() == 13
    # the editor's line → its equations highlighted in the jaxpr view
    win.programs.editor.set_linked_lines([])
    win.programs.link_line(13)
    ranges = win.inspect.linker.highlighters["jaxpr"].ranges()
    assert any(a <= exp.lines["jaxpr"][0] <= b for a, b in ranges)
    assert win.programs.editor.linked_lines() == [(13, 13)]


def test_compare_draws_two_runs(qtbot, code_window):
    win = code_window
    win.programs.open_example(_example("jit_speedup"))
    win.programs.panel.calls.setValue(3)
    win.programs.panel.set_values({"mode": "compare"})
    _run(qtbot, win)
    modes = [r.mode for r in win.session.runs]
    assert modes[-2:] == ["jit", "no-jit"]
    assert win.ui.plot.run_count() == 2


def test_syntax_error_marks_its_line_and_keeps_the_views(qtbot, code_window):
    win = code_window
    win.programs.open_example(_example("jit_speedup"))
    win.programs.panel.calls.setValue(2)
    _run(qtbot, win)
    n_runs, jaxpr = len(win.session.runs), win.ui.ir_tabs.text_of("selu", "jaxpr")

    win.programs.editor.setPlainText(BROKEN)
    _run(qtbot, win)
    assert win.programs.editor.error_line() == 5
    assert "SyntaxError" in win.programs.panel.error_text() and "line 5" in win.programs.panel.error_text()
    assert len(win.session.runs) == n_runs  # no empty run: the plot and the IR keep the last good result
    assert win.ui.ir_tabs.text_of("selu", "jaxpr") == jaxpr

    win.programs.editor.setPlainText(TRACE_ERROR)  # Python control flow on a traced value
    assert win.programs.editor.error_line() == 5  # live: the mark stays until the next compile says (issue 41)
    win.programs.panel.live.setChecked(False)
    win.programs.editor.setPlainText(TRACE_ERROR + "\n")
    assert win.programs.editor.error_line() == 0  # live off: an edit clears the mark
    _run(qtbot, win)
    assert win.programs.editor.error_line() == 5, win.programs.panel.status.text()
    assert "TracerBoolConversionError" in win.programs.panel.error_text()

    win.programs.editor.setPlainText(BROKEN.replace("x +", "x + 1"))  # fixed: the app is usable
    _run(qtbot, win)
    assert not win.programs.panel.error_text() and win.programs.editor.error_line() == 0
    assert win.session.current.program == "f" and len(win.session.current.records) == 2


def test_stop_ends_a_stuck_loop_within_a_second(qtbot, code_window):
    win = code_window
    win.programs.set_program(STUCK, name="stuck.py")
    win.programs.run()
    qtbot.wait(700)  # loaded and tracing: inside the while loop
    assert win.is_busy()
    t0 = time.perf_counter()
    win.stop()
    qtbot.waitUntil(lambda: not win.is_busy(), timeout=3000)
    assert time.perf_counter() - t0 < 1.0
    win.programs.set_program(BROKEN.replace("x +", "x * 2"), name="ok.py")  # usable again
    _run(qtbot, win)
    assert win.session.current.program == "f"


def test_draft_restored_after_reopening(qtbot, make_window, gui_model):
    win = make_window(gui_model, autoload=False)
    win.workspaces.show("Code")
    win.programs.open_example(_example("pytrees"))
    win.programs.editor.appendPlainText("# my unsaved edit")
    win.programs.panel.calls.setValue(7)
    text = win.programs.editor.code()
    win.close()

    again = make_window(gui_model, autoload=False)
    try:
        assert again.programs.editor.code() == text
        assert again.programs.editor.document().isModified()
        assert again.programs.path == _example("pytrees") and again.programs.example
        assert again.programs.panel.calls.value() == 7
    finally:
        again.close()
