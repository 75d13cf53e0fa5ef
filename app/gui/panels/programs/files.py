"""The Code workspace's files (:class:`ProgramFiles`): File ▸ New program, Open program…, Open recent, Examples,
Save program and Save program as…, for the program of a :class:`app.gui.panels.programs.wiring.ProgramWiring`; unsaved edits
of a file are never dropped silently (save, discard, or keep editing). GUI thread only.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Slot
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QFileDialog, QMenu, QMessageBox

from app.core.programs.gallery import list_examples
from app.gui.panels.programs.host import ProgramHost

MAX_RECENT = 8
UNTITLED = "untitled.py"
#: What File ▸ New program starts from: one entry point and its example arguments (the program convention).
NEW_PROGRAM = """import jax
import jax.numpy as jnp


def f(x):
    return jnp.tanh(x @ x.T).sum()


def f_args():
    return (jax.random.normal(jax.random.key(0), (64, 128)),)
"""


def examples() -> list[Any]:
    """The gallery's examples (:func:`app.core.programs.gallery.list_examples`)."""
    return list_examples()


class ProgramFiles(QObject):
    """The File-menu actions of the program in ``programs`` (a :class:`app.gui.panels.programs.wiring.ProgramWiring`: its
    ``editor``, ``path``, ``name``, ``example``, ``set_program``, ``show_file`` and ``save_state``) and the
    recent files (``recent``, newest first, at most :data:`MAX_RECENT`)."""

    def __init__(self, programs: ProgramHost, file_menu: QMenu) -> None:
        super().__init__(programs.panel)  # lives as long as the program's panel
        self.programs = programs
        self.host, self.status, self.workspaces = programs.ctx.host, programs.ctx.status, programs.workspaces
        self.recent: list[str] = []
        self._menus(file_menu)

    def _menus(self, file_menu: QMenu) -> None:
        self.new_action = file_menu.addAction("&New program", self.new_program)
        self.new_action.setShortcut(QKeySequence("Ctrl+N"))
        self.new_action.setToolTip("An untitled program in the Code workspace, with a small function to start from")
        self.open_action = file_menu.addAction("&Open program…", self.open_dialog)
        self.open_action.setShortcut(QKeySequence("Ctrl+O"))
        self.recent_menu = file_menu.addMenu("Open &recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        self.examples_menu = file_menu.addMenu("&Examples")
        for ex in examples():
            action = self.examples_menu.addAction(ex.title, lambda p=ex.path: self.open_example(p))
            action.setToolTip(ex.point)
            action.setStatusTip(ex.point)
        self.examples_menu.setToolTipsVisible(True)
        self.save_action = file_menu.addAction("&Save program", self.save)
        self.save_action.setShortcut(QKeySequence("Ctrl+S"))
        self.save_as_action = file_menu.addAction("Save program &as…", self.save_as)
        self.save_as_action.setShortcut(QKeySequence("Ctrl+Shift+S"))
        file_menu.addSeparator()
        for action in (self.new_action, self.open_action, self.save_action, self.save_as_action):
            self.host.addAction(action)  # shortcuts keep working with the menu bar hidden

    def may_replace(self) -> bool:
        """Unsaved edits of a file are not dropped silently: save, discard, or keep editing."""
        p = self.programs
        if not p.editor.document().isModified() or not p.editor.code().strip():
            return True
        box = QMessageBox(QMessageBox.Icon.Question, "Unsaved program",
                          f"{p.name} has unsaved edits. Save them first?",
                          QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
                          | QMessageBox.StandardButton.Cancel, self.host)
        answer = box.exec()
        if answer == QMessageBox.StandardButton.Save:
            return self.save()
        return answer == QMessageBox.StandardButton.Discard

    def open_file(self, path: str, ask: bool = True) -> bool:
        """Open the program ``path`` in the editor (and show the Code workspace). False when it cannot be read
        or the user kept the current edits."""
        if ask and not self.may_replace():
            return False
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            self.status.error(f"Cannot open {path}: {exc}")
            return False
        self.programs.set_program(text, path)
        self.remember(self.programs.path)
        self.workspaces.show("Code")
        self.programs.save_state()
        return True

    def open_example(self, path: str) -> bool:
        """Open a gallery example (its own file, so jaxpr lines name it; Save goes to Save as)."""
        if not self.may_replace():
            return False
        self.programs.set_program(Path(path).read_text(encoding="utf-8"), path, example=True)
        self.workspaces.show("Code")
        self.programs.save_state()
        return True

    @Slot()
    def open_dialog(self) -> None:
        p = self.programs
        start = os.path.dirname(p.path) if p.path and not p.example else str(Path.home())
        path, _ = QFileDialog.getOpenFileName(self.host, "Open a program", start, "Python (*.py);;All files (*)")
        if path:
            self.open_file(path)

    @Slot()
    def save(self) -> bool:
        """Save to the program's file (Save as for an untitled text or an example)."""
        if not self.programs.path or self.programs.example:
            return self.save_as()
        return self.save_to(self.programs.path)

    @Slot()
    def save_as(self) -> bool:
        p = self.programs
        start = p.path if p.path and not p.example else str(Path.home() / p.name)
        path, _ = QFileDialog.getSaveFileName(self.host, "Save the program as", start, "Python (*.py)")
        return self.save_to(path) if path else False

    def save_to(self, path: str) -> bool:
        p = self.programs
        try:
            Path(path).write_text(p.editor.code(), encoding="utf-8")
        except OSError as exc:
            self.status.error(f"Could not save {path}: {exc}")
            return False
        p.path, p.name, p.example = os.path.abspath(path), os.path.basename(path), False
        p.editor.document().setModified(False)
        self.remember(p.path)
        p.show_file()
        p.save_state()
        self.status.show(f"Saved {p.path}")
        return True

    def remember(self, path: str) -> None:
        """``path`` first in the recent files."""
        self.recent = [path] + [p for p in self.recent if p != path]
        del self.recent[MAX_RECENT:]

    @Slot()
    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        for path in self.recent:
            self.recent_menu.addAction(path, lambda p=path: self.open_file(p))
        if not self.recent:
            self.recent_menu.addAction("(none yet)").setEnabled(False)

    @Slot()
    def new_program(self) -> bool:
        """File ▸ New program (Ctrl+N): an untitled program with a small entry point and its example arguments,
        in the Code workspace. False when the user kept the current edits."""
        if not self.may_replace():
            return False
        self.programs.set_program(NEW_PROGRAM, name=UNTITLED)
        self.workspaces.show("Code")
        self.programs.save_state()
        return True
