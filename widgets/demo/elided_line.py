"""A one-line label that never wraps and never widens its column: its text elided to the width it gets ("…"), the
whole text in its tooltip and shown at the pointer on a click (issue 55: the settings race's verdict line)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QMouseEvent, QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QToolTip, QWidget


class ElidedLine(QLabel):
    """:meth:`setText` keeps the whole text (:meth:`text` returns it) and draws it on one line, elided at the right
    to the label's width; :meth:`setToolTip`'s text follows the whole line in the tooltip. GUI thread."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._full, self._tip = "", ""
        self.setWordWrap(False)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.setCursor(Qt.CursorShape.WhatsThisCursor)
        self.setText(text)

    def text(self) -> str:  # the whole text, not the elided one drawn
        return self._full

    def shown_text(self) -> str:
        """The text as drawn (elided to the width)."""
        return super().text()

    def setText(self, text: str) -> None:
        self._full = text
        self._elide()
        self._set_tip()

    def setToolTip(self, tip: str) -> None:
        self._tip = tip
        self._set_tip()

    def _set_tip(self) -> None:
        parts = [p for p in (self._full if self.shown_text() != self._full else "", self._tip) if p]
        super().setToolTip("\n\n".join(parts))

    def _elide(self) -> None:
        width = max(self.contentsRect().width(), 1)
        super().setText(self.fontMetrics().elidedText(self._full, Qt.TextElideMode.ElideRight, width))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._elide()
        self._set_tip()

    def mousePressEvent(self, event: QMouseEvent) -> None:
        """A click shows the whole line (and the tooltip's sentences) at the pointer."""
        if self._full:
            QToolTip.showText(event.globalPosition().toPoint(), self.toolTip() or self._full, self)
        super().mousePressEvent(event)
