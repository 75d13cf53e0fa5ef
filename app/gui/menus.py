"""What the panels share of the window's look: the menu bar's menus by title, and each mode's colour and marker
(from the mode catalog, so a race lane, its curve and a recorded run of that mode look the same everywhere).
GUI thread only."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMainWindow, QMenu

from app.core.mode_catalog import CATALOG

#: Colour of each mode's curve and race lane, from the catalog.
MODE_COLOURS = {info.name: info.colour for info in CATALOG}
#: Marker of each mode's decode calls, so lanes stay apart where their lines overlap (pyqtgraph symbols).
MODE_SYMBOLS = {info.name: info.marker for info in CATALOG}


def lane_name(mode: str) -> str:
    """What the latency plot's legend names a race's lane by when it names an older race once (``start_run``'s
    ``lane``): a settings race's setting (``"O3"``) or a program's ``jit`` / ``no-jit``, as the race table does;
    ``""`` for a mode of the catalog (the entry then says ``"race of 6 modes"``)."""
    return "" if mode in MODE_COLOURS else mode


def find_menu(host: QMainWindow, title: str) -> QMenu:
    """``host``'s menu bar menu titled ``title`` (ampersands ignored), created if missing."""
    bar = host.menuBar()
    for action in bar.actions():
        menu = action.menu()
        if isinstance(menu, QMenu) and action.text().replace("&", "") == title.replace("&", ""):
            return menu
    return bar.addMenu(title)


def insert_before(menu: QMenu, before: QAction | None, items: Iterable[QAction | QMenu]) -> None:
    """Put ``items`` (actions and submenus) in ``menu`` before ``before``, or at its end when ``before`` is None
    (as Qt's ``insertAction`` does with a null ``before``, which PySide6's stubs do not allow)."""
    for item in items:
        action = item.menuAction() if isinstance(item, QMenu) else item
        if before is None:
            menu.addAction(action)
        else:
            menu.insertAction(before, action)
