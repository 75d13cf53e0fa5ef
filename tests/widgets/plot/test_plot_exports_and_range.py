"""Exports any renderer draws alike, and a plot that stays readable (issue #20): the SVG is rendered by a
renderer that is not Qt's (cairosvg) and compared with the PNG export; the y axis never runs past the
data's max × 10; a race's lanes each get their own steady-decode line."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import io  # noqa: E402
import math  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from qt_helpers import synthetic_run  # noqa: E402

from widgets.plot.latency_plot import LatencyPlot  # noqa: E402
from widgets.plot.plot_export import export_plot  # noqa: E402

LANES = (("#475569", "torch", 60.0), ("#2563eb", "jit-static", 24.0), ("#dc2626", "torch-compile", 52.0))


def _race_plot(qtbot, size=(900, 500), compile_ms=75_000.0) -> LatencyPlot:
    plot = LatencyPlot()
    qtbot.addWidget(plot)
    plot.resize(*size)
    plot.show()
    for run_id, (colour, mode, steady) in enumerate(LANES, start=1):
        plot.start_run(f"{mode} · 1 device", colour=colour, fade=False, symbol="o", run_id=run_id, group=1)
        for rec in synthetic_run(24):
            wall = compile_ms if rec.compiled and mode == "torch-compile" else (
                rec.wall_ms if rec.compiled else steady)
            plot.add_record(rec.__class__(**{**rec.__dict__, "wall_ms": wall}))
        plot.redraw()
        plot.set_run_steady(run_id, steady)
    qtbot.wait(50)
    return plot


def _coloured_share(rgb: np.ndarray, colour: str) -> float:
    """Share of pixels within a small distance of ``colour``."""
    target = np.array([int(colour[i:i + 2], 16) for i in (1, 3, 5)], dtype=float)
    return float((np.abs(rgb[..., :3].astype(float) - target).sum(axis=-1) < 60).mean())


def test_svg_drawn_by_a_non_qt_renderer_matches_the_png_export(qtbot, tmp_path):
    cairosvg = pytest.importorskip("cairosvg")
    from PIL import Image

    plot = _race_plot(qtbot)
    png, svg, pdf = (export_plot(plot, tmp_path / f"plot.{ext}") for ext in ("png", "svg", "pdf"))
    text = svg.read_text()
    assert "non-scaling-stroke" not in text  # geometry in page coordinates, not data-space transforms
    assert pdf.read_bytes().startswith(b"%PDF")
    qt_png = np.asarray(Image.open(png).convert("RGB"))
    other = np.asarray(Image.open(io.BytesIO(cairosvg.svg2png(url=str(svg), output_width=qt_png.shape[1],
                                                               output_height=qt_png.shape[0]))).convert("RGB"))
    for colour, _mode, _steady in LANES[1:]:  # every lane's curve and markers, in both, in similar amounts
        a, b = _coloured_share(qt_png, colour), _coloured_share(other, colour)
        assert a > 0.0005 and b > 0.0005, (colour, a, b)
        assert 0.25 < b / a < 4.0, (colour, a, b)
    strong = lambda rgb: float((rgb.max(axis=-1).astype(int) - rgb.min(axis=-1) > 80).mean())  # noqa: E731
    assert strong(other) < 0.08  # librsvg filled whole bands (22 % strongly coloured) with Qt's SVG
    # the compile spike's stars sit at the same places in both renderings (same geometry, not only colours)
    stars = []
    item = plot.getPlotItem()
    box, page = item.getViewBox().sceneBoundingRect(), item.sceneBoundingRect()
    scale = qt_png.shape[1] / page.width()
    x0, y0 = int((box.left() - page.left()) * scale), int((box.top() - page.top()) * scale)
    x1, y1 = int((box.right() - page.left()) * scale), int((box.bottom() - page.top()) * scale)
    for rgb in (qt_png[y0:y1, x0:x1], other[y0:y1, x0:x1]):  # inside the axes (the title's ★ is orange too)
        ys, xs = np.nonzero(np.abs(rgb.astype(float) - [234, 88, 12]).sum(axis=-1) < 80)
        top = ys < (ys.min() + ys.max()) / 2  # the 75 s stars (the 1 s stars are lower)
        # the mean x: the two spikes' stars are two clusters, whose median flips on a few antialiased pixels
        stars.append((np.mean(xs[top]), np.median(ys[top]), np.median(ys[~top])))
    (xa, ya, lowa), (xb, yb, lowb) = stars
    assert abs(xa - xb) < 12 and abs(ya - yb) < 12 and abs(lowa - lowb) < 12, stars


def test_the_y_axis_ends_within_a_decade_of_the_largest_point_whatever_the_size(qtbot):
    plot = _race_plot(qtbot)
    for size in ((900, 500), (600, 260), (1800, 1000), (500, 200), (900, 500)):
        plot.resize(*size)
        qtbot.wait(30)
        plot.redraw()
        low, high = plot.getPlotItem().getViewBox().viewRange()[1]
        assert math.log10(75_000.0) <= high <= math.log10(75_000.0) + 1.0 + 1e-6, (size, high)
        assert low <= math.log10(24.0)


def test_each_race_lane_has_its_own_steady_decode_line_in_its_colour(qtbot):
    plot = _race_plot(qtbot)
    title = plot.getPlotItem().titleLabel.text
    for colour, mode, _steady in LANES:
        assert f"color:{colour}'>{mode}" in title
    lines = plot.steady_lines()
    assert all(line is not None and line.isVisible() for line in lines)
    assert [round(10 ** line.value(), 1) for line in lines] == [s for _c, _m, s in LANES]
    assert [line.pen.color().name() for line in lines] == [c for c, _m, _s in LANES]


def test_each_race_lane_names_its_first_compile_in_its_colour_over_the_curves(qtbot):
    """Issue 37: a race's lanes had no compile note; notes were crossed by the curves."""
    plot = _race_plot(qtbot)
    for run, (colour, mode, _steady) in zip(plot._runs, LANES):
        assert len(run.notes) == 1, [n.toPlainText() for n in run.notes]  # the first compile only
        note = run.notes[0]
        assert note.toPlainText().startswith(f"{mode}: compile ") and note.color.name() == colour
        assert note.zValue() > max(it.zValue() for it in (run.line, *run.dots.values()))
