"""Plain-float geometry for placing the latency plot's compile notes (:mod:`widgets.plot.plot_fitting`): the
points and curve segments a note's box covers, counted in NumPy over the whole plot at once, the few segments near a
box clipped exactly.

A note is tried at 10 anchors in 2 texts, each against every point and segment of every run on the plot. Done with
``QRectF.contains`` / ``QLineF.intersects`` per pair (each a PySide call), a Stop on the default model spent
0.4-0.6 s of the GUI thread here after a run of 10 tokens (issue 38's Stop journey: the window showed the stopped
run 1.6-2.0 s after Stop on a cold run); in floats it is a few milliseconds. Coordinates are scene pixels (y down).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np  # noqa: TID253 - a heavy module: its users import it inside functions

#: ``(left, top, right, bottom)`` in scene px, edges included (as ``QRectF.contains`` counts them).
Box = tuple[float, float, float, float]


class Shapes:
    """The points ``(n, 2)`` and segments ``(m, 4)`` (``ax, ay, bx, by``) float64 arrays a note must keep clear
    of, in scene px: each curve's points and the segments between consecutive points of one curve."""

    def __init__(self, curves: Sequence[Sequence[tuple[float, float]]]) -> None:
        self.points = np.array([p for curve in curves for p in curve], dtype=np.float64).reshape(-1, 2)
        segs = [(*a, *b) for curve in curves for a, b in zip(curve, curve[1:])]
        self.segments = np.array(segs, dtype=np.float64).reshape(-1, 4)
        self._lo = np.minimum(self.segments[:, :2], self.segments[:, 2:])  # each segment's bounding box
        self._hi = np.maximum(self.segments[:, :2], self.segments[:, 2:])

    def points_in(self, box: Box, skip_near: tuple[float, float] | None = None) -> int:
        """How many points lie in ``box``; a point within 1 px (Manhattan) of ``skip_near`` (the note's own
        point) does not count."""
        p = self.points
        inside = (p[:, 0] >= box[0]) & (p[:, 0] <= box[2]) & (p[:, 1] >= box[1]) & (p[:, 1] <= box[3])
        if skip_near is not None:
            inside &= np.abs(p[:, 0] - skip_near[0]) + np.abs(p[:, 1] - skip_near[1]) > 1
        return int(inside.sum())

    def segments_crossing(self, box: Box) -> int:
        """How many segments pass through ``box`` (an end inside it counts)."""
        near = ((self._hi[:, 0] >= box[0]) & (self._lo[:, 0] <= box[2])
                & (self._hi[:, 1] >= box[1]) & (self._lo[:, 1] <= box[3]))
        return sum(segment_crosses(box, tuple(s)) for s in self.segments[near])


def segment_crosses(box: Box, segment: tuple[float, ...]) -> bool:
    """Whether the segment ``(ax, ay, bx, by)`` passes through ``box`` (edges included): Liang-Barsky clipping
    (Liang & Barsky, "A new concept and method for line clipping", ACM TOG 3(1), 1984)."""
    ax, ay, bx, by = (float(v) for v in segment)
    dx, dy = bx - ax, by - ay
    t0, t1 = 0.0, 1.0
    for p, q in ((-dx, ax - box[0]), (dx, box[2] - ax), (-dy, ay - box[1]), (dy, box[3] - ay)):
        if p == 0:
            if q < 0:  # parallel to this edge and outside it
                return False
            continue
        t = q / p
        if p < 0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
        if t0 > t1:
            return False
    return True
