"""Presentation off gives back what presentation changed, never what the user changed while presenting (issue 37,
the long walk, seed 302 at 1024×600): a window maximized before presentation, restored and resized by the user
while presenting, was maximized again as presentation went off; with no window manager to honour that it grew to
its normal minimum (1,019 px) at x = 169, past the screen's right edge. The user's window now stays normal, at its
normal minimum, on the screen. Runs in its own process on an offscreen 1024×600 screen."""

from __future__ import annotations

import textwrap

from tests.conftest import run_on_screen

SCRIPT = textwrap.dedent("""
    import json
    from PySide6.QtWidgets import QApplication
    from app.gui.main import configure_application
    app = QApplication([])
    configure_application(app)
    from app.gui.user_settings import UserSettings
    from app.gui.window import MainWindow

    def settle(n=30):
        for _ in range(n):
            app.processEvents()

    win = MainWindow(settings=UserSettings(model="pydoc-llama"), autoload=False)
    win.showMaximized()
    settle()
    action = win.demo.presentation_action
    action.trigger()  # on
    settle()
    screen = win.screen().availableGeometry()
    w, h = int(screen.width() * 0.67), int(screen.height() * 0.91)
    win.showNormal()
    win.setGeometry((screen.width() - w) // 2, (screen.height() - h) // 2, w, h)  # the user's size, presenting
    settle()
    presented = win.geometry().getRect()
    action.trigger()  # off
    settle()
    print(json.dumps({"presented": presented, "maximized": win.isMaximized(), "frame": win.frameGeometry().getRect(),
                      "screen": screen.getRect(), "on_screen": screen.contains(win.frameGeometry()),
                      "min": win.minimumSize().toTuple(), "size": win.size().toTuple()}))
    win.close()
""")


def test_presentation_off_keeps_a_window_the_user_resized_while_presenting(tmp_path):
    got = run_on_screen(tmp_path, (1024, 600), SCRIPT)
    assert got["presented"][2] < 1000, got  # the user's narrow window while presenting (the premise)
    assert not got["maximized"], f"presentation off undid the user's restore: {got}"
    assert got["on_screen"], f"the window left the screen: {got}"
    assert got["size"][0] >= got["min"][0] and got["size"][1] >= got["min"][1], got
