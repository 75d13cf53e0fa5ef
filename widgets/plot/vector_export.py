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
"""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QColor, QFont, QFontInfo, QFontMetricsF, QPainterPath, QPen
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsPathItem,
    QGraphicsPolygonItem,
    QGraphicsRectItem,
    QGraphicsScene,
    QGraphicsSimpleTextItem,
)

#: Vector formats written here (file suffix → matplotlib format).
FORMATS = {".svg": "svg", ".pdf": "pdf"}
#: pyqtgraph symbol → matplotlib marker.
MARKERS = {"o": "o", "s": "s", "t": "v", "t1": "^", "t2": ">", "t3": "<", "d": "D", "+": "P", "x": "X",
           "p": "p", "h": "h", "star": "*", "arrow_up": "^", "arrow_down": "v"}
DPI = 96.0  # CSS px per inch: the figure has the widget's size in px
#: Text as text: ``<text>`` in SVG (not glyph outlines), embedded TrueType in PDF (searchable, copyable).
RC = {"svg.fonttype": "none", "pdf.fonttype": 42, "font.family": ["DejaVu Sans", "sans-serif"]}
#: Key glyphs drawn as shapes: glyph → (matplotlib marker, size in pt, gid suffix); "┄" is a dashed line.
KEY_SHAPES = {"★": ("*", 9.0, "star"), "◆": ("D", 5.5, "diamond"), "■": ("s", 6.0, "square"),
              "●": ("o", 6.0, "circle"), "▲": ("^", 6.5, "triangle"), "┄": ("", 0.0, "line")}
#: Item data key (``QGraphicsItem.setData``) naming a scene item's role for the SVG writer: ``"edge"`` (a
#: path drawn with an arrowhead marker at its end) or ``"arrowhead"`` (drawn by that marker instead).
ROLE = 0
MONO_FAMILIES = "'DejaVu Sans Mono', Menlo, Consolas, 'Liberation Mono', monospace"
SANS_FAMILIES = "'DejaVu Sans', Helvetica, Arial, sans-serif"


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
    from matplotlib import rc_context

    Canvas(fig)
    with rc_context(RC):
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


class _Spans(HTMLParser):
    """Rich text as lines of ``(text, colour)`` runs: each ``color:`` of a ``<span>``/``<font>`` applies to
    what it encloses, ``<br>`` starts a line."""

    def __init__(self, base: str) -> None:
        super().__init__(convert_charrefs=True)
        self.stack = [base]
        self.tags: list[bool] = []  # per open tag: whether it pushed a colour
        self.lines: list[list[tuple[str, str]]] = [[]]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "br":
            self.lines.append([])
            return
        a = dict(attrs)
        m = re.search(r"color:\s*(#[0-9a-fA-F]{3,8}|[a-zA-Z]+)", a.get("style") or "") or (
            re.match(r"(#[0-9a-fA-F]{3,8}|[a-zA-Z]+)$", a.get("color") or ""))
        if m:
            self.stack.append(m.group(1))
        self.tags.append(bool(m))

    def handle_endtag(self, tag: str) -> None:
        if tag != "br" and self.tags and self.tags.pop():
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        if data:
            self.lines[-1].append((data.replace("\xa0", " "), self.stack[-1]))


def rich_lines(text: str, base: str = "#374151") -> list[list[tuple[str, str]]]:
    """``text`` (rich text) as lines of ``(text, colour)`` runs, colours as written (``base`` outside any)."""
    parser = _Spans(base)
    parser.feed(text or "")
    parser.close()
    return [line for line in parser.lines if "".join(t for t, _ in line).strip()]


def _key_box(lines: list[list[tuple[str, str]]], fontsize: float) -> Any:
    """The key above the plot as matplotlib offset boxes: each run of text in its colour, each key glyph
    (:data:`KEY_SHAPES`) a marker or dashed line of its colour with gid ``key-<shape>``, lines centred."""
    from matplotlib.lines import Line2D
    from matplotlib.offsetbox import DrawingArea, HPacker, TextArea, VPacker

    rows = []
    for line in lines:
        parts = []
        for text, colour in line:
            for piece in re.split(f"([{''.join(KEY_SHAPES)}])", text):
                if not piece:
                    continue
                if piece in KEY_SHAPES:
                    marker, size, name = KEY_SHAPES[piece]
                    w, h = fontsize * 1.3, fontsize * 0.9  # the shape, then a space's width
                    area = DrawingArea(w + fontsize * 0.35, h)
                    if marker:
                        shape = Line2D([w / 2], [h * 0.4], marker=marker, markersize=size, linestyle="none",
                                       markerfacecolor=colour, markeredgecolor=colour, markeredgewidth=0.3)
                    else:
                        shape = Line2D([0, w], [h * 0.4] * 2, color=colour, linewidth=1.0, linestyle=(0, (2, 1.5)))
                    shape.set_gid(f"key-{name}")
                    area.add_artist(shape)
                    parts.append(area)
                else:
                    area = TextArea(piece.lstrip() if parts and isinstance(parts[-1], DrawingArea) else piece,
                                    textprops={"fontsize": fontsize, "color": colour})
                    area._text.set_gid("key-text")
                    parts.append(area)
        if parts:
            rows.append(HPacker(children=parts, align="baseline", pad=0, sep=0))
    return VPacker(children=rows, align="center", pad=0, sep=fontsize * 0.35)


def _legends(plot: pg.PlotWidget) -> list[pg.LegendItem]:
    """The plot's visible legends with entries: its ``PlotItem.legend`` and any ``LegendItem`` elsewhere in
    the scene (the latency plot's sits in a row of its own under the x axis, not in ``PlotItem.legend``)."""
    found = [plot.getPlotItem().legend] + [it for it in plot.scene().items() if isinstance(it, pg.LegendItem)]
    out: list[pg.LegendItem] = []
    for legend in found:
        if legend is not None and legend not in out and legend.isVisible() and legend.items:
            out.append(legend)
    return out


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


def _handle_colour(handle: Any) -> Any:
    """A legend handle's colour (its line's, else its marker's face) for its label's text."""
    colour = handle.get_color() if handle.get_linestyle() not in ("None", "none", "") else "none"
    if isinstance(colour, str) and colour.lower() == "none":
        colour = handle.get_markerfacecolor()
    return "#374151" if isinstance(colour, str) and colour.lower() == "none" else colour


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
    title = rich_lines(item.titleLabel.text) if item.titleLabel.isVisible() else []
    if title:  # centred in the title row above the view box, as on screen, each key in its colour
        from matplotlib.offsetbox import AnchoredOffsetbox

        t = item.titleLabel.sceneBoundingRect()
        key = AnchoredOffsetbox(loc="center", child=_key_box(title, 8), frameon=False, pad=0, borderpad=0,
                                bbox_to_anchor=(0.5, 1 - (t.center().y() - rect.top()) / h),
                                bbox_transform=fig.transFigure)
        fig.add_artist(key)
    for n, legend in enumerate(_legends(plot)):
        entries = []
        for sample, label in legend.items:
            source = sample.item
            handle = handles.get(source)
            if handle is None and isinstance(source, pg.PlotDataItem) and _style(source) is not None:
                from matplotlib.lines import Line2D  # a legend-only key (no data): its style alone

                handle = Line2D([], [], **{**_style(source), "alpha": 1.0})
            if handle is not None:
                entries.append((handle, _plain(label.text)))
        if entries:  # where the legend is on screen (its top-left corner), in as many columns
            g = legend.sceneBoundingRect()
            box = fig.legend([e for e, _ in entries], [t for _, t in entries], fontsize=7, framealpha=0.85,
                            loc="upper left", ncols=max(1, legend.columnCount), borderaxespad=0,
                            labelcolor=[_handle_colour(e) for e, _ in entries],
                            bbox_to_anchor=((g.left() - rect.left()) / w, 1 - (g.top() - rect.top()) / h),
                            bbox_transform=fig.transFigure)
            box.set_gid(f"legend-{n}")
            for i, text in enumerate(box.get_texts()):
                text.set_gid(f"legend-{n}-label-{i}")
    return fig


def export_plot_vector(plot: pg.PlotWidget, path: str | Path) -> Path:
    """Write ``plot`` as SVG or PDF (by ``path``'s suffix) through matplotlib. Returns the path; raises
    ValueError for another suffix and OSError when nothing was written."""
    return _save(plot_figure(plot), Path(path))


def _path_points(path: QPainterPath) -> list[list[tuple[float, float]]]:
    """A painter path as polylines (curves flattened), one list per subpath."""
    polys = path.toSubpathPolygons()
    return [[(p.x(), p.y()) for p in poly] for poly in polys]


def _dashes(pen: QPen) -> list[float]:
    """A pen's dash pattern in px (empty for a solid or invisible pen)."""
    if pen.style() in (pg.QtCore.Qt.PenStyle.SolidLine, pg.QtCore.Qt.PenStyle.NoPen):
        return []
    width = max(pen.widthF(), 1.0)
    return [v * width for v in pen.dashPattern()]


def _is_mono(font: QFont) -> bool:
    return font.styleHint() in (QFont.StyleHint.TypeWriter, QFont.StyleHint.Monospace) or (
        "mono" in font.family().lower() or "courier" in font.family().lower())


def _text_lines(it: QGraphicsSimpleTextItem) -> list[tuple[str, float, float]]:
    """Each line of a simple text item: ``(text, centre x, baseline y)`` in scene px (Qt centres the lines
    of a ``QGraphicsSimpleTextItem`` in its bounding box)."""
    lines = it.text().split("\n")
    r = it.mapRectToScene(it.boundingRect())
    step = r.height() / max(len(lines), 1)
    ascent = QFontMetricsF(it.font()).ascent()
    return [(line, r.center().x(), r.top() + i * step + ascent) for i, line in enumerate(lines)]


def _font_px(font: QFont) -> float:
    return float(QFontInfo(font).pixelSize()) if font.pixelSize() <= 0 else float(font.pixelSize())


def _drawn(scene: QGraphicsScene) -> list[QGraphicsItem]:
    """The scene's visible items, bottom first (z value, then insertion order as Qt paints them)."""
    return [it for it in scene.items(pg.QtCore.Qt.SortOrder.AscendingOrder) if it.isVisible()]


def scene_figure(scene: QGraphicsScene) -> Any:
    """A matplotlib ``Figure`` of a scene of rectangles, paths, polygons and simple texts (scene coordinates,
    y down), at the scene's size in px: pens' dashes, fonts' weight and monospace family kept."""
    from matplotlib.patches import Polygon, Rectangle

    rect = scene.itemsBoundingRect()
    fig = _figure(rect.width() + 20, rect.height() + 20)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(rect.left() - 10, rect.right() + 10)
    ax.set_ylim(rect.bottom() + 10, rect.top() - 10)  # y down, as in the scene
    ax.set_axis_off()
    pt = 72.0 / DPI  # px → pt (line widths, font sizes)

    def line(pen: QPen) -> dict[str, Any]:
        dashes = _dashes(pen)
        width = max(pen.widthF(), 0.5)
        return {"edgecolor": _rgba(pen) or "none", "linewidth": width * pt,
                "linestyle": (0, [d / width for d in dashes]) if dashes else "-"}

    for z, it in enumerate(_drawn(scene)):
        if isinstance(it, QGraphicsRectItem):
            r = it.mapRectToScene(it.rect())
            ax.add_patch(Rectangle((r.left(), r.top()), r.width(), r.height(), zorder=z,
                                   facecolor=_rgba(it.brush()) or "none", **line(it.pen())))
        elif isinstance(it, (QGraphicsPathItem, QGraphicsPolygonItem)):
            if isinstance(it, QGraphicsPolygonItem):  # the graph's arrowheads
                polys, closed = [[(p.x(), p.y()) for p in it.mapToScene(it.polygon())]], True
            else:
                polys = _path_points(it.mapToScene(it.path()))
                closed = it.brush().style() != pg.QtCore.Qt.BrushStyle.NoBrush
            for poly in polys:
                if len(poly) < 2:
                    continue
                ax.add_patch(Polygon(poly, closed=closed, fill=closed, facecolor=_rgba(it.brush()) or "none",
                                     zorder=z, **line(it.pen())))
        elif isinstance(it, QGraphicsSimpleTextItem) and it.text().strip():
            font = it.font()
            for text, x, y in _text_lines(it):
                ax.text(x, y, text, fontsize=_font_px(font) * pt, va="baseline", ha="center", zorder=z,
                        color=_rgba(it.brush()) or "black", fontweight="bold" if font.bold() else "normal",
                        fontfamily="monospace" if _is_mono(font) else "sans-serif")
    return fig


def _svg_colour(c: tuple[float, float, float, float] | None) -> tuple[str, str]:
    """An SVG colour and opacity of a matplotlib RGBA (``none`` when invisible)."""
    if c is None:
        return "none", "1"
    r, g, b = (round(v * 255) for v in c[:3])
    return f"#{r:02x}{g:02x}{b:02x}", f"{c[3]:.3g}"


def _svg_paint(brush: Any, pen: QPen) -> str:
    fill, fill_alpha = _svg_colour(_rgba(brush) if brush is not None else None)
    stroke, stroke_alpha = _svg_colour(_rgba(pen))
    attrs = f'fill="{fill}" stroke="{stroke}" stroke-width="{max(pen.widthF(), 0.5):.3g}"'
    if fill_alpha != "1":
        attrs += f' fill-opacity="{fill_alpha}"'
    if stroke_alpha != "1":
        attrs += f' stroke-opacity="{stroke_alpha}"'
    dashes = _dashes(pen)
    if dashes and stroke != "none":
        attrs += f' stroke-dasharray="{" ".join(f"{d:.3g}" for d in dashes)}"'
    return attrs


def _svg_path(path: QPainterPath) -> str:
    return " ".join("M " + " L ".join(f"{x:.2f} {y:.2f}" for x, y in poly) for poly in _path_points(path) if poly)


def scene_svg(scene: QGraphicsScene) -> str:
    """SVG of a scene of rectangles, paths, polygons and simple texts, in scene px: ``<rect>`` and
    ``<path>`` with their pens' ``stroke-dasharray``, edges (items whose data :data:`ROLE` is ``"edge"``)
    ending in an arrowhead ``<marker>`` of their colour (``"arrowhead"`` polygons are that marker, not drawn
    again), ``<text>`` with the font's size, weight and family (monospace fonts as a monospace stack)."""
    rect = scene.itemsBoundingRect().adjusted(-10, -10, 10, 10)
    body: list[str] = []
    markers: dict[str, str] = {}
    for it in _drawn(scene):
        role = it.data(ROLE)
        if isinstance(it, QGraphicsRectItem):
            r = it.mapRectToScene(it.rect())
            body.append(f'<rect x="{r.left():.2f}" y="{r.top():.2f}" width="{r.width():.2f}" '
                        f'height="{r.height():.2f}" {_svg_paint(it.brush(), it.pen())}/>')
        elif isinstance(it, QGraphicsPolygonItem):
            if role == "arrowhead":
                continue
            pts = " ".join(f"{p.x():.2f},{p.y():.2f}" for p in it.mapToScene(it.polygon()))
            body.append(f'<polygon points="{pts}" {_svg_paint(it.brush(), it.pen())}/>')
        elif isinstance(it, QGraphicsPathItem):
            d = _svg_path(it.mapToScene(it.path()))
            if not d:
                continue
            brush = it.brush() if it.brush().style() != pg.QtCore.Qt.BrushStyle.NoBrush else None
            extra = ""
            if role == "edge":
                colour, _alpha = _svg_colour(_rgba(it.pen()))
                name = f"arrow-{colour.lstrip('#')}"
                markers[name] = colour
                extra = f' marker-end="url(#{name})"'
            body.append(f'<path class="{role or "path"}" d="{d}" {_svg_paint(brush, it.pen())}{extra}/>')
        elif isinstance(it, QGraphicsSimpleTextItem) and it.text().strip():
            font = it.font()
            fill, alpha = _svg_colour(_rgba(it.brush()) or (0, 0, 0, 1))
            style = (f"font-family: {MONO_FAMILIES if _is_mono(font) else SANS_FAMILIES}; "
                     f"font-size: {_font_px(font):.3g}px; font-weight: {'bold' if font.bold() else 'normal'}")
            for text, x, y in _text_lines(it):
                if text.strip():
                    body.append(f'<text x="{x:.2f}" y="{y:.2f}" text-anchor="middle" fill="{fill}"'
                                f'{"" if alpha == "1" else f" fill-opacity={quoteattr(alpha)}"} '
                                f'style={quoteattr(style)} xml:space="preserve">{escape(text)}</text>')
    defs = "".join(
        f'<marker id="{name}" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="8" markerHeight="8" '
        f'markerUnits="userSpaceOnUse" orient="auto"><path d="M 0 0 L 8 4 L 0 8 z" fill="{colour}"/></marker>'
        for name, colour in markers.items())
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{rect.width():.0f}" '
            f'height="{rect.height():.0f}" viewBox="{rect.left():.2f} {rect.top():.2f} {rect.width():.2f} '
            f'{rect.height():.2f}">\n<defs>{defs}</defs>\n'
            f'<rect x="{rect.left():.2f}" y="{rect.top():.2f}" width="{rect.width():.2f}" '
            f'height="{rect.height():.2f}" fill="white"/>\n' + "\n".join(body) + "\n</svg>\n")


def export_scene_vector(scene: QGraphicsScene, path: str | Path) -> Path:
    """Write ``scene`` as SVG (:func:`scene_svg`) or PDF (matplotlib) by suffix. Returns the path; raises
    ValueError for another suffix and OSError when nothing was written."""
    path = Path(path)
    if path.suffix.lower() != ".svg":
        return _save(scene_figure(scene), path)
    path.write_text(scene_svg(scene), encoding="utf-8")
    if not path.is_file() or path.stat().st_size == 0:
        raise OSError(f"Nothing was written to {path}.")
    return path
