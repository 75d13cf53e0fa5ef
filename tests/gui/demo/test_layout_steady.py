"""No control moves more than 4 px between two runs of the same workspace (issue 55): a mixture-of-experts run's
Experts-per-token strip appears under the token stream without moving Run/Stop or narrowing the latency plot
(synthetic routing on a window without a model: no compile); the IR card's tabs and figures row stay where they
are whichever IR tab is current."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import QPoint  # noqa: E402
from PySide6.QtWidgets import QApplication, QPushButton, QWidget  # noqa: E402

TOLERANCE_PX = 4


def _geometry(win) -> dict[str, tuple[int, int, int, int]]:
    named = {"run": win.findChild(QPushButton, "runButton"), "stop": win.findChild(QPushButton, "stopButton"),
             "plot": win.ui.plot, "prompt": win.ui.prompt, "tokens": win.ui.tokens}
    out = {}
    for name, w in named.items():
        assert isinstance(w, QWidget), name
        at = w.mapTo(win, QPoint(0, 0))
        out[name] = (at.x(), at.y(), w.width(), w.height())
    return out


def _routing(layers: int = 2, experts: int = 8, tokens: int = 6, k: int = 2):
    chosen = [[[(t + i + layer) % experts for i in range(k)] for t in range(tokens)] for layer in range(layers)]
    weights = [[[0.6, 0.4] for _t in range(tokens)] for _layer in range(layers)]
    return chosen, weights


@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080)])
def test_the_experts_strip_moves_nothing(qtbot, make_window, gui_model, size):
    win = make_window(gui_model, autoload=False, size=size)
    qtbot.waitExposed(win)
    QApplication.processEvents()
    before = _geometry(win)
    experts, weights = _routing()
    win.ui.router.add_call(0, "prefill", experts, weights)
    for i in range(1, 12):
        win.ui.router.add_token(i - 1, f"tok{i}")
        e, w = _routing(tokens=1)
        win.ui.router.add_call(i, "decode", e, w)
    for _ in range(3):
        QApplication.processEvents()
    assert win.ui.router.isVisible() and win.ui.router.heat.height() > 0
    heat, strip = win.ui.router.heat, win.ui.router
    rows = strip.n_layers * strip.num_experts * heat.row_height(heat.height()) + 3 * (strip.n_layers - 1)
    assert rows <= heat.height()  # every layer's rows drawn, smaller where the card is short
    after = _geometry(win)
    for name in ("run", "stop", "plot", "prompt"):
        moved = [abs(a - b) for a, b in zip(before[name], after[name])]
        assert max(moved) <= TOLERANCE_PX, (name, before[name], after[name])
    win.ui.router.clear()  # the next (dense) run: the strip goes, nothing moves back either
    QApplication.processEvents()
    assert max(abs(a - b) for a, b in zip(before["run"], _geometry(win)["run"])) <= TOLERANCE_PX


def _ir_card(win) -> dict[str, tuple[int, int, int, int]]:
    ir = win.ui.ir_tabs
    out = {}
    for name, w in {"IR tabs": ir.tabs, "figures row": ir.summary, "IR card": ir}.items():
        at = w.mapTo(win, QPoint(0, 0))
        out[name] = (at.x(), at.y(), w.width(), w.height())
    return out


@pytest.mark.parametrize("size", [(1280, 720), (1024, 600)])
def test_the_ir_tabs_stay_put_whichever_tab_is_current(qtbot, app_look, make_window, gui_model, size):
    """The walk, seed 7 (issue 55): after a Profile visit the Run workspace's IR tabs sat 26 px lower at 1280×720
    (the figures row above them took the room the Profile page's smaller minimum left) and 28 px shorter at
    1024×600 (the dock's card shrank to it), because only the current tab's minimum counted."""
    win = make_window(gui_model, autoload=False, size=size)
    qtbot.waitExposed(win)
    win.menus.reset_layout_action.trigger()
    tabs = win.ui.ir_tabs.tabs
    titles = [tabs.tabText(i) for i in range(tabs.count())]
    assert {"jaxpr", "Source map", "Profile", "Passes"} <= set(titles), titles
    for _ in range(3):
        QApplication.processEvents()
    before = _ir_card(win)
    for title in [*titles, "jaxpr"]:
        tabs.setCurrentIndex(titles.index(title))
        for _ in range(3):
            QApplication.processEvents()
        after = _ir_card(win)
        for name, rect in before.items():
            moved = max(abs(a - b) for a, b in zip(rect, after[name], strict=True))
            assert moved <= TOLERANCE_PX, (title, name, rect, after[name])


def test_the_tradeoff_in_the_plots_place_moves_nothing_in_a_narrow_window(qtbot, app_look, make_window, gui_model):
    """The walk, seed 1 at 1024×600 (issue 55): a settings race's trade-off taking the latency plot's place moved
    Run/Stop 30 px right — the window is too narrow for the prompt column's and the plot card's least widths, and
    the trade-off card asked for 41 px less than the plot card, so the prompt column took it back."""
    win = make_window(gui_model, autoload=False, size=(1024, 537))
    qtbot.waitExposed(win)
    sr = win.demo.settings_race
    for _ in range(3):
        QApplication.processEvents()
    before = _geometry(win)
    sr.in_plot_area.setChecked(True)
    for on in (True, False):  # a race puts the trade-off on stage; the next run brings the plot back
        sr.on_stage = on
        sr.stageChanged.emit(on)
        for _ in range(3):
            QApplication.processEvents()
        assert sr.stage_card.isVisible() == on and win.ui.plot_card.isVisible() != on
        after = _geometry(win)
        for name in ("run", "stop", "prompt", "tokens"):
            moved = max(abs(a - b) for a, b in zip(before[name], after[name], strict=True))
            assert moved <= TOLERANCE_PX, (on, name, before[name], after[name])
