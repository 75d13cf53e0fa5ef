"""A dock's menu action that shows it: Qt's ``toggleViewAction`` closes a dock that is open but behind another
tab, so the key meant to bring the Compile log forward hid it (issue 55)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget


def in_front(dock: QDockWidget) -> bool:
    """Whether ``dock`` is open and on screen: not closed, and not a tab behind another dock's tab."""
    return dock.isVisible() and not dock.visibleRegion().isEmpty()


class ShowDockAction(QAction):
    """A checkable action (checked = the dock is open) whose trigger brings ``dock`` forward: a closed dock opens
    and a dock behind another tab is raised; only a dock already in front is closed, so the shortcut shows what
    it names whatever the layout. ``before_show``: called before a dock that is not in front is shown (the
    window's workspaces set it: the docks live in the Run workspace, so a dock's key pressed in Inspect or Code
    goes to Run first instead of laying the dock over that workspace). GUI thread only."""

    def __init__(self, dock: QDockWidget, shortcut: str, parent: QObject) -> None:
        super().__init__(dock.windowTitle(), parent, checkable=True)
        self.setShortcut(QKeySequence(shortcut))
        self.setChecked(not dock.isHidden())
        self._dock = dock
        self.before_show: Callable[[], None] | None = None
        self.triggered.connect(self._on_triggered)
        dock.visibilityChanged.connect(self._sync)

    @Slot()
    def _on_triggered(self) -> None:
        dock = self._dock
        if in_front(dock):
            dock.close()
        else:
            if self.before_show is not None:
                self.before_show()
            dock.show()
            dock.raise_()
        self.setChecked(not dock.isHidden())

    @Slot(bool)
    def _sync(self, _visible: bool) -> None:
        self.setChecked(not self._dock.isHidden())
