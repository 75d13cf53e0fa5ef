"""The latency plot keeps its height (issue 37): at 1280×720 outside presentation, after a race of three modes
and its replay (six runs), the plot's drawing area (between its axes) is at least a quarter of the window's
height; the run legend and the steady-decode key take a fixed budget, and Clear plot gives everything back."""

from __future__ import annotations

import os
import re

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402
from qt_helpers import call_record  # noqa: E402

MODEL = "SmolLM2-135M-Instruct · Q4_1 → float32"  # the default model's label, as the window shows it
WALLS = {"torch": (40.0, 9.0), "jit-static": (1500.0, 8.0), "torchax-eager": (900.0, 350.0)}


def settle(qtbot) -> None:
    for _ in range(3):
        QApplication.processEvents()
    qtbot.wait(20)


def draw_race_and_replay(win) -> None:
    """A race of three modes (group 1) and its replay (group 2), as the window labels them, each lane's steady
    decode median set."""
    from app.gui.menus import MODE_COLOURS, MODE_SYMBOLS

    plot = win.ui.plot
    run_id = 0
    for group, replay in ((1, ""), (2, " ▶ replay")):
        for mode, (first, steady) in WALLS.items():
            run_id += 1
            plot.start_run(f"{mode}{replay} · 1 device · {MODEL}", colour=MODE_COLOURS[mode], fade=False,
                           symbol=MODE_SYMBOLS[mode], run_id=run_id, group=group)
            for i in range(12):
                plot.add_record(call_record(i, "prefill" if i == 0 else "decode", first if i < 2 else steady + i % 3,
                                            compiled=mode == "jit-static" and i < 2))
            plot.redraw()
            plot.set_run_steady(run_id, steady + 1)
    plot.redraw()


def drawing_height(plot) -> float:
    return plot.getPlotItem().getViewBox().sceneBoundingRect().height()


def exported_drawing_height(plot, tmp_path, least: float) -> None:
    """The SVG export, drawn by a renderer that is not Qt's (cairosvg), keeps the drawing area: the compile
    spike's stars (~1.5 s) stand at least ``least`` / 2 px above the jit-static lane's steady calls (~9 ms),
    2.2 decades apart, as on screen (an 86-px strip put them ~65 px apart)."""
    cairosvg = pytest.importorskip("cairosvg")
    import io

    import numpy as np
    from PIL import Image
    from svg_helpers import near_mask

    from app.gui.menus import MODE_COLOURS
    from widgets.plot.plot_export import export_plot

    svg = export_plot(plot, tmp_path / "plot.svg")
    width = int(plot.getPlotItem().sceneBoundingRect().width())
    rgb = np.asarray(Image.open(io.BytesIO(cairosvg.svg2png(url=str(svg), output_width=width))).convert("RGB"))
    top = int(plot.getPlotItem().getViewBox().sceneBoundingRect().top()) - 10  # below the key's ★

    def rows(colour: str) -> np.ndarray:
        ys, _xs = np.nonzero(near_mask(rgb[top:], colour, 60))
        return ys

    stars, lane = rows("#ea580c"), rows(MODE_COLOURS["jit-static"])
    assert len(stars) and len(lane), "the export draws the stars and the lane"
    assert np.percentile(lane, 95) - np.median(stars) >= least / 2, (np.median(stars), np.percentile(lane, 95))


@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_six_runs_keep_a_quarter_of_the_window_for_the_drawing_area(qtbot, app_look, make_window, gui_model,
                                                                     size, tmp_path):
    win = make_window(gui_model, autoload=False, size=size)
    try:
        settle(qtbot)
        empty = drawing_height(win.ui.plot)
        draw_race_and_replay(win)
        settle(qtbot)
        plot = win.ui.plot
        assert plot.run_count() == 6
        assert drawing_height(plot) >= size[1] / 4, (drawing_height(plot), empty)
        # every entry names its run and mode; what all runs share is named once, under the x axis
        names = [label.text for _, label in plot.legend.items]
        for run_id, mode in enumerate([*WALLS, *WALLS], start=1):
            assert any(n.startswith(f"run {run_id} · {mode}") for n in names) or any(  # or its race's one entry
                (m := re.match(r"runs (\d+)–(\d+) · race of", n)) and int(m[1]) <= run_id <= int(m[2])
                for n in names), names
        assert MODEL in plot.shared_label() or all(MODEL in n for n in names), (plot.shared_label(), names)
        axis_title = plot.getPlotItem().getAxis("bottom").label
        assert axis_title.sceneBoundingRect().right() <= plot.getPlotItem().sceneBoundingRect().right() + 1, \
            "the x axis' title (naming what every run shares) stays inside the plot"
        assert plot.key_text().count("\n") == 0 and plot.getPlotItem().titleLabel.text.count("<br>") <= 1
        exported_drawing_height(plot, tmp_path, size[1] / 4)
        win.plot_actions.clear()
        settle(qtbot)
        assert drawing_height(plot) >= empty - 2, "Clear plot gives the height back"
    finally:
        win.close()


@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_run_and_stop_stay_put_when_the_host_and_bandwidth_figures_arrive(qtbot, app_look, make_window, gui_model,
                                                                          size):
    """Issue 37: the host-share card came and went between runs and moved Run and Stop ~50 px sideways. Every
    card keeps its place; the gauge says "71 %" with the bound's arithmetic in its tool tip."""
    win = make_window(gui_model, autoload=False, size=size)
    try:
        settle(qtbot)
        run, stop, stats = win.ui.prompt.run_button, win.ui.prompt.stop_button, win.ui.stats
        where = lambda: (run.mapTo(win, run.rect().topLeft()).toTuple(),  # noqa: E731
                         stop.mapTo(win, stop.rect().topLeft()).toTuple())
        before = where()
        assert stats.cards["host"].isVisible() and stats.cards["bound"].isVisible()
        stats.set_host({"transfer": 0.05, "flatten": 0.2, "dispatch": 0.3, "wait": 1.2, "token": 0.25}, 165)
        stats.set_bound(0.71, "538 MB of weights ÷ 30.5 GB/s = 17.6 ms per token")
        settle(qtbot)
        assert where() == before
        assert stats.text("bound") == "71 %" and "17.6 ms per token" in stats.cards["bound"].toolTip()
        assert stats.width() <= stats.parentWidget().width(), "the strip fits its column"
        stats.reset()
        settle(qtbot)
        assert where() == before and stats.text("bound") == "–"
    finally:
        win.close()


def test_a_new_run_is_named_in_its_column_before_its_first_point(qtbot, app_look, make_window, gui_model):
    """A second race's first lane showed its whole label (model and all) until its first point arrived: one wide
    column pushed the other off the plot and the legend past the card's bottom (X11, 1280x720)."""
    win = make_window(gui_model, autoload=False, size=(1280, 720))
    try:
        draw_race_and_replay(win)
        plot = win.ui.plot
        settle(qtbot)
        plot.start_run(f"torch · 1 device · {MODEL}", fade=False, run_id=7, group=3)  # no point yet
        names = [label.text for _, label in plot.legend.items]  # at once: no resize, no redraw in between
        assert names[-1].startswith("run 7 · torch"), names
        assert plot.legend.boundingRect().width() <= plot.width(), (plot.legend.boundingRect().width(), names)
        settle(qtbot)
        legend = plot.mapFromScene(plot.legend.sceneBoundingRect()).boundingRect()
        assert plot.viewport().rect().adjusted(-1, -1, 1, 1).contains(legend), (legend, plot.viewport().rect(), plot.legend.pos(), plot._legend_row.pos(), plot.legend.sceneBoundingRect())
    finally:
        win.close()


def test_two_six_lane_races_keep_the_drawing_area_and_name_the_older_race_once(qtbot, app_look, make_window,
                                                                                gui_model):
    """The real window at 1280x720 after Race and Replay cold start (12 lanes): six legend rows squeezed the
    drawing area to ~100 px. The older race is one entry; the newest race's lanes keep theirs."""
    from app.gui.menus import MODE_COLOURS, MODE_SYMBOLS

    modes = ("torch", "torchax-eager", "jit-dynamic", "jit-static", "jit-loop", "torch-compile")
    win = make_window(gui_model, autoload=False, size=(1280, 720))
    try:
        plot = win.ui.plot
        for run_id in range(1, 13):
            mode = modes[(run_id - 1) % 6]
            plot.start_run(f"{mode} · 1 device · {MODEL}", colour=MODE_COLOURS[mode], fade=False,
                           symbol=MODE_SYMBOLS[mode], run_id=run_id, group=1 + (run_id - 1) // 6)
            for i in range(8):
                plot.add_record(call_record(i, "prefill" if i == 0 else "decode", 3000.0 if i < 2 else 40.0 + run_id,
                                            compiled=i < 2))
            plot.redraw()
            plot.set_run_steady(run_id, 40.0 + run_id)
        settle(qtbot)
        names = [label.text for _, label in plot.legend.items]
        assert names[0] == "runs 1–6 · race of 6 modes" and len(names) == 7, names
        assert [n.split(" · ")[0] for n in names[1:]] == [f"run {i}" for i in range(7, 13)], names
        assert drawing_height(plot) >= 720 / 4, drawing_height(plot)
        assert plot.getPlotItem().titleLabel.text.count("<br>") <= 1, plot.key_text()  # the key in two lines
        view = plot.getPlotItem().getViewBox().sceneBoundingRect().adjusted(-1, -1, 1, 1)
        notes = [n for run in plot._runs for n in run.notes if n.isVisible()]
        assert notes and all(view.contains(n.sceneBoundingRect()) for n in notes), \
            [(n.toPlainText(), n.sceneBoundingRect()) for n in notes if not view.contains(n.sceneBoundingRect())]
        rects = [n.sceneBoundingRect() for n in notes]  # no note over another (X11: six lane notes in a heap)
        assert not [(i, j) for i in range(len(rects)) for j in range(i) if rects[i].intersects(rects[j])]
    finally:
        win.close()
