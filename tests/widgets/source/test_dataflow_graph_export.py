"""The dataflow graph's exports drawn the same by every renderer, checked element by element: its SVG keeps
its arrowheads (markers its edges reference), bold titles, monospace font and dashed borders; cairosvg draws
the arrowheads, and the PDF embeds a bold and a monospace font."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import io  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import xml.etree.ElementTree as ET  # noqa: E402
from types import SimpleNamespace as NS  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from svg_helpers import SVG  # noqa: E402
from svg_helpers import fills as _fills  # noqa: E402
from svg_helpers import near as _near  # noqa: E402
from svg_helpers import style as _style  # noqa: E402
from svg_helpers import texts as _texts  # noqa: E402

from widgets.source.dataflow_graph import DataflowGraph  # noqa: E402


def _node(nid, label, kind, x, y, w, h, expanded=False):
    return NS(id=nid, label=label, kind=kind, eqns=[1], x=x, y=y, w=w, h=h, expanded=expanded, tooltip="")


@pytest.fixture
def graph(qtbot) -> DataflowGraph:
    view = DataflowGraph()
    qtbot.addWidget(view)
    view.resize(600, 500)
    nodes = [_node("g", "layers.0", "layer", 200, 170, 360, 300, expanded=True),
             _node("i", "x\nf32[2,8]", "input", 200, 20, 120, 36),
             _node("a", "dot_general\nf32[2,16]", "eqn", 120, 120, 150, 36),
             _node("b", "tanh", "eqn", 120, 220, 100, 30),
             _node("l", "layers.1\n3 eqns", "layer", 300, 220, 110, 40)]
    edges = [NS(src="i", dst="a", label="", points=[(200, 20), (120, 120)]),
             NS(src="a", dst="b", label="", points=[(120, 120), (120, 220)]),
             NS(src="a", dst="l", label="", points=[(120, 120), (300, 220)])]
    view.set_graph(NS(nodes=nodes, edges=edges, truncated=0, height=340, width=400))
    return view


def test_graph_svg_keeps_arrowheads_bold_titles_monospace_and_dashes(graph, tmp_path):
    path = tmp_path / "graph.svg"
    graph.export_svg(path)
    root = ET.parse(path).getroot()
    markers = {m.get("id"): m for m in root.iter(f"{SVG}marker")}
    edges = [p for p in root.iter(f"{SVG}path") if p.get("marker-end")]
    assert len(edges) == 3, [p.attrib for p in root.iter(f"{SVG}path")]
    for edge in edges:  # every edge ends in an arrowhead marker defined in the file, filled in its colour
        ref = re.fullmatch(r"url\(#(.+)\)", edge.get("marker-end")).group(1)
        assert ref in markers and list(markers[ref].iter(f"{SVG}path")), ref
        assert _fills(markers[ref]) & {_style(edge)["stroke"].lower()}
    texts = _texts(root)
    for title in ("▾ layers.0", "layers.1"):  # an open box's title and a closed layer's name, bold
        assert _style(texts[title]).get("font-weight") == "bold", (title, _style(texts[title]))
    assert _style(texts["tanh"]).get("font-weight") != "bold"
    assert all("monospace" in _style(t).get("font-family", "") for t in texts.values())
    dashed = [r for r in root.iter(f"{SVG}rect") if _style(r).get("stroke-dasharray")]
    assert len(dashed) == 1 and float(dashed[0].get("width")) == 360  # the open box's frame only


def test_graph_arrowheads_drawn_by_cairosvg_and_graph_pdf_fonts(graph, tmp_path):
    cairosvg = pytest.importorskip("cairosvg")
    from PIL import Image

    path = tmp_path / "graph.svg"
    graph.export_svg(path)
    root = ET.parse(path).getroot()
    vx, vy, vw, _vh = (float(v) for v in root.get("viewBox").split())
    rgb = np.asarray(Image.open(io.BytesIO(cairosvg.svg2png(url=str(path)))).convert("RGB"))
    scale = rgb.shape[1] / vw
    edges = [p for p in root.iter(f"{SVG}path") if p.get("marker-end")]
    assert len(edges) == 3
    for edge in edges:
        pts = [tuple(map(float, m.groups())) for m in re.finditer(r"([-\d.]+) ([-\d.]+)", edge.get("d"))]
        (ax, ay), (bx, by) = pts[-2], pts[-1]
        length = max(np.hypot(bx - ax, by - ay), 1e-6)
        counts = []
        for back in (3.0, length / 2):  # inside the arrowhead, then mid-edge (the line alone)
            cx, cy = bx - back * (bx - ax) / length, by - back * (by - ay) / length
            x, y = int((cx - vx) * scale), int((cy - vy) * scale)
            counts.append(_near(rgb[y - 3:y + 4, x - 3:x + 4], "#80868b", 60))
        assert counts[0] >= 1.6 * counts[1] + 4, (edge.get("d"), counts)  # a filled head, not a bare line
    if shutil.which("pdffonts"):  # the PDF embeds a bold and a monospace font for the node texts
        pdf = tmp_path / "graph.pdf"
        graph.export_svg(pdf)
        fonts = subprocess.run(["pdffonts", str(pdf)], check=True, capture_output=True, text=True).stdout
        assert "Mono" in fonts and "Bold" in fonts, fonts
        text = subprocess.run(["pdftotext", str(pdf), "-"], check=True, capture_output=True, text=True).stdout
        assert "layers.0" in text and "dot_general" in text, text
