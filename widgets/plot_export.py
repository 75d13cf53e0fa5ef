"""Export a pyqtgraph plot widget as PNG or SVG (pyqtgraph's exporters on its PlotItem)."""

from __future__ import annotations

from pathlib import Path

import pyqtgraph as pg
from pyqtgraph.exporters import ImageExporter, SVGExporter
from PySide6.QtCore import QRectF, QSize
from PySide6.QtGui import QPainter
from PySide6.QtSvg import QSvgGenerator


def export_plot(plot: pg.PlotWidget, path: str | Path, width: int | None = None) -> Path:
    """Write ``plot`` to ``path``: SVG for a ``.svg`` suffix, else a PNG ``width`` pixels wide (default:
    as on screen — pyqtgraph 0.14 does not scale the legend with the rest, so a rescaled PNG shows a tiny
    legend; presentation mode makes the on-screen plot big).

    Returns the path. Raises OSError if nothing was written.
    """
    path = Path(path)
    item = plot.getPlotItem()
    if path.suffix.lower() == ".svg":
        try:
            SVGExporter(item).export(str(path))
        except ValueError:
            # pyqtgraph 0.14's SVG exporter cannot parse the "Z" (close path) Qt 6.11 writes in path data
            # (pyqtgraph issue #3485): render the scene through Qt's own SVG generator instead.
            _render_svg(plot, path)
    else:
        exporter = ImageExporter(item)
        exporter.parameters()["width"] = int(width or item.sceneBoundingRect().width())
        exporter.export(str(path))
    if not path.is_file() or path.stat().st_size == 0:
        raise OSError(f"The plot could not be written to {path}.")
    return path


def _render_svg(plot: pg.PlotWidget, path: Path) -> None:
    source = plot.getPlotItem().sceneBoundingRect()
    generator = QSvgGenerator()
    generator.setFileName(str(path))
    generator.setSize(QSize(int(source.width()), int(source.height())))
    generator.setViewBox(QRectF(0, 0, source.width(), source.height()))
    generator.setTitle("latency per call")
    painter = QPainter(generator)
    try:
        plot.scene().render(painter, QRectF(0, 0, source.width(), source.height()), source)
    finally:
        painter.end()
