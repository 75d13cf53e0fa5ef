"""Issue 37: at 1280×720 the Code workspace cut the IR card's last tab to "Pas" (the tabs scrolled: the card beside
the editor was narrower than its tab titles). Every tab title on screen reads whole at 1280×720, in every workspace,
with the 9 pt font of the tests and the 10 pt font of a common desktop."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication, QDockWidget, QTabBar, QToolButton

pytest.importorskip("pytestqt")


def cut_tabs(win) -> list[str]:
    """``bar: title (why)`` for every tab on screen whose title is not shown whole: scrolled out of its bar, behind
    the bar's scroll buttons, or narrower than its title needs (elided)."""
    out = []
    for bar in win.findChildren(QTabBar):
        if not bar.isVisible() or bar.visibleRegion().isEmpty():
            continue
        name = bar.objectName() or bar.parentWidget().objectName()
        if any(b.isVisible() for b in bar.findChildren(QToolButton)):
            out.append(f"{name}: scroll buttons shown ({[bar.tabText(i) for i in range(bar.count())]})")
        for i in range(bar.count()):
            if not bar.isTabVisible(i):
                continue
            rect, need = bar.tabRect(i), bar.tabSizeHint(i).width()
            if rect.left() < 0 or rect.right() >= bar.width():
                out.append(f"{name}: {bar.tabText(i)} (at {rect.left()}..{rect.right()} of {bar.width()} px)")
            elif rect.width() < need:
                out.append(f"{name}: {bar.tabText(i)} ({rect.width()} of {need} px)")
    return out


@pytest.fixture(params=[9, 10], ids=["9pt", "10pt"])
def app_font(request, qapp):
    font = QApplication.font()
    bigger = QApplication.font()
    bigger.setPointSize(request.param)
    QApplication.setFont(bigger)
    yield request.param
    QApplication.setFont(font)


def test_every_tab_title_reads_whole_at_1280x720(qtbot, make_window, gui_model, app_font):
    win = make_window(gui_model, autoload=False, size=(1280, 720))
    cut = []
    for name in ("Run", "Inspect", "Code", "Inspect", "Code", "Run"):  # later visits too
        win.workspaces.show(name)
        qtbot.wait(100)
        if name == "Run":
            for dock in win.findChildren(QDockWidget):
                if not dock.isHidden():
                    dock.raise_()
                    qtbot.wait(50)
                    cut += [f"Run/{dock.windowTitle()}: {c}" for c in cut_tabs(win)]
        cut += [f"{name}: {c}" for c in cut_tabs(win)]
    assert not cut, "\n".join(dict.fromkeys(cut))
    # the editor keeps most of its room
    editor, right = win.workspaces.code_split.sizes()[:2]
    assert editor >= 0.35 * (editor + right)
