"""The Profile tab on a small screen (issue 37's walk): maximized on 1024×600, the Code workspace gives the IR card
~150 px; a program's profile summary (four lines at that width) was squeezed to 55 px and the table's row count and
the timeline's figures to 9 and 4 px under it, their lines drawn over each other. Below its buttons the Profile
page scrolls up and down: every label there is as tall as its text needs at its width (wrapped), as wide as a
one-line label's text, inside the page or inside its scroll area, and no two labels overlap. Each screen runs in its
own process on an offscreen screen of that size (:func:`tests.conftest.run_on_screen`); the Run workspace's Profile
tab is measured the same way in the same window."""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import run_on_screen

SCRIPT = textwrap.dedent("""
    import json, time
    from PySide6.QtCore import QPoint, QRect
    from PySide6.QtWidgets import QApplication, QLabel, QScrollArea
    from app.gui.main import configure_application
    app = QApplication([])
    configure_application(app)
    from app.core.programs.gallery import example
    from app.gui.user_settings import UserSettings
    from app.gui.window import MainWindow

    def settle(n=40):
        for _ in range(n):
            app.processEvents()

    def wait(ready, seconds=150):
        end = time.monotonic() + seconds
        while not ready() and time.monotonic() < end:
            app.processEvents()
            time.sleep(0.01)
        assert ready(), "timed out"

    def flaws(page):
        \"\"\"Each shown label of the page whose text does not fit it, lies outside what can be scrolled to, or
        overlaps another.\"\"\"
        found, rects = [], []
        for label in page.findChildren(QLabel):
            if not label.isVisible() or not label.text():
                continue
            name = label.objectName() or label.text()[:20]
            need = (label.heightForWidth(label.width()) if label.wordWrap() else label.minimumSizeHint().height(),
                    0 if label.wordWrap() else label.minimumSizeHint().width())
            if label.height() < need[0] or label.width() < need[1]:
                found.append(f"{name}: {label.size().toTuple()} < {need[::-1]}")
            box, scroll = label.parentWidget(), None
            while box is not None and box is not page and scroll is None:
                scroll = box if isinstance(box, QScrollArea) else None
                box = box.parentWidget()
            room = scroll.widget() if scroll is not None else page
            rect = QRect(label.mapTo(room, QPoint(0, 0)), label.size())
            if not room.rect().contains(rect):
                found.append(f"{name}: {rect.getRect()} outside {room.rect().getRect()}")
            rects.append((name, QRect(label.mapTo(page, QPoint(0, 0)), label.size())))
        found += [f"{a} over {b}" for i, (a, ra) in enumerate(rects) for b, rb in rects[:i] if ra.intersects(rb)]
        return found

    win = MainWindow(settings=UserSettings(model="pydoc-llama"), autoload=False)
    win.resize(1280, 720)
    win.show()
    settle()
    win.workspaces.show("Code")
    win.showMaximized()
    settle()
    win.programs.panel.set_values({"live": False})
    assert win.programs.open_example(example("jit_speedup").path)
    assert win.programs.run()
    wait(lambda: not win.is_busy())
    win.profile.request()
    wait(lambda: win.profile.last is not None and not win.is_busy())
    settle()
    page = win.profile.page
    got = {"code": flaws(page), "code_page": page.size().toTuple(), "summary": win.profile.summary.text()}
    win.workspaces.show("Run")
    win.ui.ir_tabs.tabs.setCurrentWidget(page)
    settle()
    got |= {"run": flaws(page), "run_page": page.size().toTuple()}
    print(json.dumps(got))
    win.close()
""")


@pytest.mark.parametrize("screen", [(1024, 600), (1280, 720)])
def test_the_profile_summary_is_whole_in_the_code_and_run_workspaces(tmp_path, screen):
    got = run_on_screen(tmp_path, screen, SCRIPT)
    assert "20 calls profiled" in got["summary"], got
    assert not got["code"], got
    assert not got["run"], got
