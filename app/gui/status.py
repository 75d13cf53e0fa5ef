"""The window's status line: a message, an error (red, with a Details… button opening the traceback), or a
warning appended to the message. GUI thread only."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, Slot
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QLabel, QMessageBox, QPushButton, QWidget


def fit_words(text: str, metrics: QFontMetrics, width: int) -> str:
    """``text`` on one line in ``width`` px, cut after its last whole word that fits, with "…" (never in the
    middle of a word, unless the first word alone is too wide)."""
    text = " ".join(text.split())
    if width <= 0 or metrics.horizontalAdvance(text) <= width:
        return text
    words = text.split(" ")
    for n in range(len(words) - 1, 0, -1):
        cut = " ".join(words[:n]).rstrip(" ·,:;") + " …"
        if metrics.horizontalAdvance(cut) <= width:
            return cut
    return metrics.elidedText(text, Qt.TextElideMode.ElideRight, width)  # one word wider than the line


class StatusLine(QObject):
    """Drives ``label`` (the status text; its ``error`` property styles it) and ``details`` (shown for an
    error with details)."""

    def __init__(self, label: QLabel, details: QPushButton, window: QWidget) -> None:
        super().__init__(window)
        self.label, self.details, self.window = label, details, window
        self._details_text = ""
        self._full = label.text()
        details.clicked.connect(self.show_details)
        label.installEventFilter(self)

    def text(self) -> str:
        """The whole message (the label may show it cut at a word, with the whole of it in its tool tip)."""
        return self._full

    def _set_text(self, text: str) -> None:
        self._full = text
        self._fit()

    def _fit(self) -> None:
        shown = fit_words(self._full, self.label.fontMetrics(), self.label.width() - 4)
        if shown != self.label.text():
            self.label.setText(shown)
        self.label.setToolTip(self._full if shown != self._full else "")

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if watched is self.label and event.type() == QEvent.Type.Resize:
            self._fit()
        return False

    def show(self, text: str) -> None:
        """A plain message (clears an error)."""
        self._set_error(False)
        self._set_text(text)

    def error(self, message: str, details: str = "") -> None:
        """A one-line error; ``details`` (a traceback) behind the Details… button."""
        self._details_text = details or message
        self._set_text(message)
        self._set_error(True)

    @Slot(str)
    def warn(self, text: str) -> None:
        """Something optional failed on the compute thread (a source map, a mesh kept across a load)."""
        self._set_text(f"{self._full}  ⚠ {text}" if self._full else f"⚠ {text}")

    @Slot()
    def show_details(self) -> None:
        box = QMessageBox(QMessageBox.Icon.Warning, "Error details", self._full,
                          QMessageBox.StandardButton.Close, self.window)
        box.setDetailedText(self._details_text)
        box.exec()

    def _set_error(self, on: bool) -> None:
        self.label.setProperty("error", on)
        self.label.style().unpolish(self.label)
        self.label.style().polish(self.label)
        self.details.setVisible(on)
