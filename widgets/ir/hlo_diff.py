"""One pass's HLO beside the snapshot before it, as a diff: removed lines on red, added lines on green,
unchanged regions folded to one grey line ("⋯ 120 unchanged lines"); the gutter gives each line's number in
the older and the newer text. "Whole snapshot" shows the newer text in full with its added lines on green.
The code is highlighted like the other IR views (:class:`widgets.ir.code_view.CodeView`, ``ir_lexer``).

Plain data in: :meth:`HloDiff.set_diff` takes rows ``(tag, old_line, new_line, text)`` with ``tag`` ``" "``
(unchanged), ``"-"``, ``"+"`` or ``"~"`` (a folded region: ``text`` says how many lines), plus the newer
snapshot's whole text; :meth:`HloDiff.set_text` shows one text alone (the first snapshot has nothing before it).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, Signal, Slot
from PySide6.QtGui import (
    QColor,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QTextCharFormat,
    QTextCursor,
    QTextFormat,
)
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QTextEdit, QVBoxLayout, QWidget

from widgets.common.typed_qt import named
from widgets.ir.code_view import CodeView

BACKGROUNDS = {"+": QColor("#dcfce7"), "-": QColor("#fee2e2"), "~": QColor("#eef0f3")}
HIT_BACKGROUND = QColor("#fde68a")
Row = tuple[str, "int | None", "int | None", str]


class DiffView(CodeView):
    """A :class:`CodeView` whose gutter shows ``old new tag`` per line instead of the block number."""

    def __init__(self, parent: QWidget | None = None) -> None:
        self._gutter: list[str] = []
        super().__init__(parent)
        self.setObjectName("hloDiffView")

    def set_gutter(self, labels: list[str]) -> None:
        self._gutter = list(labels)
        self._update_margins()
        self._place_margins()

    def line_number_width(self) -> int:
        chars = max((len(s) for s in self._gutter), default=3)
        return 8 + self.fontMetrics().horizontalAdvance("9") * max(3, chars)

    def paint_line_numbers(self, event: QPaintEvent) -> None:
        painter = QPainter(self._numbers)
        painter.fillRect(event.rect(), QColor("#f3f4f6"))
        if self.document().isEmpty():
            painter.end()
            return
        width = self._numbers.width() - 6
        height = self.fontMetrics().height()
        for block in self._visible_blocks():
            n = block.blockNumber()
            label = self._gutter[n] if n < len(self._gutter) else str(n + 1)
            colour = "#15803d" if label.endswith("+") else "#b91c1c" if label.endswith("-") else "#9aa0a6"
            painter.setPen(QColor(colour))
            top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
            if top + height >= event.rect().top():
                painter.drawText(0, top, width, height, Qt.AlignmentFlag.AlignRight, label)
        painter.end()


class HloDiff(QWidget):
    """A header (what is compared, lines added and removed), the "Whole snapshot" switch and the view.

    Signals (GUI thread): ``lineActivated(str)`` — the text of a double-clicked line (its instruction's
    source is looked up by the window)."""

    lineActivated = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = named(QLabel("Select a pass that changed the module."), "hloDiffTitle")
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.title.setMinimumWidth(50)
        self.title.setWordWrap(True)
        self.whole = named(QCheckBox("Whole snapshot"), "hloDiffWhole")
        self.whole.setToolTip("Show the newer snapshot in full (added lines on green) instead of the folded diff")
        self.view = DiffView()
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.title, 1)
        top.addWidget(self.whole)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(top)
        layout.addWidget(self.view, 1)
        self._rows: list[Row] = []
        self._text = ""
        self._old = self._new = ""
        self._added = self._removed = 0
        self._shown: list[Row] = []
        self._hit: int | None = None
        self.whole.toggled.connect(self._render)
        self.view.viewport().installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if (watched is self.view.viewport() and event.type() == QEvent.Type.MouseButtonDblClick
                and isinstance(event, QMouseEvent)):
            self.lineActivated.emit(self.view.cursorForPosition(event.position().toPoint()).block().text())
        return False

    # -- public API ---------------------------------------------------------------------------------
    def set_diff(self, old_label: str, new_label: str, rows: list[Row], new_text: str) -> None:
        """Show the diff ``rows`` of ``old_label`` → ``new_label``; ``new_text``: the newer snapshot whole."""
        self._old, self._new = old_label, new_label
        self._rows = [(tag, old, new, text) for tag, old, new, text in rows]
        self._text = new_text
        self._added = sum(1 for r in rows if r[0] == "+")
        self._removed = sum(1 for r in rows if r[0] == "-")
        self._hit = None
        self._render()

    def set_text(self, label: str, text: str) -> None:
        """Show one snapshot alone (no snapshot before it)."""
        self._old, self._new = "", label
        self._rows, self._text = [], text
        self._added = self._removed = 0
        self._hit = None
        self._render()

    def clear(self, message: str = "Select a pass that changed the module.") -> None:
        self._rows, self._text, self._shown, self._hit = [], "", [], None
        self.title.setText(message)
        self.view.set_gutter([])
        self.view.set_code("")

    def rows(self) -> list[Row]:
        """The rows shown (diff rows, or one unchanged row per line of the whole snapshot)."""
        return list(self._shown)

    def changed_rows(self) -> list[Row]:
        return [r for r in self._shown if r[0] in "+-"]

    def show_line(self, new_line: int) -> bool:
        """Scroll to line ``new_line`` of the newer snapshot and mark it; in the diff when it is shown there,
        else in the whole snapshot. False when the text has no such line."""
        if not self.whole.isChecked() and not any(r[2] == new_line for r in self._shown):
            if not self._text or new_line > self._text.count("\n") + 1:
                return False
            self.whole.setChecked(True)  # renders the whole text
        position = next((i for i, r in enumerate(self._shown) if r[2] == new_line), None)
        if position is None:
            return False
        self._hit = new_line
        self._paint_backgrounds()
        block = self.view.document().findBlockByNumber(position)
        cursor = QTextCursor(block)
        self.view.setTextCursor(cursor)
        self.view.centerCursor()
        return True

    def hit_line(self) -> int | None:
        """The newer snapshot's line marked by :meth:`show_line`."""
        return self._hit

    # -- internals ----------------------------------------------------------------------------------
    @Slot()
    def _render(self) -> None:
        if self.whole.isChecked() or not self._old:
            added = {r[2] for r in self._rows if r[0] == "+"}
            lines = self._text.split("\n") if self._text else []
            if lines and lines[-1] == "":
                lines.pop()
            self._shown = [("+" if i + 1 in added else " ", i + 1, i + 1, line) for i, line in enumerate(lines)]
            gutter = [f"{i + 1}{' +' if i + 1 in added else '  '}" for i in range(len(lines))]
        else:
            self._shown = list(self._rows)
            d = len(str(max((max(o or 0, n or 0) for _, o, n, _ in self._rows), default=1)))
            gutter = [f"{'' if o is None else o:>{d}} {'' if n is None else n:>{d}} {t if t in '+-' else ' '}"
                      for t, o, n, _ in self._rows]
        what = (f"<b>{self._new}</b> vs <span style='color:#6b7280'>{self._old}</span> · "
                f"<span style='color:#15803d'>+{self._added}</span> "
                f"<span style='color:#b91c1c'>−{self._removed}</span>") if self._old else f"<b>{self._new}</b>"
        if self._old and not self._rows:
            what += " · no textual change"
        self.title.setText(what)
        self.title.setToolTip(f"{self._new} vs {self._old}" if self._old else self._new)
        self.view.set_gutter(gutter)
        self.view.set_code("\n".join(r[3] for r in self._shown))
        self._paint_backgrounds()

    def _paint_backgrounds(self) -> None:
        selections = []
        doc = self.view.document()
        for i, (tag, _old, new, _text) in enumerate(self._shown):
            colour = HIT_BACKGROUND if (self._hit is not None and new == self._hit and tag != "-") else (
                BACKGROUNDS.get(tag))
            if colour is None:
                continue
            sel = QTextEdit.ExtraSelection()
            fmt = QTextCharFormat()
            fmt.setBackground(colour)
            fmt.setProperty(QTextFormat.Property.FullWidthSelection, True)
            if tag == "~":
                fmt.setForeground(QColor("#6b7280"))
                fmt.setFontItalic(True)
            sel.format = fmt
            sel.cursor = QTextCursor(doc.findBlockByNumber(i))
            selections.append(sel)
        self.view.setExtraSelections(selections)
