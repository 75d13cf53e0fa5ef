"""What a panel of the window may use: :class:`WindowContext`, a frozen set of typed parts, instead of the window.

A panel (``app.gui.panels``) is built with the context and, where it works with another panel, that panel as a
constructor argument; it talks back through public methods and signals. It never reads the window's attributes
and never reaches another object's private names (spyder's plugins declare what they need and link by signal;
napari's ``_qt`` views get their model, not the viewer).

The parts: the Qt host (the ``QMainWindow``, for menus, docks, dialogs' parent and shortcuts: Qt's own API
only), the session model (run state: the one place it lives), the window's widgets (:class:`WindowParts`), the
status line, the user's settings, and the window's run actions (:class:`RunActions`: run, stop, the form's
validated settings). GUI thread only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from PySide6.QtWidgets import QMainWindow

if TYPE_CHECKING:
    from app.core.session.model import Session
    from app.core.settings import GenerationSettings
    from app.gui.layout import WindowParts
    from app.gui.status import StatusLine
    from app.gui.user_settings import UserSettings


class RunActions(Protocol):
    """The window's run actions a panel may call (the main window implements them)."""

    def run(self, race: list[str] | None = None) -> None:
        """Run the prompt (a race of ``race``'s modes when given), loading the picked model first."""

    def stop(self) -> None:
        """Stop the run, race, replay or program run in progress (Esc)."""

    def generation_settings(self) -> GenerationSettings:
        """The form's settings, validated. Raises ``InvalidSettingsError``."""
        ...

    def is_busy(self) -> bool:
        """A load, run, race, replay or program run is queued or executing."""
        ...


@dataclass(frozen=True)
class WindowContext:
    """The typed parts of the window a panel works with (see the module doc)."""

    host: QMainWindow
    session: Session
    ui: WindowParts
    status: StatusLine
    settings: UserSettings
    actions: RunActions
