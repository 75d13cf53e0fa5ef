"""The Run workspace's live views: the session's run stream into the token view, the latency plot, the stats
strip, the busy indicator, the IR tabs and the status line — what the user watches while a prompt decodes.

The prompt's route from the Run button to a token on screen: ``MainWindow.run`` → ``Session.run`` →
``RunRequest`` → the compute thread (:mod:`app.gui.worker`) → ``ComputeService.handle`` → ``Engine.generate``
→ a batch of events back on the GUI thread → ``Session.apply_all`` → the session's ``tokens`` signal →
:meth:`RunView._on_tokens` → ``TokenView.add_token``. GUI thread only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Slot

from app.core.compile_settings.catalog import BASELINE
from app.core.events import steady_host_ms, steady_synchronous
from app.core.inspect.views import HLO
from app.core.programs.compute.requests import ProgramRequest, ProgramSettingsRaceRequest
from app.core.report.text import summary_line
from app.core.session.model import LiveFigures, RunState, program_line
from app.core.session.requests import RaceRequest, RunRequest, SettingsRaceRequest
from app.core.session.runs import compiled_by
from app.core.steps import PREFILL
from app.gui.context import RunViews, WindowContext
from app.gui.menus import MODE_COLOURS, MODE_SYMBOLS, lane_name
from widgets.run.token_view import CallInfo

if TYPE_CHECKING:
    from app.gui.panels.demo.kit import DemoKit
    from app.gui.panels.inspect import InspectWiring
    from app.gui.panels.programs.wiring import ProgramWiring
    from app.gui.panels.sessions.files import SessionFiles


class RunView(QObject):
    """Feeds the Run workspace's widgets from the session's signals (``runStarted``, ``prompt``, ``records``,
    ``tokens``, ``figures``, ``ir``, ``runFinished``, ``idle``, ``background``, ``phase``) and links the
    token view and the plot (hovering one highlights the other's call). ``recorded``: the session files
    (a recorded run's prompt, curve and IR origin); ``programs``: the Code workspace (a program run's file)."""

    def __init__(self, ctx: WindowContext, views: RunViews, inspect: InspectWiring, demo: DemoKit,
                 recorded: SessionFiles, programs: ProgramWiring) -> None:
        super().__init__(ctx.host)
        self.session, self.ui, self.status = ctx.session, views, ctx.status  # ui: the views it feeds, no others
        self.inspect, self.demo, self.recorded, self.programs = inspect, demo, recorded, programs
        self._prompt_tokens = 0
        ev = self.session.events
        ev.runStarted.connect(self._on_run_started)
        ev.prompt.connect(self._on_prompt)
        ev.records.connect(self._on_records)
        ev.tokens.connect(self._on_tokens)
        ev.figures.connect(self._on_figures)
        ev.phase.connect(self.on_phase)
        ev.ir.connect(self._on_ir)
        ev.runFinished.connect(self._on_run_finished)
        ev.idle.connect(self._on_idle)
        ev.background.connect(self._on_background)
        ev.runsDropped.connect(self._on_runs_dropped)
        ev.error.connect(self._on_error)
        self.ui.tokens.tokenHovered.connect(self._on_token_hovered)
        self.ui.plot.pointHovered.connect(self._on_point_hovered)

    @Slot(object)
    def on_phase(self, event: Any) -> None:
        if self.session.background is not None:
            return  # the abandoned run's compiler, finishing in the background: not this run's phase
        if event.started:
            detail = event.detail
            if PREFILL in detail and self._prompt_tokens:  # a long prefill says how long its prompt is
                detail = f"{detail} · {self._prompt_tokens:,}-token prompt"
            self.ui.busy.start(event.phase, detail)
            if self.ui.busy.is_stopping() and self.ui.busy.is_uninterruptible():
                # Stop was pressed just before the trace began (issue 55, the walk: seed 1 at 1024x600, Stop 0.8 s
                # into a cold run, the run ended 15 s later): the window does not wait for the compiler either
                self.session.abandon()
        elif self.session.running:
            run = self.session.current
            self.ui.busy.start("replaying" if run is not None and run.replay else "running")

    def _on_background(self, finishing: bool) -> None:
        """The compute thread finished the abandoned compile: a run waiting for it starts now."""
        if not finishing and self.session.running:
            self.ui.busy.start("running")

    def _on_run_started(self, run: RunState) -> None:
        ui, session = self.ui, self.session
        ui.tokens.start(self.recorded.live.prompt_of(run) if run.origin else ("" if run.program else ui.prompt.prompt()))
        ui.router.clear()
        ui.stats.reset()
        ui.stats.set_program(bool(run.program))  # first call / steady call / calls / compiles
        ui.plot.set_program(bool(run.program))  # "call" and "steady call" in the plot's key
        model = session.loaded.label if session.loaded else ""
        if run.program:  # the user's program: its file and entry point instead of the model
            model = f"{self.programs.name}:{run.program}"
        ui.plot.retain([r.run_id for r in session.runs])  # the session decides which runs stay
        mesh = f" · {session.mesh}"  # 1-device and N-device runs overlay: each says which it was
        if run.origin:  # a recorded run: labelled and coloured by where it ran
            self.recorded.start_plot_run(run)
        elif run.race is None:
            ui.plot.start_run(f"{run.mode}{mesh} · {model}", run_id=run.run_id)
        else:  # a race's lanes are drawn together, one curve per mode, earlier runs faded beside them
            ui.plot.start_run(
                f"{run.mode}{mesh} · {model}",  # each lane names its model or program:entry (issue 29 flaw 14)
                colour=MODE_COLOURS.get(run.mode),
                fade=False,
                symbol=MODE_SYMBOLS.get(run.mode),
                run_id=run.run_id,
                group=run.race,
                lane=lane_name(run.mode),  # a setting's lane by its setting (issue 55: "race of 2 modes")
            )
        self.inspect.new_run(session, run)
        ui.ir_tabs.hold_hidden(True)  # megabyte IR texts of hidden tabs load after the run
        if session.background is not None:
            ui.busy.start("waiting for the compute thread:", "compiler finishing in the background")
        elif not run.origin or run.replay:
            ui.busy.start("replaying" if run.replay else "running")

    def _on_prompt(self, event: Any) -> None:
        """The prompt as the model sees it (with a chat template: the formatted conversation), in grey."""
        if event.text != self.ui.prompt.prompt():
            self.ui.tokens.start(event.text)
        self._prompt_tokens = event.n_tokens
        if self.session.background is None:  # the prefill starts: say how long the prompt is
            self.ui.busy.start(PREFILL, f"{event.n_tokens:,}-token prompt")

    def _on_records(self, records: list[Any]) -> None:
        for record in records:
            self.ui.plot.add_record(record)
            self.ui.tokens.add_call(
                CallInfo(record.index, record.step, record.wall_ms, record.compiled, record.compile_total_ms)
            )
            self.ui.router.add_call(record.index, record.step, record.experts, record.expert_weights)

    def _on_tokens(self, tokens: list[Any]) -> None:
        for t in tokens:
            self.ui.tokens.add_token(t.index, t.token_id, t.text, t.call_index)
            self.ui.router.add_token(t.call_index, t.text)

    def _on_error(self, event: Any) -> None:
        """A run or race that fails before any IR: the IR tabs say so (not "Waiting for the first compile…")."""
        if isinstance(event.request, (RunRequest, RaceRequest)):
            self.inspect.run_refused(event.message)

    def _on_figures(self, f: LiveFigures) -> None:
        if f.program:
            self.ui.stats.set_calls(f.ttft_ms, f.steady_ms, f.n_calls, f.n_compiles)
        else:
            self.ui.stats.set_stats(f.ttft_ms, f.live_tokens_per_s, f.n_tokens, f.n_compiles, f.steady_ms)
        run = self.session.current
        if not f.program and run is not None:  # the host-dispatch card: the host's share of a steady decode call
            presenting = self.demo.presentation.is_on()  # on stage the plot gets the room (the card is hidden)
            self.ui.stats.set_host(None if presenting else steady_host_ms(run.records),
                                   run.records[-1].leaves if run.records else None, steady_synchronous(run.records))
            self.ui.stats.set_bound(f.bandwidth_share, f.bound_note or "")  # the memory-bandwidth gauge
        if run is not None and run.race is not None:  # one dashed line per lane, in its colour
            self.ui.plot.set_run_steady(run.run_id, f.steady_ms)
        else:
            self.ui.plot.set_steady_ms(f.steady_ms)

    def _on_ir(self, event: Any) -> None:
        run = self.session.current
        origin = f"run {run.run_id} · {event.mode}" if run is not None and run.run_id else event.mode
        if (lane := self._settings_lane(run)) is not None:  # a settings race's lane: its setting, not "jit-static"
            origin = f"run {lane.run_id} · {lane.mode}"
        if isinstance(self.session.active, ProgramRequest) and self.session.active.trace_only:
            origin = "live: compiled as you type, not run"  # no run: the editor's text, compiled
        if isinstance(self.session.active, ProgramRequest) and self.session.active.name:
            origin += f" · {self.session.active.name}"  # the program's file too (issue 55: run, file and step)
        if run is not None and run.origin:
            origin = self.recorded.live.ir_origin(run)
        compiled = ""  # a warm run's step: the header names the run and the earlier one whose compile it reused
        if event.reused and run is not None and not run.origin:
            by = compiled_by(self.session.runs, run, event.mode, event.step)
            compiled = f"run {by.run_id}" if by is not None else "an earlier run"
        if event.reused and self.ui.ir_tabs.text_of(event.step, HLO) == getattr(event.ir, "hlo", None):
            # the views already show what runs, with its source map: only the header's names change
            self.ui.ir_tabs.name_origin(event.step, origin, compiled, getattr(event.ir, "compiler", "xla"))
            return
        self.inspect.ir_arrived(event.step)
        self.ui.ir_tabs.set_ir(event.step, event.ir, origin, compiled_in=compiled)

    def _settings_lane(self, run: RunState | None) -> RunState | None:
        """The settings-race lane whose compile the IR arriving now shows, None outside a settings race: a model
        race's lane captures its IR while it runs (``run``, named by its setting); a program race compiles its entry
        point once more after the lanes under XLA's defaults — the baseline lane's compile (issue 55: an O1 lane's
        header said "run 9 · jit")."""
        active = self.session.active
        if run is None or run.race is None or not isinstance(active, (SettingsRaceRequest, ProgramSettingsRaceRequest)):
            return None
        if isinstance(active, ProgramSettingsRaceRequest):
            return next((r for r in self.session.runs if r.race == run.race and r.mode == BASELINE), None)
        return run

    def _on_run_finished(self, run: RunState) -> None:
        self.ui.tokens.flush()
        self.ui.plot.redraw()
        cache_len = run.finished.summary.cache_len if run.finished is not None else None
        label = dict(zip(self.ui.plot.run_ids(), self.ui.plot.run_labels(), strict=True)).get(run.run_id)
        if cache_len and label is not None:  # the run's KV cache size, known once it ends (issue 38)
            self.ui.plot.relabel(run.run_id, with_cache_len(label, cache_len))
        self.status.show(program_line(run) if run.program else summary_line(run.finished))
        self.ui.prompt.clear_error()  # no error outlives a run that worked (issue 55: a KV-cache refusal stayed red)
        self.ui.form.clear_notes()
        session = self.session
        if session.active is not None and not session.racing and session.background is None and not run.program:
            # the run has ended (its tokens are out): what the compute thread still does is named, not "stopping"
            self.ui.busy.set_stopping(False)
            self.ui.busy.start("finishing", "the run's source maps and figures")

    def _on_idle(self, message: str) -> None:
        self.ui.tokens.flush()
        self.ui.ir_tabs.hold_hidden(False)
        self.inspect.run_ended(self.session.current)
        if self.session.load_queue:  # a model switch queued during the run starts now
            model = self.session.load_queue[0].model
            self.ui.busy.start("loading", model)
            message = f"{message or self.status.text()} · now loading {model}…"
        if message:
            self.status.show(message)

    @Slot(int)
    def _on_token_hovered(self, call_index: int) -> None:
        self.ui.plot.highlight_call(call_index)

    @Slot(int)
    def _on_point_hovered(self, call_index: int) -> None:
        self.ui.tokens.highlight_call(call_index)

    def _on_runs_dropped(self, _run_ids: list[int]) -> None:
        """Runs left the plot: the plot keeps the session's runs; with none left, the stream and the figures
        of a removed run go too (issue 37: after Clear plot they still showed it)."""
        self.ui.plot.retain([r.run_id for r in self.session.runs])
        if self.session.current is None:
            self.ui.tokens.start("")
            self.ui.stats.reset()
            self.ui.plot.set_steady_ms(None)


def with_cache_len(label: str, cache_len: int) -> str:
    """A run's plot label with its static KV cache's size at its end (issue 38: an 8,192-position cache decoded
    5× slower and nothing said why): ``"jit-static · 1 device · SmolLM2 · recorded on CPU × 4"`` →
    ``"jit-static · 1 device · SmolLM2 · KV 512 · recorded on CPU × 4"`` (before where it was recorded, which
    the legend drops first). The legend treats ``KV n`` as secondary (``widgets.plot.plot_fitting.SECONDARY``)."""
    parts = [p for p in label.split(" · ") if not p.startswith("KV ")]
    at = next((i for i, p in enumerate(parts) if p.startswith("recorded on ")), len(parts))
    return " · ".join([*parts[:at], f"KV {cache_len:,}", *parts[at:]])
