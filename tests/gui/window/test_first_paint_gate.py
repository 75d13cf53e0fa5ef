"""The first-paint gate (app.gui.first_paint): the compute thread's requests wait for the window's first paint, and
a never-shown window's fallback is counted from the event loop's first turn, not from the window's construction."""

from __future__ import annotations

import time

from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

import app.gui.first_paint as first_paint
from app.gui.first_paint import HoldUntilPainted


def _window(qtbot) -> QWidget:
    window = QWidget()
    QVBoxLayout(window).addWidget(QLabel("painted"))
    qtbot.addWidget(window)
    return window


def test_requests_wait_for_the_first_paint_then_go_in_order(qtbot):
    window = _window(qtbot)
    sent: list[str] = []
    gate = HoldUntilPainted(window, sent.append)
    gate.submit("load model")
    gate.submit("list devices")
    qtbot.wait(50)
    assert sent == [] and gate.painted_s is None  # not shown: nothing painted, nothing sent
    window.show()
    qtbot.waitUntil(lambda: sent == ["load model", "list devices"], timeout=2000)
    assert gate.painted_s is not None and gate.released_s >= gate.painted_s
    gate.submit("read session")
    assert sent[-1] == "read session"  # after the release, at once


def test_the_fallback_counts_from_the_event_loop_not_from_construction(qtbot, monkeypatch):
    monkeypatch.setattr(first_paint, "FALLBACK_MS", 300)
    window = _window(qtbot)
    sent: list[str] = []
    gate = HoldUntilPainted(window, sent.append)
    gate.submit("load model")
    time.sleep(0.5)  # a slow construction, longer than the fallback, before the event loop first runs
    qtbot.wait(100)
    assert sent == []  # the fallback did not fire on the loop's first turn
    qtbot.waitUntil(lambda: sent == ["load model"], timeout=2000)  # a never-shown window releases anyway
    assert gate.painted_s is None and gate.released_s >= 0.5 + 0.25  # a coarse timer may fire 5% early


def test_the_widgets_a_window_builds_before_it_is_shown_do_not_pass_through_the_gate(qtbot):
    """The gate watches the application's events only from the window's Show event on (a window's construction
    sent ~40,000 events through it, none of them a paint); the first paint after the show still releases."""
    seen: list[object] = []  # the objects whose events reached the gate

    class Counting(HoldUntilPainted):
        def eventFilter(self, watched, event):  # noqa: N802, ANN001, ANN201
            seen.append(watched)
            return super().eventFilter(watched, event)

    window = _window(qtbot)
    sent: list[str] = []
    gate = Counting(window, sent.append)
    gate.submit("load model")
    for i in range(200):  # a panel's worth of widgets built after the gate, before the show
        window.layout().addWidget(QLabel(f"label {i}"))
    qtbot.wait(20)
    before_show = len(seen)
    assert all(w is window for w in seen)  # the window's own events only (a child added), none of its children's
    window.show()
    qtbot.waitUntil(lambda: sent == ["load model"], timeout=2000)
    assert gate.painted_s is not None and any(w is not window for w in seen[before_show:])
