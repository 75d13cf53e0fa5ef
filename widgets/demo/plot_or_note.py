"""A place for a plot that is only readable from a given height: the plot where it gets that height, else a short
note and a button that shows it elsewhere (issue 55: the trade-off plot is never drawn under 240 px tall)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QPushButton, QStackedWidget, QVBoxLayout, QWidget

from widgets.demo.elided_line import ElidedLine


class PlotOrNote(QStackedWidget):
    """``plot`` while this place is at least ``min_height`` px tall (plus ``extra()``, the lines the plot's widget
    draws under its drawing area), else :attr:`note` and :attr:`button`; ``moveRequested`` (GUI thread) when the
    button is clicked. :meth:`fits` says which one is shown."""

    moveRequested = Signal()

    def __init__(self, plot: QWidget, min_height: int, note: str, button: str,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plot, self.min_height = plot, min_height
        self.extra: Callable[[], int] = lambda: 0
        page = QWidget()
        column = QVBoxLayout(page)
        column.setContentsMargins(0, 0, 0, 0)
        self.note = ElidedLine(note)  # one line: the whole sentence in its tooltip
        self.note.setObjectName("plotOrNoteText")
        self.button = QPushButton(button)
        self.button.setObjectName("plotOrNoteButton")
        self.button.clicked.connect(self.moveRequested)
        column.addWidget(self.note)
        column.addWidget(self.button, 0, Qt.AlignmentFlag.AlignLeft)
        column.addStretch(1)
        self.addWidget(plot)
        self.addWidget(page)
        self.setCurrentIndex(1)

    def fits(self) -> bool:
        """Whether the plot is shown here (this place is tall enough)."""
        return self.currentIndex() == 0

    def set_note(self, text: str) -> None:
        self.note.setText(text)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.setCurrentIndex(0 if event.size().height() >= self.min_height + self.extra() else 1)
