"""One way to build a ``QSplitter``: its panes, initial sizes, stretch factors, collapsibility and name."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QSplitter, QWidget


def splitter(
    orientation: Qt.Orientation,
    *widgets: QWidget,
    sizes: Sequence[int] | None = None,
    stretch: Sequence[int] | None = None,
    collapsible: bool = False,
    name: str = "",
) -> QSplitter:
    """A splitter of ``widgets`` in order along ``orientation``: pane ``i`` gets stretch factor ``stretch[i]``
    (how it shares a resize; None: Qt's), the panes start at ``sizes`` (px; None: Qt's), a pane may be dragged
    shut only when ``collapsible``, and ``name`` is its object name."""
    split = QSplitter(orientation)
    if name:
        split.setObjectName(name)
    for widget in widgets:
        split.addWidget(widget)
    for index, factor in enumerate(stretch or ()):
        split.setStretchFactor(index, factor)
    split.setChildrenCollapsible(collapsible)
    if sizes is not None:
        split.setSizes(list(sizes))
    return split
