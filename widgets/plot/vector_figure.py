"""What the vector exports (:mod:`widgets.plot.vector_export`) share: a matplotlib figure at a widget's size in
px and its saving as SVG or PDF (text as text), Qt colours, pens and rich text as matplotlib and SVG take them,
and the geometry of a ``QGraphicsScene``'s items in scene px (subpaths as polylines, lines of text, fonts)."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontInfo, QFontMetricsF, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene, QGraphicsSimpleTextItem

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from matplotlib.typing import RcKeyType

#: Vector formats written here (file suffix → matplotlib format).
FORMATS = {".svg": "svg", ".pdf": "pdf"}
DPI = 96.0  # CSS px per inch: the figure has the widget's size in px
#: Text as text: ``<text>`` in SVG (not glyph outlines), embedded TrueType in PDF (searchable, copyable).
RC: dict[RcKeyType, Any] = {"svg.fonttype": "none", "pdf.fonttype": 42,
                            "font.family": ["DejaVu Sans", "sans-serif"]}
#: A matplotlib colour: red, green, blue, alpha in 0…1.
RGBA = tuple[float, float, float, float]


def figure(width_px: float, height_px: float) -> Figure:
    """A figure (no pyplot state) of ``width_px`` × ``height_px`` CSS px (at least 100 × 80)."""
    from matplotlib.figure import Figure

    return Figure(figsize=(max(width_px, 100) / DPI, max(height_px, 80) / DPI), dpi=DPI)


def save(fig: Figure, path: Path) -> Path:
    """Write ``fig`` as SVG or PDF by ``path``'s suffix (:data:`FORMATS`, :data:`RC`) on a white page. Returns
    the path; raises ValueError for another suffix and OSError when nothing was written."""
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


def rgba(colour: QColor | QPen | QBrush | None) -> RGBA | None:
    """A matplotlib RGBA of a Qt colour, pen or brush (None when invisible: no pen, no brush, alpha 0)."""
    if colour is None:
        return None
    if isinstance(colour, QPen):
        if colour.style() == Qt.PenStyle.NoPen:
            return None
        colour = colour.color()
    elif isinstance(colour, QBrush):
        if colour.style() == Qt.BrushStyle.NoBrush:
            return None
        colour = colour.color()
    if colour.alpha() == 0:
        return None
    return (colour.redF(), colour.greenF(), colour.blueF(), colour.alphaF())


def plain(text: str) -> str:
    """Rich text (``<b>…</b>``, ``&nbsp;``, ``<br>``) as plain text, one line per ``<br>``."""
    text = re.sub(r"<br\s*/?>", "\n", text or "")
    return html.unescape(re.sub(r"<[^>]+>", "", text)).replace("\xa0", " ")


def dashes(pen: QPen) -> list[float]:
    """A pen's dash pattern in px (empty for a solid or invisible pen)."""
    if pen.style() in (Qt.PenStyle.SolidLine, Qt.PenStyle.NoPen):
        return []
    width = max(pen.widthF(), 1.0)
    return [v * width for v in pen.dashPattern()]


def path_points(path: QPainterPath) -> list[list[tuple[float, float]]]:
    """A painter path as polylines (curves flattened), one list per subpath."""
    return [[(p.x(), p.y()) for p in poly.toList()] for poly in path.toSubpathPolygons()]


def is_mono(font: QFont) -> bool:
    return font.styleHint() in (QFont.StyleHint.TypeWriter, QFont.StyleHint.Monospace) or (
        "mono" in font.family().lower() or "courier" in font.family().lower())


def text_lines(it: QGraphicsSimpleTextItem) -> list[tuple[str, float, float]]:
    """Each line of a simple text item: ``(text, centre x, baseline y)`` in scene px (Qt centres the lines
    of a ``QGraphicsSimpleTextItem`` in its bounding box)."""
    lines = it.text().split("\n")
    r = it.mapRectToScene(it.boundingRect())
    step = r.height() / max(len(lines), 1)
    ascent = QFontMetricsF(it.font()).ascent()
    return [(line, r.center().x(), r.top() + i * step + ascent) for i, line in enumerate(lines)]


def font_px(font: QFont) -> float:
    return float(QFontInfo(font).pixelSize()) if font.pixelSize() <= 0 else float(font.pixelSize())


def drawn(scene: QGraphicsScene) -> list[QGraphicsItem]:
    """The scene's visible items, bottom first (z value, then insertion order as Qt paints them)."""
    return [it for it in scene.items(Qt.SortOrder.AscendingOrder) if it.isVisible()]
