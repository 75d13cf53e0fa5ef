"""The trade-off in the plot's place survives a visit to the Code workspace (issue 55, found by the walk: seed 1 at
1024×600 — a settings race put the trade-off in the latency plot's place, the Code workspace borrowed the plot, and
back in Run the plot and the trade-off stood side by side, Run and Stop squeezed below their size). The Code
workspace keeps its own plot shown whatever the Run workspace shows in its place. No model run: the stage is set as
a finished settings race leaves it (its plot too short in the Demo kit: Trade-off in the plot area)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def test_code_and_back_keeps_one_of_plot_and_trade_off(qtbot, make_window, gui_model, monkeypatch):
    win = make_window(gui_model, autoload=False, size=(1280, 720))
    try:
        ui, sr = win.ui, win.demo.settings_race
        sr.on_stage = True  # a settings race has points
        monkeypatch.setattr(sr, "plot_area", lambda: True)  # and they are in the plot's place
        win.demo.show_stage()
        qtbot.waitUntil(lambda: sr.stage_card.isVisible() and not ui.plot_card.isVisible())
        room = sr.stage_card.width()
        win.workspaces.show("Code")
        qtbot.waitUntil(lambda: ui.plot_card.isVisible())  # the Code workspace's plot
        assert not sr.stage_card.isVisible()
        win.demo.show_stage()  # e.g. another race's answer while in Code: the Code plot stays
        assert ui.plot_card.isVisible()
        win.workspaces.show("Run")
        qtbot.waitUntil(lambda: sr.stage_card.isVisible())
        assert not ui.plot_card.isVisible()  # not both side by side
        assert abs(sr.stage_card.width() - room) <= 4  # the trade-off has the room it had
        monkeypatch.setattr(sr, "plot_area", lambda: False)  # the next run: the latency plot back
        win.workspaces.show("Code")
        win.demo.show_stage()
        win.workspaces.show("Run")
        qtbot.waitUntil(lambda: ui.plot_card.isVisible())
        assert not sr.stage_card.isVisible()
    finally:
        win.close()
