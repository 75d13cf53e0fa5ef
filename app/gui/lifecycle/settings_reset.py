"""The settings file in the window: Help ▸ Reset all settings… (asks first, keeps a backup, restarts the window
on the defaults), and the notice of a settings file that was kept aside at start (corrupt, unreadable, newer).
GUI thread only."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer, Slot
from PySide6.QtWidgets import QMainWindow, QMessageBox

from app.gui.menus import find_menu
from app.gui.user_settings import UserSettings


class SettingsReset(QObject):
    """Adds Help ▸ Reset all settings… to ``window``. ``restart``: what runs after a reset (the app's entry
    point relaunches the process; without it the window closes and the next start uses the defaults)."""

    def __init__(self, window: QMainWindow, settings: UserSettings, status: Callable[[str], None],
                 restart: Callable[[], None] | None = None) -> None:
        super().__init__(window)
        self.window = window
        self.settings = settings
        self.status = status
        self.restart = restart
        help_menu = find_menu(window, "&Help")
        help_menu.addSeparator()
        self.action = help_menu.addAction("&Reset all settings…", self.ask)
        self.action.setObjectName("resetSettingsAction")

    def confirm(self) -> bool:
        """Ask before resetting (Yes resets)."""
        box = QMessageBox(QMessageBox.Icon.Warning, "Reset all settings",
                          "Reset all settings to their defaults?", parent=self.window)
        box.setInformativeText(
            "The model, prompt, generation settings, window layout, recent files and Demo kit settings go back "
            f"to the defaults. The current file is kept as a backup beside {UserSettings.path()}. Your programs "
            "and their unsaved drafts are not touched. The window restarts.")
        box.setStandardButtons(QMessageBox.StandardButton.Reset | QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        return box.exec() == QMessageBox.StandardButton.Reset

    @Slot()
    def ask(self) -> None:
        """Help ▸ Reset all settings…: after Yes, back up and remove the file, then restart (or close)."""
        if not self.confirm():
            return
        try:
            kept = self.settings.reset_all()
        except OSError as exc:
            self.status(f"Could not reset the settings: the backup failed ({exc.strerror or exc}); nothing changed.")
            return
        self.status(f"Settings reset (backup: {kept}); restarting…" if kept else "Settings reset; restarting…")
        if self.restart is not None:
            self.restart()
        else:
            self.window.close()


def show_notice(window: QMainWindow, notice: str, status: Callable[[str], None]) -> None:
    """Say what happened to a settings file kept aside at start: on the status line and in a message box shown
    once the window is up (the file's new name is in both)."""
    if not notice:
        return
    status(notice)

    def show() -> None:
        box = QMessageBox(QMessageBox.Icon.Warning, "Settings file kept aside", notice, parent=window)
        box.setStandardButtons(QMessageBox.StandardButton.Ok)
        box.exec()

    QTimer.singleShot(0, window, show)
