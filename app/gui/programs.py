"""The Code workspace's wiring: the user's program in the editor (:class:`widgets.program_panel.ProgramPanel`),
run through the session like a model (:meth:`app.core.session.model.Session.run_program`), its errors marked at
the user's line, its lines linked both ways with the IR views, and its files (File ▸ Open, Save, Save as, Open
recent, Examples).

Unsaved edits are never lost: the editor's text is kept as a draft in the user config directory
(``program.json``: the text, the file's path, whether the text differs from it, the recent files and the run
controls; ``program_draft.py``: the same text as a plain file), written half a second after typing pauses (at
least every few seconds while it goes on) and when the window closes, each file through a temporary file renamed
over it, so a kill at any moment leaves the last complete draft. It is restored when the window opens; when the
restored text differs from the file (the example, or a new program for an untitled text), the status line says
so and offers **Discard restored edits**, which puts that text back (Ctrl+Z brings the edits back). GUI thread
only.
"""

from __future__ import annotations

import difflib
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, QTimer, Slot
from PySide6.QtGui import QKeySequence, QTextCursor
from PySide6.QtWidgets import QFileDialog, QMessageBox

from app.core.programs.lanes import split_static_values
from app.core.session.requests import ProgramFailed, ProgramLoaded, ProgramRequest
from app.gui.user_settings import config_dir
from widgets.program_panel import ProgramPanel
from widgets.source_rows import to_ranges

STATE_FILE = "program.json"
DRAFT_FILE = "program_draft.py"
MAX_RECENT = 8
#: The draft is written this long after typing pauses (ms) …
DRAFT_DELAY_MS = 500
#: … and at least this often while typing goes on without a pause (ms).
DRAFT_MAX_DELAY_MS = 3000
LIVE_DELAY_MS = 800  # as you type: re-trace this long after the last edit
UNTITLED = "untitled.py"
#: How long typing pauses before the entry list follows the text (ms).
ENTRIES_DELAY_MS = 400
#: What File ▸ New program starts from: one entry point and its example arguments (the program convention).
NEW_PROGRAM = """import jax
import jax.numpy as jnp


def f(x):
    return jnp.tanh(x @ x.T).sum()


def f_args():
    return (jax.random.normal(jax.random.key(0), (64, 128)),)
"""


def guess_entries(text: str) -> list[str]:
    """The entry points the loader will likely find, read from the text without running it (the picker's
    first list, before a run reports the real ones): ``ENTRY_POINTS``' names, else the functions with an
    ``X_args()``, else the public functions."""
    import ast

    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    functions = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "ENTRY_POINTS"
                                                for t in node.targets):
            try:
                names = ast.literal_eval(node.value)
            except ValueError:
                break
            return [n for n in names if isinstance(n, str)]
    with_args = [f for f in functions if f"{f}_args" in functions]
    return with_args or [f for f in functions if not f.startswith("_") and f != "example_args"]


def _examples() -> list[Any]:
    from app.core.programs.gallery import list_examples

    return list_examples()


class ProgramWiring(QObject):
    """Owns the program panel in the Code workspace and its File-menu actions."""

    def __init__(self, window: Any) -> None:
        from app.gui.demo import find_menu

        super().__init__(window)
        self.window = window
        self.panel = ProgramPanel()
        self.editor = self.panel.editor
        window.workspaces.code_split.insertWidget(0, self.panel)
        self.path = ""  # the file the editor's text belongs to ("" = never saved)
        self.name = UNTITLED
        self.example = False  # the text is a gallery example: Save goes to Save as
        self.compiled_path = ""  # the path the program was compiled from (its jaxpr's source lines name it)
        self.recent: list[str] = []
        self._draft_timer = QTimer(self, singleShot=True, interval=DRAFT_DELAY_MS)
        self._draft_timer.timeout.connect(self.save_state)
        self._unsaved_since: float | None = None  # monotonic time of the first edit the draft does not hold
        self._live_timer = QTimer(self, singleShot=True, interval=LIVE_DELAY_MS)
        self._live_timer.timeout.connect(self.trace)
        # the entry list follows the text as it is typed (issue 29 flaw 13: it went stale after new functions)
        self._entries_timer = QTimer(self, singleShot=True, interval=ENTRIES_DELAY_MS)
        self._entries_timer.timeout.connect(self._refresh_entries)
        self._traced: tuple = ()  # (text, entry, spec) last sent for a trace as you type
        self._run_after_trace = False  # Ctrl+Enter during a trace as you type: run when it ends
        self._menus(find_menu(window, "&File"))
        self._connect()
        self._restore()

    # -- setup ------------------------------------------------------------------------------------
    def _menus(self, file_menu: Any) -> None:
        w = self.window
        self.new_action = file_menu.addAction("&New program", self.new_program)
        self.new_action.setShortcut(QKeySequence("Ctrl+N"))
        self.new_action.setToolTip("An untitled program in the Code workspace, with a small function to start from")
        self.open_action = file_menu.addAction("&Open program…", self.open_dialog)
        self.open_action.setShortcut(QKeySequence("Ctrl+O"))
        self.recent_menu = file_menu.addMenu("Open &recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        self.examples_menu = file_menu.addMenu("&Examples")
        for ex in _examples():
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
            w.addAction(action)  # shortcuts keep working with the menu bar hidden

    def _connect(self) -> None:
        ev = self.window.session.events
        self.panel.runRequested.connect(self.run)
        self.panel.stopRequested.connect(self.window.stop)
        self.panel.discardRequested.connect(self.discard_restored)
        self.panel.live.toggled.connect(lambda on: self._live_timer.start() if on else self._live_timer.stop())
        ev.programLoaded.connect(self._on_loaded)
        ev.programFailed.connect(self._on_failed)
        ev.busyChanged.connect(self._on_busy)
        ev.idle.connect(self._on_idle)
        ev.sourceMap.connect(self._on_source_map)
        self.window.workspaces.changed.connect(self._on_workspace)
        self.editor.document().modificationChanged.connect(self._show_file)
        self.editor.document().modificationChanged.connect(
            lambda modified: None if modified else self.panel.offer_discard(False))  # saved or put back
        self.editor.textChanged.connect(self._on_text_changed)
        self.editor.lineSelected.connect(self.link_line)
        self.window.inspect.inspector.explorer.sourceLineSelected.connect(self._on_source_line)

    # -- running ----------------------------------------------------------------------------------
    def request(self) -> ProgramRequest:
        v = self.panel.values()
        return ProgramRequest(self.editor.code(), self.path, self.name, v["entry"], v["spec"], v["n_calls"],
                              v["mode"], v["sweep"], v["bucket"], static_values=split_static_values(v["static_values"]))

    @Slot()
    def run(self) -> bool:
        """Load the editor's text, trace and run its entry point (Ctrl+Enter in the Code workspace). False when
        the compute thread is busy."""
        if self.window.session.busy and self.tracing():
            self._run_after_trace = True  # the trace as you type ends soon: the run follows it
            return True
        if self.window.session.busy:
            self.panel.show_message("Busy: a model load or a run is in progress (Esc stops a run); "
                                    "Ctrl+Enter again when it ends.")
            return False
        self.editor.mark_error(0)
        self.panel.show_message("Running…")
        started = self.window.session.run_program(self.request())
        if started:  # loading and the first call's trace (Stop reaches a stuck loop at its next line)
            self.window.ui.busy.start("running", f"{self.name}: load, trace, first call")
        return started

    def tracing(self) -> bool:
        """A trace as you type is on the compute thread."""
        active = self.window.session.active
        return isinstance(active, ProgramRequest) and active.trace_only

    @Slot()
    def trace(self) -> bool:
        """As you type: trace, lower and compile the editor's text for the IR views (no timed calls). Waits
        (retries after the delay) while the compute thread is busy; nothing to do when the text was traced."""
        if not self.panel.live.isChecked():
            return False
        code = self.editor.code()
        v = self.panel.values()
        key = (code, v["entry"], v["spec"])
        if key == self._traced:
            return False
        if self.window.session.busy:
            self._live_timer.start()
            return False
        self._traced = key
        request = ProgramRequest(code, self.path, self.name, v["entry"], v["spec"], 0, v["mode"], "", False,
                                 trace_only=True)
        return self.window.session.run_program(request)

    def _ours(self, event: Any) -> bool:
        return isinstance(event.request, ProgramRequest)

    @Slot(object)
    def _on_loaded(self, event: ProgramLoaded) -> None:
        self.compiled_path = event.path
        if event.request.trace_only:
            self.panel.show_message(f"Tracing {event.display_name}:{event.entry or event.request.entry} as you "
                                    f"type · args {event.args}…")
        tips = [(e.name, f"{e.kind}, line {e.line}" + (f": {e.doc}" if e.doc else "")
                 + ("" if e.has_args else " — needs an argument spec")) for e in event.entries]
        self.panel.set_entries(tips, event.entry or event.request.entry)
        if event.entry and not event.request.trace_only:
            self.panel.show_message(f"{event.display_name}:{event.entry} ({event.backend}) · args {event.args} · "
                                    "running…")

    @Slot(object)
    def _on_failed(self, event: ProgramFailed) -> None:
        in_file = bool(event.file) and event.line > 0 and self._is_program_file(event.file)
        message = event.message.strip()
        lines = message.splitlines()
        short = "\n".join(lines[:4]) + (" …" if len(lines) > 4 else "")
        where = f"line {event.line}: " if in_file else ""
        self.panel.show_error(f"{where}{event.error_type} ({event.stage}): {short}", event.line if in_file else 0,
                              event.details or message)

    def _is_program_file(self, file: str) -> bool:
        if self.path:
            return os.path.abspath(file) == os.path.abspath(self.path)
        return os.path.basename(file) == self.name or file == self.compiled_path

    @Slot(bool)
    def _on_busy(self, busy: bool) -> None:
        self.panel.set_running(busy)

    @Slot(str)
    def _on_idle(self, message: str) -> None:
        session = self.window.session
        if message.startswith("Traced ") and not self.panel.error_text():
            self.panel.show_message(message)
        elif isinstance(session.last_request, ProgramRequest) and message and not self.panel.error_text():
            self.panel.show_message(message)
        if self._run_after_trace:
            self._run_after_trace = False
            QTimer.singleShot(0, self.run)

    @Slot(str)
    def _on_workspace(self, name: str) -> None:
        self.window.ui.ir_tabs.set_empty_hint(program=name == "Code")
        if name == "Code":
            self.editor.setFocus()

    @Slot(str, object)
    def _on_source_map(self, step: str, _map: Any) -> None:
        """The program's map arrived after a run: link the line the cursor is on (its equations light up)."""
        if step == self.window.ui.ir_tabs.current_step() and self.compiled_path:
            QTimer.singleShot(0, lambda: self.link_line(self.editor.current_line()))

    # -- links with the IR views ------------------------------------------------------------------
    def source_map(self) -> Any:
        inspect = self.window.inspect
        return inspect.maps.get(self.window.ui.ir_tabs.current_step())

    def lines_for(self, line: int) -> dict[str, list[tuple[int, int]]]:
        """View → line ranges of the IR linked to 1-based ``line`` of the program (empty when none)."""
        sm = self.source_map()
        if sm is None or not self.compiled_path:
            return {}
        out: dict[str, list[int]] = {}
        for g in sm.groups:
            if g.line == line and os.path.abspath(g.file or "") == os.path.abspath(self.compiled_path):
                for view in self.window.inspect.views:
                    out.setdefault(view, []).extend(sm.group_lines(g, view))
        return {v: to_ranges(sorted(set(lines))) for v, lines in out.items() if lines}

    @Slot(int)
    def link_line(self, line: int) -> None:
        """The cursor went to ``line`` of the editor: highlight its equations, StableHLO ops and HLO lines."""
        inspect = self.window.inspect
        ranges = self.lines_for(line)
        inspect.linker.last = ranges
        inspect.linker.refresh()
        inspect._on_lines_selected(ranges)  # the Source map tab's jump buttons
        self.editor.set_linked_lines([(line, line)] if ranges else [])

    @Slot(str, int)
    def _on_source_line(self, file: str, line: int) -> None:
        """A jaxpr line (or a Source map row) of the program's own file was picked: select its line here."""
        if line > 0 and file and self.compiled_path and os.path.abspath(file) == os.path.abspath(self.compiled_path):
            self.editor.select_line(line)
            self.editor.set_linked_lines([(line, line)])

    # -- files ------------------------------------------------------------------------------------
    def set_program(self, text: str, path: str = "", name: str = "", example: bool = False,
                    modified: bool = False) -> None:
        """Show ``text`` in the editor as the program ``path`` (``""``: untitled ``name``)."""
        self.path = os.path.abspath(path) if path else ""
        self.name = os.path.basename(path) if path else (name or UNTITLED)
        self.example = example
        self.compiled_path = ""
        self.editor.set_code(text)
        self.editor.document().setModified(modified)
        self.panel.offer_discard(False)  # another text: nothing restored to discard
        self.panel.entry.setCurrentText("")  # another file: its own first entry point
        self.panel.set_entries([(n, "") for n in guess_entries(text)], "")
        self.panel.set_values({"sweep": "", "bucket": False, "spec": ""})  # another file: not the last one's sweep
        self.panel.show_message("Ctrl+Enter runs the program." if not example else
                                "An example (read-only file: Save as to keep your edits). Ctrl+Enter runs it.")
        self._show_file()

    def _may_replace(self) -> bool:
        """Unsaved edits of a file are not dropped silently: save, discard, or keep editing."""
        if not self.editor.document().isModified() or not self.editor.code().strip():
            return True
        box = QMessageBox(QMessageBox.Icon.Question, "Unsaved program",
                          f"{self.name} has unsaved edits. Save them first?",
                          QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
                          | QMessageBox.StandardButton.Cancel, self.window)
        answer = box.exec()
        if answer == QMessageBox.StandardButton.Save:
            return self.save()
        return answer == QMessageBox.StandardButton.Discard

    def open_file(self, path: str, ask: bool = True) -> bool:
        """Open the program ``path`` in the editor (and show the Code workspace). False when it cannot be read
        or the user kept the current edits."""
        if ask and not self._may_replace():
            return False
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            self.window.status.error(f"Cannot open {path}: {exc}")
            return False
        self.set_program(text, path)
        self._remember(self.path)
        self.window.workspaces.show("Code")
        self.save_state()
        return True

    def open_example(self, path: str) -> bool:
        """Open a gallery example (its own file, so jaxpr lines name it; Save goes to Save as)."""
        if not self._may_replace():
            return False
        self.set_program(Path(path).read_text(encoding="utf-8"), path, example=True)
        self.window.workspaces.show("Code")
        self.save_state()
        return True

    @Slot()
    def open_dialog(self) -> None:
        start = os.path.dirname(self.path) if self.path and not self.example else str(Path.home())
        path, _ = QFileDialog.getOpenFileName(self.window, "Open a program", start, "Python (*.py);;All files (*)")
        if path:
            self.open_file(path)

    @Slot()
    def save(self) -> bool:
        """Save to the program's file (Save as for an untitled text or an example)."""
        if not self.path or self.example:
            return self.save_as()
        return self.save_to(self.path)

    @Slot()
    def save_as(self) -> bool:
        start = self.path if self.path and not self.example else str(Path.home() / self.name)
        path, _ = QFileDialog.getSaveFileName(self.window, "Save the program as", start, "Python (*.py)")
        return self.save_to(path) if path else False

    def save_to(self, path: str) -> bool:
        try:
            Path(path).write_text(self.editor.code(), encoding="utf-8")
        except OSError as exc:
            self.window.status.error(f"Could not save {path}: {exc}")
            return False
        self.path, self.name, self.example = os.path.abspath(path), os.path.basename(path), False
        self.editor.document().setModified(False)
        self._remember(self.path)
        self._show_file()
        self.save_state()
        self.window.status.show(f"Saved {self.path}")
        return True

    def _remember(self, path: str) -> None:
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
    def _show_file(self, *_: Any) -> None:
        modified = self.editor.document().isModified()
        self.panel.set_file(self.name + (" (example)" if self.example else ""), self.path, modified)

    @Slot()
    def new_program(self) -> bool:
        """File ▸ New program (Ctrl+N): an untitled program with a small entry point and its example arguments,
        in the Code workspace. False when the user kept the current edits."""
        if not self._may_replace():
            return False
        self.set_program(NEW_PROGRAM, name=UNTITLED)
        self.window.workspaces.show("Code")
        self.save_state()
        return True

    @Slot()
    def _refresh_entries(self) -> None:
        """The entry list from the editor's text (:func:`guess_entries`), the picked entry kept when it is
        still there; tool tips of the last load kept for names that stay."""
        names = guess_entries(self.editor.code())
        shown = [self.panel.entry.itemText(i) for i in range(self.panel.entry.count())]
        if names == shown:
            return
        tips = {self.panel.entry.itemText(i): self.panel.entry.itemData(i, Qt.ItemDataRole.ToolTipRole) or ""
                for i in range(self.panel.entry.count())}
        current = self.panel.entry.currentText()
        self.panel.set_entries([(n, tips.get(n, "")) for n in names], current if current in names else "")

    @Slot()
    def _on_text_changed(self) -> None:
        self.editor.mark_error(0) if self.editor.error_line() else None
        self._entries_timer.start()
        now = time.monotonic()
        if self._unsaved_since is None:
            self._unsaved_since = now
        if (now - self._unsaved_since) * 1000 >= DRAFT_MAX_DELAY_MS:  # typing without a pause: keep it now
            self.save_state()
        else:
            self._draft_timer.start()
        if self.panel.live.isChecked():
            self._live_timer.start()

    # -- draft ------------------------------------------------------------------------------------
    @staticmethod
    def state_path() -> Path:
        return config_dir() / STATE_FILE

    def save_state(self) -> None:
        """Write the draft (the editor's text) and the program state to the user config dir: ``program.json``
        holds both (one file, so they always agree), ``program_draft.py`` the text alone; each through a
        temporary file renamed over it (a kill mid-write leaves the previous complete one)."""
        self._draft_timer.stop()
        self._unsaved_since = None
        folder = config_dir()
        text = self.editor.code()
        state = {"path": self.path, "name": self.name, "example": self.example,
                 "modified": self.editor.document().isModified(), "recent": self.recent,
                 "controls": self.panel.values(), "line": self.editor.current_line(), "text": text}
        try:
            folder.mkdir(parents=True, exist_ok=True)
            _write_atomic(folder / DRAFT_FILE, text)
            _write_atomic(folder / STATE_FILE, json.dumps(state, indent=2))
        except OSError as exc:
            self.window.status.warn(f"Could not keep the program's draft: {exc}")

    def saved_text(self) -> str | None:
        """What Discard restored edits puts back: the file's text as saved (an example's own text), or
        :data:`NEW_PROGRAM` for an untitled program; None when the file cannot be read."""
        if not self.path:
            return NEW_PROGRAM
        try:
            return Path(self.path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    @Slot()
    def discard_restored(self) -> bool:
        """Discard restored edits: the editor's text becomes :meth:`saved_text` again, unmodified (one undo
        step: Ctrl+Z brings the edits back), and the status line says what was dropped. False when the file
        cannot be read."""
        original = self.saved_text()
        if original is None:
            self.panel.show_error(f"Cannot discard the edits: {self.path} cannot be read.")
            return False
        edits = self.editor.code()
        added, removed = _changed_lines(original, edits)
        cursor = QTextCursor(self.editor.document())
        cursor.select(QTextCursor.SelectionType.Document)
        cursor.insertText(original)  # an edit, not set_code: the undo history keeps the restored text
        self.editor.moveCursor(QTextCursor.MoveOperation.Start)
        self.editor.document().setModified(False)
        self.panel.offer_discard(False)
        back = ("a new program again" if not self.path else
                f"{self.name} as the example comes" if self.example else f"{self.name} as saved")
        self.panel.show_message(f"Discarded the restored edits to {self.name} (+{added} −{removed} lines): the "
                                f"editor holds {back}. Ctrl+Z in the editor brings them back.")
        self._show_file()
        self.save_state()
        return True

    def _restore(self) -> None:
        folder = config_dir()
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
        if not isinstance(state, dict) or draft is None:
            examples = _examples()
            if examples:  # a fresh user starts on the first example: Ctrl+3, Ctrl+Enter
                self.set_program(Path(examples[0].path).read_text(encoding="utf-8"), examples[0].path, example=True)
            return
        self.recent = [p for p in state.get("recent", []) if isinstance(p, str)][:MAX_RECENT]
        path = state.get("path") if isinstance(state.get("path"), str) else ""
        modified = bool(state.get("modified"))
        text = draft
        if path and not modified:  # the saved file as it is now (it may have changed outside the app)
            try:
                text = Path(path).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                modified = True
        self.set_program(text, path, state.get("name") or UNTITLED, bool(state.get("example")), modified)
        if isinstance(state.get("controls"), dict):
            self.panel.set_values(state["controls"])
        if modified:
            original = self.saved_text()
            if original == text:  # the edits were undone before the last exit: nothing to restore
                self.editor.document().setModified(False)
            elif original is None:
                self.panel.show_message(f"Your unsaved edits were restored from the last session ({self.path} "
                                        "cannot be read any more: File ▸ Save as keeps them).")
            else:
                added, removed = _changed_lines(original, text)
                what = ("a new program" if not self.path else "the example" if self.example else "the saved file")
                self.panel.show_message(f"Your unsaved edits were restored from the last session (+{added} "
                                        f"−{removed} lines against {what}).")
                self.panel.offer_discard(True, f"Put back {what} ({self.name}), dropping the restored edits "
                                               "(Ctrl+Z in the editor brings them back)")
                self.window.status.show(f"Unsaved edits of {self.name} were restored in the Code workspace "
                                        "(Ctrl+3): keep them, or Discard restored edits there.")
        line = state.get("line")
        if isinstance(line, int) and line > 1:
            self.editor.select_line(line)


def _write_atomic(path: Path, text: str) -> None:
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


def _changed_lines(before: str, after: str) -> tuple[int, int]:
    """``(lines added, lines removed)`` going from ``before`` to ``after``."""
    added = removed = 0
    matcher = difflib.SequenceMatcher(None, before.splitlines(), after.splitlines(), autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            removed += i2 - i1
            added += j2 - j1
    return added, removed
