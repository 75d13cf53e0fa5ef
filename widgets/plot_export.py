"""Export a pyqtgraph plot widget as PNG or SVG (pyqtgraph's exporters on its PlotItem)."""

from __future__ import annotations

from pathlib import Path

import pyqtgraph as pg
from pyqtgraph.exporters import ImageExporter, SVGExporter


def export_plot(plot: pg.PlotWidget, path: str | Path, width: int = 1600) -> Path:
    """Write ``plot`` to ``path``: SVG for a ``.svg`` suffix, else a PNG ``width`` pixels wide.

    Returns the path. Raises OSError if nothing was written.
    """
    path = Path(path)
    item = plot.getPlotItem()
    if path.suffix.lower() == ".svg":
        SVGExporter(item).export(str(path))
    else:
        exporter = ImageExporter(item)
        exporter.parameters()["width"] = int(width)
        exporter.export(str(path))
    if not path.is_file() or path.stat().st_size == 0:
        raise OSError(f"The plot could not be written to {path}.")
    return path
