"""Issue 37: the wheel over an unfocused spin box in a scrolling panel scrolls the panel, never the value."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication, QSpinBox, QVBoxLayout, QWidget

pytest.importorskip("pytestqt")


def _wheel(widget: QWidget, steps: int = -1) -> None:
    pos = QPointF(widget.rect().center())
    event = QWheelEvent(pos, QPointF(widget.mapToGlobal(pos.toPoint())), QPoint(0, 0), QPoint(0, 120 * steps),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(widget, event)


def test_the_wheel_scrolls_the_panel_until_the_box_has_focus(qtbot):
    from app.gui.layout import scrolling

    content = QWidget()
    layout = QVBoxLayout(content)
    box = QSpinBox(minimum=1, maximum=4096, value=1000)
    layout.addWidget(box)
    for _ in range(30):
        layout.addWidget(QSpinBox())
    scroll = scrolling(content, "testScroll")
    qtbot.addWidget(scroll)
    scroll.resize(200, 150)
    scroll.show()
    qtbot.waitExposed(scroll)
    bar = scroll.verticalScrollBar()
    assert bar.maximum() > 0 and bar.value() == 0
    _wheel(box)
    assert box.value() == 1000 and bar.value() > 0  # the panel scrolled, the value stayed
    box.setFocus()
    qtbot.waitUntil(box.hasFocus, timeout=2000)
    _wheel(box)
    assert box.value() != 1000  # focused: the wheel changes it as usual
