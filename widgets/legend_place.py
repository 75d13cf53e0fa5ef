"""Put a pyqtgraph legend where it hides the fewest points (like matplotlib's ``loc="best"``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF

#: Legend offsets from the view box's corners (pyqtgraph: negative = from the right / bottom); the first
#: one wins ties.
CANDIDATES: tuple[tuple[int, int], ...] = ((-10, 110), (-10, 10), (-10, -10), (10, -10), (10, 10))
OBSTACLE_COST = 5  # a text label under the legend counts as this many hidden points


def _scene_rect(view: QRectF, offset: tuple[int, int], w: float, h: float) -> QRectF:
    ox, oy = offset
    x0 = view.left() + ox if ox > 0 else view.right() + ox - w
    y0 = view.top() + oy if oy > 0 else view.bottom() + oy - h
    return QRectF(x0, y0, w, h)


def best_offset(
    vb: pg.ViewBox,
    legend: pg.LegendItem,
    xs: np.ndarray,
    ys: np.ndarray,
    obstacles: Sequence[QRectF] = (),
    candidates: Sequence[tuple[int, int]] = CANDIDATES,
) -> tuple[int, int]:
    """The candidate offset whose legend rectangle covers the fewest points ``(xs, ys)`` (view
    coordinates, e.g. log10 values on a log axis) and scene-coordinate ``obstacles``."""
    view = vb.sceneBoundingRect()
    box = legend.sceneBoundingRect()
    best, best_cost = candidates[0], None
    for offset in candidates:
        rect = _scene_rect(view, offset, box.width(), box.height())
        r = vb.mapSceneToView(rect).boundingRect()
        inside = (xs >= r.left()) & (xs <= r.right()) & (ys >= r.top()) & (ys <= r.bottom())
        cost = int(inside.sum()) + OBSTACLE_COST * sum(o.intersects(rect) for o in obstacles)
        if best_cost is None or cost < best_cost:
            best, best_cost = offset, cost
    return best
