"""What changed in an IR view since the previous good compile (the Code workspace's live mode): a transparent
overlay on the view's viewport (:class:`widgets.ir.line_links.ViewportOverlay`, below the link highlights) that
fills added lines green and changed lines amber and draws a red bar where old lines were removed. It touches
neither the document's formats (the syntax highlighter's) nor ``extraSelections`` (the find bar's).
Plain data in: 1-based line numbers of the text shown.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import QPlainTextEdit

from widgets.ir.line_links import ViewportOverlay

ADDED_COLOUR = QColor(46, 160, 67, 60)  # green: a line the previous compile did not have
CHANGED_COLOUR = QColor(255, 179, 0, 70)  # amber: a line that differs from its counterpart
REMOVED_COLOUR = QColor(211, 47, 47, 220)  # red bar: lines of the previous compile removed here
STRIPE_PX = 4


class ChangeMarks(ViewportOverlay):
    """Marks the lines of ``edit`` that changed: :meth:`set_changes` takes the added and changed lines and the
    lines before which old ones were removed (``len(lines) + 1``: at the end)."""

    def __init__(self, edit: QPlainTextEdit) -> None:
        self._added: set[int] = set()
        self._changed: set[int] = set()
        self._removed: set[int] = set()
        super().__init__(edit, below=True)
        self.setObjectName("irChangeMarks")

    def set_changes(self, added: tuple[int, ...] | list[int] = (), changed: tuple[int, ...] | list[int] = (),
                    removed: tuple[int, ...] | list[int] = ()) -> None:
        """Mark 1-based ``added`` and ``changed`` lines and the places ``removed`` (all empty: clear)."""
        self._added, self._changed, self._removed = set(added), set(changed), set(removed)
        self.update()

    def clear(self) -> None:
        self.set_changes()

    def marks(self) -> dict[str, list[int]]:
        """``{"added": [...], "changed": [...], "removed": [...]}`` (sorted 1-based lines)."""
        return {"added": sorted(self._added), "changed": sorted(self._changed), "removed": sorted(self._removed)}

    def colour_of(self, line: int) -> QColor | None:
        """The fill of ``line`` (None: unmarked)."""
        if line in self._added:
            return ADDED_COLOUR
        if line in self._changed:
            return CHANGED_COLOUR
        return None

    def paintEvent(self, _event) -> None:  # noqa: N802, ANN001 (Qt override)
        if not (self._added or self._changed or self._removed):
            return
        painter = QPainter(self)
        width = self.width()
        last, bottom = 0, 0.0
        for line, rect in self.visible_lines():
            colour = self.colour_of(line)
            if colour is not None:
                painter.fillRect(QRectF(0, rect.top(), width, rect.height()), colour)
                solid = QColor(colour)
                solid.setAlpha(230)  # a stripe at the left edge: seen under a link highlight too
                painter.fillRect(QRectF(0, rect.top(), STRIPE_PX, rect.height()), solid)
            if line in self._removed:
                painter.fillRect(QRectF(0, rect.top() - 1, width, 2), REMOVED_COLOUR)
            last, bottom = line, rect.bottom()
        if last and last + 1 in self._removed and last == self.edit.blockCount():
            painter.fillRect(QRectF(0, bottom - 1, width, 2), REMOVED_COLOUR)
        painter.end()
