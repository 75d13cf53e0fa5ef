"""A read-only code view for large IR texts: line numbers and lazy, per-visible-line highlighting.

Highlighting is applied only to the lines on screen (``QTextLayout.setFormats`` on each visible block,
once), so opening a 3 MB HLO module costs one ``setPlainText`` and a screenful of regex matches.
"""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize, Qt, Slot
from PySide6.QtGui import QColor, QFont, QFontDatabase, QPainter, QPaintEvent, QTextCharFormat, QTextLayout
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from widgets.ir_lexer import lex_line

#: Colours of token kinds (light theme), see :data:`widgets.ir_lexer.KINDS`.
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
        self.blockCountChanged.connect(self._update_margins)
        self.updateRequest.connect(self._on_update_request)
        self._update_margins()

    # -- public API -------------------------------------------------------------------------------
    def set_code(self, text: str, highlight: bool = True) -> None:
        """Replace the text (plain, any size); ``highlight=False`` shows it uncoloured."""
        self._done.clear()
        self._highlight = highlight
        self.setPlainText(text)
        self._highlight_visible()

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
        else:
            self._numbers.update(0, rect.y(), self._numbers.width(), rect.height())
        self._highlight_visible()

    # -- line numbers -----------------------------------------------------------------------------
    def line_number_width(self) -> int:
        digits = len(str(max(1, self.blockCount())))
        return 12 + self.fontMetrics().horizontalAdvance("9") * max(3, digits)

    @Slot(int)
    def _update_margins(self, _count: int = 0) -> None:
        self.setViewportMargins(self.line_number_width(), 0, 0, 0)

    def resizeEvent(self, event) -> None:  # noqa: N802, ANN001
        super().resizeEvent(event)
        cr = self.contentsRect()
        self._numbers.setGeometry(QRect(cr.left(), cr.top(), self.line_number_width(), cr.height()))
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
