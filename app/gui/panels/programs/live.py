"""The Code workspace's live mode (issue 41): half a second after an edit, the editor's text is traced, lowered and
compiled on the one compute thread (a :class:`app.core.programs.compute.requests.ProgramCompileRequest`, never run) and the
IR views update with what changed since the previous good compile marked (:class:`widgets.code.ir_changes.ChangeMarks`
on each view, the counts in the view's info line, the cost and memory delta in the IR header and the status line).

Typing never waits for a compile: the GUI thread only sends requests and reads answers. A newer edit supersedes a
live compile in flight — its stop flag ends its Python tracing at the program's next line, an XLA compile finishes
but :meth:`app.core.session.model.Session.abandon` drops its events — and a late answer of an older generation is
dropped (:class:`app.core.programs.live.Generations`). GUI thread only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer, Slot
from PySide6.QtWidgets import QPlainTextEdit

from app.core.inspect.views import JAXPR
from app.core.programs.compute.requests import (
    ProgramCompiled,
    ProgramCompileRequest,
    ProgramFailed,
    ProgramRequest,
)
from app.core.programs.live import UNITS, VIEWS, Generations, Snapshot
from app.core.programs.specs import SpecError
from app.core.units import ms
from widgets.code.ir_changes import ChangeMarks
from widgets.code.program_panel import LIVE_SHORTCUT, ProgramPanel

if TYPE_CHECKING:
    from app.core.session.model import Session
    from app.gui.workspaces import Workspaces
    from widgets.ir.ir_tabs import IRTabs

#: How long typing pauses before the editor's text is compiled (ms).
LIVE_DELAY_MS = 500
_DELTA = " · Δ "  # the change counts appended to a view's info line


class LiveMode(QObject):
    """Live compiles of ``panel``'s text for :class:`app.gui.panels.programs.wiring.ProgramWiring` (``parent``):
    ``request`` builds the program's request from the panel (raises
    :class:`app.core.programs.specs.SpecError`); ``tabs`` are the IR views; live compiles follow ``workspaces``'
    Code workspace; ``stop_compute`` sets the stop flag of the request on the compute thread (the window's
    :meth:`app.gui.worker.ComputeThread.stop`)."""

    def __init__(self, parent: QObject, session: Session, panel: ProgramPanel, tabs: IRTabs, workspaces: Workspaces,
                 request: Callable[[], ProgramRequest], stop_compute: Callable[[], None] | None = None) -> None:
        super().__init__(parent)
        self.session, self.panel, self.tabs, self.workspaces = session, panel, tabs, workspaces
        self.request = request
        self.stop_compute = stop_compute
        self.generations = Generations()
        self.timer = QTimer(self, singleShot=True, interval=LIVE_DELAY_MS)
        self.timer.timeout.connect(self.compile)
        self._shown: ProgramCompiled | None = None  # the last good compile, marked on the views
        self._scrolled: set[str] = set()  # the views brought to the last compile's first change
        self._quiet_idle = False
        self._waiting = False  # a live compile was sent and has neither compiled, failed nor been superseded
        self.message = ""  # the status line of the last good compile
        self.marks = {v: ChangeMarks(self.tabs.panels[v].view) for v in VIEWS if v in self.tabs.panels}
        for v in self.marks:
            self.tabs.panels[v].textShown.connect(self.refresh_marks)
        self.session.events.programCompiled.connect(self._on_compiled)
        self.session.events.sourceMap.connect(self._on_source_map)
        self.panel.live.toggled.connect(self._on_toggled)

    # -- edits and requests -----------------------------------------------------------------------
    def edited(self) -> None:
        """The editor's text changed: a new generation, the live compile in flight superseded (its result
        would show an older text); compile after the pause when live."""
        self.generations.edit()
        self.supersede()
        if self.panel.live.isChecked():
            self.timer.start()

    @Slot(bool)
    def _on_toggled(self, on: bool) -> None:
        if on:
            self.timer.start()
        else:
            self.timer.stop()

    def shown(self, code: bool) -> None:
        """The Code workspace was shown (``code``: compile the text if it changed) or left (a live compile in
        flight is superseded: a model run need not wait for it)."""
        if code and self.panel.live.isChecked():
            self.timer.start()
        elif not code:
            self.timer.stop()
            self.supersede()

    def ran(self) -> None:
        """A Run of the editor's text was sent: its own compile shows the IR, no live compile of the same text
        follows it (:meth:`Generations.ran`); a pause pending from the last edit is dropped."""
        self.timer.stop()
        self.generations.ran(self.key())

    def in_flight(self) -> bool:
        """A live compile is the compute thread's request."""
        return isinstance(self.session.active, ProgramCompileRequest)

    def supersede(self) -> None:
        """Stop the live compile in flight (its tracing ends at the next line; a compile finishes unseen)."""
        if not self.in_flight():
            return
        if self.stop_compute is not None:
            self.stop_compute()
        self._quiet_idle, self._waiting = True, False
        try:
            self.session.abandon()
        finally:
            self._quiet_idle = False

    def key(self) -> tuple:
        """What a compile depends on: the text, the entry point, the argument spec, the seed, the static indices."""
        v = self.panel.values()
        return (self.panel.editor.code(), v["entry"], v["spec"], v["seed"], v["static"])

    @Slot()
    def compile(self) -> bool:
        """Send a live compile of the editor's text (the timer's slot). A compile in flight for an older text is
        superseded; a Run or a load in progress is waited for (retried after the pause). False when nothing
        was sent (live off, another workspace shown, the text compiled already, the compute thread busy, static
        indices that do not parse: Run says why)."""
        if not self.panel.live.isChecked() or self.workspaces.current() != "Code":
            return False  # another workspace: compiled when the Code workspace shows again
        key = self.key()
        if not self.generations.needs_compile(key):
            return False
        if self.in_flight():
            self.supersede()
        if self.session.busy:
            self.timer.start()
            return False
        try:
            plain = self.request()
        except SpecError:
            return False
        generation = self.generations.send(key)
        request = ProgramCompileRequest(**{f.name: getattr(plain, f.name) for f in fields(plain)},
                                        generation=generation, previous=self.generations.good)
        self._waiting = self.session.run_program(request)
        return self._waiting

    def forget(self) -> None:
        """Another program in the editor: its first compile is compared with nothing; no view stays marked."""
        self.generations.forget()
        self._shown = None
        self.refresh_marks()

    # -- answers ----------------------------------------------------------------------------------
    def drop_failure(self, event: ProgramFailed) -> bool:
        """True when ``event`` is a superseded live compile's error (not shown)."""
        request = event.request
        if isinstance(request, ProgramCompileRequest):
            self._waiting = False  # it ended: its error (or nothing, superseded) is said, not "stopped"
        return (isinstance(request, ProgramCompileRequest)
                and not self.generations.accept(request.generation, self.key()))

    def idle_message(self, message: str) -> str | None:
        """What the status line says when a request ends (None: leave it): nothing for a superseded compile,
        the live compile's own line after a good one."""
        if self._quiet_idle:
            return None
        if self._waiting:  # it ended with neither a result nor an error: Stop or Esc ended it (issue 55)
            self._waiting = False
            return ("Live: compile stopped. The IR views keep the last good compile. An edit compiles again; "
                    f"Live ({LIVE_SHORTCUT}) off stops live compiles, Ctrl+Enter runs the program.")
        if message.startswith("Traced ") and self.message:
            return self.message
        return message

    @Slot(object)
    def _on_compiled(self, event: ProgramCompiled) -> None:
        self._waiting = False
        if not self.generations.keep(event.request.generation, self.key(), event.snapshot):
            if self.panel.live.isChecked():
                self.timer.start()  # the text changed while it compiled: compile it after the pause
            return
        self._shown, self._scrolled = event, set()
        if self.tabs.current_step() != event.step and self.tabs.text_of(event.step, JAXPR) is not None:
            self.tabs.show_step(event.step)  # the views showed a Run's step: the compile's result now (issue 55)
        c = event.comparison
        phases = event.phases or {}
        took = " · ".join(f"{k} {ms(v)}" for k, v in phases.items())
        changes = c.changes_text() or "first compile"
        figures = c.figures_text()
        self.message = (f"Live: {event.step} traced, lowered and compiled ({took}) · {changes}"
                        + (f" · {figures}" if figures else "") + " · not run: Ctrl+Enter runs and times it.")
        note = figures if figures and not c.first else ("no change in cost or memory" if not c.first else "")
        self.tabs.set_note(event.step, f"<span style='color:#8a5a00'>Δ {note}</span>" if note else "")
        self.refresh_marks()

    @Slot(str, object)
    def _on_source_map(self, step: str, _map: object) -> None:
        """The compile's source map links the editor's line to the views, which scroll to the linked lines: bring
        the first change back into view after that."""
        if self._shown is not None and step == self._shown.step and self.in_flight():
            self._scrolled = set()
            QTimer.singleShot(50, self.refresh_marks)  # after the links (a zero-delay timer of the wiring)

    @Slot()
    def refresh_marks(self) -> None:
        """Mark each view that shows the last good compile's text; clear the others (a Run's IR, another
        step)."""
        shown = self._shown
        for v, marks in self.marks.items():
            panel = self.tabs.panels[v]
            changes = shown.comparison.views.get(v) if shown is not None else None
            current = (shown is not None and self.tabs.current_step() == shown.step and not panel.has_pending()
                       and panel.text() is not None and self.tabs.text_of(shown.step, v) == shown.snapshot.texts[v])
            if not current or changes is None:
                marks.clear()
                continue
            marks.set_changes(changes.added, changes.changed, changes.removed)
            if v not in self._scrolled:
                self._scrolled.add(v)
                self._show_line(panel.view, min(changes.added + changes.changed + changes.removed, default=0))
            info = panel.info.text().split(_DELTA)[0]
            panel.info.setText(f"{info}{_DELTA}{changes.units.text(UNITS[v])}")
            panel.info.setToolTip(f"Since the previous good compile: {changes.text()} (added lines green, "
                                  "changed amber, a red bar where lines were removed)")

    @staticmethod
    def _show_line(view: QPlainTextEdit, line: int) -> None:
        """Scroll ``view`` so that 1-based ``line`` (a change) is on screen, a few lines below the top."""
        if line <= 0:
            return
        bar = view.verticalScrollBar()  # a plain text edit scrolls by lines
        rows = max(1, view.viewport().height() // max(1, view.fontMetrics().lineSpacing()))
        if not bar.value() < line <= bar.value() + rows - 1:
            bar.setValue(max(0, line - 4))

    def snapshot(self) -> Snapshot | None:
        """The last good live compile's IR (None before one)."""
        return self.generations.good
