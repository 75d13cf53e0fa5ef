"""Vector exports (SVG, PDF) that every renderer draws the same: matplotlib's SVG and PDF backends.

Qt's own SVG output of a pyqtgraph plot draws each curve inside a data-space transform
(``matrix(0.74,0,0,-47.3,…)``) that relies on ``vector-effect="non-scaling-stroke"``: librsvg then fills
whole bands and ImageMagick loses the markers. Here the plot's plain data — every curve's points, its pen
and symbol, bars, reference lines, text notes, the legend entries, the axes' ranges, labels and scale — is
redrawn with matplotlib (``Figure`` + ``FigureCanvasSVG`` / ``FigureCanvasPdf``, no pyplot state), whose
output is in page coordinates (paths with absolute points, text as text), so a browser, Inkscape,
librsvg, cairosvg, LaTeX and slide tools all draw it alike.

Text stays text (``<text>`` elements in the SVG, TrueType text in the PDF), so the legend's labels and the
key's entries can be found, copied and checked; each run's legend label is drawn in the run's colour and the
key above the plot keeps its colours, its symbols (★ ◆ ■ ● and the dashed steady line) drawn as shapes, not
as glyphs a renderer's font may lack.

:func:`export_plot_vector` takes any ``pyqtgraph.PlotWidget`` (the latency plot, the profile timeline);
:func:`export_scene_vector` takes a ``QGraphicsScene`` of boxes, paths, polygons and text (the dataflow
graph): its SVG is written directly (``<rect>``, ``<path>`` with ``marker-end`` arrowheads, ``<text>`` with
the font's family, weight and size, ``stroke-dasharray`` for dashed pens), its PDF through matplotlib.

The parts: :mod:`widgets.plot.vector_figure` (the figure, its saving, colours and scene geometry they share),
:mod:`widgets.plot.vector_plot` (a plot as a figure) and :mod:`widgets.plot.vector_scene` (a scene as SVG and
as a figure).
"""

from __future__ import annotations

from pathlib import Path

import pyqtgraph as pg  # noqa: TID253 - a heavy module: its users import it inside functions
from PySide6.QtWidgets import QGraphicsScene

from widgets.plot.vector_figure import FORMATS, save
from widgets.plot.vector_plot import plot_figure
from widgets.plot.vector_scene import scene_figure, scene_svg

__all__ = ["FORMATS", "export_plot_vector", "export_scene_vector", "plot_figure", "scene_figure", "scene_svg"]


def export_plot_vector(plot: pg.PlotWidget, path: str | Path) -> Path:
    """Write ``plot`` as SVG or PDF (by ``path``'s suffix) through matplotlib. Returns the path; raises
    ValueError for another suffix and OSError when nothing was written."""
    return save(plot_figure(plot), Path(path))


def export_scene_vector(scene: QGraphicsScene, path: str | Path) -> Path:
    """Write ``scene`` as SVG (:func:`scene_svg`) or PDF (matplotlib) by suffix. Returns the path; raises
    ValueError for another suffix and OSError when nothing was written."""
    path = Path(path)
    if path.suffix.lower() != ".svg":
        return save(scene_figure(scene), path)
    path.write_text(scene_svg(scene), encoding="utf-8")
    if not path.is_file() or path.stat().st_size == 0:
        raise OSError(f"Nothing was written to {path}.")
    return path
