"""Vector exports (SVG, PDF) that every renderer draws the same: matplotlib's SVG and PDF backends.

Qt's own SVG output of a pyqtgraph plot draws each curve inside a data-space transform
(``matrix(0.74,0,0,-47.3,…)``) that relies on ``vector-effect="non-scaling-stroke"``: librsvg then fills
whole bands and ImageMagick loses the markers. Here the plot's plain data — every curve's points, its pen
and symbol, bars, reference lines, text notes, the legend entries, the axes' ranges, labels and scale — is
redrawn with matplotlib (``Figure`` + ``FigureCanvasSVG`` / ``FigureCanvasPdf``, no pyplot state), whose
output is in page coordinates (paths with absolute points, text as text), so a browser, Inkscape,
librsvg, cairosvg, LaTeX and slide tools all draw it alike.

:func:`export_plot_vector` takes any ``pyqtgraph.PlotWidget`` (the latency plot, the profile timeline);
:func:`export_scene_vector` takes a ``QGraphicsScene`` of boxes, paths and text (the dataflow graph).
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QColor, QPainterPath
from PySide6.QtWidgets import QGraphicsPathItem, QGraphicsRectItem, QGraphicsScene, QGraphicsSimpleTextItem

#: Vector formats written here (file suffix → matplotlib format).
FORMATS = {".svg": "svg", ".pdf": "pdf"}
#: pyqtgraph symbol → matplotlib marker.
MARKERS = {"o": "o", "s": "s", "t": "v", "t1": "^", "t2": ">", "t3": "<", "d": "D", "+": "P", "x": "X",
           "p": "p", "h": "h", "star": "*", "arrow_up": "^", "arrow_down": "v"}
DPI = 96.0  # CSS px per inch: the figure has the widget's size in px


def _figure(width_px: float, height_px: float) -> Any:
    from matplotlib.figure import Figure

    return Figure(figsize=(max(width_px, 100) / DPI, max(height_px, 80) / DPI), dpi=DPI)


def _save(fig: Any, path: Path) -> Path:
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise ValueError(f"{path.name}: vector exports are .svg or .pdf.")
    if fmt == "svg":
        from matplotlib.backends.backend_svg import FigureCanvasSVG as Canvas
    else:
        from matplotlib.backends.backend_pdf import FigureCanvasPdf as Canvas
    Canvas(fig)
    fig.savefig(str(path), format=fmt, facecolor="white", metadata=None if fmt == "pdf" else {"Date": None})
    if not path.is_file() or path.stat().st_size == 0:
        raise OSError(f"Nothing was written to {path}.")
    return path


def _rgba(colour: Any) -> tuple[float, float, float, float] | None:
    """A matplotlib RGBA of a Qt colour, pen or brush (None when invisible)."""
    if colour is None:
        return None
    if hasattr(colour, "color") and not isinstance(colour, QColor):  # QPen / QBrush
        style = colour.style()
        if int(style.value if hasattr(style, "value") else style) == 0:  # NoPen / NoBrush
            return None
        colour = colour.color()
    c = QColor(colour) if not isinstance(colour, QColor) else colour
    if c.alpha() == 0:
        return None
    return (c.redF(), c.greenF(), c.blueF(), c.alphaF())


def _plain(text: str) -> str:
    """Rich text (``<b>…</b>``, ``&nbsp;``, ``<br>``) as plain text, one line per ``<br>``."""
    text = re.sub(r"<br\s*/?>", "\n", text or "")
    return html.unescape(re.sub(r"<[^>]+>", "", text)).replace("\xa0", " ")


def _text_colour(item: Any) -> tuple[float, float, float, float]:
    """The colour of a pyqtgraph TextItem (its first ``color:`` in rich text, else its default colour)."""
    html_text = item.textItem.toHtml() if hasattr(item, "textItem") else ""
    m = re.search(r"color:\s*(#[0-9a-fA-F]{6})", html_text)
    if m:
        return _rgba(QColor(m.group(1)))
    return _rgba(item.textItem.defaultTextColor()) if hasattr(item, "textItem") else (0, 0, 0, 1)


def _style(item: pg.PlotDataItem) -> dict[str, Any] | None:
    """matplotlib line and marker keywords of a PlotDataItem's pen, symbol, brush and size (None when it
    draws nothing)."""
    opts = item.opts
    pen = pg.mkPen(opts.get("pen")) if opts.get("pen") is not None else None
    colour = _rgba(pen) if pen is not None else None
    symbol = opts.get("symbol")
    kwargs: dict[str, Any] = {"alpha": item.opacity()}
    if colour is not None:
        kwargs.update(color=colour, linewidth=max(pen.widthF(), 1.0) * 0.75,
                      linestyle="--" if pen.style() == pg.QtCore.Qt.PenStyle.DashLine else "-")
    else:
        kwargs.update(linestyle="none")
    if symbol is not None:
        brush = pg.mkBrush(opts.get("symbolBrush")) if opts.get("symbolBrush") is not None else None
        spen = pg.mkPen(opts.get("symbolPen")) if opts.get("symbolPen") is not None else None
        face, edge = _rgba(brush), _rgba(spen)
        kwargs.update(marker=MARKERS.get(symbol, "o") if isinstance(symbol, str) else "o",
                      markersize=float(opts.get("symbolSize") or 8) * 0.75,
                      markerfacecolor=face or "none", markeredgecolor=edge or face or colour or "black",
                      markeredgewidth=0.6)
    return kwargs if colour is not None or symbol is not None else None


def _curve(ax: Any, item: pg.PlotDataItem) -> Any:
    """One PlotDataItem from its original (untransformed) data: its line and its markers."""
    x, y, style = item.xData, item.yData, _style(item)
    if x is None or y is None or len(x) == 0 or style is None:
        return None
    # markers above every line (the compile stars stay whole where a curve crosses them), then Qt's z order
    zorder = (2.0 if "marker" in style else 1.0) + item.zValue() / 100
    (line,) = ax.plot(np.asarray(x, dtype=float), np.asarray(y, dtype=float), zorder=zorder, **style)
    return line


def _bars(ax: Any, item: pg.BarGraphItem) -> None:
    from matplotlib.patches import Rectangle

    o = item.opts
    x0 = np.atleast_1d(o.get("x0") if o.get("x0") is not None else np.asarray(o["x"]) - np.asarray(o["width"]) / 2)
    width = np.broadcast_to(np.asarray(o.get("width", 1.0), dtype=float), x0.shape)
    height = np.broadcast_to(np.asarray(o.get("height", 1.0), dtype=float), x0.shape)
    y = o.get("y0") if o.get("y0") is not None else np.asarray(o.get("y", 0.0)) - height / 2
    y = np.broadcast_to(np.asarray(y, dtype=float), x0.shape)
    brushes = o.get("brushes") or [o.get("brush")] * len(x0)
    pens = o.get("pens") or [o.get("pen")] * len(x0)
    for i in range(len(x0)):
        face = _rgba(pg.mkBrush(brushes[i])) if brushes[i] is not None else (0.5, 0.5, 0.5, 1)
        edge = _rgba(pg.mkPen(pens[i])) if pens[i] is not None else None
        ax.add_patch(Rectangle(
            (x0[i], y[i]), width[i], height[i], facecolor=face or "none", edgecolor=edge or "none",
            linewidth=0.4, alpha=item.opacity()))


def _axis_label(axis: Any) -> str:
    label = _plain(axis.labelText or "")
    units = axis.labelUnits or ""
    return f"{label} ({units})" if units and label else label


def plot_figure(plot: pg.PlotWidget) -> Any:
    """A matplotlib ``Figure`` of ``plot`` at its on-screen size: curves, markers, bars, reference lines,
    text notes, legend, title, axis labels, log scale and the view's ranges as shown."""
    item = plot.getPlotItem()
    vb = item.getViewBox()
    rect = item.sceneBoundingRect()
    fig = _figure(rect.width(), rect.height())
    # the axes exactly where the view box is on screen, so every point lands where the PNG export has it
    box = vb.sceneBoundingRect()
    w, h = fig.get_figwidth() * DPI, fig.get_figheight() * DPI
    ax = fig.add_axes(((box.left() - rect.left()) / w, 1 - (box.bottom() - rect.top()) / h,
                       box.width() / w, box.height() / h))
    log_x, log_y = item.ctrl.logXCheck.isChecked(), item.ctrl.logYCheck.isChecked()
    handles: dict[Any, Any] = {}
    children = sorted(vb.childGroup.childItems(), key=lambda c: c.zValue())  # every item, bounds-ignoring ones too
    for child in children:
        if not child.isVisible():
            continue
        if isinstance(child, pg.PlotDataItem):
            handles[child] = _curve(ax, child)
        elif isinstance(child, pg.BarGraphItem):
            _bars(ax, child)
        elif isinstance(child, pg.InfiniteLine):
            pos = child.value()
            colour = _rgba(child.pen) or (0.4, 0.4, 0.4, 1)
            style = "--" if child.pen.style() == pg.QtCore.Qt.PenStyle.DashLine else "-"
            if child.angle == 0:
                ax.axhline(10 ** pos if log_y else pos, color=colour, linestyle=style, linewidth=1.0)
            else:
                ax.axvline(10 ** pos if log_x else pos, color=colour, linestyle=style, linewidth=1.0)
    (x0, x1), (y0, y1) = vb.viewRange()
    ax.set_xlim(10 ** x0 if log_x else x0, 10 ** x1 if log_x else x1)
    ax.set_ylim(10 ** y0 if log_y else y0, 10 ** y1 if log_y else y1)
    if log_y:
        from matplotlib.ticker import FuncFormatter

        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:,.0f}" if v >= 1 else f"{v:g}"))
    if log_x:
        ax.set_xscale("log")
    for child in children:  # notes last, on top, clipped to the axes as on screen
        if isinstance(child, pg.TextItem) and child.isVisible() and child.toPlainText().strip():
            pos = child.pos()
            anchor = getattr(child, "anchor", pg.Point(0, 0))
            ax.text(10 ** pos.x() if log_x else pos.x(), 10 ** pos.y() if log_y else pos.y(),
                    _plain(child.toPlainText()), fontsize=7,
                    color=_text_colour(child), alpha=child.opacity(),
                    ha="left" if anchor[0] < 0.34 else ("right" if anchor[0] > 0.66 else "center"),
                    va="top" if anchor[1] < 0.34 else ("bottom" if anchor[1] > 0.66 else "center"),
                    clip_on=True)
    ax.set_xlabel(_axis_label(item.getAxis("bottom")), fontsize=8)
    ax.set_ylabel(_axis_label(item.getAxis("left")), fontsize=8)
    ax.yaxis.set_label_coords(-(box.left() - rect.left() - 10) / box.width(), 0.5)  # inside the figure
    ax.tick_params(labelsize=7)
    ax.grid(True, alpha=0.15)
    title = _plain(item.titleLabel.text) if item.titleLabel.isVisible() else ""
    if title.strip():  # centred in the title row above the view box, as on screen
        t = item.titleLabel.sceneBoundingRect()
        fig.text(0.5, 1 - (t.center().y() - rect.top()) / h, title, fontsize=8, color="#374151",
                 ha="center", va="center")
    legend = item.legend
    if legend is not None and legend.items:
        entries = []
        for sample, label in legend.items:
            source = sample.item
            handle = handles.get(source)
            if handle is None and isinstance(source, pg.PlotDataItem) and _style(source) is not None:
                from matplotlib.lines import Line2D  # a legend-only key (no data): its style alone

                handle = Line2D([], [], **_style(source))
            if handle is not None:
                entries.append((handle, _plain(label.text)))
        if entries:  # where the legend is on screen (its top-left corner), in as many columns
            g = legend.sceneBoundingRect()
            ax.legend([e for e, _ in entries], [t for _, t in entries], fontsize=7, framealpha=0.85,
                      loc="upper left", ncols=max(1, legend.columnCount), borderaxespad=0,
                      bbox_to_anchor=((g.left() - rect.left()) / w, 1 - (g.top() - rect.top()) / h),
                      bbox_transform=fig.transFigure)
    return fig


def export_plot_vector(plot: pg.PlotWidget, path: str | Path) -> Path:
    """Write ``plot`` as SVG or PDF (by ``path``'s suffix) through matplotlib. Returns the path; raises
    ValueError for another suffix and OSError when nothing was written."""
    return _save(plot_figure(plot), Path(path))


def _path_points(path: QPainterPath) -> list[list[tuple[float, float]]]:
    """A painter path as polylines (curves flattened), one list per subpath."""
    polys = path.toSubpathPolygons()
    return [[(p.x(), p.y()) for p in poly] for poly in polys]


def scene_figure(scene: QGraphicsScene) -> Any:
    """A matplotlib ``Figure`` of a scene of rectangles, paths and simple texts (scene coordinates, y down),
    at the scene's size in px."""
    from matplotlib.patches import Polygon, Rectangle

    rect = scene.itemsBoundingRect()
    fig = _figure(rect.width() + 20, rect.height() + 20)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(rect.left() - 10, rect.right() + 10)
    ax.set_ylim(rect.bottom() + 10, rect.top() - 10)  # y down, as in the scene
    ax.set_axis_off()
    for it in sorted(scene.items(), key=lambda i: i.zValue()):
        if not it.isVisible():
            continue
        if isinstance(it, QGraphicsRectItem):
            r = it.mapRectToScene(it.rect())
            ax.add_patch(Rectangle((r.left(), r.top()), r.width(), r.height(),
                                   facecolor=_rgba(it.brush()) or "none", edgecolor=_rgba(it.pen()) or "none",
                                   linewidth=max(it.pen().widthF(), 0.5) * 0.75))
        elif isinstance(it, QGraphicsPathItem):
            for poly in _path_points(it.mapToScene(it.path())):
                if len(poly) < 2:
                    continue
                closed = it.brush().style() != pg.QtCore.Qt.BrushStyle.NoBrush
                ax.add_patch(Polygon(poly, closed=closed, fill=closed, facecolor=_rgba(it.brush()) or "none",
                                     edgecolor=_rgba(it.pen()) or "none",
                                     linewidth=max(it.pen().widthF(), 0.5) * 0.75))
        elif isinstance(it, QGraphicsSimpleTextItem) and it.text().strip():
            p = it.mapToScene(it.boundingRect().topLeft())
            size = it.font().pointSizeF()
            ax.text(p.x(), p.y(), it.text(), fontsize=size if size > 0 else 8, va="top", ha="left",
                    color=_rgba(it.brush()) or "black")
    return fig


def export_scene_vector(scene: QGraphicsScene, path: str | Path) -> Path:
    """Write ``scene`` as SVG or PDF (by suffix) through matplotlib. Returns the path; raises ValueError
    for another suffix and OSError when nothing was written."""
    return _save(scene_figure(scene), Path(path))
