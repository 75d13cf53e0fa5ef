"""Measured-time tints on the lines of a text view: a transparent overlay on a ``QPlainTextEdit`` viewport
that fills each given line with a background whose opacity is proportional to its value (the
instruction's share of the step), writes a short label (``412 µs · 6.3%``) beside the line in a gutter right of
the text (a :class:`widgets.ir.code_view.CodeView` keeps that room free: the label never covers the text, issue
29 flaw 16) and shows it as the line's tooltip. It touches neither the document's formats (the lazy syntax
highlighter's) nor ``extraSelections`` (the find bar's), and paints below the link highlights
(:class:`widgets.ir.line_links.LineHighlighter`) added after it.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from PySide6.QtCore import QEvent, QObject, QRect, QRectF, Qt, QTimer
from PySide6.QtGui import QColor, QHelpEvent, QPainter, QPaintEvent
from PySide6.QtWidgets import QPlainTextEdit, QToolTip, QWidget

from widgets.ir.line_links import ViewportOverlay

TINT_COLOR = QColor(244, 81, 30)  # deep orange: the hottest line gets MAX_ALPHA
MAX_ALPHA = 110
LABEL_COLOR = QColor(183, 28, 28)
GUTTER_BACK = QColor("#fbf3f0")
GUTTER_PAD = 12


@runtime_checkable
class RightMargin(Protocol):
    """An edit that keeps room right of its text for the gutter (the IR views' ``CodeView``)."""

    def set_right_margin(self, px: int) -> None: ...


class MeasuredGutter(QWidget):
    """The labels' column right of the text (a child of the edit, beside its viewport), painted by its
    :class:`LineTints`."""

    def __init__(self, tints: LineTints) -> None:
        super().__init__(tints.edit)
        self.tints = tints
        self.setObjectName("measuredGutter")
        self.setMouseTracking(True)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt override)
        self.tints.paint_gutter(self, event)

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            line = self.tints.line_at(event.pos().y())
            text = self.tints.label(line)
            if text:
                QToolTip.showText(event.globalPos(), f"measured: {text}", self)
            else:
                QToolTip.hideText()
            return True
        return super().event(event)


class LineTints(ViewportOverlay):
    """Tints lines of ``edit``: :meth:`set_line_tints` takes 1-based line → value (≥ 0, e.g. a share of
    the step) and optional labels; the largest value gets the strongest tint, the others in proportion."""

    def __init__(self, edit: QPlainTextEdit) -> None:
        self._values: dict[int, float] = {}
        self._labels: dict[int, str] = {}
        self._max = 0.0
        super().__init__(edit, below=True)  # below the link highlights
        self.setObjectName("lineTints")
        self.gutter = MeasuredGutter(self)
        self.gutter.hide()
        edit.installEventFilter(self)  # the edit's resizes move the gutter
        edit.updateRequest.connect(self._on_scrolled)

    def set_line_tints(self, values: dict[int, float], labels: dict[int, str] | None = None) -> None:
        """Tint line → value (``{}`` clears); ``labels``: line → text drawn at the right and shown as its
        tooltip."""
        self._values = {int(k): float(v) for k, v in values.items() if v > 0}
        self._labels = dict(labels or {})
        self._max = max(self._values.values(), default=0.0)
        self._place_gutter()
        self.update()
        self.gutter.update()

    def gutter_width(self) -> int:
        """Width (px) of the labels' gutter right of the text; 0 without labels (or on a plain text edit)."""
        if not self._labels or not isinstance(self.edit, RightMargin):
            return 0
        metrics = self.edit.fontMetrics()
        return max(metrics.horizontalAdvance(t) for t in self._labels.values()) + GUTTER_PAD

    def _place_gutter(self) -> None:
        width = self.gutter_width()
        if isinstance(self.edit, RightMargin):
            self.edit.set_right_margin(width)
        if width:
            port = self.edit.viewport().geometry()
            self.gutter.setGeometry(QRect(port.right() + 1, port.top(), width, port.height()))
        self.gutter.setVisible(bool(width))

    def _on_scrolled(self, *_args: object) -> None:
        if self.gutter.isVisible():
            self.gutter.update()

    def line_at(self, y: float) -> int:
        """The 1-based line at viewport height ``y`` (0 below the text)."""
        for line, rect in self.visible_lines():
            if rect.top() <= y < rect.bottom():
                return line
        return 0

    def label_rects(self) -> dict[int, QRect]:
        """Line → the rectangle of its label, in the edit's coordinates, for the labels on screen."""
        origin = self.gutter.geometry().topLeft()
        return {line: QRect(origin.x(), origin.y() + round(rect.top()), self.gutter.width(), round(rect.height()))
                for line, rect in self.visible_lines() if self._labels.get(line) and self.gutter.isVisible()}

    def paint_gutter(self, gutter: QWidget, _event: QPaintEvent) -> None:
        painter = QPainter(gutter)
        painter.fillRect(gutter.rect(), GUTTER_BACK)
        painter.setPen(QColor("#e5d5cf"))
        painter.drawLine(0, 0, 0, gutter.height())
        for line, rect in self.visible_lines():
            text = self._labels.get(line)
            if not text:
                continue
            colour = QColor(TINT_COLOR)
            colour.setAlpha(max(12, self.alpha(line)))
            painter.fillRect(QRectF(1, rect.top(), gutter.width() - 1, rect.height()), colour)
            painter.setPen(LABEL_COLOR)
            painter.drawText(QRectF(0, rect.top(), gutter.width() - GUTTER_PAD / 2, rect.height()),
                             Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, text)
        painter.end()

    def tints(self) -> dict[int, float]:
        """Line → value of the tinted lines."""
        return dict(self._values)

    def alpha(self, line: int) -> int:
        """The opacity (0–255) of ``line``'s tint: proportional to its value, the largest at MAX_ALPHA."""
        value = self._values.get(line, 0.0)
        return round(MAX_ALPHA * value / self._max) if self._max > 0 else 0

    def label(self, line: int) -> str:
        return self._labels.get(line, "")

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt override)
        if obj is self.edit or (obj is self.edit.viewport() and event.type() == QEvent.Type.Resize):
            if event.type() == QEvent.Type.Resize:
                QTimer.singleShot(0, self, self._place_gutter)  # after the edit laid out its viewport
            if obj is self.edit:
                return False
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent) and self._labels:
            line = self.edit.cursorForPosition(event.pos()).blockNumber() + 1
            text = self._labels.get(line)
            if text:
                QToolTip.showText(event.globalPos(), f"measured: {text}", self.edit.viewport())
                return True
        return super().eventFilter(obj, event)

    def paintEvent(self, _event) -> None:  # noqa: N802, ANN001
        if not self._values:
            return
        painter = QPainter(self)
        width = self.width()
        for line, rect in self.visible_lines():
            if line not in self._values:
                continue
            colour = QColor(TINT_COLOR)
            colour.setAlpha(max(12, self.alpha(line)))
            painter.fillRect(QRectF(0, rect.top(), width, rect.height()), colour)
        painter.end()
