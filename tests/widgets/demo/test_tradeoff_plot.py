"""The trade-off plot: one point per setting, the baseline starred, the Pareto front through the unbeaten settings,
labels with break-even sentences, the split on hover, and exports (SVG drawn by cairosvg, not Qt; CSV; JSON)."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

from widgets.demo.tradeoff_plot import TradeoffPlot, TradeoffPoint

POINTS = [
    TradeoffPoint("default", 1000.0, 10.0, {"trace": 200.0, "lower": 50.0, "compile": 750.0}, baseline=True,
                  pareto=True, equal=True),
    TradeoffPoint("O0", 500.0, 12.0, {"trace": 200.0, "lower": 50.0, "compile": 250.0}, pareto=True, equal=True),
    TradeoffPoint("O3", 3100.0, 9.0, {"trace": 200.0, "lower": 50.0, "compile": 2850.0}, pareto=True,
                  break_even="O3 pays for its extra 2.1 s after 2,100 tokens", equal=True,
                  detail={"XLA passes": 300.0, "autotune": 5.0, "codegen": 2550.0, "ptxas": 102.0}),
    TradeoffPoint("cpu-fast-math", 3200.0, 11.0, {"trace": 200.0, "lower": 50.0, "compile": 2950.0}, equal=False),
]


@pytest.fixture
def shown(qtbot):
    plot = TradeoffPlot()
    qtbot.addWidget(plot)
    plot.resize(900, 600)
    plot.set_points(POINTS)
    plot.show()
    qtbot.waitExposed(plot)
    return plot


def test_points_front_baseline_and_labels(shown):
    xs, ys = shown.front.getData()
    assert list(xs) == [500.0, 1000.0, 3100.0] and list(ys) == [12.0, 10.0, 9.0]  # by compile time
    assert list(shown.base.getData()[0]) == [1000.0]
    assert list(shown.others.getData()[0]) == [500.0, 3100.0, 3200.0]
    assert shown.label_texts() == ["default (baseline)", "O0", "O3\nO3 pays for its extra 2.1 s after 2,100 tokens",
                                   "cpu-fast-math"]
    shown.set_points(POINTS[:2])  # a new race replaces the old points and labels
    assert shown.label_texts() == ["default (baseline)", "O0"]


def test_hover_gives_the_split(shown):
    from PySide6.QtCore import QPointF

    vb = shown.plot.getPlotItem().getViewBox()
    at = vb.mapViewToScene(QPointF(3100.0, 9.0))
    shown._on_mouse_moved(at + QPointF(3, -2))
    assert shown.hovered is not None and shown.hovered.name == "O3"
    assert shown.plot.toolTip() == ("O3: compile 3,100 ms (trace 200 + lower 50 + compile 2,850 ms; compile = "
                                    "XLA passes 300 (of which autotune 5) + codegen 2,550 (of which ptxas 102) ms) · "
                                    "9.000 ms/token · outputs equal")
    at = vb.mapViewToScene(QPointF(500.0, 12.0))  # a point without a measured compile split
    shown._on_mouse_moved(at + QPointF(3, -2))
    assert shown.plot.toolTip() == ("O0: compile 500 ms (trace 200 + lower 50 + compile 250 ms) · 12.000 ms/token · "
                                    "outputs equal")
    shown._on_mouse_moved(vb.mapViewToScene(QPointF(2000.0, 11.5)))
    assert shown.hovered is None and shown.plot.toolTip() == ""


def test_exports(shown, tmp_path):
    cairosvg = pytest.importorskip("cairosvg")
    from PIL import Image

    svg = shown.export(tmp_path / "tradeoff.svg").read_text()
    for text in ("O3 pays for its extra 2.1 s after 2,100 tokens", "cpu-fast-math", "steady ms per call"):
        assert text in svg
    image = np.asarray(Image.open(io.BytesIO(cairosvg.svg2png(bytestring=svg.encode()))).convert("RGB"))
    orange = np.all(np.abs(image.astype(int) - [0xEA, 0x58, 0x0C]) < 40, axis=-1)
    assert orange.sum() > 50  # the Pareto front is drawn, by a renderer that is not Qt's
    rows = list(csv.DictReader((tmp_path / "t.csv").open() if shown.export(tmp_path / "t.csv") else []))
    assert [r["setting"] for r in rows] == ["default", "O0", "O3", "cpu-fast-math"]
    assert rows[2]["xla_compile_ms"] == "2850.0" and rows[3]["outputs_equal"] == "False"
    assert (rows[2]["xla_passes_ms"], rows[2]["codegen_ms"], rows[2]["ptxas_ms"]) == ("300.0", "2550.0", "102.0")
    assert rows[1]["xla_passes_ms"] == ""  # not measured
    data = json.loads(shown.export(tmp_path / "t.json").read_text())
    assert data[0]["baseline"] and data[2]["break_even"].startswith("O3 pays")
    assert shown.export(tmp_path / "t.png").stat().st_size > 1000
    with pytest.raises(ValueError, match="not .txt"):
        shown.export(tmp_path / "t.txt")


def test_close_points_labels_do_not_overlap(qtbot):
    """Three settings within a few percent of each other (the noise of a real race): their labels, sentences
    included, are moved apart instead of printed over each other."""
    close = [TradeoffPoint("default", 1040.0, 1.20, {}, baseline=True, pareto=True),
             TradeoffPoint("O3", 1900.0, 0.88, {}, pareto=True, break_even="O3 pays for its extra 864 ms after 2,727 tokens"),
             TradeoffPoint("O1", 2040.0, 1.05, {}, break_even="O1 pays for its extra 1.0 s after 6,418 tokens"),
             TradeoffPoint("cpu-fast-math", 2240.0, 1.31, {}), TradeoffPoint("O0", 1985.0, 7.6, {})]
    plot = TradeoffPlot()
    qtbot.addWidget(plot)
    plot.resize(860, 560)
    plot.set_points(close)
    plot.show()
    qtbot.waitExposed(plot)
    qtbot.wait(50)  # the view settles, then the labels are tidied
    rects = [label.sceneBoundingRect() for label in plot._labels]
    overlaps = [(a, b) for a in range(len(rects)) for b in range(a + 1, len(rects)) if rects[a].intersects(rects[b])]
    assert not overlaps, [(close[a].name, close[b].name) for a, b in overlaps]
    view = plot.plot.getPlotItem().getViewBox().sceneBoundingRect()
    assert all(view.contains(r) for r in rects), "every label inside the plot"


def test_one_point_gets_a_readable_range(qtbot):
    """The first lane alone: ±10 % around it, not a degenerate range with fifteen-digit tick labels."""
    plot = TradeoffPlot()
    qtbot.addWidget(plot)
    plot.resize(600, 400)
    plot.show()
    qtbot.waitExposed(plot)
    plot.set_points(POINTS[:1])
    qtbot.wait(20)
    (x0, x1), (y0, y1) = plot.plot.getPlotItem().getViewBox().viewRange()
    assert x0 <= 900.0 and x1 >= 1100.0 and y0 <= 9.0 and y1 >= 11.0
    plot.set_points(POINTS)  # more lanes: the range follows the points again
    qtbot.wait(20)
    (x0, x1), _ = plot.plot.getPlotItem().getViewBox().viewRange()
    assert x0 <= 500.0 and x1 >= 3200.0


def test_sub_millisecond_calls_read_in_ms(qtbot):
    """A program's calls of ~0.1 ms: the axis says ms and its ticks are ms (pyqtgraph rescaled them to "80 (x0.001)")."""
    plot = TradeoffPlot()
    qtbot.addWidget(plot)
    plot.resize(700, 500)
    plot.set_points([TradeoffPoint("default", 363.0, 0.139, {}, baseline=True, pareto=True),
                     TradeoffPoint("O0", 387.0, 0.081, {}, pareto=True)])
    plot.show()
    qtbot.waitExposed(plot)
    qtbot.wait(200)  # the view's range, then the axis's prefix, are set as it paints
    left = plot.plot.getPlotItem().getAxis("left")
    assert left.labelString().count("steady ms per call") == 1 and "x0.001" not in left.labelString()
    assert left.autoSIPrefixScale == 1.0
