"""The window's status line: a message, an error (red, with a Details… button opening the traceback), or a
warning appended to the message. GUI thread only."""

from __future__ import annotations

from PySide6.QtCore import QObject, Slot
from PySide6.QtWidgets import QLabel, QMessageBox, QPushButton, QWidget


class StatusLine(QObject):
    """Drives ``label`` (the status text; its ``error`` property styles it) and ``details`` (shown for an
    error with details)."""

    def __init__(self, label: QLabel, details: QPushButton, window: QWidget) -> None:
        super().__init__(window)
        self.label, self.details, self.window = label, details, window
        self._details_text = ""
        details.clicked.connect(self.show_details)

    def show(self, text: str) -> None:
        """A plain message (clears an error)."""
        self._set_error(False)
        self.label.setText(text)

    def error(self, message: str, details: str = "") -> None:
        """A one-line error; ``details`` (a traceback) behind the Details… button."""
        self._details_text = details or message
        self.label.setText(message)
        self.label.setToolTip(message)
        self._set_error(True)

    @Slot(str)
    def warn(self, text: str) -> None:
        """Something optional failed on the compute thread (a source map, a mesh kept across a load)."""
        self.label.setText(f"{self.label.text()}  ⚠ {text}" if self.label.text() else f"⚠ {text}")
        self.label.setToolTip(text)

    @Slot()
    def show_details(self) -> None:
        box = QMessageBox(QMessageBox.Icon.Warning, "Error details", self.label.text(),
                          QMessageBox.StandardButton.Close, self.window)
        box.setDetailedText(self._details_text)
        box.exec()

    def _set_error(self, on: bool) -> None:
        self.label.setProperty("error", on)
        self.label.style().unpolish(self.label)
        self.label.style().polish(self.label)
        self.details.setVisible(on)
