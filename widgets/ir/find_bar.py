"""Find-in-text bar for a :class:`QPlainTextEdit`: match count, next/previous, all matches marked."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QColor, QKeySequence, QShortcut, QTextCursor
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPlainTextEdit, QTextEdit, QToolButton, QWidget

_MAX_MARKED = 2000


def find_all(haystack_lower: str, needle: str) -> list[int]:
    """Start offsets of every case-insensitive, non-overlapping occurrence of ``needle``."""
    needle = needle.lower()
    if not needle:
        return []
    out, pos = [], haystack_lower.find(needle)
    while pos >= 0:
        out.append(pos)
        pos = haystack_lower.find(needle, pos + len(needle))
    return out


class FindBar(QWidget):
    """A search field bound to ``view``: ``Enter`` = next, ``Shift+Enter`` = previous.

    Signals (GUI thread): ``matchesChanged(current, total)`` — ``current`` is 1-based, 0 when none.
    """

    matchesChanged = Signal(int, int)

    def __init__(self, view: QPlainTextEdit, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._view = view
        self._lower: str | None = None
        self._matches: list[int] = []
        self._current = -1
        self.edit = QLineEdit(placeholderText="Find (Ctrl+F)", clearButtonEnabled=True)
        self.edit.setObjectName("findEdit")
        self.edit.setMinimumWidth(180)
        self.count_label = QLabel("")
        self.count_label.setObjectName("findCount")
        self.count_label.setMinimumWidth(70)
        prev_btn = QToolButton(autoRaise=True)
        prev_btn.setText("▲")
        prev_btn.setToolTip("Previous match (Shift+Enter)")
        next_btn = QToolButton(autoRaise=True)
        next_btn.setText("▼")
        next_btn.setToolTip("Next match (Enter)")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        for w in (self.edit, self.count_label, prev_btn, next_btn):
            layout.addWidget(w)
        self.edit.textChanged.connect(self._on_text_changed)
        self.edit.returnPressed.connect(self.find_next)
        prev_btn.clicked.connect(self.find_previous)
        next_btn.clicked.connect(self.find_next)
        back = QShortcut(QKeySequence("Shift+Return"), self.edit, context=Qt.ShortcutContext.WidgetShortcut)
        back.activated.connect(self.find_previous)
        view.textChanged.connect(self._on_document_changed)

    # -- public API -------------------------------------------------------------------------------
    def match_count(self) -> int:
        return len(self._matches)

    def current_index(self) -> int:
        """0-based index of the selected match, -1 if none."""
        return self._current

    def set_query(self, text: str) -> None:
        self.edit.setText(text)

    def focus(self) -> None:
        self.edit.setFocus()
        self.edit.selectAll()

    def dismiss(self) -> None:
        """Esc in the field: clear the query and its highlights, give the focus back to the view."""
        self.set_query("")
        self._view.setFocus()

    @Slot()
    def find_next(self) -> None:
        self._step(+1)

    @Slot()
    def find_previous(self) -> None:
        self._step(-1)

    # -- internals --------------------------------------------------------------------------------
    @Slot()
    def _on_document_changed(self) -> None:
        self._lower = None
        if self.edit.text():
            self._on_text_changed(self.edit.text())

    @Slot(str)
    def _on_text_changed(self, text: str) -> None:
        if self._lower is None:
            self._lower = self._view.toPlainText().lower()
        self._matches = find_all(self._lower, text)
        self._current = -1
        self._mark_all()
        if self._matches:
            self._step(+1)
        else:
            self._update_label()

    def _step(self, delta: int) -> None:
        if not self._matches:
            return
        self._current = (self._current + delta) % len(self._matches)
        start = self._matches[self._current]
        cursor = QTextCursor(self._view.document())
        cursor.setPosition(start)
        cursor.setPosition(start + len(self.edit.text()), QTextCursor.MoveMode.KeepAnchor)
        self._view.setTextCursor(cursor)
        self._view.centerCursor()
        self._update_label()

    def _mark_all(self) -> None:
        selections = []
        n = len(self.edit.text())
        doc = self._view.document()
        for start in self._matches[:_MAX_MARKED]:
            sel = QTextEdit.ExtraSelection()
            sel.format.setBackground(QColor("#fff3b0"))
            sel.cursor = QTextCursor(doc)
            sel.cursor.setPosition(start)
            sel.cursor.setPosition(start + n, QTextCursor.MoveMode.KeepAnchor)
            selections.append(sel)
        self._view.setExtraSelections(selections)

    def _update_label(self) -> None:
        total = len(self._matches)
        current = self._current + 1 if total else 0
        if not self.edit.text():
            self.count_label.setText("")
        elif total:
            self.count_label.setText(f"{current} / {total}")
        else:
            self.count_label.setText("no match")
        self.matchesChanged.emit(current, total)
