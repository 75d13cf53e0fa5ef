"""The session model: the window's run state in one Qt-free object that views subscribe to.

Like napari's ``components/`` models (plain Python state with events), :class:`Session` owns the load
queue, the run or race in progress, the compilation-cache state and the last error; its base
(:class:`app.core.session.run_list.RunList`) the runs kept for the latency plot and their live figures
(:mod:`app.core.session.figures`). User intents (:meth:`Session.run`, :meth:`Session.race`, …) become typed
requests handed to ``submit`` (the compute worker); the worker's answers come back through :meth:`Session.apply`.
Views connect to the declared signals of :attr:`Session.events` (:mod:`app.core.session.events_group`) and
never keep run state of their own.

Everything here runs on the thread that calls it (the GUI thread in the window).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.core.events import CallRecord, FinishedEvent, IREvent, LaneEvent, PhaseEvent, PromptEvent, TokenEvent
from app.core.programs.compute.requests import ProgramCompiled, ProgramFailed, ProgramLoaded, ProgramRequest
from app.core.race import with_verdicts
from app.core.requests import Notice, Request, RequestDone, RequestFailed, SourceMapReady
from app.core.session import figures
from app.core.session import requests as rq
from app.core.session.compute.settings_race import SettingsParted
from app.core.session.devices import DeviceState
from app.core.session.events_group import SessionEvents
from app.core.session.figures import LiveFigures, program_line
from app.core.session.results import ShownResults
from app.core.session.run_list import RunList
from app.core.session.runs import MAX_RUNS, ReplayRequest, RunState
from app.core.session.settings_results import SettingsRaceResults
from app.core.session.verdicts import RaceVerdicts
from app.core.settings import GenerationSettings
from app.core.steady import SteadyPlan

__all__ = ["MAX_RUNS", "LiveFigures", "ReplayRequest", "RunState", "Session", "SessionEvents", "program_line"]


class Session(RunList, ShownResults, RaceVerdicts, SettingsRaceResults, DeviceState):
    """State of one window's session. ``submit(request)`` sends a request to the compute worker; the runs and
    the signals are its base's (:class:`app.core.session.run_list.RunList`), a race's verdicts its
    :class:`RaceVerdicts` base's, the newest settings race its :class:`SettingsRaceResults` base's, the devices,
    mesh and caches its :class:`DeviceState` base's."""

    def __init__(self, submit: Callable[[Request], None]) -> None:
        super().__init__()
        self.submit = submit
        self.loaded: rq.ModelLoaded | None = None
        self.load_queue: list[rq.LoadRequest] = []
        #: the JAX platform runs go to (``""``: JAX's default backend) and what the compute thread reported
        self.device = ""
        self.platforms: list[str] = []
        self.platform = ""
        #: a run or race waiting for its model to load, or a program about to be sent
        self.pending: rq.RunRequest | rq.RaceRequest | ProgramRequest | None = None
        self.active: Request | ReplayRequest | None = None  # the request on the worker, or a replay
        self.last_error: RequestFailed | None = None
        self._init_results()
        self._init_verdicts()
        self._init_settings_race()
        self.mesh = "1 device"
        self.cache_info: rq.CacheInfo | None = None
        #: what "Replay cold start" reruns
        self.last_request: rq.RunRequest | rq.RaceRequest | ProgramRequest | None = None
        #: A run abandoned mid-compile (:meth:`abandon`): its events are dropped until its RequestDone arrives.
        self.background: Request | None = None

    def race_rows(self) -> list[dict[str, Any]]:
        """The race summary's rows, × torch from the newest race's steady-state verdicts when it has them
        (:func:`app.core.race.with_verdicts`)."""
        return with_verdicts(super().race_rows(), self.shown_verdicts())

    def clear_runs(self) -> None:
        """Forget the runs kept for the plot (the user cleared it); refused while a run is active."""
        if not self.running:
            dropped = [r.run_id for r in self.runs]
            self.runs.clear()
            if dropped:
                self.events.runsDropped.emit(dropped)

    # -- queries ----------------------------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        """A load, run or race is queued or executing."""
        return bool(self.load_queue) or self.pending is not None or self.active is not None

    @property
    def running(self) -> bool:
        return self.active is not None

    @property
    def program_running(self) -> bool:
        """A run of the user's program is queued or executing."""
        return isinstance(self.active or self.pending, ProgramRequest)

    @property
    def racing(self) -> bool:
        return isinstance(self.active or self.pending, rq.RaceRequest)

    # -- intents (from the user) ------------------------------------------------------------------------
    def load(self, model: str, dtype: str = "float32") -> bool:
        """Queue a load of ``model`` unless it is loaded or the last one queued. Returns True if queued."""
        model = model.strip()
        latest = self.load_queue[-1] if self.load_queue else self.loaded and self.loaded.request
        if not model or (latest is not None and (latest.model, latest.dtype, latest.device) == (model, dtype,
                                                                                                self.device)):
            return False
        request = rq.LoadRequest(model, dtype, self.device)
        self.load_queue.append(request)
        self.events.loadStarted.emit(model)
        self._busy_changed()
        self.submit(request)
        return True

    def run(self, prompt: str, settings: GenerationSettings, model: str, dtype: str = "float32") -> bool:
        """Generate ``prompt`` on ``model`` (loaded first if it changed). False when busy."""
        return self._start(rq.RunRequest(prompt, settings), model, dtype)

    def race(self, prompt: str, modes: list[str], settings: GenerationSettings, eager_tokens: int, model: str,
             dtype: str = "float32", kind: type[rq.RaceRequest] = rq.RaceRequest,
             steady: SteadyPlan | None = None) -> bool:
        """Race ``modes`` on ``model`` (loaded first if it changed; ``kind`` :class:`rq.SettingsRaceRequest`: the
        compiler settings named in ``modes``; ``steady``: the race's closing steady-state phase, None: none).
        False when busy or no modes."""
        if not modes:
            return False
        return self._start(kind(prompt, tuple(modes), settings, eager_tokens, steady=steady), model, dtype)

    def run_program(self, request: ProgramRequest) -> bool:
        """Run the user's program (no model needed: it does not wait for a load). False when busy."""
        if self.busy:
            return False
        self.pending = request
        # the runs of this request come after this one: a request stopped before its first call (Esc in an
        # infinite loop) says so instead of repeating the previous run's summary (issue 29, flaw 19)
        self._program_first_run = self._n_runs
        if not request.trace_only:  # a trace as you type is not the run Replay repeats
            self.last_request = request
        self._busy_changed()
        self.send_pending()
        return True

    def replay(self) -> bool:
        """Clear the in-memory caches, then rerun the last run or race (cold start on demand)."""
        if isinstance(self.last_request, ProgramRequest):
            return self.run_program(self.last_request)  # False when busy
        if self.busy or self.last_request is None or self.loaded is None:
            return False
        self.submit(rq.CacheRequest("clear_memory"))
        return self._start(self.last_request, self.loaded.request.model, self.loaded.request.dtype)

    def _start(self, request: rq.RunRequest | rq.RaceRequest, model: str, dtype: str) -> bool:
        if self.busy:
            return False
        self._keep = 0
        self.pending = request
        self.last_request = request
        self.load(model, dtype)
        self._busy_changed()
        if not self.load_queue and self.loaded is not None:
            self.send_pending()
        return True

    def send_pending(self) -> None:
        """Start the queued request (``pending``), if any: it becomes ``active``, a run or race starts in the
        run list, and the request goes to the compute thread. Called when the model it needs is loaded."""
        request, self.pending = self.pending, None
        if request is None:
            return
        self.active = request
        self.last_error = None
        if isinstance(request, ProgramRequest):  # its runs start with their first call (LaneEvent)
            self.events.status.emit("Compiling as you type…" if request.trace_only else "Running the program…")
            self._busy_changed()
            self.submit(request)
            return
        self._begin_runs(request)
        self.events.status.emit("Running…" if isinstance(request, rq.RunRequest) else "Racing…")
        self._busy_changed()  # now a run (Stop applies), no longer only a load
        self.submit(request)

    def send(self, request: Request, status: str = "") -> bool:
        """Make ``request`` the active one and send it to the compute thread, saying ``status`` (if any); the
        caller checks :attr:`busy` first (a view's own request, e.g. the settings race's parting)."""
        self.active = request
        self._busy_changed()
        if status:
            self.events.status.emit(status)
        self.submit(request)
        return True

    # -- answers (from the worker) ----------------------------------------------------------------------
    def apply(self, event: Any) -> None:
        """Take one event of the worker's stream (engine events and :mod:`app.core.session.requests` answers)."""
        handler = self._handlers().get(type(event))
        if handler is not None:
            handler(event)

    def abandon(self) -> bool:
        """Stop the active run or race now, without waiting for the compute thread (a compile in progress
        cannot be interrupted: XLA and Inductor compile in one call). The current run ends as ``stopped``
        with what it has, the window is usable at once, and the compiler's late result is dropped from the
        views (kept in the engine's compiled steps: the next run reuses it). Requests sent meanwhile wait
        for the compute thread in order (:attr:`background` says it is busy). Returns False when no run or
        race is active."""
        request = self.active
        if not isinstance(request, (rq.RunRequest, rq.RaceRequest, ProgramRequest)):
            return False
        self._end_stopped(self.current)
        self.background, self.active = request, None
        self.events.background.emit(True)
        self.events.idle.emit(self._done_message(request) or "Stopped. The compiler finishes in the background; a "
                              "new run waits for it.")
        self._busy_changed()
        return True

    def _handlers(self) -> dict[type, Callable[[Any], None]]:
        return {
            rq.ModelLoaded: self._on_loaded, RequestFailed: self._on_failed, RequestDone: self._on_done,
            LaneEvent: self._on_lane, PromptEvent: self._on_prompt, FinishedEvent: self._on_finished,
            CallRecord: lambda e: self.apply_all([e]), TokenEvent: lambda e: self.apply_all([e]),
            PhaseEvent: self.events.phase.emit, IREvent: self.events.ir.emit,
            Notice: lambda e: self.events.notice.emit(e.text), SourceMapReady: lambda e: self.events.sourceMap.emit(e.step, e.source_map),
            rq.CollectivesReady: lambda e: self.events.collectives.emit(e.step, e.collectives),
            rq.DevicesListed: self._on_devices,
            rq.MeshChanged: self._on_mesh, rq.CacheInfo: self._on_cache,
            rq.ProfileReady: self._on_profile, rq.PassesReady: self._on_passes,
            rq.SessionsRead: self._on_sessions_read, **self._settings_race_handlers(),
            ProgramLoaded: self._on_program_loaded, ProgramFailed: self.events.programFailed.emit,
            ProgramCompiled: self.events.programCompiled.emit, SettingsParted: self.events.settingsParted.emit,
            **self._verdict_handlers(),
        }

    def _on_loaded(self, event: rq.ModelLoaded) -> None:
        if self.load_queue and self.load_queue[0] == event.request:
            self.load_queue.pop(0)
        self.loaded = event
        self.mesh = event.mesh
        self.bound = event.bound
        if event.seconds:  # a new model: the pass recordings are of the previous one's steps
            self.forget_passes()
        self.events.modelLoaded.emit(event)
        if not self.load_queue and self.pending is not None:
            self.send_pending()

    def _on_failed(self, event: RequestFailed) -> None:
        self.last_error = self._forget_refused(event)  # a refused run leaves no trace (run_list.py)
        if isinstance(event.request, rq.LoadRequest):
            if event.request in self.load_queue:
                self.load_queue.remove(event.request)
            self.pending = None  # it was meant for the model that failed
        self.events.error.emit(event)

    def _on_done(self, event: RequestDone) -> None:
        request = event.request
        if request is self.active:  # only what send / send_pending made active (never a load, cache or mesh)
            self.active = None
            self.events.idle.emit(self._done_message(request))
        self._busy_changed()

    def _on_sessions_read(self, event: rq.SessionsRead) -> None:
        if event.request is self.active:  # idle before the views show the runs (recorded runs need an idle session)
            self.active = None
            self._busy_changed()
        self.events.sessionsRead.emit(event)

    def _done_message(self, request: Request) -> str:
        if self.last_error is not None and self.last_error.request is request:
            return ""
        if isinstance(request, (rq.PassesRequest, rq.CaptureRequest, rq.ProfileRequest)):
            return self._results_done(request)
        if isinstance(request, ProgramRequest) and request.trace_only:
            entry = self._program_entry or request.entry or "the program"
            return f"Traced {entry} as you type: jaxpr, StableHLO and HLO updated (Ctrl+Enter runs and times it)."
        if isinstance(request, ProgramRequest):
            return "; ".join(program_line(r) for r in self.runs if r.program and r.finished is not None
                             and r.run_id > self._program_first_run) or "Stopped before the first call ended."
        if isinstance(request, rq.RaceRequest):
            return figures.race_done(self.race_rows(), request.modes, self.shown_verdicts())
        return ""

    def _on_lane(self, event: LaneEvent) -> None:
        request = self.active
        if isinstance(request, ProgramRequest):  # a program's run (one of two for jit vs no-jit, sweeps)
            self._program_lane(event, self._program_entry or request.entry or "program")
        else:
            self._race_lane(event, getattr(getattr(request, "settings", None), "max_new_tokens", None))

    def _busy_changed(self) -> None:
        self.events.busyChanged.emit(self.busy)
