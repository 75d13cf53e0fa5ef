"""The compile notes' placement geometry in floats agrees with Qt's own rectangle and line tests."""

from __future__ import annotations

import random

from PySide6.QtCore import QLineF, QPointF, QRectF

from widgets.common.geometry import Shapes, segment_crosses


def _qt_crosses(rect: QRectF, a: QPointF, b: QPointF) -> bool:
    """The reference: an end inside, or the segment crossing one of the rectangle's four edges."""
    if rect.contains(a) or rect.contains(b):
        return True
    line = QLineF(a, b)
    corners = [rect.topLeft(), rect.topRight(), rect.bottomRight(), rect.bottomLeft()]
    bounded = QLineF.IntersectionType.BoundedIntersection
    return any(line.intersects(QLineF(corners[i], corners[(i + 1) % 4]))[0] == bounded for i in range(4))


def test_segments_crossing_a_box_agree_with_qt_on_random_cases():
    rng = random.Random(38)
    crossing = 0
    for _ in range(3000):
        x, y = rng.uniform(0, 400), rng.uniform(0, 300)
        rect = QRectF(x, y, rng.uniform(5, 120), rng.uniform(5, 40))
        a = QPointF(rng.uniform(-50, 450), rng.uniform(-50, 350))
        b = QPointF(rng.uniform(-50, 450), rng.uniform(-50, 350)) if rng.random() < 0.8 else QPointF(a.x(), a.y() + 30)
        box = (rect.left(), rect.top(), rect.right(), rect.bottom())
        expected = _qt_crosses(rect, a, b)
        assert segment_crosses(box, (a.x(), a.y(), b.x(), b.y())) == expected, (box, a, b)
        crossing += expected
    assert 100 < crossing < 2900  # both answers were tested


def test_shapes_count_points_and_segments_as_qt_does():
    rng = random.Random(7)
    curves = [[(float(i * 9), rng.uniform(0, 200)) for i in range(40)] for _ in range(3)]
    shapes = Shapes(curves)
    for _ in range(200):
        rect = QRectF(rng.uniform(0, 300), rng.uniform(0, 180), rng.uniform(10, 90), rng.uniform(8, 30))
        box = (rect.left(), rect.top(), rect.right(), rect.bottom())
        own = curves[0][rng.randrange(40)]
        points = [QPointF(*p) for curve in curves for p in curve]
        expected_points = sum(rect.contains(p) for p in points if abs(p.x() - own[0]) + abs(p.y() - own[1]) > 1)
        assert shapes.points_in(box, own) == expected_points
        expected_segments = sum(_qt_crosses(rect, QPointF(*a), QPointF(*b))
                                for curve in curves for a, b in zip(curve, curve[1:]))
        assert shapes.segments_crossing(box) == expected_segments
    assert Shapes([]).points_in((0, 0, 1, 1)) == 0 and Shapes([[(0.5, 0.5)]]).segments_crossing((0, 0, 1, 1)) == 0
