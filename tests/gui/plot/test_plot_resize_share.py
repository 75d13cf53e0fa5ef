"""Issue 55 flaw 1: a window resized from 1600×972 to 1280×720 kept a 340×137 px Run plot until View ▸ Reset layout —
the prompt and token stream column kept its width and the plot took the whole loss. The plot keeps its share of the
main area's width when the window shrinks, and its drawing area stays ≥ 180 px."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

MIN_DRAWING_PX = 180


def _share(win) -> float:
    sizes = win.ui.top_split.sizes()
    return sizes[1] / max(1, sizes[0] + sizes[1])


def _shrink_keeps_the_run_share(qtbot, win) -> None:
    """Resize ``win`` (in Run, at its large size) to 1280×720: the plot's share of the main area's width holds."""
    qtbot.wait(100)
    large = _share(win)
    win.resize(1280, 720)
    qtbot.waitUntil(lambda: win.width() == 1280, timeout=2000)
    qtbot.wait(100)
    assert abs(_share(win) - large) < 0.03, (large, _share(win), win.ui.top_split.sizes())


def test_the_run_plot_keeps_its_share_when_the_window_shrinks(qtbot, make_window, gui_model):
    win = make_window(gui_model, autoload=False, size=(1600, 972))
    try:
        _shrink_keeps_the_run_share(qtbot, win)
        assert win.ui.plot.plotItem.getViewBox().sceneBoundingRect().height() >= MIN_DRAWING_PX
    finally:
        win.close()


def _code_share(win) -> float:
    sizes = win.workspaces.code_right.sizes()
    return sizes[1] / max(1, sum(sizes))


def test_the_code_plot_keeps_its_share_when_the_window_shrinks(qtbot, make_window, gui_model):
    """The walk, seed 5 at 1920×1080: the Code workspace sized at 1920×1040, the window then 799 px tall — the plot
    under the IR views took the whole 241 px loss (56 % → 44 % of the column, a 158 px drawing area). It keeps its
    share, and back in Run the plot shares a resize of the main area as before."""
    from app.gui.workspaces import PLOT_SHARE

    win = make_window(gui_model, autoload=False, size=(1747, 1040))
    try:
        win.workspaces.show("Code")
        qtbot.waitUntil(lambda: abs(_code_share(win) - PLOT_SHARE) < 0.02, timeout=2000)
        for size in ((1747, 799), (1280, 720)):
            win.resize(*size)
            qtbot.waitUntil(lambda s=size: win.size().toTuple() == s, timeout=2000)
            qtbot.wait(100)
            assert _code_share(win) > PLOT_SHARE - 0.02, (size, win.workspaces.code_right.sizes())
        assert win.ui.plot.plotItem.getViewBox().sceneBoundingRect().height() >= MIN_DRAWING_PX
        win.workspaces.show("Run")
        win.resize(1600, 972)
        qtbot.waitUntil(lambda: win.width() == 1600, timeout=2000)
        _shrink_keeps_the_run_share(qtbot, win)
    finally:
        win.close()
