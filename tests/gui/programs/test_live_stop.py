"""Issue 55 flaw 4: live mode could trap a newcomer — opening a file whose entry runs ``while True`` started a live
trace at 100 % CPU with Stop disabled (only Esc, mentioned nowhere, ended it), and after Esc the status line still
said "Live: compiling…". A running live trace now has an enabled Stop beside Run (and Esc) that ends it, the line
says it stopped, and a live compile switches the IR views to its result."""

from __future__ import annotations

import pytest
from programs_helpers import code_window_fixture  # noqa: F401 (the code_window fixture)

from tests.conftest import RUN_TIMEOUT_MS

pytest.importorskip("pytestqt")

CODE_WINDOW_WORKSPACE = "Code"

FOREVER = '''import jax.numpy as jnp


def spin(x):
    n = 0
    while True:
        n += 1
    return x


def spin_args():
    return (jnp.ones(3),)
'''

TWICE = '''import jax.numpy as jnp


def twice(x):
    return x * 2.0


def twice_args():
    return (jnp.ones(3),)
'''


def _open_forever(qtbot, win, tmp_path):
    path = tmp_path / "forever.py"
    path.write_text(FOREVER)
    assert win.programs.panel.live.isChecked()
    assert win.programs.open_file(str(path), ask=False)
    qtbot.waitUntil(win.programs.live.in_flight, timeout=RUN_TIMEOUT_MS)
    qtbot.wait(300)  # inside the user's loop


def _stopped(win) -> bool:
    return not win.is_busy() and not win.programs.live.in_flight()


@pytest.mark.parametrize("how", ["button", "esc"])
def test_a_live_trace_in_an_endless_loop_has_a_working_stop(qtbot, code_window, tmp_path, how):
    from PySide6.QtCore import Qt

    win = code_window
    _open_forever(qtbot, win, tmp_path)
    panel = win.programs.panel
    assert panel.stop_button.isVisible() and panel.stop_button.isEnabled(), "no Stop while a live trace runs"
    assert panel.run_button.isEnabled()  # Run stays ready (it supersedes the live compile)
    if how == "button":
        qtbot.mouseClick(panel.stop_button, Qt.MouseButton.LeftButton)
    else:
        qtbot.keyClick(win.programs.editor, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: _stopped(win), timeout=10_000)
    status = panel.status.text()
    assert "compiling…" not in status, status
    assert "stop" in status.lower(), status
    assert not panel.stop_button.isEnabled()
    qtbot.wait(1500)  # past the live pause: the stopped text is not compiled again by itself
    assert not win.programs.live.in_flight()


def test_a_live_compile_switches_the_views_to_its_result(qtbot, code_window, tmp_path):
    """The views show a Run's step (``twice``); a live compile of another file's entry (``thrice``) shows its IR."""
    win = code_window
    tabs = win.ui.ir_tabs
    first, second = tmp_path / "twice.py", tmp_path / "thrice.py"
    first.write_text(TWICE)
    second.write_text(TWICE.replace("twice", "thrice").replace("2.0", "3.0"))
    win.programs.panel.live.setChecked(False)
    assert win.programs.open_file(str(first), ask=False)
    win.programs.panel.calls.setValue(2)
    assert win.programs.run()
    qtbot.waitUntil(lambda: not win.is_busy() and not tabs.pending(), timeout=RUN_TIMEOUT_MS)
    assert tabs.current_step() == "twice"
    win.programs.panel.live.setChecked(True)
    assert win.programs.open_file(str(second), ask=False)
    qtbot.waitUntil(lambda: win.programs.live.snapshot() is not None, timeout=RUN_TIMEOUT_MS)
    qtbot.waitUntil(lambda: not win.is_busy() and not tabs.pending(), timeout=RUN_TIMEOUT_MS)
    assert tabs.current_step() == "thrice"
    assert "3.0" in (tabs.panels["jaxpr"].text() or "")
