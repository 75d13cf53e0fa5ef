"""The trade-off plot drawn for a slide (issue 55: exports were copies of the screen, 472×212 px with cut labels):
a hidden :class:`widgets.demo.tradeoff_plot.TradeoffPlot` of :data:`SLIDE_SIZE` logical px with its title, labels
and axes at :data:`SLIDE_PT`, written as PNG
(:func:`widgets.plot.plot_export.export_plot`) or SVG / PDF (:func:`widgets.plot.vector_plot.plot_figure`, its
text as large as the slide's and every text inside the page)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from widgets.common.typed_qt import plot_item
from widgets.plot.plot_export import export_plot
from widgets.plot.vector_export import FORMATS
from widgets.plot.vector_figure import save
from widgets.plot.vector_plot import plot_figure

#: The drawing exported (PNG, SVG, PDF): a slide's size in logical px, drawn for it (not the screen's copy) ...
SLIDE_SIZE = (1600, 900)
#: ... with its labels, axes and title at this size (pt).
SLIDE_PT = 16


def export_slide(make: Callable[[], Any], points: list[Any], path: Path, size: tuple[int, int] = SLIDE_SIZE,
                 font_pt: int = SLIDE_PT) -> Path:
    """Write ``points`` (:class:`widgets.demo.tradeoff_plot.TradeoffPoint` s) as a trade-off plot drawn for a slide:
    ``make()``'s plot (a titled ``TradeoffPlot``), hidden, of ``size`` logical px with its
    title, labels and axes at ``font_pt`` pt (PNG: ``size`` × 2 px; SVG / PDF: ``size`` in CSS px, its text
    scaled alike). Returns the path; raises OSError when nothing was written."""
    slide = make()  # a TradeoffPlot with its title
    slide.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen)
    try:
        slide.resize(*size)
        slide.show()  # hidden from the screen, laid out at its size
        slide.set_font_size(font_pt)
        slide.set_points(points)
        item = plot_item(slide.plot)
        for _pass in range(2):  # a painted axis makes room for its ticks' and title's sizes: paint, lay out again
            item.getViewBox().prepareForPaint()  # the view's range now (pyqtgraph sets it before its next paint)
            slide.declutter()
            slide.plot.grab()
            item.layout.activate()  # pyright: ignore[reportAttributeAccessIssue]  (PlotItem.layout: its layout)
        slide.declutter()  # now, not after the next paint: the labels drawn are the ones exported
        if path.suffix.lower() not in FORMATS:
            return export_plot(slide.plot, path, width=2 * size[0])
        figure = plot_figure(slide.plot)
        from matplotlib.text import Text

        for text in figure.findobj(Text):  # the vector drawing's fixed 7-8 pt, as large as the slide's labels
            text.set_fontsize(float(text.get_fontsize()) * font_pt / 8)
        fit_inside(figure)
        return save(figure, path)
    finally:
        slide.close()
        slide.deleteLater()


def fit_inside(figure: Any, pad: float = 6.0) -> None:
    """Move ``figure``'s axes (its first) so that every text — the axis titles left of the tick labels — lies
    inside the figure, ``pad`` px from its edges (larger text than the screen's would otherwise be cut)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(figure).get_renderer()
    ax = figure.axes[0]
    width, height = figure.bbox.width, figure.bbox.height
    for _round in range(4):
        ticks = [t.get_window_extent(renderer) for t in ax.get_yticklabels() if t.get_visible() and t.get_text()]
        left = min((b.x0 for b in ticks), default=ax.bbox.x0)
        ax.yaxis.set_label_coords((left - pad - ax.bbox.x0) / ax.bbox.width, 0.5)  # its title beside the ticks
        box = figure.get_tightbbox(renderer).transformed(figure.dpi_scale_trans)
        cut = (max(0.0, pad - box.x0), max(0.0, pad - box.y0), max(0.0, box.x1 - width + pad),
               max(0.0, box.y1 - height + pad))
        if not any(cut):
            return
        pos = ax.get_position()
        ax.set_position((pos.x0 + cut[0] / width, pos.y0 + cut[1] / height,
                         pos.width - (cut[0] + cut[2]) / width, pos.height - (cut[1] + cut[3]) / height))
