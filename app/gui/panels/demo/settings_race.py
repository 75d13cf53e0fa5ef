"""The settings race in the demo kit: pick compiler settings, race the loaded model's decode step under each, and
watch the trade-off plot (compile ms against steady ms per token) grow lane by lane.

:class:`SettingsRace` owns the controls (:class:`widgets.demo.settings_controls.SettingsRaceControls`), the plot in
the Demo kit dock and a second, talk-sized one for presentation mode (:attr:`SettingsRace.stage_card`; the kit
places it). The race goes through the session like a mode race (:meth:`app.core.session.model.Session.race` with
:class:`app.core.session.requests.SettingsRaceRequest`): the one compute thread runs
:func:`app.core.compile_settings.race.settings_race`; its lanes are runs on the latency plot, and after each lane a
:class:`app.core.compile_settings.progress.SettingsRaceLanes` (plain data) redraws the trade-off, whose Pareto front and
break-even sentences come from :func:`app.core.compile_settings.figures.plot_points`. With the Demo kit's
steady-state box on (its budget), paired rounds follow the lanes (:mod:`app.core.compile_settings.paired`): their
progress, then each setting's verdict against the baseline with its 95 % interval, under the plot
(:mod:`app.gui.panels.demo.settings_summary`) and under each point's name on stage. A setting the catalog lacks or
this backend does not have is refused by name here, before anything is sent; one that XLA refuses comes back from
the compute thread and is shown the same way. Inductor's modes race in the ``torch-compile`` mode, on the same plot.

Under the plot, :class:`widgets.demo.parting_view.PartingPicker` asks where two of the raced settings part: a
:class:`app.core.session.compute.settings_race.SettingsPartingRequest` on the same compute thread records the decode
step's pass pipeline under each (:func:`app.core.compile_settings.parting.where_settings_part`), and the answer
opens :class:`widgets.demo.parting_view.PartingDialog`: the two pipelines in lockstep, the first pass whose output
HLO differs highlighted with its diff, the fusions each kept (XLA settings only: Inductor has no XLA pass pipeline).

The race may instead be of the Code workspace's program (:mod:`app.gui.panels.demo.settings_target`: a ``races:``
choice above the settings): its selected entry point under each setting
(:class:`app.core.programs.compute.requests.ProgramSettingsRaceRequest`, sent as a program run: no model needed),
lanes in calls, the same plot, Stop and exports; Compare passes… then records that entry point's pipelines.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal, SignalInstance, Slot
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

from app.core.backends import BACKENDS
from app.core.compile_settings.figures import SettingLane
from app.core.compile_settings.progress import PAIRED_INDEX, SettingsRaceLanes
from app.core.errors import InvalidSettingsError
from app.core.programs.compute.requests import ProgramSettingsRaceRequest
from app.core.programs.specs import SpecError
from app.core.race import EAGER_TOKENS
from app.core.requests import RequestFailed
from app.core.session.compute.settings_race import SettingsParted, SettingsPartingRequest
from app.core.session.requests import SettingsRaceRequest
from app.core.session.settings_results import SettingsRaceShown
from app.core.steady import SteadyPlan
from app.gui.context import DemoParts, WindowContext
from app.gui.layout import card, card_title
from app.gui.panels.demo.parting_view import open_parting
from app.gui.panels.demo.settings_summary import plot_place, points_of, show_summary, summary_label
from app.gui.panels.demo.settings_target import (
    PROGRAM,
    RacedProgram,
    RaceTarget,
    program_race_request,
    program_refusal,
    refusal,
    rows,
)
from widgets.demo.parting_view import PartingDialog, PartingPicker
from widgets.demo.settings_controls import SettingsRaceControls
from widgets.demo.tradeoff_plot import TradeoffPlot

#: Checked in a new window: the baseline and the two ends of XLA's effort levels.
DEFAULT_SETTINGS = ("default", "O0", "O3")
STAGE_TITLE = "Compile time against run time"
#: The controls' widest (px) beside the plot in the Demo kit.
CONTROLS_WIDTH = 300
#: The requests of a settings race: a model step's or a program entry point's.
RACES = (SettingsRaceRequest, ProgramSettingsRaceRequest)


class SettingsRace(QObject):
    """GUI thread. :attr:`page` (the controls beside the plot) goes in the Demo kit dock, :attr:`stage_card` in the
    window's main area while presenting. The newest race's lanes and what it raced are the session's
    (:attr:`app.core.session.settings_results.SettingsRaceResults.settings_race`); :attr:`lanes` reads them."""

    #: The trade-off has something to show on stage (True: a settings race started or has points) or the newest
    #: race is a mode race or a run (False).
    stageChanged = Signal(bool)
    #: The paired rounds a race started now asks for (the kit gives the Demo kit's steady-state setting).
    steady_plan: Callable[[], SteadyPlan | None] = SteadyPlan
    parting_dialog: PartingDialog | None
    race_action: Any  # the Demo menu's actions (add_actions)
    in_plot_area: Any
    _parted: SettingsParted | None

    def __init__(self, ctx: WindowContext, parts: DemoParts, checked: tuple[str, ...] = DEFAULT_SETTINGS) -> None:
        """``parts``: the demo kit's widgets; a race reads the run's inputs (prompt, model, dtype) there, says its
        progress on the busy line and takes the latency plot's place when that is empty."""
        super().__init__(ctx.host)
        self.ctx, self.session, self.parts = ctx, ctx.session, parts
        self.controls = SettingsRaceControls(rows(self.session.device or self.session.platform), checked)
        self.plot = TradeoffPlot(compact=True, title=False)  # the Demo kit's tab says what it is
        self.page = QWidget()  # the Demo kit's "Settings race" tab: what to race beside what it found
        self.page.setObjectName("settingsRacePage")
        row = QHBoxLayout(self.page)
        row.setContentsMargins(0, 4, 0, 0)
        self.target = RaceTarget(self.session, self)  # the model's decode step or the Code workspace's program
        self.programs: RacedProgram | None = None  # the Code workspace (attach_programs)
        left = QWidget()
        left.setMaximumWidth(CONTROLS_WIDTH)
        left_column = QVBoxLayout(left)
        left_column.setContentsMargins(0, 0, 0, 0)
        left_column.addWidget(self.target.row)
        left_column.addWidget(self.controls.bar)  # Race right under what it races, in sight in a short dock
        left_column.addWidget(self.controls, 1)
        row.addWidget(left)
        self.picker = PartingPicker()  # where two of the raced settings part (their pass pipelines in lockstep)
        right = QWidget()
        column = QVBoxLayout(right)
        column.setContentsMargins(0, 0, 0, 0)
        # what the points are (the race's target: the choice may have moved on since), as the stage's title says it
        self.shown = QLabel("")
        self.shown.setObjectName("settingsRaceShown")
        self.shown.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        column.addWidget(self.shown)
        self.place = plot_place(self.plot)  # the plot where it is >= 240 px tall, else a note and a button
        self.place.moveRequested.connect(lambda: self.in_plot_area and self.in_plot_area.setChecked(True))
        column.addWidget(self.place, 1)
        self.verdict_line = summary_label()  # each setting against the baseline, from the paired rounds (95 % CI)
        column.addWidget(self.verdict_line)
        column.addWidget(self.picker)
        row.addWidget(right, 1)
        self.parting_dialog, self._parted = None, None  # the lockstep view; the newest comparison's answer
        self.stage_plot = TradeoffPlot(title=False)  # its card's title says it, in a talk-sized font
        self.stage_plot.setObjectName("stageTradeoff")
        self.stage_card = card(self.stage_plot, title=STAGE_TITLE, stretch_last=True)
        self.stage_card.setObjectName("tradeoffStageCard")
        self.stage_title = card_title(self.stage_card)
        self.stage_card.setVisible(False)
        self._shown: SettingsRaceShown | None = None  # the session's race these views show (a new one retitles it)
        self.on_stage = False
        self.race_action, self.in_plot_area = None, None  # the Demo menu's (add_actions)
        self._connect()

    def _connect(self) -> None:
        ev = self.session.events
        ev.settingsRace.connect(self.on_lanes)
        ev.error.connect(self.on_error)
        ev.busyChanged.connect(self.on_busy)
        ev.runStarted.connect(self._on_run_started)
        ev.platforms.connect(self._on_platforms)
        ev.settingsParted.connect(self.on_parted)
        ev.idle.connect(self._on_idle)
        self.picker.compareRequested.connect(self.compare)
        self.picker.stopRequested.connect(self.stop)
        self.controls.raceRequested.connect(self.start)
        self.controls.stopRequested.connect(self.stop)

    def attach_programs(self, programs: RacedProgram, workspace_changed: SignalInstance, shown: str) -> None:
        """The window's Code workspace (:class:`app.gui.panels.programs.wiring.ProgramWiring`) and the workspace
        shown (``shown``, then :class:`app.gui.workspaces.Workspaces`' ``changed``): its program can race (made after
        the Demo kit)."""
        self.programs = programs
        self.target.attach(programs, workspace_changed, shown)

    def add_actions(self, menu: Any, action: Any) -> None:
        """The Demo menu's settings-race actions, made by the kit's ``action(menu, text, slot, shortcut,
        checkable)``: race the checked settings (Ctrl+Alt+R) and, checkable, the trade-off in the latency plot's place
        outside presentation too (Ctrl+Alt+P; at 1280x720 the Demo kit tab's plot is a strip of ~200 x 70 px); the
        next run or mode race brings the latency plot back."""
        self.race_action = action(menu, "Race checked compiler &settings", self.race_checked, "Ctrl+Alt+R")
        self.in_plot_area = action(menu, "&Trade-off in the plot area",
                                   lambda _on: self.stageChanged.emit(self.on_stage), "Ctrl+Alt+P", checkable=True)
        self.in_plot_area.toggled.connect(self.place.button.setHidden)  # no button to where it already is

    def plot_area(self) -> bool:
        """Whether the trade-off takes the latency plot's place outside presentation (Ctrl+Alt+P checked)."""
        return self.in_plot_area is not None and self.in_plot_area.isChecked()

    # -- requests from the user -----------------------------------------------------------------------
    @Slot(list)
    def start(self, names: list[str]) -> bool:
        """Race ``names`` with the window's prompt, model and generation settings — or, when :attr:`target` says
        so, on the Code workspace's program entry point; a refused setting is said by name in the controls and
        nothing is sent. False when nothing started."""
        if self.session.busy or not names:
            return False
        if self.programs is not None:
            self.target.refresh()  # the program's file and entry point as they are now
        program = self.programs is not None and self.target.kind() == PROGRAM
        if not self._settings_ok(names, program_refusal if program else refusal):
            return False
        if program:
            return self._start_program(names)
        try:
            settings = self.ctx.actions.generation_settings()
        except InvalidSettingsError as exc:
            self.controls.set_message(str(exc))
            return False
        prompt = self.parts.prompt.prompt()
        if not prompt.strip():
            self.controls.set_message("The prompt is empty: type a few words (or pick an example) and race again.")
            return False
        model, dtype = self.parts.model_picker.current_model(), self.parts.form.values()["dtype"]
        loaded = self.session.loaded
        if loaded is None or (loaded.request.model, loaded.request.dtype) != (model, dtype):
            settings = dataclasses.replace(settings, chat=None)  # the engine decides, as for a run (window.run)
        self.controls.set_message("")
        return self.session.race(prompt, list(names), settings, EAGER_TOKENS, model, dtype, kind=SettingsRaceRequest,
                                 steady=self.steady_plan())

    def _settings_ok(self, names: list[str], why_not: Any) -> bool:
        """Refuse (said in the controls and the status line) the first of ``names`` that ``why_not(name,
        platform)`` refuses. jax_ pairs need JAX: the compute thread checks them (and XLA each option). Before the
        devices are listed a setting is refused only if no backend has it (a name the catalog lacks)."""
        platform = self.session.device or self.session.platform
        for name in [n for n in names if not n.startswith("jax_")]:
            reasons = [why_not(name, p) for p in ([platform] if platform else list(BACKENDS))]
            why = reasons[0] if all(reasons) else ""
            if why:
                self.controls.set_message(why)
                self.ctx.status.error(why)
                return False
        return True

    def _start_program(self, names: list[str]) -> bool:
        """Race ``names`` on the Code workspace's entry point (a program run: no model needed)."""
        assert self.programs is not None, "start() races a program only when the Code workspace is attached"
        try:
            request = program_race_request(self.programs, names)
        except SpecError as exc:
            self.controls.set_message(str(exc))
            return False
        self.controls.set_message("")
        started = self.session.run_program(dataclasses.replace(request, steady=self.steady_plan()))
        if started:
            self.programs.raced()
        return started

    @Slot()
    def race_checked(self) -> None:
        """Race what the controls ask (Demo ▸ Race checked compiler settings)."""
        self.start(self.controls.names())

    @Slot()
    def stop(self) -> None:
        """Stop the race: between lanes and decode steps at once, during a compile at once too (the compiler
        finishes in the background: :meth:`app.core.session.model.Session.abandon`)."""
        if isinstance(self.session.active, (*RACES, SettingsPartingRequest)):
            self.ctx.actions.stop()

    @Slot(str, str)
    def compare(self, a: str, b: str) -> bool:
        """Find where setting ``b`` parts from ``a`` (two of the race's settings) on what the race raced — the
        loaded model's decode step or the program's entry point — on the compute thread (two compiles with XLA's
        pass dumps); the answer opens the lockstep view. False (said under the plot) when busy, with no model for a
        model race or for one setting twice."""
        program = self.session.settings_race.program if self.session.settings_race is not None else None
        if self.session.busy or (self.session.loaded is None and program is None):
            return False
        if a == b:
            self.picker.set_message("Pick two different settings.", error=True)
            return False
        self._parted = None
        self.picker.set_running(True, f"Recording the passes of {a} and {b} (two compiles)…")
        return self.session.send(SettingsPartingRequest(a, b, program), f"Comparing the passes of {a} and {b}…")

    # -- answers from the compute thread ----------------------------------------------------------------
    @property
    def lanes(self) -> list[SettingLane]:
        """The newest settings race's finished lanes (the session's), [] before any."""
        shown = self.session.settings_race
        return shown.lanes if shown is not None else []

    def on_lanes(self, event: SettingsRaceLanes) -> None:
        """A lane starts (``event.running``) or ends: redraw every point so far, say the progress (the session
        announces only the active race's, after keeping its lanes)."""
        if event.index == PAIRED_INDEX:  # the paired rounds after the lanes: where they are
            self.verdict_line.setText(event.running)
            self.parts.busy.set_detail(event.running)
            return
        shown = self.session.settings_race
        if shown is not None and shown is not self._shown:  # a new race: the stage and the tab name what it races
            self._shown = shown
            entry = shown.entry(self.target.program_label())
            self.stage_title.setText((f"{STAGE_TITLE} · {entry}" if entry else STAGE_TITLE).upper())
            self._name_points(f"program {entry}" if entry else shown.what())
            QTimer.singleShot(0, self._find_room)  # once the Demo kit shows the tab (raised below)
        self.picker.set_names([lane.name for lane in self.lanes if not lane.name.startswith("inductor-")])
        points = points_of(self.lanes)
        for plot in (self.plot, self.stage_plot):
            plot.set_points(points)
        self.controls.set_progress(len(self.lanes), event.n_lanes, event.running,
                                   stopped=bool(self.lanes) and self.lanes[-1].stopped)
        self._set_stage(True)
        show_summary(self.verdict_line, self.stage_plot, self.lanes)

    def _find_room(self) -> None:
        """A race whose plot the Demo kit cannot show >= 240 px tall opens it in the plot area (Ctrl+Alt+P)."""
        if self.on_stage and not self.place.fits() and self.in_plot_area is not None:
            self.in_plot_area.setChecked(True)

    def _name_points(self, what: str) -> None:
        self.shown.setText(f"points: {what}")
        self.shown.setToolTip(f"The trade-off's points are the newest race's: {what}")

    def document(self) -> dict[str, Any] | None:
        """The newest race as a session file keeps it (:meth:`app.core.session.settings_results.SettingsRaceShown.
        document`), or None before any race."""
        shown = self.session.settings_race
        return shown.document() if shown is not None else None

    def show_saved(self, document: dict[str, Any], origin: str) -> None:
        """A race read from a session file (``origin``: the file's name): its trade-off on the tab (raised) and the
        stage, and in the plot area when the latency plot has no run. Compare passes… needs the race's compiled
        step, so it offers nothing for a reopened race."""
        shown = self._shown = self.session.show_settings_race(document, origin)
        self.picker.set_names([])
        self.picker.set_message(f"reopened from {origin}: race again to compare passes")
        for plot in (self.plot, self.stage_plot):
            plot.set_points(points_of(self.lanes))
        self.stage_title.setText(f"{STAGE_TITLE} · {origin}".upper())
        self._name_points(f"{shown.title or 'a race'}, reopened from {origin}")
        self.controls.set_progress(len(self.lanes), len(self.lanes), "")
        show_summary(self.verdict_line, self.stage_plot, self.lanes)
        if self.in_plot_area is not None and not self.in_plot_area.isChecked() and not self.parts.plot.run_ids():
            self.in_plot_area.setChecked(True)  # nothing on the latency plot: the trade-off takes its place
        self.on_stage = True
        self.stageChanged.emit(True)  # the Demo kit shows it (raised), as after a live race

    def on_parted(self, event: SettingsParted) -> None:
        """Where two settings part: a line under the plot and the lockstep view."""
        if event.request is not self.session.active:
            return
        self._parted = event
        p = event.parting
        self.picker.set_running(False)
        line = f"{p.sentence().split(';')[0]} · {event.seconds:.1f} s"
        self.picker.set_message(line)
        self.ctx.status.show(line)
        self.show_parting(p)

    def show_parting(self, p: Any) -> PartingDialog:
        """Open the lockstep view of ``p`` (a :class:`app.core.compile_settings.parting.Parting`), closing the
        previous one (:func:`app.gui.panels.demo.parting_view.open_parting`)."""
        self.parting_dialog = open_parting(self.ctx.host, p, self.parting_dialog)
        return self.parting_dialog

    def on_error(self, event: RequestFailed) -> None:
        if isinstance(event.request, RACES):
            self.controls.set_message(event.message)
        elif isinstance(event.request, SettingsPartingRequest):
            self.picker.set_running(False)
            self.picker.set_message(event.message, error=True)

    def _on_idle(self, _message: str) -> None:
        if self.picker.running:  # ended without an answer or an error: stopped
            self.picker.set_running(False)
            if self._parted is None:
                self.picker.set_message(f"Stopped after {self.picker.elapsed():.1f} s: not compared.")
                self.ctx.status.show(self.picker.message_text())

    def on_busy(self, busy: bool) -> None:
        self.controls.set_busy(busy, isinstance(self.session.active or self.session.pending, RACES))
        shown = self.session.settings_race
        comparable = self.session.loaded is not None or (shown is not None and shown.program is not None)
        self.picker.set_enabled(not busy and comparable)

    def _on_run_started(self, _run: Any) -> None:
        if not isinstance(self.session.active, RACES):
            self._set_stage(False)  # a mode race or a run is the newest: the latency plot is the story again

    def _on_platforms(self, _platforms: list[str], platform: str) -> None:
        self.controls.set_refused({r.name: r.refused for r in rows(self.session.device or platform)})

    def _set_stage(self, on: bool) -> None:
        if on != self.on_stage:
            self.on_stage = on
            self.stageChanged.emit(on)

    # -- user settings, export -----------------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        """What the user settings remember: the checked rows and the typed settings."""
        return {"compiler_settings": self.controls.checked(), "typed_settings": self.controls.typed_edit.text()}

    def restore(self, state: dict[str, Any]) -> None:
        if isinstance(state.get("compiler_settings"), list):
            self.controls.set_checked([str(n) for n in state["compiler_settings"]])
        self.controls.typed_edit.setText(str(state.get("typed_settings") or ""))

    def export(self, path: Path) -> str:
        """Write the trade-off plot (PNG / SVG / PDF) or its points (CSV / JSON); returns a status line. Raises
        ValueError when no settings race has points yet."""
        if not self.plot.points:
            raise ValueError("No settings race yet: race compiler settings first (Demo kit ▸ Settings race).")
        return f"Exported the trade-off of {len(self.plot.points)} settings to {self.plot.export(path)}"
