"""An editor for the user's Python program: line numbers, Pygments Python highlighting, an error line marked
with a background colour, the lines linked to the IR views tinted, and the line the cursor is on reported.

Highlighting: a ``QSyntaxHighlighter`` lexes each line with Pygments' ``PythonLexer`` (the IR views use a
line-local lexer the same way, :mod:`widgets.ir.ir_lexer`); a block state carries triple-quoted strings across
lines. The marks use ``extraSelections`` (full-width backgrounds) so they never touch the document's text.
"""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize, Qt, QTimer, Signal, Slot
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QKeyEvent,
    QPainter,
    QPaintEvent,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
)
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QWidget

#: Pygments token type (its first two components) → colour, the IR views' palette (widgets.ir.code_view).
TOKEN_COLOURS = {
    "Comment": "#8a8f98",
    "Literal.String": "#2e7d32",
    "Keyword": "#8e24aa",
    "Name.Builtin": "#00796b",
    "Name.Function": "#1565c0",
    "Name.Class": "#1565c0",
    "Name.Decorator": "#ef6c00",
    "Literal.Number": "#d84315",
    "Operator.Word": "#8e24aa",
}
ERROR_COLOUR = QColor(255, 205, 210)  # the line of an error in the program
LINK_COLOUR = QColor(255, 213, 79, 120)  # lines linked to the IR selection (as in the IR views)
CURRENT_COLOUR = QColor(232, 240, 254)

_IN_DOUBLE, _IN_SINGLE = 1, 2  # block states: inside a ''' or \"\"\" string at the end of the line


def _format_for(token_type: object) -> str | None:
    name = str(token_type).removeprefix("Token.")
    while name:
        if name in TOKEN_COLOURS:
            return TOKEN_COLOURS[name]
        name = name.rpartition(".")[0]
    return None


class PythonHighlighter(QSyntaxHighlighter):
    """Pygments Python highlighting, one line at a time (triple-quoted strings carried by block state)."""

    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        from pygments.lexers import PythonLexer

        self._lexer = PythonLexer(stripnl=False, ensurenl=False)
        self._formats: dict[str, QTextCharFormat] = {}
        for name, colour in TOKEN_COLOURS.items():
            fmt = QTextCharFormat()
            fmt.setForeground(QColor(colour))
            if name == "Keyword":
                fmt.setFontWeight(QFont.Weight.DemiBold)
            self._formats[colour] = fmt

    def highlightBlock(self, text: str) -> None:  # noqa: N802 (Qt override)
        start = 0
        state = self.previousBlockState()
        string_fmt = self._formats[TOKEN_COLOURS["Literal.String"]]
        if state in (_IN_DOUBLE, _IN_SINGLE):
            quote = '"""' if state == _IN_DOUBLE else "'''"
            end = text.find(quote)
            if end < 0:
                self.setFormat(0, len(text), string_fmt)
                self.setCurrentBlockState(state)
                return
            start = end + 3
            self.setFormat(0, start, string_fmt)
        self.setCurrentBlockState(0)
        rest = text[start:]
        pos = start
        for token_type, value in self._lexer.get_tokens(rest):
            colour = _format_for(token_type)
            if colour is not None and value.strip():
                self.setFormat(pos, len(value), self._formats[colour])
            pos += len(value)
        # an unterminated triple-quoted string runs on to the next lines
        for quote, st in (('"""', _IN_DOUBLE), ("'''", _IN_SINGLE)):
            if rest.count(quote) % 2 == 1:
                opened = rest.rfind(quote)
                self.setFormat(start + opened, len(rest) - opened, string_fmt)
                self.setCurrentBlockState(st)
                break


class _LineNumbers(QWidget):
    def __init__(self, editor: CodeEditor) -> None:
        super().__init__(editor)
        self._editor = editor

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        return QSize(self._editor.line_number_width(), 0)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        self._editor.paint_line_numbers(event)


class CodeEditor(QPlainTextEdit):
    """An editable Python code pane.

    Signals (GUI thread): ``lineSelected(int)`` — the user put the cursor on another 1-based line (not sent
    for :meth:`select_line`)."""

    lineSelected = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("codeEditor")
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setPointSize(max(font.pointSize(), 10))
        self.setFont(font)
        self.setTabStopDistance(self.fontMetrics().horizontalAdvance(" ") * 4)
        self.highlighter = PythonHighlighter(self.document())
        self._numbers = _LineNumbers(self)
        self._error_line = 0
        self._error_message = ""
        self._linked: list[tuple[int, int]] = []
        self._quiet = False
        self._last_line = 0
        self.blockCountChanged.connect(self._update_margins)
        self.updateRequest.connect(self._on_update_request)
        self.cursorPositionChanged.connect(self._on_cursor)
        self._update_margins()

    # -- text -------------------------------------------------------------------------------------
    def set_code(self, text: str) -> None:
        """Replace the text (undo history restarts) and clear the marks; the cursor at the top."""
        self._quiet = True
        try:
            self.setPlainText(text)
            self._error_line, self._error_message, self._linked, self._last_line = 0, "", [], 1
            self.moveCursor(QTextCursor.MoveOperation.Start)
        finally:
            self._quiet = False
        self._refresh_marks()

    def code(self) -> str:
        return self.toPlainText()

    def current_line(self) -> int:
        """The 1-based line of the cursor."""
        return self.textCursor().blockNumber() + 1

    def insertFromMimeData(self, source) -> None:  # noqa: N802, ANN001 (Qt override): paste plain text only
        if source.hasText():
            self.insertPlainText(source.text())

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 (Qt override)
        """Enter (no modifier) auto-indents: the new line keeps the current line's indentation, one level
        (4 spaces) more after a line ending with ``:`` (issue 55); other keys as a plain text edit."""
        plain = not event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and plain and not self.isReadOnly():
            cursor = self.textCursor()
            cursor.beginEditBlock()
            cursor.removeSelectedText()
            cursor.insertText("\n" + self.indent_after(cursor.block().text()[:cursor.positionInBlock()]))
            cursor.endEditBlock()
            self.setTextCursor(cursor)
            self.ensureCursorVisible()
            return
        super().keyPressEvent(event)

    @staticmethod
    def indent_after(before: str) -> str:
        """The indentation of a new line broken after ``before`` (the text left of the cursor): its leading
        whitespace, plus 4 spaces when its code (a trailing ``#`` comment aside) ends with ``:``."""
        indent = before[:len(before) - len(before.lstrip())]
        code = before.rstrip()
        if "#" in code and "'" not in code and '"' not in code:  # a comment (no string that might hold a '#')
            code = code.split("#", 1)[0].rstrip()
        return indent + ("    " if code.endswith(":") else "")

    # -- marks ------------------------------------------------------------------------------------
    def mark_error(self, line: int, message: str = "") -> None:
        """Mark 1-based ``line`` as the error's (0 clears) and show it: its background tinted, its code underlined
        with a red wave and ``message`` (one line, e.g. ``"SyntaxError: invalid syntax"``) written after its
        end, as its tool tip too."""
        self._error_line = max(0, int(line))
        self._error_message = message.strip().splitlines()[0] if self._error_line and message.strip() else ""
        if self._error_line:
            self._scroll_to(self._error_line)
        self._refresh_marks()
        self.viewport().update()

    def error_line(self) -> int:
        return self._error_line

    def error_message(self) -> str:
        """The message written on the error's line (``""``: none)."""
        return self._error_message

    def set_linked_lines(self, ranges: list[tuple[int, int]]) -> None:
        """Tint the 1-based inclusive line ranges linked to the IR views' selection (``[]`` clears)."""
        self._linked = [(int(a), int(b)) for a, b in ranges]
        self._refresh_marks()

    def linked_lines(self) -> list[tuple[int, int]]:
        return list(self._linked)

    def select_line(self, line: int) -> None:
        """Put the cursor on 1-based ``line``, select it and scroll to it, without sending ``lineSelected``.

        The line is centred vertically; sideways the view stays where it is while the line's code (its first
        non-blank character, where the cursor goes) is on screen, and else moves only as far as that character
        (issue 37: a cursor at the line's end scrolled a long line's end into view, its start out of it)."""
        block = self.document().findBlockByNumber(max(0, line - 1))
        if not block.isValid():
            return
        text = block.text()
        bar = self.horizontalScrollBar()
        left = bar.value()
        self._quiet = True
        try:
            cursor = QTextCursor(block)
            cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock)  # the anchor at the end, the cursor at the code
            cursor.setPosition(block.position() + len(text) - len(text.lstrip()), QTextCursor.MoveMode.KeepAnchor)
            self.setTextCursor(cursor)
            self._last_line = line
            self.centerCursor()
        finally:
            self._quiet = False
        bar.setValue(left)  # Qt centres an off-screen cursor sideways: undo that, then move only as needed
        self._show_cursor_column()
        self._refresh_marks()

    def _show_cursor_column(self, margin: int = 4) -> None:
        """Scroll sideways just enough that the cursor's character is in view (``margin`` px inside the edge)."""
        bar, rect, width = self.horizontalScrollBar(), self.cursorRect(), self.viewport().width()
        if rect.left() < 0:
            bar.setValue(bar.value() + rect.left() - margin)
        elif rect.right() > width:
            bar.setValue(bar.value() + rect.right() - width + margin)

    def _scroll_to(self, line: int) -> None:
        block = self.document().findBlockByNumber(max(0, line - 1))
        if block.isValid():
            top = self.verticalScrollBar().value()
            rows = max(1, self.viewport().height() // max(1, self.fontMetrics().lineSpacing()))
            if not top <= line - 1 < top + rows - 1:
                self.verticalScrollBar().setValue(max(0, line - 4))

    def _selection(self, line: int, colour: QColor) -> QTextEdit.ExtraSelection | None:
        block = self.document().findBlockByNumber(line - 1)
        if not block.isValid():
            return None
        sel = QTextEdit.ExtraSelection()
        sel.format.setBackground(colour)
        sel.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
        sel.cursor = QTextCursor(block)
        return sel

    def _refresh_marks(self) -> None:
        wanted: list[tuple[int, QColor]] = [(self.current_line(), CURRENT_COLOUR)]
        for a, b in self._linked:
            wanted += [(n, LINK_COLOUR) for n in range(a, min(b, self.blockCount()) + 1)]
        if self._error_line:
            wanted.append((self._error_line, ERROR_COLOUR))
        sels = [s for s in (self._selection(n, c) for n, c in wanted) if s is not None]
        underline = self._error_underline()
        self.setExtraSelections(sels + ([underline] if underline is not None else []))

    def _error_underline(self) -> QTextEdit.ExtraSelection | None:
        """A red wave under the error line's code (from its first non-blank character)."""
        block = self.document().findBlockByNumber(self._error_line - 1)
        if not self._error_line or not block.isValid() or not block.text().strip():
            return None
        sel = QTextEdit.ExtraSelection()
        sel.format.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
        sel.format.setUnderlineColor(QColor("#d32f2f"))
        sel.format.setToolTip(self._error_message)
        cursor = QTextCursor(block)
        text = block.text()
        cursor.setPosition(block.position() + len(text) - len(text.lstrip()))
        cursor.setPosition(block.position() + len(text.rstrip()), QTextCursor.MoveMode.KeepAnchor)
        sel.cursor = cursor
        return sel

    def error_message_rect(self) -> QRect:
        """Where the error's message is written in the viewport (empty when none is shown)."""
        block = self.document().findBlockByNumber(self._error_line - 1)
        if not self._error_message or not block.isValid() or not block.isVisible():
            return QRect()
        geo = self.blockBoundingGeometry(block).translated(self.contentOffset())
        metrics = self.fontMetrics()
        x = round(geo.left()) + metrics.horizontalAdvance(block.text().rstrip().expandtabs(4)) + 4 + \
            metrics.horizontalAdvance("  ")
        return QRect(x, round(geo.top()), metrics.horizontalAdvance(self._error_message) + 12,
                     metrics.height())

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt override)
        super().paintEvent(event)
        rect = self.error_message_rect()
        if rect.isEmpty():
            return
        painter = QPainter(self.viewport())
        painter.fillRect(rect, QColor(255, 235, 238))
        painter.setPen(QColor("#b71c1c"))
        font = painter.font()
        font.setItalic(True)
        painter.setFont(font)
        painter.drawText(rect.adjusted(6, 0, 0, 0), Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
                         self._error_message)
        painter.end()

    @Slot()
    def _on_cursor(self) -> None:
        self._refresh_marks()
        line = self.current_line()
        if self._quiet or line == self._last_line:
            return
        self._last_line = line
        # after the event that moved it (a click): a selection drag sends one signal, not one per line
        QTimer.singleShot(0, lambda n=line: self._emit_line(n))

    def _emit_line(self, line: int) -> None:
        if line == self.current_line():
            self.lineSelected.emit(line)

    # -- line numbers -----------------------------------------------------------------------------
    def line_number_width(self) -> int:
        digits = len(str(max(1, self.blockCount())))
        return 14 + self.fontMetrics().horizontalAdvance("9") * max(3, digits)

    @Slot(int)
    def _update_margins(self, _count: int = 0) -> None:
        self.setViewportMargins(self.line_number_width(), 0, 0, 0)

    @Slot(QRect, int)
    def _on_update_request(self, rect: QRect, dy: int) -> None:
        if dy:
            self._numbers.scroll(0, dy)
        else:
            self._numbers.update(0, rect.y(), self._numbers.width(), rect.height())

    def resizeEvent(self, event) -> None:  # noqa: N802, ANN001
        super().resizeEvent(event)
        cr = self.contentsRect()
        self._numbers.setGeometry(QRect(cr.left(), cr.top(), self.line_number_width(), cr.height()))

    def paint_line_numbers(self, event: QPaintEvent) -> None:
        painter = QPainter(self._numbers)
        painter.fillRect(event.rect(), QColor("#f3f4f6"))
        width = self._numbers.width() - 6
        height = self.fontMetrics().height()
        block = self.firstVisibleBlock()
        offset = self.contentOffset()
        while block.isValid():
            top = round(self.blockBoundingGeometry(block).translated(offset).top())
            if top > event.rect().bottom():
                break
            n = block.blockNumber() + 1
            if top + height >= event.rect().top():
                error = n == self._error_line
                painter.setPen(QColor("#c62828") if error else QColor("#9aa0a6"))
                painter.drawText(0, top, width, height, Qt.AlignmentFlag.AlignRight, ("● " if error else "") + str(n))
            block = block.next()
        painter.end()
