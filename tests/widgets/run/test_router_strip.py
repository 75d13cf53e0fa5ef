"""The router strip (issue 42) with synthetic routing: columns per routed token, cells painted by router weight,
the hover text naming the token and each layer's experts, hidden for a dense run."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QPoint  # noqa: E402
from PySide6.QtGui import QColor  # noqa: E402

from widgets.run.router_strip import CELL_W, LABEL_W, RouterStrip, describe  # noqa: E402

PREFILL = [[[0, 3], [1, 2]], [[2, 1], [3, 0]]]  # 2 layers, 2 prompt tokens, top-2
PREFILL_W = [[[0.7, 0.3], [0.6, 0.4]], [[0.9, 0.1], [0.5, 0.5]]]


def test_strip_columns_colours_and_tooltip(qtbot):
    strip = RouterStrip()
    qtbot.addWidget(strip)
    strip.resize(400, 200)
    strip.clear(["The", " jit"])
    assert strip.isHidden()
    strip.add_call(0, "prefill", PREFILL, PREFILL_W)
    strip.add_token(0, " traces")  # made by the prefill, routed by decode call 1
    strip.add_call(1, "decode", [[[3, 1]], [[0, 2]]], [[[0.8, 0.2]], [[0.55, 0.45]]])
    strip.show()
    assert not strip.isHidden() and strip.n_layers == 2 and strip.num_experts == 4
    assert [c.text for c in strip.columns] == ["The", " jit", " traces"]
    assert describe(strip.columns[2]) == "call 1 · ' traces' · L0: 3 (0.80), 1 (0.20) · L1: 0 (0.55), 2 (0.45)"
    assert "3 tokens" in strip.caption.text() and "2 layers × 4 experts" in strip.caption.text()
    heat = strip.heat
    image = heat.grab().toImage()
    rh = heat.row_height()
    x = LABEL_W + 2 * CELL_W + CELL_W // 2  # the decode column
    chosen = QColor(image.pixel(x, 3 * rh + rh // 2))  # layer 0, expert 3: weight 0.8
    weaker = QColor(image.pixel(x, 1 * rh + rh // 2))  # layer 0, expert 1: weight 0.2
    unchosen = QColor(image.pixel(x, 2 * rh + rh // 2))  # layer 0, expert 2: not chosen
    assert chosen.green() < weaker.green() < unchosen.green()
    assert heat.column_at(QPoint(x, 1)) is strip.columns[2]
    assert heat.column_at(QPoint(LABEL_W - 5, 1)) is None


def test_the_caption_says_one_token_in_the_singular(qtbot):
    strip = RouterStrip()
    qtbot.addWidget(strip)
    strip.clear([])
    strip.add_call(1, "decode", [[[3, 1]]], [[[0.8, 0.2]]])
    assert "· 1 token · 1 layer × 4 experts ·" in strip.caption.text(), strip.caption.text()


def test_a_run_without_routing_keeps_the_strip_hidden(qtbot):
    strip = RouterStrip()
    qtbot.addWidget(strip)
    strip.clear()
    strip.add_call(0, "prefill", None, None)
    strip.add_token(0, "x")
    assert strip.isHidden() and strip.columns == []
