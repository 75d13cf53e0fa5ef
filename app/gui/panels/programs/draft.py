"""The Code workspace's draft (:class:`ProgramDraft`): unsaved edits of the program are never lost.

The editor's text is kept as a draft in the user config directory (``program.json``: the text, the file's path,
whether the text differs from it, the recent files and the run controls; ``program_draft.py``: the same text as
a plain file), written half a second after typing pauses (at least every few seconds while it goes on) and when
the window closes, each file through a temporary file renamed over it, so a kill at any moment leaves the last
complete draft. It is restored when the window opens; when the restored text differs from the file (the example,
or a new program for an untitled text), the status line says so and offers **Discard restored edits**, which
puts that text back (Ctrl+Z brings the edits back). GUI thread only.
"""

from __future__ import annotations

import difflib
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QTimer, Slot
from PySide6.QtGui import QTextCursor

from app.gui.panels.programs.files import MAX_RECENT, NEW_PROGRAM, UNTITLED, examples
from app.gui.panels.programs.host import ProgramHost
from app.gui.user_settings import config_dir

STATE_FILE = "program.json"
DRAFT_FILE = "program_draft.py"
#: The draft is written this long after typing pauses (ms) …
DRAFT_DELAY_MS = 500
#: … and at least this often while typing goes on without a pause (ms).
DRAFT_MAX_DELAY_MS = 3000


class ProgramDraft(QObject):
    """Keeps, restores and discards the draft of the program in ``programs`` (a
    :class:`app.gui.panels.programs.wiring.ProgramWiring`: its ``editor``, ``panel``, ``path``, ``name``, ``example``,
    ``files.recent``, ``set_program`` and ``show_file``)."""

    def __init__(self, programs: ProgramHost) -> None:
        super().__init__(programs.panel)  # lives as long as the program's panel
        self.programs = programs
        self._timer = QTimer(self, singleShot=True, interval=DRAFT_DELAY_MS)
        self._timer.timeout.connect(self.save)
        self._unsaved_since: float | None = None  # monotonic time of the first edit the draft does not hold

    @staticmethod
    def state_path() -> Path:
        return config_dir() / STATE_FILE

    def edited(self) -> None:
        """The editor's text changed: save the draft once typing pauses, or now when it has gone on for
        :data:`DRAFT_MAX_DELAY_MS` without a pause."""
        now = time.monotonic()
        if self._unsaved_since is None:
            self._unsaved_since = now
        if (now - self._unsaved_since) * 1000 >= DRAFT_MAX_DELAY_MS:  # typing without a pause: keep it now
            self.save()
        else:
            self._timer.start()

    @Slot()
    def save(self) -> None:
        """Write the draft (the editor's text) and the program state to the user config dir: ``program.json``
        holds both (one file, so they always agree), ``program_draft.py`` the text alone; each through a
        temporary file renamed over it (a kill mid-write leaves the previous complete one)."""
        self._timer.stop()
        self._unsaved_since = None
        p = self.programs
        folder = config_dir()
        text = p.editor.code()
        state = {"path": p.path, "name": p.name, "example": p.example,
                 "modified": p.editor.document().isModified(), "recent": p.files.recent,
                 "controls": p.panel.values(), "line": p.editor.current_line(), "text": text}
        try:
            folder.mkdir(parents=True, exist_ok=True)
            write_atomic(folder / DRAFT_FILE, text)
            write_atomic(folder / STATE_FILE, json.dumps(state, indent=2))
        except OSError as exc:
            p.ctx.status.warn(f"Could not keep the program's draft: {exc}")

    def saved_text(self) -> str | None:
        """What Discard restored edits puts back: the file's text as saved (an example's own text), or
        :data:`NEW_PROGRAM` for an untitled program; None when the file cannot be read."""
        if not self.programs.path:
            return NEW_PROGRAM
        try:
            return Path(self.programs.path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    @Slot()
    def discard(self) -> bool:
        """Discard restored edits: the editor's text becomes :meth:`saved_text` again, unmodified (one undo
        step: Ctrl+Z brings the edits back), and the status line says what was dropped. False when the file
        cannot be read."""
        p = self.programs
        original = self.saved_text()
        if original is None:
            p.panel.show_error(f"Cannot discard the edits: {p.path} cannot be read.")
            return False
        added, removed = changed_lines(original, p.editor.code())
        cursor = QTextCursor(p.editor.document())
        cursor.select(QTextCursor.SelectionType.Document)
        cursor.insertText(original)  # an edit, not set_code: the undo history keeps the restored text
        p.editor.moveCursor(QTextCursor.MoveOperation.Start)
        p.editor.document().setModified(False)
        p.panel.offer_discard(False)
        back = ("a new program again" if not p.path else
                f"{p.name} as the example comes" if p.example else f"{p.name} as saved")
        p.panel.show_message(f"Discarded the restored edits to {p.name} (+{added} −{removed} lines): the "
                             f"editor holds {back}. Ctrl+Z in the editor brings them back.")
        p.show_file()
        self.save()
        return True

    def restore(self) -> None:
        """Show the draft of the last session (a fresh user: the first example), with its run controls and
        line, and say when it holds edits that the file does not."""
        state, draft = _read_state(config_dir())
        p = self.programs
        if state is None or draft is None:
            found = examples()
            if found:  # a fresh user starts on the first example: Ctrl+3, Ctrl+Enter
                p.set_program(Path(found[0].path).read_text(encoding="utf-8"), found[0].path, example=True)
            return
        p.files.recent = [f for f in state.get("recent", []) if isinstance(f, str)][:MAX_RECENT]
        path = str(state["path"]) if isinstance(state.get("path"), str) else ""
        modified = bool(state.get("modified"))
        text = draft
        if path and not modified:  # the saved file as it is now (it may have changed outside the app)
            try:
                text = Path(path).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                modified = True
        p.set_program(text, path, state.get("name") or UNTITLED, bool(state.get("example")), modified)
        if isinstance(state.get("controls"), dict):
            p.panel.set_values(state["controls"])
        if modified:
            self._say_restored(text)
        line = state.get("line")
        if isinstance(line, int) and line > 1:
            p.editor.select_line(line)

    def _say_restored(self, text: str) -> None:
        """The restored ``text`` holds unsaved edits: say so and offer to discard them (nothing to say when
        the edits were undone before the last exit)."""
        p = self.programs
        original = self.saved_text()
        if original == text:  # the edits were undone before the last exit: nothing to restore
            p.editor.document().setModified(False)
        elif original is None:
            p.panel.show_message(f"Your unsaved edits were restored from the last session ({p.path} "
                                 "cannot be read any more: File ▸ Save as keeps them).")
        else:
            added, removed = changed_lines(original, text)
            what = ("a new program" if not p.path else "the example" if p.example else "the saved file")
            p.panel.show_message(f"Your unsaved edits were restored from the last session (+{added} "
                                 f"−{removed} lines against {what}).")
            p.panel.offer_discard(True, f"Put back {what} ({p.name}), dropping the restored edits "
                                        "(Ctrl+Z in the editor brings them back)")
            p.ctx.status.show(f"Unsaved edits of {p.name} were restored in the Code workspace "
                                 "(Ctrl+3): keep them, or Discard restored edits there.")


def _read_state(folder: Path) -> tuple[dict[str, Any] | None, str | None]:
    """``(state, draft text)`` kept in ``folder``: ``program.json`` and its text, else ``program_draft.py``
    (a state written before the text was kept in it); None for what is missing or unreadable."""
    try:
        state = json.loads((folder / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        state = None
    draft = state.get("text") if isinstance(state, dict) else None
    if not isinstance(draft, str):  # a state written before the text was kept in it, or none
        try:
            draft = (folder / DRAFT_FILE).read_text(encoding="utf-8")
        except (OSError, ValueError):
            draft = None
        if draft is not None and not isinstance(state, dict):  # the state is unreadable: keep the text
            state = {"modified": bool(draft.strip())}
    return (state if isinstance(state, dict) else None), draft


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder renamed over it."""
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def changed_lines(before: str, after: str) -> tuple[int, int]:
    """``(lines added, lines removed)`` going from ``before`` to ``after``."""
    added = removed = 0
    matcher = difflib.SequenceMatcher(None, before.splitlines(), after.splitlines(), autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            removed += i2 - i1
            added += j2 - j1
    return added, removed
