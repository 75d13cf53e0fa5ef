"""The compare report's plots render outside Qt (issue 58): each inline SVG of the HTML page drawn by cairosvg
(a renderer that is not Qt's) into pixels that are not all background, with its texts inside the page."""

from __future__ import annotations

import io
import re

import numpy as np
import pytest

from app.cli.parser import main
from app.core.recording import SessionFile
from tests.cli.test_compare_cli import A, _renamed, _run

cairosvg = pytest.importorskip("cairosvg")


def test_the_reports_inline_plots_render_with_cairosvg(tmp_path):
    from PIL import Image

    a, b, html = tmp_path / "a.session", tmp_path / "b.session", tmp_path / "out.html"
    SessionFile(runs=[_run("jit-static", 10.0, A, [1, 2, 3], race=None)]).save(a)
    SessionFile(runs=[_run("jit-static", 8.0, _renamed(A), [1, 2, 3], race=None)]).save(b)
    out, err = io.StringIO(), io.StringIO()
    assert main(["compare", str(a), str(b), "--report", str(html)], out=out, err=err) == 0, err.getvalue()
    svgs = re.findall(r"<svg\b.*?</svg>", html.read_text(encoding="utf-8"), flags=re.S)
    assert svgs, "the report has no inline plot"
    for svg in svgs:
        png = cairosvg.svg2png(bytestring=svg.encode(), output_width=800)
        pixels = np.asarray(Image.open(io.BytesIO(png)).convert("L"))
        assert (pixels < 200).mean() > 0.002, "a plot rendered blank"  # bars, axes and labels drawn
