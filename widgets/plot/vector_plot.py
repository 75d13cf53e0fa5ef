"""A pyqtgraph plot redrawn as a matplotlib figure for the vector exports (:mod:`widgets.plot.vector_export`).

The plot's plain data — every curve's points, its pen and symbol, bars, reference lines, text notes, the legend
entries, the axes' ranges, labels and scale — is drawn again in page coordinates; each run's legend label in
the run's colour, and the key above the plot (the title's rich text) with its colours and its symbols
(★ ◆ ■ ● and the dashed steady line) drawn as shapes, not as glyphs a renderer's font may lack.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import TYPE_CHECKING, Any

import numpy as np  # noqa: TID253 - a heavy module: its users import it inside functions
import pyqtgraph as pg  # noqa: TID253 - a heavy module: its users import it inside functions
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor

from widgets.common.typed_qt import graphics_scene, plot_item
from widgets.plot.vector_figure import DPI, RGBA, figure, plain, rgba

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.offsetbox import VPacker

#: pyqtgraph symbol → matplotlib marker.
MARKERS = {"o": "o", "s": "s", "t": "v", "t1": "^", "t2": ">", "t3": "<", "d": "D", "+": "P", "x": "X",
           "p": "p", "h": "h", "star": "*", "arrow_up": "^", "arrow_down": "v"}
#: Key glyphs drawn as shapes: glyph → (matplotlib marker, size in pt, gid suffix); "┄" is a dashed line.
KEY_SHAPES = {"★": ("*", 9.0, "star"), "◆": ("D", 5.5, "diamond"), "■": ("s", 6.0, "square"),
              "●": ("o", 6.0, "circle"), "▲": ("^", 6.5, "triangle"), "┄": ("", 0.0, "line")}


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


def _key_box(lines: list[list[tuple[str, str]]], fontsize: float) -> VPacker:
    """The key above the plot as matplotlib offset boxes: each run of text in its colour, each key glyph
    (:data:`KEY_SHAPES`) a marker or dashed line of its colour with gid ``key-<shape>``, lines centred."""
    from matplotlib.artist import Artist
    from matplotlib.lines import Line2D
    from matplotlib.offsetbox import DrawingArea, HPacker, TextArea, VPacker

    rows: list[Artist] = []  # packers' children as matplotlib types them (offset boxes, all of them)
    for line in lines:
        parts: list[Artist] = []
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
                    label = TextArea(piece.lstrip() if parts and isinstance(parts[-1], DrawingArea) else piece,
                                     textprops={"fontsize": fontsize, "color": colour})
                    label.get_children()[0].set_gid("key-text")  # a TextArea's one child: its Text
                    parts.append(label)
        if parts:
            rows.append(HPacker(children=parts, align="baseline", pad=0, sep=0))
    return VPacker(children=rows, align="center", pad=0, sep=fontsize * 0.35)


def _legends(plot: pg.PlotWidget) -> list[pg.LegendItem]:
    """The plot's visible legends with entries: its ``PlotItem.legend`` and any ``LegendItem`` elsewhere in
    the scene (the latency plot's sits in a row of its own under the x axis, not in ``PlotItem.legend``)."""
    elsewhere = [it for it in graphics_scene(plot).items() if isinstance(it, pg.LegendItem)]
    found = [plot_item(plot).legend, *elsewhere]
    out: list[pg.LegendItem] = []
    for legend in found:
        if legend is not None and legend not in out and legend.isVisible() and legend.items:
            out.append(legend)
    return out


def _text_colour(item: pg.TextItem) -> RGBA | None:
    """The colour of a pyqtgraph TextItem (its first ``color:`` in rich text, else its default colour)."""
    m = re.search(r"color:\s*(#[0-9a-fA-F]{6})", item.textItem.toHtml())
    return rgba(QColor(m.group(1)) if m else item.textItem.defaultTextColor())


def _style(item: pg.PlotDataItem) -> dict[str, Any] | None:
    """matplotlib line and marker keywords of a PlotDataItem's pen, symbol, brush and size (None when it
    draws nothing)."""
    opts = item.opts
    pen = pg.mkPen(opts.get("pen")) if opts.get("pen") is not None else None
    colour = rgba(pen) if pen is not None else None
    symbol = opts.get("symbol")
    kwargs: dict[str, Any] = {"alpha": item.opacity()}
    if pen is not None and colour is not None:
        kwargs.update(color=colour, linewidth=max(pen.widthF(), 1.0) * 0.75,
                      linestyle="--" if pen.style() == Qt.PenStyle.DashLine else "-")
    else:
        kwargs.update(linestyle="none")
    if symbol is not None:
        brush = pg.mkBrush(opts.get("symbolBrush")) if opts.get("symbolBrush") is not None else None
        spen = pg.mkPen(opts.get("symbolPen")) if opts.get("symbolPen") is not None else None
        face, edge = rgba(brush), rgba(spen)
        kwargs.update(marker=MARKERS.get(symbol, "o") if isinstance(symbol, str) else "o",
                      markersize=float(opts.get("symbolSize") or 8) * 0.75,
                      markerfacecolor=face or "none", markeredgecolor=edge or face or colour or "black",
                      markeredgewidth=0.6)
    return kwargs if colour is not None or symbol is not None else None


def _curve(ax: Axes, item: pg.PlotDataItem) -> Line2D | None:
    """One PlotDataItem from its original (untransformed) data: its line and its markers."""
    x, y, style = item.xData, item.yData, _style(item)
    if x is None or y is None or len(x) == 0 or style is None:
        return None
    # markers above every line (the compile stars stay whole where a curve crosses them), then Qt's z order
    zorder = (2.0 if "marker" in style else 1.0) + item.zValue() / 100
    (line,) = ax.plot(np.asarray(x, dtype=float), np.asarray(y, dtype=float), zorder=zorder, **style)
    return line


def _bars(ax: Axes, item: pg.BarGraphItem) -> None:
    from matplotlib.patches import Rectangle

    o = item.opts
    x0 = o.get("x0")
    x0 = np.atleast_1d(x0 if x0 is not None else np.asarray(o["x"]) - np.asarray(o["width"]) / 2)
    width = np.broadcast_to(np.asarray(o.get("width", 1.0), dtype=float), x0.shape)
    height = np.broadcast_to(np.asarray(o.get("height", 1.0), dtype=float), x0.shape)
    y = o.get("y0") if o.get("y0") is not None else np.asarray(o.get("y", 0.0)) - height / 2
    y = np.broadcast_to(np.asarray(y, dtype=float), x0.shape)
    brushes = o.get("brushes") or [o.get("brush")] * len(x0)
    pens = o.get("pens") or [o.get("pen")] * len(x0)
    for i in range(len(x0)):
        face = rgba(pg.mkBrush(brushes[i])) if brushes[i] is not None else (0.5, 0.5, 0.5, 1)
        edge = rgba(pg.mkPen(pens[i])) if pens[i] is not None else None
        ax.add_patch(Rectangle(
            (x0[i], y[i]), width[i], height[i], facecolor=face or "none", edgecolor=edge or "none",
            linewidth=0.4, alpha=item.opacity()))


def _handle_colour(handle: Line2D) -> Any:
    """A legend handle's colour (its line's, else its marker's face) for its label's text."""
    colour = handle.get_color() if handle.get_linestyle() not in ("None", "none", "") else "none"
    if isinstance(colour, str) and colour.lower() == "none":
        colour = handle.get_markerfacecolor()
    return "#374151" if isinstance(colour, str) and colour.lower() == "none" else colour


def _axis_label(axis: pg.AxisItem) -> str:
    label = plain(axis.labelText or "")
    units = axis.labelUnits or ""
    return f"{label} ({units})" if units and label else label


def _draw_items(ax: Axes, children: list[Any], log_x: bool, log_y: bool) -> dict[Any, Line2D | None]:
    """The view box's visible curves, bars and reference lines; returns each curve's line (a legend handle)."""
    handles: dict[Any, Line2D | None] = {}
    for child in children:
        if not child.isVisible():
            continue
        if isinstance(child, pg.PlotDataItem):
            handles[child] = _curve(ax, child)
        elif isinstance(child, pg.BarGraphItem):
            _bars(ax, child)
        elif isinstance(child, pg.InfiniteLine):
            pos = float(child.getYPos() if child.angle % 180 == 0 else child.getXPos())  # its value()
            colour = rgba(child.pen) or (0.4, 0.4, 0.4, 1)
            style = "--" if child.pen.style() == Qt.PenStyle.DashLine else "-"
            if child.angle == 0:
                ax.axhline(10 ** pos if log_y else pos, color=colour, linestyle=style, linewidth=1.0)
            else:
                ax.axvline(10 ** pos if log_x else pos, color=colour, linestyle=style, linewidth=1.0)
    return handles


def _set_view(ax: Axes, vb: pg.ViewBox, log_x: bool, log_y: bool) -> None:
    """The axes' ranges and scales as the view box shows them."""
    (x0, x1), (y0, y1) = vb.viewRange()
    ax.set_xlim(10 ** x0 if log_x else x0, 10 ** x1 if log_x else x1)
    ax.set_ylim(10 ** y0 if log_y else y0, 10 ** y1 if log_y else y1)
    if log_y:
        from matplotlib.ticker import FuncFormatter

        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:,.0f}" if v >= 1 else f"{v:g}"))
    if log_x:
        ax.set_xscale("log")


def _draw_notes(ax: Axes, children: list[Any], log_x: bool, log_y: bool) -> None:
    """The text notes, clipped to the axes as on screen, each at its anchor."""
    for child in children:
        if isinstance(child, pg.TextItem) and child.isVisible() and child.toPlainText().strip():
            pos = child.pos()
            anchor = getattr(child, "anchor", pg.Point(0, 0))
            ax.text(10 ** pos.x() if log_x else pos.x(), 10 ** pos.y() if log_y else pos.y(),
                    plain(child.toPlainText()), fontsize=7,
                    color=_text_colour(child), alpha=child.opacity(),
                    ha="left" if anchor[0] < 0.34 else ("right" if anchor[0] > 0.66 else "center"),
                    va="top" if anchor[1] < 0.34 else ("bottom" if anchor[1] > 0.66 else "center"),
                    clip_on=True)


def _draw_title(fig: Figure, item: pg.PlotItem, rect: QRectF) -> None:
    """The title's key, centred in the title row above the view box as on screen, each key in its colour."""
    title = rich_lines(item.titleLabel.text) if item.titleLabel.isVisible() else []
    if title:
        from matplotlib.offsetbox import AnchoredOffsetbox

        t = item.titleLabel.sceneBoundingRect()
        h = fig.get_figheight() * DPI
        key = AnchoredOffsetbox(loc="center", child=_key_box(title, 8), frameon=False, pad=0, borderpad=0,
                                bbox_to_anchor=(0.5, 1 - (t.center().y() - rect.top()) / h),
                                bbox_transform=fig.transFigure)
        fig.add_artist(key)


def _draw_legends(fig: Figure, plot: pg.PlotWidget, handles: dict[Any, Line2D | None], rect: QRectF) -> None:
    """Each legend where it is on screen (its top-left corner), in as many columns, labels in their colours."""
    w, h = fig.get_figwidth() * DPI, fig.get_figheight() * DPI
    for n, legend in enumerate(_legends(plot)):
        entries: list[tuple[Line2D, str]] = []
        for sample, label in legend.items:
            source = sample.item
            handle = handles.get(source)
            style = _style(source) if isinstance(source, pg.PlotDataItem) else None
            if handle is None and style is not None:
                from matplotlib.lines import Line2D  # a legend-only key (no data): its style alone

                handle = Line2D([], [], **{**style, "alpha": 1.0})
            if handle is not None:
                entries.append((handle, plain(label.text)))
        if entries:
            g = legend.sceneBoundingRect()
            box = fig.legend([e for e, _ in entries], [t for _, t in entries], fontsize=7, framealpha=0.85,
                             loc="upper left", ncols=max(1, legend.columnCount), borderaxespad=0,
                             labelcolor=[_handle_colour(e) for e, _ in entries],
                             bbox_to_anchor=((g.left() - rect.left()) / w, 1 - (g.top() - rect.top()) / h),
                             bbox_transform=fig.transFigure)
            box.set_gid(f"legend-{n}")
            for i, text in enumerate(box.get_texts()):
                text.set_gid(f"legend-{n}-label-{i}")


def plot_figure(plot: pg.PlotWidget) -> Figure:
    """A matplotlib ``Figure`` of ``plot`` at its on-screen size: curves, markers, bars, reference lines,
    text notes, legend, title, axis labels, log scale and the view's ranges as shown."""
    item = plot_item(plot)
    vb = item.getViewBox()
    rect = item.sceneBoundingRect()
    fig = figure(rect.width(), rect.height())
    # the axes exactly where the view box is on screen, so every point lands where the PNG export has it
    box = vb.sceneBoundingRect()
    w, h = fig.get_figwidth() * DPI, fig.get_figheight() * DPI
    ax = fig.add_axes(((box.left() - rect.left()) / w, 1 - (box.bottom() - rect.top()) / h,
                       box.width() / w, box.height() / h))
    log_x, log_y = item.ctrl.logXCheck.isChecked(), item.ctrl.logYCheck.isChecked()
    children = sorted(vb.childGroup.childItems(), key=lambda c: c.zValue())  # every item, bounds-ignoring ones too
    handles = _draw_items(ax, children, log_x, log_y)
    _set_view(ax, vb, log_x, log_y)
    _draw_notes(ax, children, log_x, log_y)  # notes last, on top
    ax.set_xlabel(_axis_label(item.getAxis("bottom")), fontsize=8)
    ax.set_ylabel(_axis_label(item.getAxis("left")), fontsize=8)
    ax.yaxis.set_label_coords(-(box.left() - rect.left() - 10) / box.width(), 0.5)  # inside the figure
    ax.tick_params(labelsize=7)
    ax.grid(True, alpha=0.15)
    _draw_title(fig, item, rect)
    _draw_legends(fig, plot, handles, rect)
    return fig
