"""Cross-links between the source-map explorer and IR text views, without changing the views' own code.

- :class:`ViewportOverlay`: the transparent overlay the line tints (:mod:`widgets.ir.line_tints`) and
  :class:`LineHighlighter` share.
- :class:`LineHighlighter`: a transparent overlay on a ``QPlainTextEdit`` viewport that tints whole lines
  (it does not touch ``extraSelections``, which the find bar owns, nor the document's formats, which the
  lazy syntax highlighter owns).
- :class:`LineClickFilter`: an event filter on the viewport that reports the 1-based line of a click
  (a drag that selects text is not a click).
- :class:`IRLinker`: wires one :class:`widgets.source.source_inspector.SourceInspector` (or anything with a
  ``linesSelected(dict)`` signal and ``select_for_line(view, line)``) to named text views both ways.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterator
from typing import Any

from PySide6.QtCore import QEvent, QObject, QPoint, QRect, QRectF, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QColor, QMouseEvent, QPainter
from PySide6.QtWidgets import QPlainTextEdit, QWidget

LINK_COLOR = QColor(255, 213, 79, 90)


class ViewportOverlay(QWidget):
    """A transparent widget over ``edit``'s viewport that stays on it (through resizes and the scrolls that
    move viewport children) and repaints with the text; subclasses paint per visible line
    (:meth:`visible_lines`). ``below``: stack under overlays added earlier (the link highlights)."""

    def __init__(self, edit: QPlainTextEdit, below: bool = False) -> None:
        super().__init__(edit.viewport())
        self.edit = edit
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setGeometry(edit.viewport().rect())
        edit.viewport().installEventFilter(self)
        edit.updateRequest.connect(self._on_update_request)
        if below:
            self.lower()
        self.show()

    def visible_lines(self) -> Iterator[tuple[int, QRectF]]:
        """``(1-based line, its rectangle in the viewport)`` of each visible line, top to bottom."""
        edit, height = self.edit, self.height()
        block, offset = edit.firstVisibleBlock(), edit.contentOffset()
        while block.isValid():
            rect = edit.blockBoundingGeometry(block).translated(offset)
            if rect.top() > height:
                break
            yield block.blockNumber() + 1, rect
            block = block.next()

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt override)
        if event.type() == QEvent.Type.Resize:
            self.setGeometry(self.edit.viewport().rect())
        return False

    @Slot(QRect, int)
    def _on_update_request(self, _rect: QRect, _dy: int) -> None:
        self.update()

    def moveEvent(self, event) -> None:  # noqa: N802, ANN001
        """A scroll of the viewport moves its children with it: stay on the viewport."""
        super().moveEvent(event)
        if self.pos() != QPoint(0, 0):
            QTimer.singleShot(0, self._home)  # not inside the scroll that moved us (Qt ignores that)

    @Slot()
    def _home(self) -> None:
        self.setGeometry(self.edit.viewport().rect())


class LineHighlighter(ViewportOverlay):
    """Tints the lines in ``ranges`` (1-based inclusive ``(first, last)`` pairs) of ``edit``."""

    def __init__(self, edit: QPlainTextEdit, color: QColor = LINK_COLOR) -> None:
        self.color = color
        self._starts: list[int] = []
        self._ends: list[int] = []
        super().__init__(edit)

    def set_ranges(self, ranges: list[tuple[int, int]], scroll: bool = True) -> None:
        merged = sorted((int(a), int(b)) for a, b in ranges)
        self._starts = [a for a, _ in merged]
        self._ends = [b for _, b in merged]
        if scroll and merged:
            self.edit.verticalScrollBar().setValue(max(0, merged[0][0] - 4))
        self.update()

    def ranges(self) -> list[tuple[int, int]]:
        return list(zip(self._starts, self._ends))

    def is_highlighted(self, line_no: int) -> bool:
        i = bisect_right(self._starts, line_no) - 1
        return i >= 0 and any(self._starts[j] <= line_no <= self._ends[j] for j in range(max(0, i - 64), i + 1))

    def paintEvent(self, _event) -> None:  # noqa: N802, ANN001
        if not self._starts:
            return
        painter = QPainter(self)
        for line, rect in self.visible_lines():
            if self.is_highlighted(line):
                painter.fillRect(QRectF(0, rect.top(), self.width(), rect.height()), self.color)
        painter.end()


class LineClickFilter(QObject):
    """``lineClicked(int)``: 1-based line of a left click in ``edit`` (GUI thread)."""

    lineClicked = Signal(int)

    def __init__(self, edit: QPlainTextEdit) -> None:
        super().__init__(edit)
        self.edit = edit
        self._press: QPoint | None = None
        edit.viewport().installEventFilter(self)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt override)
        if not isinstance(event, QMouseEvent):
            return False
        if event.type() == QEvent.Type.MouseButtonPress and event.button() == Qt.MouseButton.LeftButton:
            self._press = event.position().toPoint()
        elif event.type() == QEvent.Type.MouseButtonRelease and event.button() == Qt.MouseButton.LeftButton and self._press:
            pos = event.position().toPoint()
            if (pos - self._press).manhattanLength() < 4:
                self.click_at(pos)
            self._press = None
        return False

    def click_at(self, pos: QPoint) -> int:
        line = self.edit.cursorForPosition(pos).blockNumber() + 1
        self.lineClicked.emit(line)
        return line


class IRLinker(QObject):
    """Links ``inspector`` and ``views`` (panel name → text view) both ways.

    ``view_key(panel)`` gives the source-map view a panel shows right now (``jaxpr`` or ``jaxpr_source``
    for a jaxpr panel with a source-lines toggle); by default the panel name itself.
    """

    def __init__(self, inspector: Any, views: dict[str, QPlainTextEdit],
                 view_key: Callable[[str], str] | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.inspector = inspector
        self.view_key = view_key or (lambda name: name)
        self.highlighters = {name: LineHighlighter(edit) for name, edit in views.items()}
        self.filters: dict[str, LineClickFilter] = {}
        self.last: dict[str, list[tuple[int, int]]] = {}
        for name, edit in views.items():
            f = LineClickFilter(edit)
            f.setObjectName(name)
            f.lineClicked.connect(self._on_line_clicked)
            self.filters[name] = f
        inspector.linesSelected.connect(self._on_lines)

    @Slot(dict)
    def _on_lines(self, lines: dict) -> None:
        self.last = dict(lines)
        self.refresh()

    def refresh(self, scroll: bool = True) -> None:
        """Re-apply the last selection (after a panel switched text, step or jaxpr source mode)."""
        for name, hl in self.highlighters.items():
            hl.set_ranges(self.last.get(self.view_key(name), []), scroll=scroll)

    def refresh_view(self, name: str, scroll: bool = True) -> None:
        """Re-apply the last selection to view ``name`` only (its text was just replaced)."""
        self.highlighters[name].set_ranges(self.last.get(self.view_key(name), []), scroll=scroll)

    def clear(self) -> None:
        """Forget the selection; a view scrolled to it goes back to the top (no stale position)."""
        self.last = {}
        for hl in self.highlighters.values():
            had = bool(hl.ranges())
            hl.set_ranges([], scroll=False)
            if had:
                hl.edit.verticalScrollBar().setValue(0)

    @Slot(int)
    def _on_line_clicked(self, line: int) -> None:
        name = self.sender().objectName()
        self.inspector.select_for_line(self.view_key(name), line)
