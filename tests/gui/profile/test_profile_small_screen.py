"""The Profile tab on a small screen (issue 37's walk): maximized on 1024×600, the Code workspace gives the IR card
~150 px; a program's profile summary (four lines at that width) was squeezed to 55 px and the table's row count and
the timeline's figures to 9 and 4 px under it, their lines drawn over each other. Below its buttons the Profile
page scrolls up and down: every label there is as tall as its text needs at its width (wrapped), as wide as a
one-line label's text, inside the page or inside its scroll area, and no two labels overlap. Each screen runs in its
own process on an offscreen screen of that size (:func:`tests.conftest.run_on_screen`); the Run workspace's Profile
tab is measured the same way in the same window.

The controls of both pages are whole too (27 Nov, the real window at 1024×600): the Profile tab's button row cut its
"by" choice to "source l" and the Top 10 button to "Top …es" (it now wraps onto a second row), and the Source map
tab drew the dataflow graph's buttons over the explorer's "Fold repeated layers", its tree ~30 px tall (the
inspector now scrolls, and lays its explorer above the graph when the tab is narrower than both side by side): no
button, choice, field, check box, tab bar or list is narrower than its least width or overlaps another."""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import run_on_screen

SCRIPT = textwrap.dedent("""
    import json, time
    from PySide6.QtCore import QPoint, QRect, Qt
    from PySide6.QtWidgets import (QAbstractButton, QAbstractItemView, QAbstractSpinBox, QApplication, QComboBox,
                                   QLabel, QLineEdit, QScrollArea, QTabBar, QWidget)
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

    CONTROLS = (QAbstractButton, QComboBox, QAbstractSpinBox, QLineEdit, QAbstractItemView, QTabBar, QLabel)

    def clashes(page):
        \"\"\"Each shown control of the page narrower than its least width, and each pair that overlaps (a control
        inside another, as a combo box's field or a tree's header, is part of it).\"\"\"
        shown = [w for w in page.findChildren(QWidget) if isinstance(w, CONTROLS) and w.isVisibleTo(page)
                 and w.width() > 0 and not isinstance(w.parentWidget(), (QComboBox, QAbstractSpinBox, QTabBar))]
        found = [f"{w.objectName() or type(w).__name__}: {w.width()} < {w.minimumSizeHint().width()} px wide"
                 for w in shown if isinstance(w, (QAbstractButton, QComboBox, QAbstractSpinBox))
                 and w.width() < w.minimumSizeHint().width()]
        rects = [(w, QRect(w.mapTo(page, QPoint(0, 0)), w.size()).adjusted(1, 1, -1, -1)) for w in shown]
        for i, (a, ra) in enumerate(rects):
            for b, rb in rects[:i]:
                if ra.intersects(rb) and not a.isAncestorOf(b) and not b.isAncestorOf(a):
                    found.append(f"{a.objectName() or type(a).__name__} {getattr(a, 'text', str)()!r} over "
                                 f"{b.objectName() or type(b).__name__} {getattr(b, 'text', str)()!r}")
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
    page, source = win.profile.page, win.inspect.page
    got = {"code": flaws(page) + clashes(page), "code_page": page.size().toTuple(),
           "summary": win.profile.summary.text()}
    win.ui.ir_tabs.tabs.setCurrentWidget(source)
    settle()
    split = win.inspect.inspector.split
    got |= {"code_source": clashes(source), "code_source_width": source.width(),
            "code_side_by_side": split.orientation() == Qt.Orientation.Horizontal}
    win.workspaces.show("Run")
    win.ui.ir_tabs.tabs.setCurrentWidget(page)
    settle()
    got |= {"run": flaws(page) + clashes(page), "run_page": page.size().toTuple()}
    win.ui.ir_tabs.tabs.setCurrentWidget(source)
    settle()
    got |= {"run_source": clashes(source)}
    win.workspaces.show("Inspect")
    settle()
    got |= {"inspect_source": clashes(source), "inspect_source_width": source.width(),
            "inspect_side_by_side": split.orientation() == Qt.Orientation.Horizontal}
    print(json.dumps(got))
    win.close()
""")


@pytest.mark.parametrize("screen", [(1024, 600), (1280, 720)])
def test_the_profile_and_source_map_tabs_are_whole_in_every_workspace(tmp_path, screen):
    got = run_on_screen(tmp_path, screen, SCRIPT)
    assert "20 calls profiled" in got["summary"], got
    assert not got["code"], got
    assert not got["run"], got
    assert not got["code_source"] and not got["run_source"] and not got["inspect_source"], got
    # the explorer beside the graph where both fit (Inspect's whole width), above it in the Code workspace's card
    # at 1024×600 (~490 px)
    assert got["inspect_side_by_side"], got
    assert got["code_side_by_side"] == (screen != (1024, 600)), got
