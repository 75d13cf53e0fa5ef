"""The Code workspace's wiring: the user's program in the editor (:class:`widgets.code.program_panel.ProgramPanel`),
run through the session like a model (:meth:`app.core.session.model.Session.run_program`), its errors marked at
the user's line, its lines linked both ways with the IR views. Its files (File ▸ New program, Open, Save, Save
as, Open recent, Examples) are :class:`app.gui.panels.programs.files.ProgramFiles`'; the draft that keeps unsaved edits
across sessions (and Discard restored edits) is :class:`app.gui.panels.programs.draft.ProgramDraft`'s. GUI thread only.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt, QTimer, Slot
from PySide6.QtWidgets import QTabWidget

from app.core.programs.arguments import parse_argnums
from app.core.programs.lanes import split_static_values
from app.core.programs.specs import SpecError
from app.gui.context import WindowContext
from app.gui.panels.programs.draft import (
    DRAFT_DELAY_MS,
    DRAFT_FILE,
    DRAFT_MAX_DELAY_MS,
    STATE_FILE,
    ProgramDraft,
)
from app.gui.panels.programs.files import MAX_RECENT, NEW_PROGRAM, UNTITLED, ProgramFiles
from app.gui.panels.programs.live import LIVE_DELAY_MS, LiveMode
from app.gui.panels.programs.sites import CompileSitesFeed
from widgets.code.program_panel import ProgramPanel

if TYPE_CHECKING:
    from app.gui.panels.inspect import InspectWiring
    from app.gui.workspaces import Workspaces
    from widgets.common.busy_indicator import BusyIndicator
    from widgets.ir.ir_tabs import IRTabs
import ast

from app.core.programs.compute.requests import ProgramFailed, ProgramLoaded, ProgramRequest
from app.gui.menus import find_menu
from widgets.source.source_rows import to_ranges

# kept importable from here (tests and older callers read them from this module)
__all__ = ["DRAFT_DELAY_MS", "DRAFT_FILE", "DRAFT_MAX_DELAY_MS", "ENTRIES_DELAY_MS", "LIVE_DELAY_MS", "MAX_RECENT",
           "NEW_PROGRAM", "STATE_FILE", "UNTITLED", "ProgramWiring", "guess_entries"]

#: How long typing pauses before the entry list follows the text (ms).
ENTRIES_DELAY_MS = 400


def guess_entries(text: str) -> list[str]:
    """The entry points the loader will likely find, read from the text without running it (the picker's
    first list, before a run reports the real ones): ``ENTRY_POINTS``' names, else the functions with an
    ``X_args()``, else the public functions."""
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


class ProgramWiring(QObject):
    """Owns the program panel in the Code workspace, its File-menu actions (:attr:`files`, a
    :class:`~app.gui.panels.programs.files.ProgramFiles`) and its draft (:attr:`draft`, a
    :class:`~app.gui.panels.programs.draft.ProgramDraft`)."""

    def __init__(self, ctx: WindowContext, inspect: InspectWiring, workspaces: Workspaces, ir_tabs: IRTabs,
                 busy: BusyIndicator, stop_compute: Callable[[], None] | None = None,
                 why_tabs: QTabWidget | None = None) -> None:
        """``inspect``: the IR views' links (the program's lines light up there); ``workspaces``: the Code
        workspace the panel sits in; ``ir_tabs``: the IR views a program's IR goes to; ``busy``: the busy
        indicator (a program's load, trace and first call); ``stop_compute``: sets the compute thread's stop flag (a live compile
        superseded by a newer edit stops tracing); ``why_tabs``: the compile log's tabs, where the Run workspace
        shows the compiles per call site."""
        super().__init__(ctx.host)
        self.ctx, self.session, self.ir_tabs, self.busy = ctx, ctx.session, ir_tabs, busy
        self.inspect, self.workspaces = inspect, workspaces
        self.panel = ProgramPanel()
        self.editor = self.panel.editor
        workspaces.code_split.insertWidget(0, self.panel)
        self.path = ""  # the file the editor's text belongs to ("" = never saved)
        self.name = UNTITLED
        self.example = False  # the text is a gallery example: Save goes to Save as
        self.compiled_path = ""  # the path the program was compiled from (its jaxpr's source lines name it)
        # live compiles of each edit (issue 41)
        self.live = LiveMode(self, self.session, self.panel, self.ir_tabs, workspaces,
                             lambda: self.request(trace_only=True), stop_compute)
        # the entry list follows the text as it is typed (issue 29 flaw 13: it went stale after new functions)
        self._entries_timer = QTimer(self, singleShot=True, interval=ENTRIES_DELAY_MS)
        self._entries_timer.timeout.connect(self._refresh_entries)
        self.files = ProgramFiles(self, find_menu(ctx.host, "&File"))
        f = self.files  # its actions, here too
        self.new_action, self.open_action, self.save_action, self.save_as_action = (
            f.new_action, f.open_action, f.save_action, f.save_as_action)
        self.draft = ProgramDraft(self)
        self.sites = CompileSitesFeed(ctx, ir_tabs, workspaces, self.panel, why_tabs)  # compiles per call site, in every workspace
        self._connect()
        self.draft.restore()

    # -- setup ------------------------------------------------------------------------------------
    def _connect(self) -> None:
        ev = self.session.events
        self.panel.runRequested.connect(self.run)
        self.panel.stopRequested.connect(self.ctx.actions.stop)
        self.panel.discardRequested.connect(self.draft.discard)
        ev.programLoaded.connect(self._on_loaded)
        ev.programFailed.connect(self._on_failed)
        ev.busyChanged.connect(self._on_busy)
        ev.idle.connect(self._on_idle)
        ev.sourceMap.connect(self._on_source_map)
        self.workspaces.changed.connect(self._on_workspace)
        self.editor.document().modificationChanged.connect(self.show_file)
        self.editor.document().modificationChanged.connect(
            lambda modified: None if modified else self.panel.offer_discard(False))  # saved or put back
        self.editor.textChanged.connect(self._on_text_changed)
        self.editor.lineSelected.connect(self.link_line)
        self.inspect.inspector.explorer.sourceLineSelected.connect(self._on_source_line)

    # -- running ----------------------------------------------------------------------------------
    def request(self, trace_only: bool = False) -> ProgramRequest:
        """The panel's run as the request the CLI's ``program`` builds from its options (a trace as you type:
        no calls). Raises :class:`app.core.programs.specs.SpecError` for bad static argument indices."""
        v = self.panel.values()
        common = {"spec": v["spec"], "seed": v["seed"], "static": parse_argnums(v["static"]), "mode": v["mode"]}
        if trace_only:
            return ProgramRequest(self.editor.code(), self.path, self.name, v["entry"], n_calls=0, trace_only=True,
                                  **common)
        return ProgramRequest(self.editor.code(), self.path, self.name, v["entry"], n_calls=v["n_calls"],
                              sweep=v["sweep"], bucket=v["bucket"],
                              static_values=split_static_values(v["static_values"]), **common)

    @Slot()
    def run(self) -> bool:
        """Load the editor's text, trace and run its entry point (Ctrl+Enter in the Code workspace). False when
        the compute thread is busy."""
        self.live.supersede()  # a live compile in flight: Run's own compile shows the IR
        if self.session.busy:
            self.panel.show_message("Busy: a model load or a run is in progress (Esc stops a run); "
                                    "Ctrl+Enter again when it ends.")
            return False
        try:
            request = self.request()
        except SpecError as exc:
            self.panel.show_error(str(exc))
            return False
        self.editor.mark_error(0)
        self.panel.show_message("Running…")
        started = self.session.run_program(request)
        if started:  # loading and the first call's trace (Stop reaches a stuck loop at its next line)
            self.live.ran()
            self.busy.start("running", f"{self.name}: load, trace, first call")
        return started

    def raced(self) -> None:
        """A settings race of the editor's text was sent (:class:`app.gui.panels.demo.settings_target.RacedProgram`):
        no live compile of the same text follows it, as after a Run."""
        self.live.ran()

    def tracing(self) -> bool:
        """A live compile is on the compute thread."""
        return self.live.in_flight()

    @Slot()
    def trace(self) -> bool:
        """Live: trace, lower and compile the editor's text for the IR views now (:meth:`LiveMode.compile`)."""
        return self.live.compile()

    def _ours(self, event: Any) -> bool:
        return isinstance(event.request, ProgramRequest)

    @Slot(object)
    def _on_loaded(self, event: ProgramLoaded) -> None:
        self.compiled_path = event.path
        if event.request.trace_only:
            self.panel.show_message(f"Live: compiling {event.display_name}:{event.entry or event.request.entry} · "
                                    f"args {event.args}… (Stop or Esc ends it)")
        tips = [(e.name, f"{e.kind}, line {e.line}" + (f": {e.doc}" if e.doc else "")
                 + ("" if e.has_args else " — needs an argument spec")) for e in event.entries]
        self.panel.set_entries(tips, event.entry or event.request.entry)
        if event.entry and not event.request.trace_only:
            self.panel.show_message(f"{event.display_name}:{event.entry} ({event.backend}) · args {event.args} · "
                                    "running…")

    @Slot(object)
    def _on_failed(self, event: ProgramFailed) -> None:
        if self.live.drop_failure(event):
            return  # a live compile superseded by a newer edit
        in_file = bool(event.file) and event.line > 0 and self._is_program_file(event.file)
        message = event.message.strip()
        lines = message.splitlines()
        short = "\n".join(lines[:4]) + (" …" if len(lines) > 4 else "")
        where = f"line {event.line}: " if in_file else ""
        inline = f"{event.error_type}: {lines[0] if lines else event.headline}"
        self.panel.show_error(f"{where}{event.error_type} ({event.stage}): {short}", event.line if in_file else 0,
                              event.details or message, inline)

    def _is_program_file(self, file: str) -> bool:
        if self.path:
            return os.path.abspath(file) == os.path.abspath(self.path)
        return os.path.basename(file) == self.name or file == self.compiled_path

    @Slot(bool)
    def _on_busy(self, busy: bool) -> None:
        live = busy and self.live.in_flight()  # Run stays ready during a live compile; Stop ends it (issue 55)
        self.panel.set_running(busy and not live, live)

    @Slot(str)
    def _on_idle(self, message: str) -> None:
        shown = self.live.idle_message(message)
        if shown is None:
            return  # a superseded live compile
        message, session = shown, self.session
        if message.startswith(("Traced ", "Live: ")) and not self.panel.error_text():
            self.panel.show_message(message)
        elif isinstance(session.last_request, ProgramRequest) and message and not self.panel.error_text():
            self.panel.show_message(message)

    @Slot(str)
    def _on_workspace(self, name: str) -> None:
        self.ir_tabs.set_empty_hint(program=name == "Code")
        self.live.shown(name == "Code")
        if name == "Code":
            self.editor.setFocus()

    @Slot(str, object)
    def _on_source_map(self, step: str, _map: Any) -> None:
        """The program's map arrived after a run: link the line the cursor is on (its equations light up)."""
        if step == self.ir_tabs.current_step() and self.compiled_path:
            QTimer.singleShot(0, lambda: self.link_line(self.editor.current_line()))

    # -- links with the IR views ------------------------------------------------------------------
    def source_map(self) -> Any:
        inspect = self.inspect
        return inspect.maps.get(self.ir_tabs.current_step())

    def lines_for(self, line: int) -> dict[str, list[tuple[int, int]]]:
        """View → line ranges of the IR linked to 1-based ``line`` of the program (empty when none)."""
        sm = self.source_map()
        if sm is None or not self.compiled_path:
            return {}
        out: dict[str, list[int]] = {}
        for g in sm.groups:
            if g.line == line and os.path.abspath(g.file or "") == os.path.abspath(self.compiled_path):
                for view in self.inspect.views:
                    out.setdefault(view, []).extend(sm.group_lines(g, view))
        return {v: to_ranges(sorted(set(lines))) for v, lines in out.items() if lines}

    @Slot(int)
    def link_line(self, line: int) -> None:
        """The cursor went to ``line`` of the editor: highlight its equations, StableHLO ops and HLO lines."""
        inspect = self.inspect
        ranges = self.lines_for(line)
        inspect.linker.last = ranges
        inspect.linker.refresh()
        inspect.show_linked(ranges)  # the Source map tab's jump buttons
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
        self.live.forget()  # another text: its first compile is compared with nothing
        self.editor.document().setModified(modified)
        self.panel.offer_discard(False)  # another text: nothing restored to discard
        self.panel.entry.setCurrentText("")  # another file: its own first entry point
        self.panel.set_entries([(n, "") for n in guess_entries(text)], "")
        # another file: not the last one's sweep, argument spec or static arguments (issue 55: its static_argnums
        # named the old file's parameters: "static_argnums=(5,), but only accepts 2 positional arguments")
        self.panel.set_values({"sweep": "", "bucket": False, "spec": "", "static": "", "static_values": ""})
        self.panel.show_message("Ctrl+Enter runs the program." if not example else
                                "An example (read-only file: Save as to keep your edits). Ctrl+Enter runs it.")
        self.show_file()

    # File ▸ actions and the draft, kept here for the window and the tests
    @property
    def recent(self) -> list[str]:
        return self.files.recent

    def open_file(self, path: str, ask: bool = True) -> bool:
        return self.files.open_file(path, ask)

    def open_example(self, path: str) -> bool:
        return self.files.open_example(path)

    def open_dialog(self) -> None:
        self.files.open_dialog()

    def save(self) -> bool:
        return self.files.save()

    def save_as(self) -> bool:
        return self.files.save_as()

    def save_to(self, path: str) -> bool:
        return self.files.save_to(path)

    def new_program(self) -> bool:
        return self.files.new_program()

    def save_state(self) -> None:
        self.draft.save()

    @staticmethod
    def state_path() -> Path:
        return ProgramDraft.state_path()

    def saved_text(self) -> str | None:
        return self.draft.saved_text()

    def discard_restored(self) -> bool:
        return self.draft.discard()

    @Slot()
    def show_file(self, *_: Any) -> None:
        modified = self.editor.document().isModified()
        self.panel.set_file(self.name + (" (example)" if self.example else ""), self.path, modified)

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
        if self.editor.error_line() and not self.panel.live.isChecked():  # live: the next compile says
            self.editor.mark_error(0)
        self._entries_timer.start()
        self.draft.edited()
        self.live.edited()
