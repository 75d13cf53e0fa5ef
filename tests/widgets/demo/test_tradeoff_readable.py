"""The trade-off plot stays readable wherever it is shown (issue 55): its axis titles whole (a short title where the
long one would be cut), its exports drawn for a slide (1600×900 logical px, whatever the plot's size on screen; SVG
drawn by cairosvg, not Qt), its font back to the window's after presentation, each point where its label's paired
verdict says, and the verdict line one elided line; the Demo kit's place shows the plot only from 240 px tall."""

from __future__ import annotations

import io
import re

import numpy as np
import pytest
from PySide6.QtWidgets import QApplication, QLabel

from widgets.demo.elided_line import ElidedLine
from widgets.demo.plot_or_note import PlotOrNote
from widgets.demo.tradeoff_export import SLIDE_SIZE
from widgets.demo.tradeoff_plot import MIN_PLOT_PX, TradeoffPlot, TradeoffPoint

SPLIT = {"trace": 200.0, "lower": 50.0, "compile": 750.0}
POINTS = [
    TradeoffPoint("default", 1000.0, 10.0, SPLIT, baseline=True, pareto=True, verdict_line="A/A ±1.8 %"),
    TradeoffPoint("O0", 500.0, 12.0, SPLIT, pareto=True),
    TradeoffPoint("O3", 3100.0, 9.6, SPLIT, pareto=True, verdict_line="1.25× faster than default (95 % CI 1.20–1.30)",
                  break_even="O3 pays for its extra 2.1 s after 2,100 tokens",
                  verdict={"ratio": 1.25, "ci_low": 1.2, "ci_high": 1.3, "rounds": 9}),
]


def _plot(qtbot, size: tuple[int, int], compact: bool = True) -> TradeoffPlot:
    plot = TradeoffPlot(compact=compact, title=False)
    qtbot.addWidget(plot)
    plot.resize(*size)
    plot.set_points(POINTS)
    plot.show()
    qtbot.waitExposed(plot)
    qtbot.waitUntil(lambda: not plot._tidy.isActive(), timeout=2000)
    plot.declutter()
    return plot


@pytest.mark.parametrize("size", [(260, MIN_PLOT_PX), (480, 260), (900, 600)])
def test_axis_titles_are_whole_at_every_size(qtbot, size):
    plot = _plot(qtbot, size)
    titles = plot.axis_titles()
    assert plot.titles_whole(), titles
    if size[0] >= 900:  # room for the long titles
        assert titles["bottom"][0].startswith("compile ms (trace") and titles["left"][0] == "steady ms per call"


def test_exports_are_drawn_for_a_slide_not_copied_from_the_screen(qtbot, tmp_path):
    cairosvg = pytest.importorskip("cairosvg")
    from PIL import Image

    plot = _plot(qtbot, (190, 120))  # the Demo kit's strip at 1280×720
    png = Image.open(plot.export(tmp_path / "t.png"))
    assert png.size == (2 * SLIDE_SIZE[0], 2 * SLIDE_SIZE[1])
    svg = plot.export(tmp_path / "t.svg").read_text()
    w, h = (float(re.search(rf'{k}="([\d.]+)pt"', svg).group(1)) for k in ("width", "height"))
    assert (round(w / 0.75), round(h / 0.75)) == SLIDE_SIZE  # matplotlib writes pt: 1600×900 CSS px
    for text in ("steady ms per call", "compile ms (trace + lower + compile)", "O3 pays for its extra 2.1 s"):
        assert text in svg  # the long titles whole and every label (the compact plot's too) on the slide
    image = np.asarray(Image.open(io.BytesIO(cairosvg.svg2png(bytestring=svg.encode()))).convert("L"))
    ink = np.argwhere(image < 200)
    assert ink[:, 1].min() >= 2 and ink[:, 0].max() <= image.shape[0] - 3  # nothing drawn over the edges
    assert ink[:, 1].min() <= 60  # the y title at the left edge, not cut off it


def test_presentation_font_goes_back(qtbot):
    plot = _plot(qtbot, (900, 600), compact=False)
    normal = plot.plot.getPlotItem().getAxis("left").label.font().pointSize()
    plot.set_font_size(24)
    assert plot.plot.getPlotItem().getAxis("left").label.font().pointSize() == 24
    plot.set_font_size(0)
    assert plot.plot.getPlotItem().getAxis("left").label.font().pointSize() == normal
    assert plot.caption.font().pointSize() == QApplication.font().pointSize()


def test_a_point_sits_where_its_paired_verdict_says(qtbot):
    plot = _plot(qtbot, (900, 600), compact=False)
    o3 = plot.points[2]
    assert o3.steady_ms == pytest.approx(10.0 / 1.25)  # "1.25× faster than default": 8 ms, not the one pass's 9.6
    assert "one pass measured 9.600 ms/token" in o3.versus
    assert plot.points[1].steady_ms == 12.0  # no paired verdict: as measured
    assert list(plot.others.getData()[1]) == [12.0, pytest.approx(8.0)]
    slower = POINTS[2]._replace(verdict={"ratio": 0.8, "ci_low": 0.75, "ci_high": 0.85, "rounds": 9})
    plot.set_points([*POINTS[:2], slower])  # paired: 0.8×, drawn at 12.5 ms, beaten by the baseline
    assert [p.pareto for p in plot.points] == [True, True, False]
    assert list(plot.front.getData()[0]) == [500.0, 1000.0]  # the line joins what is drawn


def test_the_data_exports_keep_the_measured_ms(qtbot, tmp_path):
    import json

    plot = _plot(qtbot, (900, 600), compact=False)
    rows = json.loads(plot.export(tmp_path / "t.json").read_text())
    assert [r["steady_ms_per_call"] for r in rows] == [10.0, 12.0, 9.6]  # the one pass, not the placing


def test_the_plot_shows_only_where_it_is_tall_enough(qtbot):
    plot = TradeoffPlot(compact=True, title=False)
    place = PlotOrNote(plot, MIN_PLOT_PX, "too small", "Show it elsewhere")
    qtbot.addWidget(place)
    place.resize(400, 120)
    place.show()
    qtbot.waitExposed(place)
    assert not place.fits() and not plot.isVisible() and place.note.isVisible()
    with qtbot.waitSignal(place.moveRequested):
        place.button.click()
    place.resize(400, 300)
    qtbot.waitUntil(place.fits)
    assert plot.isVisible() and plot.plot.height() >= MIN_PLOT_PX


def test_the_verdict_line_is_one_elided_line(qtbot):
    line = ElidedLine()
    qtbot.addWidget(line)
    line.resize(200, 20)
    line.show()
    text = "vs default, 9 paired rounds (0 dropped), A/A ±1.8 %: O3 1.25× faster than default (95 % CI 1.20–1.30)"
    line.setText(text)
    line.setToolTip("paired rounds: every sentence")
    assert line.text() == text and line.shown_text().endswith("…") and len(line.shown_text()) < len(text)
    assert line.sizeHint().height() <= QLabel("x").sizeHint().height() + 2  # one line, however long
    assert text in line.toolTip() and "every sentence" in line.toolTip()
