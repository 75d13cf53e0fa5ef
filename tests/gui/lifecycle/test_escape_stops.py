"""Esc stops whatever runs, wherever the keyboard focus is (issue 34): a replay started from the Demo menu's
action, with the focus in the prompt, the model box, the generation form, an IR view, the Code editor or on the
plot, and after the Demo menu was opened and closed."""

from __future__ import annotations

import pytest
from conftest import run_and_wait
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QWidget

WINDOW_TOKENS = 24


def _focus_targets(win) -> dict[str, QWidget]:
    return {
        "prompt": win.ui.prompt.editor if hasattr(win.ui.prompt, "editor") else win.ui.prompt,
        "model box": win.ui.model_picker,
        "generation form": win.ui.form,
        "IR view": win.ui.ir_tabs,
        "plot": win.ui.plot,
        "code editor": win.programs.editor,
    }


def _focus(widget: QWidget) -> QWidget:
    """Give the keyboard focus to ``widget`` or its first focusable child; returns the widget holding it."""
    target = widget if widget.focusPolicy() != Qt.FocusPolicy.NoFocus else None
    if target is None:
        target = next((w for w in widget.findChildren(QWidget)
                       if w.focusPolicy() != Qt.FocusPolicy.NoFocus and w.isVisible()), widget)
    target.setFocus(Qt.FocusReason.OtherFocusReason)
    return target


@pytest.mark.parametrize("where", ["prompt", "model box", "generation form", "IR view", "plot", "code editor",
                                   "after the Demo menu"])
def test_escape_stops_a_replay(qtbot, window, where):
    window.ui.form.set_values({"mode": "torch", "max_new_tokens": WINDOW_TOKENS, "ignore_eos": True})
    run_and_wait(qtbot, window)
    replay = window.sessions.replay
    if where == "code editor":
        window.workspaces.show("Code")
    demo_menu = next(a.menu() for a in window.menuBar().actions() if a.text().replace("&", "") == "Demo")
    replay_action = next(a for a in demo_menu.actions() if "recorded pace" in a.text().replace("&", ""))
    if where == "after the Demo menu":
        demo_menu.popup(window.mapToGlobal(window.rect().center()))
        qtbot.waitUntil(demo_menu.isVisible, timeout=2000)
        QTest.keyClick(demo_menu, Qt.Key.Key_Escape)  # closes the menu, as a person would
        qtbot.waitUntil(lambda: not demo_menu.isVisible(), timeout=2000)
        replay_action.trigger()
        holder = QApplication.focusWidget() or window
    else:
        replay_action.trigger()
        holder = _focus(_focus_targets(window)[where])
    qtbot.waitUntil(lambda: replay.running, timeout=5000)
    QTest.keyClick(holder, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not replay.running, timeout=2000)
    assert not window.is_busy()
    assert "Replay stopped" in window.status.text()
