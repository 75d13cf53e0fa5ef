"""Dataflow graph view: a laid-out graph (``app.core.inspect.dataflow.Dataflow``-shaped plain data: ``nodes`` with
``id, label, kind, eqns, x, y, w, h``; ``edges`` with ``src, dst, label, points``) drawn in a
QGraphicsView. Wheel zooms around the cursor, dragging pans, clicking a node emits its equations.
Export to SVG (written in page coordinates by :mod:`widgets.plot.vector_export`: arrowhead markers on the edges,
bold titles, the monospace font, dashed borders of open boxes), PDF and PNG. No JAX.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetricsF,
    QImage,
    QPainter,
    QPainterPath,
    QPen,
    QPolygonF,
    QWheelEvent,
)
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsPathItem,
    QGraphicsRectItem,
    QGraphicsScene,
    QGraphicsSimpleTextItem,
    QGraphicsView,
    QWidget,
)

FILL = {"eqn": "#e8f0fe", "input": "#f1f3f4", "layer": "#fef7e0", "module": "#fef7e0", "line": "#e6f4ea",
        "call": "#f3e8fd"}
BORDER = {"eqn": "#4a6fa5", "input": "#9aa0a6", "layer": "#b06000", "module": "#b06000", "line": "#188038",
          "call": "#8430ce"}
OPEN_FILL = {"layer": "#fffcf2", "module": "#fffcf2", "line": "#f6fbf7", "call": "#fbf6fe"}
HIGHLIGHT = "#d93025"
DOT_PRIMS = ("dot_general", "conv_general_dilated")
GROUP_KINDS = ("module", "layer", "call", "line")
FONT_PT = 9  # the node text; app.core.inspect.dataflow sizes boxes for a 9 pt monospace font
HEADER_H = 24.0  # the title row of an open box (app.core.inspect.dataflow.HEADER_H)
EXPORT_ROLE = 0  # QGraphicsItem data key read by widgets.plot.vector_scene (ROLE): "edge" / "arrowhead"


def _font(bold: bool = False) -> QFont:
    font = QFont("monospace", FONT_PT)
    font.setStyleHint(QFont.StyleHint.TypeWriter)
    font.setBold(bold)
    return font


class _NodeItem(QGraphicsRectItem):
    """A node: a closed box (text centred) or, when ``node.expanded``, an open box with a title row."""

    def __init__(self, node: Any) -> None:
        super().__init__(QRectF(-node.w / 2, -node.h / 2, node.w, node.h))
        self.node = node
        self.setPos(node.x, node.y)
        kind = node.kind
        first = node.label.split("\n")[0]
        if node.expanded:
            fill = OPEN_FILL.get(kind, "#ffffff")
        else:
            fill = "#d2e3fc" if kind == "eqn" and first in DOT_PRIMS else FILL.get(kind, "#ffffff")
        self.setBrush(QBrush(QColor(fill)))
        self._pen = QPen(QColor(BORDER.get(kind, "#80868b")), 1.2)
        if node.expanded:
            self._pen.setStyle(Qt.PenStyle.DashLine)
            self.setZValue(-2)
        elif kind in GROUP_KINDS:
            self._pen.setWidthF(2.0)
        self.setPen(self._pen)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable, True)
        hint = ""
        if kind in GROUP_KINDS:
            hint = "\ndouble-click to close" if node.expanded else "\ndouble-click to open"
        tip = getattr(node, "tooltip", "") or node.label.replace("\n", "  ")
        self.setToolTip(tip + hint)
        if node.expanded:
            text = QGraphicsSimpleTextItem(("▾ " + first), self)
            text.setFont(_font(bold=True))
            text.setPos(-node.w / 2 + 8, -node.h / 2 + (HEADER_H - text.boundingRect().height()) / 2)
        else:
            text = QGraphicsSimpleTextItem(node.label, self)
            text.setFont(_font(bold=kind in ("module", "layer")))
            r = text.boundingRect()
            text.setPos(-r.width() / 2, -r.height() / 2)
        self.text = text

    def set_highlighted(self, on: bool) -> None:
        pen = QPen(QColor(HIGHLIGHT), 3.0) if on else self._pen
        self.setPen(pen)


def _clip(points: list[tuple[float, float]], src: Any, dst: Any) -> list[tuple[float, float]]:
    """End an edge on the borders of its boxes (bottom of the source, top of the target), not at their
    centres: an edge into an open box stops at its frame."""
    if src is not None:
        x, y = points[0]
        points[0] = (x, y + src.h / 2 if points[1][1] > y else y - src.h / 2)
    if dst is not None:
        x, y = points[-1]
        points[-1] = (x, y - dst.h / 2 if points[-2][1] < y else y + dst.h / 2)
    return points


class DataflowGraph(QGraphicsView):
    """``nodeClicked(list)``: equation indexes of the clicked node; ``groupToggled(str)``: id of a box the
    user double-clicked to open or close (both emitted on the GUI thread)."""

    nodeClicked = Signal(list)
    groupToggled = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("dataflowGraph")
        self._scene = QGraphicsScene(self)
        self.setScene(self._scene)
        self.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setBackgroundBrush(QBrush(QColor("white")))
        self.node_items: dict[str, _NodeItem] = {}
        self.graph: Any = None
        self._message = self._scene.addSimpleText("Select a node in the explorer to draw its dataflow graph")

    def clear_graph(self, message: str = "") -> None:
        self._scene.clear()
        self.node_items.clear()
        self.graph = None
        self._message = self._scene.addSimpleText(message) if message else None

    def set_graph(self, graph: Any) -> None:
        """Draw a laid-out graph (replaces the previous one) and fit it in the view."""
        self.clear_graph()
        self.graph = graph
        pen = QPen(QColor("#80868b"), 1.0)
        by_id = {n.id: n for n in graph.nodes}
        for e in graph.edges:
            if len(e.points) < 2:
                continue
            points = _clip(list(e.points), by_id.get(e.src), by_id.get(e.dst))
            path = QPainterPath(QPointF(*points[0]))
            for p in points[1:]:
                path.lineTo(QPointF(*p))
            item = QGraphicsPathItem(path)
            item.setPen(pen)
            item.setZValue(-1)
            item.setData(EXPORT_ROLE, "edge")  # the SVG export ends it in an arrowhead marker
            self._scene.addItem(item)
            self._arrow(e.points[-2], e.points[-1], by_id.get(e.dst))
        for n in graph.nodes:
            item = _NodeItem(n)
            self._scene.addItem(item)
            self.node_items[n.id] = item
        if getattr(graph, "truncated", 0):
            note = self._scene.addSimpleText(f"{graph.truncated} equations not drawn (too many nodes)")
            note.setPos(0, graph.height + 20)
        self._scene.setSceneRect(self._scene.itemsBoundingRect().adjusted(-20, -20, 20, 20))
        self.fit()

    def _arrow(self, a: tuple[float, float], b: tuple[float, float], target: Any) -> None:
        """A small arrowhead where edge ``a→b`` meets the target node's top/bottom border."""
        ax, ay = a
        bx, by = b
        if target is not None:
            by = by - target.h / 2 if ay < by else by + target.h / 2
        dx, dy = bx - ax, by - ay
        length = max((dx * dx + dy * dy) ** 0.5, 1e-6)
        ux, uy = dx / length, dy / length
        tip = QPointF(bx, by)
        left = QPointF(bx - 8 * ux + 4 * uy, by - 8 * uy - 4 * ux)
        right = QPointF(bx - 8 * ux - 4 * uy, by - 8 * uy + 4 * ux)
        head = self._scene.addPolygon(QPolygonF([tip, left, right]), QPen(QColor("#80868b")),
                                      QBrush(QColor("#80868b")))
        head.setData(EXPORT_ROLE, "arrowhead")  # drawn by its edge's marker in the SVG export

    def fit(self) -> None:
        """Zoom so the whole graph fits the visible area (the items' bounds: a scene rect only ever grows)."""
        if self._scene.items():
            rect = self._scene.itemsBoundingRect().adjusted(-8, -8, 8, 8)
            self._scene.setSceneRect(rect)
            self.fitInView(rect, Qt.AspectRatioMode.KeepAspectRatio)
            if self.transform().m11() > 1.25:  # a small graph: no giant text
                self.resetTransform()
                self.scale(1.25, 1.25)
            if self.transform().m11() < 0.05:  # huge graphs: start readable near the top instead
                self.resetTransform()
                self.scale(0.5, 0.5)
                self.centerOn(self._scene.sceneRect().center().x(), 0)

    def zoom_factor(self) -> float:
        return self.transform().m11()

    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802 (Qt override)
        factor = 1.25 if event.angleDelta().y() > 0 else 0.8
        if 0.02 < self.zoom_factor() * factor < 8:
            self.scale(factor, factor)
        event.accept()

    def mouseReleaseEvent(self, event) -> None:  # noqa: N802, ANN001
        super().mouseReleaseEvent(event)
        item = self.itemAt(event.position().toPoint())
        while item is not None and not isinstance(item, _NodeItem):
            item = item.parentItem()
        if isinstance(item, _NodeItem):
            self.click_node(item.node.id)

    def mouseDoubleClickEvent(self, event) -> None:  # noqa: N802, ANN001
        item = self.itemAt(event.position().toPoint())
        while item is not None and not isinstance(item, _NodeItem):
            item = item.parentItem()
        if isinstance(item, _NodeItem) and item.node.kind in GROUP_KINDS:
            self.groupToggled.emit(item.node.id)
            event.accept()
            return
        super().mouseDoubleClickEvent(event)

    def text_scale(self) -> float:
        """On-screen height in pixels of one line of node text at the current zoom (readable from ~9)."""
        return QFontMetricsF(_font()).height() * self.zoom_factor()

    def click_node(self, node_id: str) -> None:
        """Highlight ``node_id`` and emit ``nodeClicked`` with its equations (as a mouse click does)."""
        item = self.node_items.get(node_id)
        if item is None:
            return
        self.highlight_equations(item.node.eqns)
        self.nodeClicked.emit(list(item.node.eqns))

    def highlight_equations(self, eqns: list[int]) -> list[str]:
        """Outline the nodes holding any of ``eqns``; returns their ids."""
        wanted = set(eqns)
        hits = []
        for nid, item in self.node_items.items():
            on = bool(wanted.intersection(item.node.eqns)) and item.node.kind != "input" and not item.node.expanded
            item.set_highlighted(on)
            if on:
                hits.append(nid)
        if hits:
            self.ensureVisible(self.node_items[hits[0]], 40, 40)
        return hits

    def export_svg(self, path: str | Path) -> None:
        """Write the graph as SVG or PDF (by suffix) in page coordinates (:mod:`widgets.plot.vector_export`)."""
        from widgets.plot.vector_export import export_scene_vector  # noqa: PLC0415 - heavy: pyqtgraph

        export_scene_vector(self._scene, path)

    def export_png(self, path: str | Path, max_side: int = 8000) -> None:
        rect = self._scene.sceneRect()
        scale = min(1.0, max_side / max(rect.width(), rect.height(), 1.0))
        image = QImage(max(1, int(rect.width() * scale)), max(1, int(rect.height() * scale)), QImage.Format.Format_ARGB32)
        image.fill(QColor("white"))
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        self._scene.render(painter, QRectF(0, 0, image.width(), image.height()), rect)
        painter.end()
        if not image.save(str(path)):
            raise OSError(f"could not write {path}")
