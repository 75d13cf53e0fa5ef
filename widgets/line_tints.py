"""Measured-time tints on the lines of a text view: a transparent overlay on a ``QPlainTextEdit`` viewport
that fills each given line with a background whose opacity is proportional to its value (the
instruction's share of the step), writes a short label (``412 µs · 6.3%``) at the right edge of the line
and shows it as the line's tooltip. It touches neither the document's formats (the lazy syntax
highlighter's) nor ``extraSelections`` (the find bar's), and paints below the link highlights
(:class:`widgets.line_links.LineHighlighter`) added after it.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QRectF, Qt
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import QPlainTextEdit, QToolTip

from widgets.line_links import ViewportOverlay

TINT_COLOR = QColor(244, 81, 30)  # deep orange: the hottest line gets MAX_ALPHA
MAX_ALPHA = 110
LABEL_COLOR = QColor(183, 28, 28)


class LineTints(ViewportOverlay):
    """Tints lines of ``edit``: :meth:`set_line_tints` takes 1-based line → value (≥ 0, e.g. a share of
    the step) and optional labels; the largest value gets the strongest tint, the others in proportion."""

    def __init__(self, edit: QPlainTextEdit) -> None:
        self._values: dict[int, float] = {}
        self._labels: dict[int, str] = {}
        self._max = 0.0
        super().__init__(edit, below=True)  # below the link highlights
        self.setObjectName("lineTints")

    def set_line_tints(self, values: dict[int, float], labels: dict[int, str] | None = None) -> None:
        """Tint line → value (``{}`` clears); ``labels``: line → text drawn at the right and shown as its
        tooltip."""
        self._values = {int(k): float(v) for k, v in values.items() if v > 0}
        self._labels = dict(labels or {})
        self._max = max(self._values.values(), default=0.0)
        self.update()

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
        if event.type() == QEvent.Type.ToolTip and self._labels:
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
        width, metrics = self.width(), self.edit.fontMetrics()
        for line, rect in self.visible_lines():
            if line not in self._values:
                continue
            colour = QColor(TINT_COLOR)
            colour.setAlpha(max(12, self.alpha(line)))
            painter.fillRect(QRectF(0, rect.top(), width, rect.height()), colour)
            text = self._labels.get(line)
            if text:
                box = QRectF(0, rect.top(), width - 6, rect.height())
                back = QRectF(width - 10 - metrics.horizontalAdvance(text), rect.top(),
                              metrics.horizontalAdvance(text) + 8, rect.height())
                painter.fillRect(back, QColor(255, 255, 255, 220))
                painter.setPen(LABEL_COLOR)
                painter.drawText(box, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, text)
        painter.end()
