"""A row of controls that wraps onto more rows when its parent is narrower than the row (Qt's Flow Layout
example, https://doc.qt.io/qt-6/qtwidgets-layouts-flowlayout-example.html, reduced to what our button rows need).

Each item keeps its size hint; items are laid out left to right and a new row starts when the next item would pass
the right edge. The layout has a height for each width (:meth:`heightForWidth`), so the parent gives it the rows it
needs; nothing is squeezed below its size hint and nothing is cut off at the side.
"""

from __future__ import annotations

from PySide6.QtCore import QMargins, QPoint, QRect, QSize, Qt
from PySide6.QtWidgets import QLayout, QLayoutItem, QWidget, QWidgetItem


class FlowLayout(QLayout):
    """Widgets in rows that wrap: ``addWidget`` appends, ``insertWidget(index, widget)`` inserts (a negative or
    too large index appends), as a ``QHBoxLayout`` does; no stretch factors (each item keeps its size hint)."""

    def __init__(self, parent: QWidget | None = None, spacing: int = 6) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self._spacing = spacing
        self.setContentsMargins(QMargins(0, 0, 0, 0))

    # -- QLayout's item list --------------------------------------------------------------------------
    def addItem(self, item: QLayoutItem) -> None:  # noqa: N802 (Qt override)
        self._items.append(item)

    def insertWidget(self, index: int, widget: QWidget) -> None:  # noqa: N802 (Qt naming)
        self.addChildWidget(widget)
        item = QWidgetItem(widget)
        if index < 0 or index > len(self._items):
            index = len(self._items)
        self._items.insert(index, item)
        self.invalidate()

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:  # noqa: N802 (Qt override)
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:  # noqa: N802 (Qt override)
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    # -- sizes ------------------------------------------------------------------------------------------
    def expandingDirections(self) -> Qt.Orientation:  # noqa: N802 (Qt override)
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:  # noqa: N802 (Qt override)
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802 (Qt override)
        return self._arrange(QRect(0, 0, width, 0), move=False)

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        """One row of every visible item."""
        items = self._visible()
        m = self.contentsMargins()
        width = sum(i.sizeHint().width() for i in items) + self._spacing * max(0, len(items) - 1)
        height = max((i.sizeHint().height() for i in items), default=0)
        return QSize(width + m.left() + m.right(), height + m.top() + m.bottom())

    def minimumSize(self) -> QSize:  # noqa: N802 (Qt override)
        """As wide as the widest item (everything else wraps)."""
        size = QSize()
        for item in self._visible():
            size = size.expandedTo(item.minimumSize().expandedTo(item.sizeHint()))
        m = self.contentsMargins()
        return size + QSize(m.left() + m.right(), m.top() + m.bottom())

    def setGeometry(self, rect: QRect) -> None:  # noqa: N802 (Qt override)
        super().setGeometry(rect)
        self._arrange(rect, move=True)

    # -- layout -----------------------------------------------------------------------------------------
    def _visible(self) -> list[QLayoutItem]:
        return [i for i in self._items if (w := i.widget()) is None or not w.isHidden()]

    def _arrange(self, rect: QRect, move: bool) -> int:
        """Place the visible items in ``rect`` (with ``move``); returns the height the rows take."""
        m = self.contentsMargins()
        area = rect.adjusted(m.left(), m.top(), -m.right(), -m.bottom())
        x, y, row_height = area.x(), area.y(), 0
        row: list[tuple[QLayoutItem, QSize, int]] = []  # the current row's items, size hints and left edges

        def place_row() -> None:
            for item, hint, left in row:  # each item centred in its row's height, as a QHBoxLayout does
                item.setGeometry(QRect(QPoint(left, y + (row_height - hint.height()) // 2), hint))

        for item in self._visible():
            hint = item.sizeHint()
            if row and x + hint.width() > area.right() + 1:
                if move:
                    place_row()
                x, y, row_height, row = area.x(), y + row_height + self._spacing, 0, []
            row.append((item, hint, x))
            x += hint.width() + self._spacing
            row_height = max(row_height, hint.height())
        if move and row:
            place_row()
        return y + row_height - rect.y() + m.bottom()
