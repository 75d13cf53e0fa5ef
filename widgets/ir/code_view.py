"""A read-only code view for large IR texts: line numbers and lazy, per-visible-line highlighting.

Highlighting is applied only to the lines on screen (``QTextLayout.setFormats`` on each visible block,
once), so opening a 3 MB HLO module costs one ``setPlainText`` and a screenful of regex matches.
"""

from __future__ import annotations

import re
from typing import Any

from PySide6.QtCore import QEvent, QPoint, QRect, QSize, Qt, Slot
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QFontMetrics,
    QHelpEvent,
    QPainter,
    QPaintEvent,
    QTextCharFormat,
    QTextLayout,
)
from PySide6.QtWidgets import QPlainTextEdit, QToolTip, QWidget

from widgets.ir.ir_lexer import lex_line

#: Colours of token kinds (light theme), see :data:`widgets.ir.ir_lexer.KINDS`.
PALETTE: dict[str, str] = {
    "comment": "#8a8f98",
    "string": "#2e7d32",
    "keyword": "#8e24aa",
    "type": "#00796b",
    "op": "#1565c0",
    "var": "#5d4037",
    "number": "#d84315",
    "meta": "#9e9e9e",
}


#: A trailing annotation column of JAX's pretty-printer (``pretty_print(source_info=True, name_stack=True)``
#: pads each equation to a wide column, then ``# file:line:col (function)`` and, on a line of its own,
#: ``# [name/stack]``).
_NOTE = re.compile(r"^(.*?\S)\s+# (.*)$")
_NOTE_ONLY = re.compile(r"^\s*# (.*)$")
_SOURCE = re.compile(r"^(?P<file>\S+?):(?P<line>\d+)(?::\d+)? \((?P<func>[^)]*)\)\s*(?:\[(?P<scope>.*)\])?$")
NOTES_MAX_CHARS = 34


def split_notes(text: str) -> tuple[str, list[str]]:
    """Move JAX's trailing ``# …`` annotations out of a pretty-printed jaxpr.

    Returns the code (same lines as the jaxpr printed without source info, annotations removed) and one
    note per code line (``""`` when none): ``/…/modeling_llama.py:111:16 (Rotary.forward) [aten::mul]``.
    A line holding only a note (the name stack JAX prints below the source location) joins the note of the
    line above, so line numbers match the jaxpr printed without source info.
    """
    code: list[str] = []
    notes: list[str] = []
    for line in text.split("\n"):
        only = _NOTE_ONLY.match(line)
        if only and code:
            notes[-1] = f"{notes[-1]} {only.group(1)}".strip()
            continue
        m = _NOTE.match(line)
        if m and "#" not in m.group(1):
            code.append(m.group(1))
            notes.append(m.group(2).strip())
        else:
            code.append(line)
            notes.append("")
    return "\n".join(code), notes


def note_label(note: str) -> str:
    """A short gutter label of a note: ``modeling_llama.py:111 aten::mul.Tensor`` (file name, line, last
    name-stack component); ``[]`` alone gives ``""``."""
    m = _SOURCE.match(note)
    if m:
        scope = (m.group("scope") or "").split("/")[-1]
        return f"{m.group('file').rsplit('/', 1)[-1]}:{m.group('line')} {scope}".strip()
    return note.strip("[] ").split("/")[-1]


def _formats() -> dict[str, QTextCharFormat]:
    out = {}
    for kind, colour in PALETTE.items():
        fmt = QTextCharFormat()
        fmt.setForeground(QColor(colour))
        if kind == "keyword":
            fmt.setFontWeight(QFont.Weight.DemiBold)
        out[kind] = fmt
    return out


class _LineNumberArea(QWidget):
    def __init__(self, view: CodeView) -> None:
        super().__init__(view)
        self._view = view

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        return QSize(self._view.line_number_width(), 0)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        self._view.paint_line_numbers(event)


def fit_label(label: str, width: float, metrics: QFontMetrics) -> str:
    """``label`` (``file:line scope``) cut to ``width`` px keeping its ``file:line``: the scope goes first
    (cut at its end), then the file is cut at its start: ``…ing_llama.py:243``. The line number is what an
    engineer needs, so it is never the part cut."""
    if metrics.horizontalAdvance(label) <= width:
        return label
    head, _, tail = label.partition(" ")
    if tail and metrics.horizontalAdvance(head + " …") <= width:
        return metrics.elidedText(label, Qt.TextElideMode.ElideRight, int(width))  # int px: as PySide cut it
    return metrics.elidedText(head, Qt.TextElideMode.ElideLeft, int(width))


class _NotesArea(QWidget):
    """The source-line gutter: one short note per line (full text in a tooltip). Its right edge can be
    dragged to widen or narrow it."""

    GRIP_PX = 5

    def __init__(self, view: CodeView) -> None:
        super().__init__(view)
        self._view = view
        self._drag_from: tuple[float, int] | None = None
        self.setObjectName("sourceGutter")
        self.setMouseTracking(True)

    def _on_grip(self, x: float) -> bool:
        return x >= self.width() - self.GRIP_PX

    def mousePressEvent(self, event: Any) -> None:  # noqa: N802
        if self._on_grip(event.position().x()):
            self._drag_from = (event.globalPosition().x(), self.width())
        else:
            super().mousePressEvent(event)

    def mouseMoveEvent(self, event: Any) -> None:  # noqa: N802
        if self._drag_from is not None:
            start, width = self._drag_from
            self._view.set_gutter_width(int(width + event.globalPosition().x() - start))
        shape = Qt.CursorShape.SplitHCursor if self._drag_from or self._on_grip(event.position().x()) else (
            Qt.CursorShape.ArrowCursor)
        self.setCursor(shape)

    def mouseReleaseEvent(self, event: Any) -> None:  # noqa: N802
        self._drag_from = None
        super().mouseReleaseEvent(event)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        self._view.paint_notes(event)

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            note = self._view.note_at(event.pos().y())
            if note:
                QToolTip.showText(event.globalPos(), note, self)
            else:
                QToolTip.hideText()
            return True
        return super().event(event)


class CodeView(QPlainTextEdit):
    """Read-only monospace text with line numbers and lazy IR syntax highlighting.

    Use :meth:`set_code` rather than ``setPlainText`` so the highlighting cache is reset.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setPointSize(max(font.pointSize(), 10))
        self.setFont(font)
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self._fmt = _formats()
        self._done: set[int] = set()
        self._highlight = True
        self._in_highlight = False
        self._numbers = _LineNumberArea(self)
        self._notes: list[str] = []
        self._labels: list[str] = []
        self._notes_area = _NotesArea(self)
        self._notes_area.hide()
        self._code: str | None = None
        self._right_px = 0  # a right-hand gutter's width (the measured-time labels, widgets.ir.line_tints)
        self.blockCountChanged.connect(self._update_margins)
        self.updateRequest.connect(self._on_update_request)
        self._update_margins()

    # -- public API -------------------------------------------------------------------------------
    def set_code(self, text: str, highlight: bool = True, notes: list[str] | None = None) -> None:
        """Replace the text (plain, any size); ``highlight=False`` shows it uncoloured. ``notes``: one
        note per line shown in a gutter beside the code (see :func:`split_notes`), ``None`` for none.

        New text opens at the top-left; the same text again (only the notes changed) keeps its place."""
        self._set_notes(notes)
        if text == self._code and highlight == self._highlight:
            return
        self._code = text
        self._done.clear()
        self._highlight = highlight
        self.setPlainText(text)
        self.verticalScrollBar().setValue(0)
        self.horizontalScrollBar().setValue(0)
        self._highlight_visible()

    def _set_notes(self, notes: list[str] | None) -> None:
        self._notes = list(notes or [])
        self._labels = [note_label(n) for n in self._notes]
        self._notes_area.setVisible(any(self._labels))
        self._update_margins()
        self._place_margins()
        self._notes_area.update()

    def notes(self) -> list[str]:
        """The notes shown in the gutter (one per line; empty when the gutter is hidden)."""
        return list(self._notes) if any(self._labels) else []

    def set_gutter_width(self, px: int | None) -> None:
        """Give the source-line gutter ``px`` pixels (dragging its edge does; between 60 px and 70 % of the
        view), or None for the automatic width."""
        self._gutter_px = None if px is None else max(60, min(int(px), int(self.width() * 0.7)))
        self._update_margins()
        self._place_margins()
        self._notes_area.update()

    def gutter_width(self) -> int:
        """Width in pixels of the source-line gutter (0 when hidden): the width the user dragged it to, else
        the longest label up to :data:`NOTES_MAX_CHARS` characters, at most 35% of the view."""
        if not any(self._labels):
            return 0
        dragged: int | None = getattr(self, "_gutter_px", None)  # unset until the gutter is first dragged
        if dragged is not None:
            return dragged
        chars = min(NOTES_MAX_CHARS, max(len(s) for s in self._labels))
        return min(12 + self.fontMetrics().horizontalAdvance("9") * chars, int(self.width() * 0.35))

    def visible_notes(self) -> list[tuple[int, str]]:
        """``(line, label)`` of the lines on screen that have a gutter label (1-based line numbers)."""
        return [(b.blockNumber() + 1, self._labels[b.blockNumber()]) for b in self._visible_blocks()
                if b.blockNumber() < len(self._labels) and self._labels[b.blockNumber()]]

    def note_at(self, y: int) -> str:
        """The full note of the line at viewport height ``y`` (``""`` if none)."""
        block = self.cursorForPosition(self.viewport().rect().topLeft() + QPoint(0, y)).block()
        n = block.blockNumber()
        return self._notes[n] if 0 <= n < len(self._notes) else ""

    def highlighted_blocks(self) -> int:
        """Number of lines that received highlighting so far (lazy: visible lines only)."""
        return len(self._done)

    # -- highlighting -----------------------------------------------------------------------------
    def _visible_blocks(self):  # noqa: ANN202
        block = self.firstVisibleBlock()
        bottom = self.viewport().height()
        offset = self.contentOffset()
        while block.isValid():
            top = self.blockBoundingGeometry(block).translated(offset).top()
            if top > bottom:
                break
            yield block
            block = block.next()

    def _highlight_visible(self) -> None:
        """Colour the on-screen lines not coloured yet, then re-lay them out with one dirty-mark."""
        if not self._highlight or self._in_highlight:
            return
        first = self.firstVisibleBlock().blockNumber()
        rows = self.viewport().height() // max(1, self.fontMetrics().lineSpacing()) + 2
        todo = [n for n in range(max(first, 0), min(first + rows, self.blockCount())) if n not in self._done]
        if not todo:
            return
        self._in_highlight = True
        try:
            doc = self.document()
            block = doc.findBlockByNumber(todo[0])
            start = end = block.position()
            while block.isValid() and block.blockNumber() <= todo[-1]:
                number = block.blockNumber()
                if number not in self._done:
                    self._done.add(number)
                    ranges = []
                    for pos, length, kind in lex_line(block.text()):
                        rng = QTextLayout.FormatRange()
                        rng.start, rng.length, rng.format = pos, length, self._fmt[kind]
                        ranges.append(rng)
                    if ranges:
                        block.layout().setFormats(ranges)
                end = block.position() + block.length()
                block = block.next()
            doc.markContentsDirty(start, end - start)
        finally:
            self._in_highlight = False

    @Slot(QRect, int)
    def _on_update_request(self, rect: QRect, dy: int) -> None:
        if dy:
            self._numbers.scroll(0, dy)
            self._notes_area.scroll(0, dy)
        else:
            self._numbers.update(0, rect.y(), self._numbers.width(), rect.height())
            self._notes_area.update(0, rect.y(), self._notes_area.width(), rect.height())
        self._highlight_visible()

    # -- line numbers -----------------------------------------------------------------------------
    def line_number_width(self) -> int:
        digits = len(str(max(1, self.blockCount())))
        return 12 + self.fontMetrics().horizontalAdvance("9") * max(3, digits)

    def set_right_margin(self, px: int) -> None:
        """Keep ``px`` pixels right of the text for a gutter widget (its owner places it there: the text is
        never drawn under it); 0 gives them back."""
        self._right_px = max(0, int(px))
        self._update_margins()

    @Slot(int)
    def _update_margins(self, _count: int = 0) -> None:
        self.setViewportMargins(self.line_number_width() + self.gutter_width(), 0, self._right_px, 0)

    def _place_margins(self) -> None:
        cr = self.contentsRect()
        numbers = self.line_number_width()
        self._numbers.setGeometry(QRect(cr.left(), cr.top(), numbers, cr.height()))
        self._notes_area.setGeometry(QRect(cr.left() + numbers, cr.top(), self.gutter_width(), cr.height()))

    def resizeEvent(self, event) -> None:  # noqa: N802, ANN001
        super().resizeEvent(event)
        self._update_margins()
        self._place_margins()
        self._highlight_visible()

    def showEvent(self, event) -> None:  # noqa: N802, ANN001
        """A view scrolled while hidden (e.g. by the source-map line links) gets no update request for
        its new lines: colour them when it is shown."""
        super().showEvent(event)
        self._highlight_visible()

    def paint_line_numbers(self, event: QPaintEvent) -> None:
        painter = QPainter(self._numbers)
        painter.fillRect(event.rect(), QColor("#f3f4f6"))
        painter.setPen(QColor("#9aa0a6"))
        if self.document().isEmpty():  # a placeholder is shown: no line numbers
            painter.end()
            return
        width = self._numbers.width() - 6
        height = self.fontMetrics().height()
        for block in self._visible_blocks():
            top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
            if top + height >= event.rect().top():
                painter.drawText(
                    0, top, width, height, Qt.AlignmentFlag.AlignRight, str(block.blockNumber() + 1)
                )
        painter.end()

    def paint_notes(self, event: QPaintEvent) -> None:
        """Paint the gutter: a label where the note changes, a faint one where it repeats the line above."""
        painter = QPainter(self._notes_area)
        painter.fillRect(event.rect(), QColor("#f7f8fa"))
        painter.setPen(QColor("#e0e3e7"))
        right = self._notes_area.width() - 1
        painter.drawLine(right, event.rect().top(), right, event.rect().bottom())
        width = self._notes_area.width() - 12
        height = self.fontMetrics().height()
        metrics = self.fontMetrics()
        for block in self._visible_blocks():
            n = block.blockNumber()
            label = self._labels[n] if n < len(self._labels) else ""
            if not label:
                continue
            previous = next((self._labels[k] for k in range(n - 1, max(-1, n - 40), -1) if self._labels[k]), "")
            painter.setPen(QColor("#b0b6bd" if label == previous else "#00695c"))
            top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
            text = fit_label(label, width, metrics)
            painter.drawText(6, top, width, height, Qt.AlignmentFlag.AlignLeft, text)
        painter.end()
