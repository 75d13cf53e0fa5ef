"""The latency plot's exports drawn the same by every renderer, checked element by element: its SVG and PDF
carry the run legend (each label as text, in its run's colour) and the marker key in its colours (★ compiling
call, ◆ disk cache, ■ prefill, ● decode, ┄ steady line); cairosvg and pdftoppm draw those colours where the
SVG says the legend is; pdftotext reads the labels."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import io  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import xml.etree.ElementTree as ET  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from qt_helpers import synthetic_run  # noqa: E402
from svg_helpers import fills as _fills  # noqa: E402
from svg_helpers import near as _near  # noqa: E402
from svg_helpers import style as _style  # noqa: E402
from svg_helpers import texts as _texts  # noqa: E402

from widgets.plot.call_tooltip import COMPILE_COLOUR, DISK_COLOUR  # noqa: E402
from widgets.plot.latency_plot import LatencyPlot  # noqa: E402
from widgets.plot.plot_export import export_plot  # noqa: E402

RUNS = (("#2563eb", "smollm2 · jit · 1 device"), ("#dc2626", "smollm2 · torch · 1 device"),
        ("#9333ea", "mlp.py:mlp · jit-static · 1 device"))


KEY_TEXTS = ("compiling call", "compile served from disk cache", "prefill", "decode", "steady decode")


@pytest.fixture
def plot(qtbot) -> LatencyPlot:
    plot = LatencyPlot()
    qtbot.addWidget(plot)
    plot.resize(900, 520)
    plot.show()
    for run_id, (colour, label) in enumerate(RUNS, start=1):
        plot.start_run(label, colour=colour, run_id=run_id)
        for rec in synthetic_run(20):
            plot.add_record(rec)
        plot.redraw()
    qtbot.wait(50)
    return plot


def _labels() -> list[tuple[str, str]]:
    return [(f"run {i} · {label}", colour) for i, (colour, label) in enumerate(RUNS, start=1)]


def _label_boxes(root: ET.Element, px_per_unit: float) -> dict[str, tuple[int, int, int, int]]:
    """Pixel box (x0, y0, x1, y1) of each run label's text, from its ``<text>`` element's position and size."""
    texts = _texts(root)
    boxes = {}
    for label, _colour in _labels():
        el = texts[label]
        size = float(re.match(r"[\d.]+", _style(el)["font-size"]).group())
        x, y = float(el.get("x")), float(el.get("y"))
        boxes[label] = (int(x * px_per_unit), int((y - size) * px_per_unit),
                        int((x + 0.5 * size * len(label)) * px_per_unit), int((y + 0.2 * size) * px_per_unit))
    return boxes


def test_plot_svg_has_every_legend_label_and_key_entry_in_its_colour(plot, tmp_path):
    root = ET.parse(export_plot(plot, tmp_path / "plot.svg")).getroot()
    texts = _texts(root)
    for label, colour in _labels():  # each run's label, as text, in its run's colour
        assert label in texts, (label, sorted(texts))
        assert _style(texts[label]).get("fill", "").lower() == colour, (label, _style(texts[label]))
    for key in KEY_TEXTS:  # the key above the plot, each entry as text
        assert any(t.startswith(key) for t in texts), (key, sorted(texts))
    ids = {el.get("id"): el for el in root.iter() if el.get("id")}
    assert COMPILE_COLOUR.lower() in _fills(ids["key-star"])  # the star orange, the diamond green
    assert DISK_COLOUR.lower() in _fills(ids["key-diamond"])
    for shape in ("key-square", "key-circle", "key-line"):  # prefill, decode, the dashed steady line
        assert shape in ids, sorted(ids)
    # nothing in the key is drawn in a single grey: at least three colours among its shapes and texts
    colours = {c for el in root.iter() if (el.get("id") or "").startswith("key-") for c in _fills(el)
               if c.startswith("#")}
    assert len(colours) >= 3, colours


def test_cairosvg_and_pdftoppm_draw_the_run_colours_where_the_svg_puts_the_legend(plot, tmp_path):
    cairosvg = pytest.importorskip("cairosvg")
    from PIL import Image

    svg = export_plot(plot, tmp_path / "plot.svg")
    root = ET.parse(svg).getroot()
    view_w = float(root.get("viewBox").split()[2])
    rgb = np.asarray(Image.open(io.BytesIO(cairosvg.svg2png(url=str(svg)))).convert("RGB"))
    renders = {"cairosvg": (rgb, rgb.shape[1] / view_w)}
    if shutil.which("pdftoppm"):
        pdf = export_plot(plot, tmp_path / "plot.pdf")
        subprocess.run(["pdftoppm", "-png", "-r", "96", "-singlefile", str(pdf), str(tmp_path / "pdf")], check=True)
        page = np.asarray(Image.open(tmp_path / "pdf.png").convert("RGB"))
        renders["pdftoppm"] = (page, page.shape[1] / view_w)  # same figure, same page coordinates
    for name, (image, scale) in renders.items():
        for label, (x0, y0, x1, y1) in _label_boxes(root, scale).items():
            colour = dict(_labels())[label]
            region = image[max(y0, 0):y1, max(x0, 0):x1]
            assert region.size and _near(region, colour) > 15, (name, label, colour, (x0, y0, x1, y1))
            others = [c for c in dict(_labels()).values() if c != colour]
            assert all(_near(region, c, 40) < _near(region, colour, 40) for c in others), (name, label)
        assert _near(image, COMPILE_COLOUR) > 50, name  # the stars (and the key's star)


def test_pdf_text_has_every_legend_label_and_key_entry(plot, tmp_path):
    if not shutil.which("pdftotext"):
        pytest.skip("pdftotext (poppler-utils) is not installed")
    pdf = export_plot(plot, tmp_path / "plot.pdf")
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], check=True, capture_output=True,
                          text=True).stdout
    for label, _colour in _labels():
        assert label in text, (label, text)
    for key in KEY_TEXTS:
        assert key in text, (key, text)
