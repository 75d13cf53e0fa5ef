"""Prompt editor with example prompts and the Run / Stop buttons."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Signal, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)


class PromptEditor(QWidget):
    """``promptEdit`` + ``runButton`` (Ctrl+Enter) + ``stopButton`` (Esc); shortcuts are set by the window.
    :meth:`set_error` shows a message about the prompt inside the edit box (``promptError``, over its lower
    edge: nothing around it moves) until the prompt is edited.

    Signals (GUI thread): ``runRequested()``, ``stopRequested()``.
    """

    runRequested = Signal()
    stopRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.examples = QComboBox()
        self.examples.setObjectName("examplesCombo")
        self.examples.addItem("Example prompts…")
        # as wide as its row gives it, never its longest prompt: the prompt column stays narrow (issue 37)
        self.examples.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.examples.setMinimumContentsLength(12)
        self.examples.activated.connect(self._on_example)
        self.edit = QPlainTextEdit()
        self.edit.setObjectName("promptEdit")
        self.edit.setPlaceholderText("Type a prompt, then Ctrl+Enter")
        self.edit.setTabChangesFocus(True)
        self.run_button = QPushButton("▶  Run")
        self.run_button.setObjectName("runButton")
        self.run_button.setToolTip("Generate (Ctrl+Enter)")
        self.run_button.setDefault(True)
        self.stop_button = QPushButton("■  Stop")
        self.stop_button.setObjectName("stopButton")
        self.stop_button.setToolTip("Stop after the current step, keeping the text so far (Esc)")
        self.stop_button.setEnabled(False)
        self.run_button.clicked.connect(self.runRequested)
        self.stop_button.clicked.connect(self.stopRequested)
        buttons = QHBoxLayout()
        buttons.addWidget(self.examples, 1)
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.stop_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.edit, 1)
        layout.addLayout(buttons)
        self.error = QLabel(self.edit)
        self.error.setObjectName("promptError")
        self.error.setWordWrap(True)
        self.error.setStyleSheet("QLabel#promptError { background: #fee2e2; color: #991b1b; "
                                 "border: 1px solid #fca5a5; border-radius: 3px; padding: 2px 4px; }")
        self.error.hide()
        self.edit.textChanged.connect(self.clear_error)
        self.edit.installEventFilter(self)

    def set_error(self, text: str) -> None:
        """Show ``text`` at the bottom of the prompt box (empty: hide it)."""
        self.error.setText(text)
        self.error.setVisible(bool(text))
        self._place_error()

    def error_text(self) -> str:
        return self.error.text() if self.error.isVisible() else ""

    @Slot()
    def clear_error(self) -> None:
        self.error.hide()

    def _place_error(self) -> None:
        width = max(40, self.edit.width() - 8)
        height = self.error.heightForWidth(width)
        self.error.setGeometry(4, max(0, self.edit.height() - height - 4), width, height)
        self.error.raise_()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if watched is self.edit and event.type() == QEvent.Type.Resize and self.error.isVisible():
            self._place_error()
        return False

    def set_examples(self, examples: list[dict[str, str]]) -> None:
        """``examples``: ``[{"title": …, "prompt": …}, …]``."""
        while self.examples.count() > 1:
            self.examples.removeItem(1)
        for ex in examples:
            self.examples.addItem(ex["title"], ex["prompt"])

    def prompt(self) -> str:
        return self.edit.toPlainText()

    def set_prompt(self, text: str) -> None:
        self.edit.setPlainText(text)

    def set_running(self, running: bool, stoppable: bool | None = None) -> None:
        """Disable Run while the compute thread is busy; enable Stop while what runs can be stopped
        (``stoppable``, default ``running``: a run, race or profile — not a model load, which Stop cannot cut
        short)."""
        self.run_button.setEnabled(not running)
        self.stop_button.setEnabled(running if stoppable is None else stoppable)

    @Slot(int)
    def _on_example(self, index: int) -> None:
        if index > 0:
            self.set_prompt(str(self.examples.itemData(index)))
        self.examples.setCurrentIndex(0)
