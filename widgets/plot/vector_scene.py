"""A ``QGraphicsScene`` of boxes, paths, polygons and text (the dataflow graph) in the two vector formats: SVG
written directly (:func:`scene_svg`: ``<rect>``, ``<path>`` with ``marker-end`` arrowheads, ``<text>`` with the
font's family, weight and size, ``stroke-dasharray`` for dashed pens) and a matplotlib figure for the PDF
(:func:`scene_figure`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from xml.sax.saxutils import escape, quoteattr

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QPainterPath, QPen
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsPathItem,
    QGraphicsPolygonItem,
    QGraphicsRectItem,
    QGraphicsScene,
    QGraphicsSimpleTextItem,
)

from widgets.plot.vector_figure import (
    DPI,
    RGBA,
    dashes,
    drawn,
    figure,
    font_px,
    is_mono,
    path_points,
    rgba,
    text_lines,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

#: Item data key (``QGraphicsItem.setData``) naming a scene item's role for the SVG writer: ``"edge"`` (a
#: path drawn with an arrowhead marker at its end) or ``"arrowhead"`` (drawn by that marker instead).
ROLE = 0
MONO_FAMILIES = "'DejaVu Sans Mono', Menlo, Consolas, 'Liberation Mono', monospace"
SANS_FAMILIES = "'DejaVu Sans', Helvetica, Arial, sans-serif"
PT = 72.0 / DPI  # px → pt (line widths, font sizes)


def _line(pen: QPen) -> dict[str, Any]:
    """matplotlib patch keywords of a pen: colour, width in pt, dashes in line widths."""
    pattern = dashes(pen)
    width = max(pen.widthF(), 0.5)
    return {"edgecolor": rgba(pen) or "none", "linewidth": width * PT,
            "linestyle": (0, [d / width for d in pattern]) if pattern else "-"}


def _draw_item(ax: Axes, it: QGraphicsItem, z: int) -> None:
    """One scene item on ``ax`` (scene px, y down) at z order ``z``."""
    from matplotlib.patches import Polygon, Rectangle

    if isinstance(it, QGraphicsRectItem):
        r = it.mapRectToScene(it.rect())
        ax.add_patch(Rectangle((r.left(), r.top()), r.width(), r.height(), zorder=z,
                               facecolor=rgba(it.brush()) or "none", **_line(it.pen())))
    elif isinstance(it, (QGraphicsPathItem, QGraphicsPolygonItem)):
        if isinstance(it, QGraphicsPolygonItem):  # the graph's arrowheads
            polys, closed = [[(p.x(), p.y()) for p in it.mapToScene(it.polygon()).toList()]], True
        else:
            polys = path_points(it.mapToScene(it.path()))
            closed = it.brush().style() != Qt.BrushStyle.NoBrush
        for poly in polys:
            if len(poly) < 2:
                continue
            ax.add_patch(Polygon(poly, closed=closed, fill=closed, facecolor=rgba(it.brush()) or "none",
                                 zorder=z, **_line(it.pen())))
    elif isinstance(it, QGraphicsSimpleTextItem) and it.text().strip():
        font = it.font()
        for text, x, y in text_lines(it):
            ax.text(x, y, text, fontsize=font_px(font) * PT, va="baseline", ha="center", zorder=z,
                    color=rgba(it.brush()) or "black", fontweight="bold" if font.bold() else "normal",
                    fontfamily="monospace" if is_mono(font) else "sans-serif")


def scene_figure(scene: QGraphicsScene) -> Figure:
    """A matplotlib ``Figure`` of a scene of rectangles, paths, polygons and simple texts (scene coordinates,
    y down), at the scene's size in px: pens' dashes, fonts' weight and monospace family kept."""
    rect = scene.itemsBoundingRect()
    fig = figure(rect.width() + 20, rect.height() + 20)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(rect.left() - 10, rect.right() + 10)
    ax.set_ylim(rect.bottom() + 10, rect.top() - 10)  # y down, as in the scene
    ax.set_axis_off()
    for z, it in enumerate(drawn(scene)):
        _draw_item(ax, it, z)
    return fig


def _svg_colour(c: RGBA | None) -> tuple[str, str]:
    """An SVG colour and opacity of a matplotlib RGBA (``none`` when invisible)."""
    if c is None:
        return "none", "1"
    r, g, b = (round(v * 255) for v in c[:3])
    return f"#{r:02x}{g:02x}{b:02x}", f"{c[3]:.3g}"


def _svg_paint(brush: QBrush | None, pen: QPen) -> str:
    fill, fill_alpha = _svg_colour(rgba(brush) if brush is not None else None)
    stroke, stroke_alpha = _svg_colour(rgba(pen))
    attrs = f'fill="{fill}" stroke="{stroke}" stroke-width="{max(pen.widthF(), 0.5):.3g}"'
    if fill_alpha != "1":
        attrs += f' fill-opacity="{fill_alpha}"'
    if stroke_alpha != "1":
        attrs += f' stroke-opacity="{stroke_alpha}"'
    pattern = dashes(pen)
    if pattern and stroke != "none":
        attrs += f' stroke-dasharray="{" ".join(f"{d:.3g}" for d in pattern)}"'
    return attrs


def _svg_path(path: QPainterPath) -> str:
    return " ".join("M " + " L ".join(f"{x:.2f} {y:.2f}" for x, y in poly) for poly in path_points(path) if poly)


def _svg_text(it: QGraphicsSimpleTextItem) -> list[str]:
    """A simple text item's lines as ``<text>`` elements with its font's family, size and weight."""
    font = it.font()
    fill, alpha = _svg_colour(rgba(it.brush()) or (0, 0, 0, 1))
    style = (f"font-family: {MONO_FAMILIES if is_mono(font) else SANS_FAMILIES}; "
             f"font-size: {font_px(font):.3g}px; font-weight: {'bold' if font.bold() else 'normal'}")
    return [f'<text x="{x:.2f}" y="{y:.2f}" text-anchor="middle" fill="{fill}"'
            f'{"" if alpha == "1" else f" fill-opacity={quoteattr(alpha)}"} '
            f'style={quoteattr(style)} xml:space="preserve">{escape(text)}</text>'
            for text, x, y in text_lines(it) if text.strip()]


def _svg_item(it: QGraphicsItem, markers: dict[str, str]) -> list[str]:
    """The SVG elements of one scene item (none for an arrowhead: its edge's marker draws it); an edge's
    arrowhead marker goes into ``markers`` (name → colour)."""
    role = it.data(ROLE)
    if isinstance(it, QGraphicsRectItem):
        r = it.mapRectToScene(it.rect())
        return [f'<rect x="{r.left():.2f}" y="{r.top():.2f}" width="{r.width():.2f}" '
                f'height="{r.height():.2f}" {_svg_paint(it.brush(), it.pen())}/>']
    if isinstance(it, QGraphicsPolygonItem):
        if role == "arrowhead":
            return []
        pts = " ".join(f"{p.x():.2f},{p.y():.2f}" for p in it.mapToScene(it.polygon()).toList())
        return [f'<polygon points="{pts}" {_svg_paint(it.brush(), it.pen())}/>']
    if isinstance(it, QGraphicsPathItem):
        d = _svg_path(it.mapToScene(it.path()))
        if not d:
            return []
        brush = it.brush() if it.brush().style() != Qt.BrushStyle.NoBrush else None
        extra = ""
        if role == "edge":
            colour, _alpha = _svg_colour(rgba(it.pen()))
            name = f"arrow-{colour.lstrip('#')}"
            markers[name] = colour
            extra = f' marker-end="url(#{name})"'
        return [f'<path class="{role or "path"}" d="{d}" {_svg_paint(brush, it.pen())}{extra}/>']
    if isinstance(it, QGraphicsSimpleTextItem) and it.text().strip():
        return _svg_text(it)
    return []


def scene_svg(scene: QGraphicsScene) -> str:
    """SVG of a scene of rectangles, paths, polygons and simple texts, in scene px: ``<rect>`` and
    ``<path>`` with their pens' ``stroke-dasharray``, edges (items whose data :data:`ROLE` is ``"edge"``)
    ending in an arrowhead ``<marker>`` of their colour (``"arrowhead"`` polygons are that marker, not drawn
    again), ``<text>`` with the font's size, weight and family (monospace fonts as a monospace stack)."""
    rect = scene.itemsBoundingRect().adjusted(-10, -10, 10, 10)
    markers: dict[str, str] = {}
    body = [element for it in drawn(scene) for element in _svg_item(it, markers)]
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
