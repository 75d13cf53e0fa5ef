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


def test_a_dock_key_in_inspect_or_code_goes_to_run_and_shows_the_dock_there(qtbot, make_window, gui_model):
    """The docks live in the Run workspace (Inspect and Code hide them all): Ctrl+Alt+2 pressed in Inspect laid
    the Demo kit over the jaxpr views; it now switches to Run, where the Demo kit comes forward, and leaving Run
    again hides it with the other docks."""
    from PySide6.QtWidgets import QDockWidget

    win = make_window(gui_model, autoload=False, size=(1280, 720))
    demo, log = win.demo.demo_dock, win.demo.why_dock
    for workspace, keys, dock in (("Inspect", "Ctrl+Alt+2", demo), ("Code", "Ctrl+Alt+3", log)):
        win.workspaces.show(workspace)
        qtbot.waitUntil(lambda: not any(d.isVisible() for d in win.findChildren(QDockWidget)))
        _action(win, keys).trigger()
        qtbot.waitUntil(lambda d=dock: in_front(d))
        assert win.workspaces.current() == "Run"
        assert _action(win, keys).isChecked()
    win.workspaces.show("Inspect")  # leaving Run hides every dock again, the one the key showed too
    qtbot.waitUntil(lambda: not any(d.isVisible() for d in win.findChildren(QDockWidget)))
    win.workspaces.show("Run")
    qtbot.waitUntil(lambda: in_front(log) or in_front(demo))
