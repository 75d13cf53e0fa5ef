"""View ▸ Ctrl+Alt+1/2/3 bring a bottom view forward (issue 55: Ctrl+Alt+3 closed the Compile log when it was
open behind another tab instead of showing it)."""

from __future__ import annotations

from PySide6.QtGui import QKeySequence

from widgets.common.dock_action import in_front


def _action(win, keys):
    return next(a for a in win.actions() if a.shortcut() == QKeySequence(keys))


def test_ctrl_alt_3_shows_the_compile_log_behind_a_tab(qtbot, make_window, gui_model):
    win = make_window(gui_model, autoload=False, size=(1280, 720))
    log, ir = win.demo.why_dock, win.ui.ir_dock
    ir.raise_()
    qtbot.waitUntil(lambda: in_front(ir) and not in_front(log))
    assert not log.isHidden()  # open, but behind What JAX sees
    _action(win, "Ctrl+Alt+3").trigger()
    qtbot.waitUntil(lambda: in_front(log))
    assert _action(win, "Ctrl+Alt+3").isChecked()
    _action(win, "Ctrl+Alt+1").trigger()  # and back: What JAX sees is raised, the log stays open
    qtbot.waitUntil(lambda: in_front(ir))
    assert not log.isHidden()


def test_the_key_opens_a_closed_view_and_closes_one_in_front(qtbot, make_window, gui_model):
    win = make_window(gui_model, autoload=False, size=(1280, 720))
    log, action = win.demo.why_dock, _action(win, "Ctrl+Alt+3")
    log.close()
    qtbot.waitUntil(lambda: not action.isChecked())
    action.trigger()
    qtbot.waitUntil(lambda: in_front(log))
    action.trigger()  # in front: the same key hides it (View menu's check mark follows)
    qtbot.waitUntil(lambda: log.isHidden())
    assert not action.isChecked()
