"""One IR text (jaxpr, StableHLO or optimized HLO) with a find bar, Copy and Save as…."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtGui import QGuiApplication, QKeySequence, QShortcut
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QToolButton, QVBoxLayout, QWidget

from app.core.inspect.views import DECODE
from widgets.ir.code_view import CodeView, split_notes
from widgets.ir.find_bar import FindBar
from widgets.ir.header_labels import ElidedLabel

NOT_AVAILABLE = "not available on this backend"


class IRPanel(QWidget):
    """A :class:`CodeView` named ``view_name`` plus its toolbar.

    ``title`` names the IR ("jaxpr", "StableHLO", "optimized HLO"); ``suffix`` is the default file
    extension for Save as…. ``textShown()`` (GUI thread): the view's text was replaced (IR text, "not
    available" note or placeholder), e.g. to re-apply line highlights.

    ``split_notes``: the text is a jaxpr pretty-printed with trailing ``# …`` annotations; they are moved
    out of the code (line numbers stay those of the plain jaxpr) and shown in a gutter while
    ``show_notes``. Copy and Save as… keep the full text.
    """

    textShown = Signal()

    def __init__(self, title: str, view_name: str, suffix: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = title
        self._suffix = suffix
        self._text: str | None = None
        self._step = DECODE
        self._pending: tuple[str | None, str] | None = None
        self._pending_timer = QTimer(self, singleShot=True)
        self._pending_timer.timeout.connect(self.apply_pending)
        self.split_notes = False
        self.show_notes = False
        self.view = CodeView()
        self.view.setObjectName(view_name)
        self.find_bar = FindBar(self.view)
        self.info = ElidedLabel("")  # cut with "…": a live compile's Δ counts never widen the card (issue 55)
        self.info.setObjectName("irInfo")
        copy_btn = QToolButton(autoRaise=True)
        copy_btn.setText("Copy")
        copy_btn.setToolTip("Copy the whole text")
        save_btn = QToolButton(autoRaise=True)
        save_btn.setText("Save as…")
        save_btn.setToolTip("Save the text to a file")
        copy_btn.clicked.connect(self.copy_all)
        save_btn.clicked.connect(self.save_as)
        bar = self._bar = QHBoxLayout()
        bar.setContentsMargins(4, 2, 4, 2)
        bar.addWidget(self.info, 1)
        bar.addWidget(self.find_bar)
        bar.addWidget(copy_btn)
        bar.addWidget(save_btn)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(bar)
        layout.addWidget(self.view, 1)
        find = QShortcut(
            QKeySequence.StandardKey.Find, self, context=Qt.ShortcutContext.WidgetWithChildrenShortcut
        )
        find.activated.connect(self.find_bar.focus)
        self.set_placeholder(f"Run the model in a jit mode to see its {title}.")

    def add_tool(self, widget: QWidget) -> None:
        """Put ``widget`` in the toolbar, right after the info label."""
        self._bar.insertWidget(1, widget)

    def set_placeholder(self, message: str) -> None:
        """Show a grey message instead of IR text (nothing to copy or save)."""
        self._pending = None
        self._text = None
        self.view.set_code("", highlight=False)
        self.view.setPlaceholderText(message)
        self.info.setText("")
        self.textShown.emit()

    def set_text(self, text: str | None, step: str, delay_ms: int | None = None, hold: bool = False) -> None:
        """Show ``text`` for ``step`` ('prefill' | 'decode'); ``None`` means the backend cannot produce it.

        With ``delay_ms`` the text is put in the view by a single-shot timer, so several large texts are
        loaded in separate event-loop turns instead of one long GUI-thread stall; with ``hold`` it waits
        for :meth:`schedule_pending` or :meth:`apply_pending` (e.g. until a run is over).
        """
        self._pending = (text, step)
        if hold:
            self._pending_timer.stop()
        elif delay_ms is None:
            self.apply_pending()
        else:
            self._pending_timer.start(delay_ms)

    def schedule_pending(self, delay_ms: int) -> None:
        """Apply a held text after ``delay_ms`` (no-op when nothing is pending)."""
        if self._pending is not None:
            self._pending_timer.start(delay_ms)

    def has_pending(self) -> bool:
        return self._pending is not None

    @Slot()
    def apply_pending(self) -> None:
        self._pending_timer.stop()
        if self._pending is None:
            return
        text, step = self._pending
        self._pending = None
        self._step = step
        if text is None:
            self._text = None
            self.view.set_code(f"{self.title} of the {step} step: {NOT_AVAILABLE}.", highlight=False)
            self.info.setText(f"{step} step")
            self.textShown.emit()
            return
        self._text = text
        if self.split_notes:
            code, notes = split_notes(text)
            self.view.set_code(code, notes=notes if self.show_notes else None)
        else:
            code = text
            self.view.set_code(text)
        lines = code.count("\n") + 1
        self.info.setText(f"{step} step · {lines:,} lines · {len(text) / 1024:,.0f} kB")
        self.textShown.emit()

    def text(self) -> str | None:
        """The IR text shown, or None when a placeholder is shown."""
        return self._text

    @Slot()
    def copy_all(self) -> None:
        if self._text is not None:
            QGuiApplication.clipboard().setText(self._text)

    @Slot()
    def save_as(self) -> None:
        if self._text is None:
            return
        default = f"{self._step}.{self._suffix}"
        path, _ = QFileDialog.getSaveFileName(self, f"Save {self.title}", default)
        if path:
            self.save_to(Path(path))

    def save_to(self, path: Path) -> None:
        path.write_text(self._text or "", encoding="utf-8")
