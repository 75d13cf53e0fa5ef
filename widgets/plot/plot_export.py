"""Export a pyqtgraph plot widget for slides: PNG at 2× (or a chosen width); SVG and PDF through
:mod:`widgets.plot.vector_export` (matplotlib: page coordinates every renderer draws alike).

The PNG renders the plot's scene with Qt's painter while every item is in pyqtgraph's export mode (scatter
markers drawn one by one, not stamped from a pixmap atlas), into a ``QImage`` with a device-pixel ratio of
``scale`` (2 by default), so lines, markers, text and the legend all scale together (pyqtgraph 0.14's
``ImageExporter`` leaves the legend's text at screen size). Qt's SVG output is not used: it draws curves
inside data-space transforms that only Qt's renderer draws right.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pyqtgraph as pg  # noqa: TID253 - a heavy module: its users import it inside functions
from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtWidgets import QGraphicsItem

from widgets.common.typed_qt import plot_item
from widgets.plot.vector_export import FORMATS, export_plot_vector

#: Default PNG scale against the on-screen size (slides are shown larger than a laptop window).
PNG_SCALE = 2.0


def plot_rect(plot: pg.PlotWidget) -> QRectF:
    """The scene rectangle exported: the plot item (axes, title, legend), in scene px."""
    return plot_item(plot).sceneBoundingRect()


@contextmanager
def _export_mode(plot: pg.PlotWidget, painter: QPainter) -> Iterator[None]:
    """Every item in export mode and uncached (a cached item, like the axes, would be painted as a pixmap)."""
    everything = plot.scene().items()
    cached = [(it, it.cacheMode()) for it in everything if it.cacheMode() != QGraphicsItem.CacheMode.NoCache]
    items = [it for it in everything if isinstance(it, pg.GraphicsItem)]  # pyqtgraph's: setExportMode
    opts = {"antialias": True, "background": QColor("white"), "painter": painter, "resolutionScale": 1.0}
    for it, _mode in cached:
        it.setCacheMode(QGraphicsItem.CacheMode.NoCache)
    for it in items:
        it.setExportMode(True, opts)
    try:
        yield
    finally:
        for it in items:
            it.setExportMode(False)
        for it, mode in cached:
            it.setCacheMode(mode)


def render_image(plot: pg.PlotWidget, scale: float = PNG_SCALE) -> QImage:
    """The plot as an image ``scale`` times its on-screen size (white background)."""
    source = plot_rect(plot)
    size = QSize(round(source.width() * scale), round(source.height() * scale))
    image = QImage(size, QImage.Format.Format_ARGB32)
    image.setDevicePixelRatio(scale)
    image.fill(Qt.GlobalColor.white)
    painter = QPainter(image)
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        with _export_mode(plot, painter):
            plot.scene().render(painter, QRectF(0, 0, source.width(), source.height()), source)
    finally:
        painter.end()
    return image


def export_plot(plot: pg.PlotWidget, path: str | Path, width: int | None = None) -> Path:
    """Write ``plot`` to ``path``: SVG or PDF for a ``.svg`` / ``.pdf`` suffix (matplotlib, from the plot's
    data: :mod:`widgets.plot.vector_export`), else a PNG ``width`` pixels wide (default:
    :data:`PNG_SCALE` × the on-screen width).

    Returns the path. Raises OSError if nothing was written, ValueError for a width below 1.
    """
    path = Path(path)
    if path.suffix.lower() in FORMATS:  # SVG / PDF in page coordinates, drawn alike by every renderer
        export_plot_vector(plot, path)
    else:
        if width is not None and width < 1:
            raise ValueError(f"The PNG width must be at least 1 px, not {width}.")
        source = plot_rect(plot)
        scale = width / source.width() if width else PNG_SCALE
        # the stub types the format as bytes; PySide6 takes a str (and refuses bytes) for Qt's const char*
        if not render_image(plot, scale).save(str(path), "PNG"):  # pyright: ignore[reportCallIssue, reportArgumentType]
            raise OSError(f"The plot could not be written to {path}.")
    if not path.is_file() or path.stat().st_size == 0:
        raise OSError(f"The plot could not be written to {path}.")
    return path
