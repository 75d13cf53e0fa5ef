"""Streaming token text: batched inserts, per-token hover info, compiling-call tokens marked.

Tokens are queued by :meth:`TokenView.add_token` and inserted by a 30 Hz timer, so a fast decode loop
costs one document edit per frame, not one per token.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from PySide6.QtCore import QEvent, QPoint, QTimer, Signal, Slot
from PySide6.QtGui import QColor, QFont, QMouseEvent, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QToolTip, QWidget

from app.core.units import ms

FLUSH_INTERVAL_MS = 33


@dataclass
class TokenInfo:
    """One generated token as shown: ``start``/``length`` are character offsets in the document."""

    index: int
    token_id: int
    text: str
    call_index: int
    start: int = -1
    length: int = 0


@dataclass
class CallInfo:
    """What hovering a token tells about the model call that produced it."""

    index: int
    step: str
    wall_ms: float
    compiled: bool
    compile_ms: float | None = None


def _fmt(colour: str, background: str | None = None, underline: bool = False) -> QTextCharFormat:
    fmt = QTextCharFormat()
    fmt.setForeground(QColor(colour))
    fmt.setBackground(QColor(background) if background else QColor(0, 0, 0, 0))
    if underline:
        fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.SingleUnderline)
        fmt.setUnderlineColor(QColor("#d9480f"))
        fmt.setFontWeight(QFont.Weight.DemiBold)
    return fmt


class TokenView(QPlainTextEdit):
    """Prompt (grey) followed by generated tokens; tokens of compiling calls are orange and underlined.

    Signals (GUI thread): ``tokenHovered(call_index)`` when the mouse enters a token (-1 when it leaves
    every token); ``tokensFlushed(n_tokens)`` after each batch is inserted.
    """

    tokenHovered = Signal(int)
    tokensFlushed = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setMouseTracking(True)
        self.viewport().setMouseTracking(True)
        font = self.font()
        font.setPointSize(max(font.pointSize() + 1, 11))
        self.setFont(font)
        self._tokens: list[TokenInfo] = []
        self._starts: list[int] = []
        self._pending: list[TokenInfo] = []
        self._calls: dict[int, CallInfo] = {}
        self._hovered_call = -1
        self._prompt_fmt = _fmt("#6b7280")
        self._token_fmt = _fmt("#111827")
        self._compiled_fmt = _fmt("#c2410c", "#ffedd5", underline=True)
        self._timer = QTimer(self, interval=FLUSH_INTERVAL_MS)
        self._timer.timeout.connect(self.flush)
        self.setPlaceholderText("Generated text appears here, token by token.")

    # -- feeding ----------------------------------------------------------------------------------
    def start(self, prompt: str) -> None:
        """Clear everything and show ``prompt`` in grey; generated tokens follow it."""
        self._timer.stop()
        self._tokens.clear()
        self._starts.clear()
        self._pending.clear()
        self._calls.clear()
        self.setExtraSelections([])
        self.clear()
        cursor = QTextCursor(self.document())
        cursor.insertText(prompt, self._prompt_fmt)

    def add_token(self, index: int, token_id: int, text: str, call_index: int) -> None:
        """Queue one token; it appears at the next flush (≤ 33 ms later)."""
        self._pending.append(TokenInfo(index, token_id, text, call_index))
        if not self._timer.isActive():
            self._timer.start()

    def add_call(self, call: CallInfo) -> None:
        """Record the model call ``call.index``; tokens already shown from it are re-formatted."""
        self._calls[call.index] = call
        if call.compiled:
            for tok in self._tokens:
                if tok.call_index == call.index:
                    self._format_token(tok)

    @Slot()
    def flush(self) -> None:
        """Insert every queued token now (also called by the timer)."""
        if not self._pending:
            self._timer.stop()
            return
        bar = self.verticalScrollBar()
        at_bottom = bar.value() >= bar.maximum() - 4
        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.beginEditBlock()
        for tok in self._pending:
            tok.start, tok.length = cursor.position(), len(tok.text)
            cursor.insertText(tok.text, self._format_of(tok))
            self._tokens.append(tok)
            self._starts.append(tok.start)
        cursor.endEditBlock()
        self._pending.clear()
        if at_bottom:
            bar.setValue(bar.maximum())
        self.tokensFlushed.emit(len(self._tokens))

    # -- queries ----------------------------------------------------------------------------------
    def tokens(self) -> list[TokenInfo]:
        return list(self._tokens)

    def token_at(self, position: int) -> TokenInfo | None:
        """The token covering character ``position`` of the document, if any."""
        i = bisect.bisect_right(self._starts, position) - 1
        while i >= 0 and self._tokens[i].length == 0:
            i -= 1
        if i < 0:
            return None
        tok = self._tokens[i]
        return tok if tok.start <= position < tok.start + tok.length else None

    def tooltip_for(self, tok: TokenInfo) -> str:
        """Rich text shown when hovering ``tok``: id, text, and the call that produced it."""
        lines = [f"<b>token #{tok.index}</b> · id {tok.token_id} · {tok.text!r}"]
        call = self._calls.get(tok.call_index)
        if call is None:
            lines.append(f"call {tok.call_index}")
        else:
            lines.append(f"call {call.index} ({call.step}) · {ms(call.wall_ms)}")
            if call.compiled:
                lines.append(f"<span style='color:#c2410c'>compiled this call ({ms(call.compile_ms)})</span>")
        return "<br>".join(lines)

    def highlight_call(self, call_index: int) -> None:
        """Give the tokens of ``call_index`` a blue background (-1 clears it)."""
        selections = []
        for tok in self._tokens:
            if tok.call_index == call_index and tok.length:
                sel = QTextEdit.ExtraSelection()
                sel.format.setBackground(QColor("#bfdbfe"))
                sel.cursor = QTextCursor(self.document())
                sel.cursor.setPosition(tok.start)
                sel.cursor.setPosition(tok.start + tok.length, QTextCursor.MoveMode.KeepAnchor)
                selections.append(sel)
        self.setExtraSelections(selections)

    # -- internals --------------------------------------------------------------------------------
    def _format_of(self, tok: TokenInfo) -> QTextCharFormat:
        call = self._calls.get(tok.call_index)
        return self._compiled_fmt if call is not None and call.compiled else self._token_fmt

    def _format_token(self, tok: TokenInfo) -> None:
        if tok.length:
            cursor = QTextCursor(self.document())
            cursor.setPosition(tok.start)
            cursor.setPosition(tok.start + tok.length, QTextCursor.MoveMode.KeepAnchor)
            cursor.setCharFormat(self._format_of(tok))

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        super().mouseMoveEvent(event)
        pos = event.position().toPoint()
        tok = self.token_at(self.cursorForPosition(pos).position())
        if tok is None:
            # cursorForPosition gives the nearest gap; also try the character before it.
            tok = self.token_at(self.cursorForPosition(pos).position() - 1)
        call = tok.call_index if tok else -1
        if tok is not None:
            QToolTip.showText(event.globalPosition().toPoint() + QPoint(12, 12), self.tooltip_for(tok), self)
        else:
            QToolTip.hideText()
        if call != self._hovered_call:
            self._hovered_call = call
            self.tokenHovered.emit(call)

    def leaveEvent(self, event: QEvent) -> None:  # noqa: N802
        super().leaveEvent(event)
        if self._hovered_call != -1:
            self._hovered_call = -1
            self.tokenHovered.emit(-1)
