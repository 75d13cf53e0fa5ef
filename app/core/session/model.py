"""The session model: the window's run state in one Qt-free object that views subscribe to.

Like napari's ``components/`` models (plain Python state with events), :class:`Session` owns the load
queue, the run or race in progress and its lanes, the runs kept for the latency plot, the live figures
(computed once, from the same fields as :class:`app.core.events.Summary`), the compilation-cache state and
the last error. User intents (:meth:`Session.run`, :meth:`Session.race`, …) become typed requests handed
to ``submit`` (the compute worker); the worker's answers come back through :meth:`Session.apply`. Views
connect to the declared signals of :attr:`Session.events` (:class:`SessionEvents`) and never keep run state of their own.

Everything here runs on the thread that calls it (the GUI thread in the window).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from psygnal import Signal, SignalGroup

from app.core.events import (
    CallRecord,
    FinishedEvent,
    IREvent,
    LaneEvent,
    PhaseEvent,
    PromptEvent,
    Summary,
    TokenEvent,
    steady_decode_ms,
)
from app.core.profile.columns import profile_summary
from app.core.race import summary_rows
from app.core.report.text import cap_note
from app.core.session import requests as rq
from app.core.settings import GenerationSettings

#: Runs kept for the latency plot and the exports (oldest dropped first).
MAX_RUNS = 5


@dataclass(frozen=True)
class ReplayRequest:
    """The :attr:`Session.active` request while a recorded run is replayed (never sent to the worker):
    the window is busy and a run waits, as during a live run."""

    label: str


@dataclass
class RunState:
    """One run on the plot (a single run, or one lane of a race).

    ``label`` e.g. ``"run 3 · jit-static"``; ``race`` the race it belongs to (None for a single run);
    ``run_id`` its number in the session (3 here), by which views keep its drawings;
    ``records`` its call records; ``tokens`` its token events; ``finished`` once it ends; ``program``: the
    entry point's name for a run of the user's program (``""`` for a model run)."""

    label: str
    mode: str
    race: int | None = None
    run_id: int = 0
    records: list[CallRecord] = field(default_factory=list)
    tokens: list[TokenEvent] = field(default_factory=list)
    prompt: PromptEvent | None = None
    finished: FinishedEvent | None = None
    #: Where a run opened from a session file was recorded (``"recorded on CPU × 1 · jax 0.10.2 ·
    #: 2026-11-25"``); "" for a run of this window.
    origin: str = ""
    #: A recorded run streamed at its recorded pace (Demo ▸ Replay session).
    replay: bool = False
    program: str = ""

    @property
    def n_compiles(self) -> int:
        return sum(1 for r in self.records if r.compiled)


@dataclass(frozen=True)
class LiveFigures:
    """The stats strip's figures. While a run streams: ``ttft_ms`` is the first token's ``elapsed_ms``
    (the same clock as :attr:`Summary.ttft_ms`), ``live_tokens_per_s`` the rate since the first token; once it
    ends, the :class:`Summary` values themselves (decode tokens/s when there was a steady decode)."""

    ttft_ms: float | None = None
    live_tokens_per_s: float | None = None
    n_tokens: int = 0
    n_compiles: int = 0
    steady_ms: float | None = None
    #: A program run (``RunState.program``): ``ttft_ms`` is its first call's wall time, ``steady_ms`` the
    #: median of its calls that did not compile, ``n_calls`` its calls.
    program: bool = False
    n_calls: int = 0

    @staticmethod
    def of(run: RunState) -> LiveFigures:
        if run.program:
            recs = run.records
            steady = [r.wall_ms for r in recs if not r.compiled]
            return LiveFigures(recs[0].wall_ms if recs else None, None, 0, sum(1 for r in recs if r.compiled),
                               statistics.median(steady) if steady else None, True, len(recs))
        if run.finished is not None:
            s = run.finished.summary
            return LiveFigures(s.ttft_ms, s.decode_tokens_per_s or s.overall_tokens_per_s, s.n_tokens, s.n_compiles,
                               s.steady_decode_ms)
        toks = run.tokens
        rate = None
        if len(toks) > 1 and toks[-1].elapsed_ms > toks[0].elapsed_ms:
            rate = (len(toks) - 1) / ((toks[-1].elapsed_ms - toks[0].elapsed_ms) / 1000)
        ttft = toks[0].elapsed_ms if toks else None
        return LiveFigures(ttft, rate, len(toks), run.n_compiles, steady_decode_ms(run.records))


def program_line(run: RunState) -> str:
    """One line about a finished program run: ``run 2 · jit · selu: 10 calls · first call 61.2 ms · steady call
    12.1 ms · 1 compile``."""
    from app.core.units import ms

    s = run.finished.summary
    steady = f" · steady call {ms(s.steady_decode_ms)}" if s.steady_decode_ms is not None else ""
    ended = {"stopped": " (stopped)", "error": " (error)"}.get(run.finished.reason, "")
    return (f"{run.label}: {s.n_calls} call{'s' if s.n_calls != 1 else ''}{ended} · first call {ms(s.ttft_ms)}"
            f"{steady} · {s.n_compiles} compile{'s' if s.n_compiles != 1 else ''}")


class SessionEvents(SignalGroup):
    """The session's signals, declared and typed (``psygnal``, the signal library napari's models use:
    https://psygnal.readthedocs.io): a reader, a type checker and an IDE see every signal and its arguments.
    Arguments are plain data; every signal is emitted on the thread that calls the session (the GUI thread
    in the window). Connect with ``session.events.<name>.connect(callback)``.
    """

    #: A model starts loading: its name.
    loadStarted = Signal(str)
    #: A model finished loading.
    modelLoaded = Signal(rq.ModelLoaded)
    #: The compute worker became busy (True) or idle (False).
    busyChanged = Signal(bool)
    #: A run starts (also once per race lane).
    runStarted = Signal(RunState)
    #: The prompt as the model sees it (chat template applied).
    prompt = Signal(PromptEvent)
    #: New call records of the run in progress (a batch).
    records = Signal(list)
    #: New token events of the run in progress (a batch).
    tokens = Signal(list)
    #: The stats strip's figures changed.
    figures = Signal(LiveFigures)
    #: A phase starts or ends (loading, tracing, compiling, …).
    phase = Signal(PhaseEvent)
    #: The IR of a newly compiled step.
    ir = Signal(IREvent)
    #: A run (or lane) ended.
    runFinished = Signal(RunState)
    #: Rows of :func:`app.core.race.summary_rows` for the race or run in progress.
    raceSummary = Signal(list)
    #: The worker is idle again: a message saying what finished.
    idle = Signal(str)
    #: A request failed.
    error = Signal(rq.RequestFailed)
    #: A message to show without failing anything.
    notice = Signal(str)
    #: A step's source map: ``(step, SourceMap)``.
    sourceMap = Signal(str, object)
    #: A measured profile.
    profile = Signal(rq.ProfileReady)
    #: A recorded pass pipeline (the Passes tab).
    passes = Signal(rq.PassesReady)
    #: A step's collectives: ``(step, list[Collective])``.
    collectives = Signal(str, list)
    #: The devices present (list of device descriptions).
    devices = Signal(list)
    #: the JAX platforms this machine has (``["cpu", "gpu"]``) and the one the engine runs on
    platforms = Signal(list, str)
    #: The mesh changed.
    mesh = Signal(rq.MeshChanged)
    #: The compilation caches' state.
    cache = Signal(rq.CacheInfo)
    #: A status-bar message.
    status = Signal(str)
    #: The compute thread is finishing a run abandoned during a compile (True), or is free again (False).
    background = Signal(bool)
    #: Session files read on the compute thread (:meth:`Session.open_sessions`), or the first bad file's error.
    sessionsRead = Signal(rq.SessionsRead)
    #: The user's program loaded (its entry points, the one run).
    programLoaded = Signal(rq.ProgramLoaded)
    #: An error in the user's program, at its line (sent before the request's ``error``).
    programFailed = Signal(rq.ProgramFailed)


class Session:
    """State of one window's session. ``submit(request)`` sends a request to the compute worker."""

    def __init__(self, submit: Callable[[rq.Request], None]) -> None:
        self.submit = submit
        self.events = SessionEvents()
        self.loaded: rq.ModelLoaded | None = None
        self.load_queue: list[rq.LoadRequest] = []
        #: the JAX platform runs go to (``""``: JAX's default backend) and what the compute thread reported
        self.device = ""
        self.platforms: list[str] = []
        self.platform = ""
        self.pending: rq.Request | None = None  # a run or race waiting for its model to load
        self.active: rq.Request | None = None  # the run or race executing on the worker
        self.runs: list[RunState] = []
        self.last_error: rq.RequestFailed | None = None
        self.last_profile: rq.ProfileReady | None = None
        self.last_passes: rq.PassesReady | None = None
        #: where the last capture opened from another machine was recorded (CaptureRequest), "" after its message
        self.last_origin = ""
        self.mesh = "1 device"
        self.cache_info: rq.CacheInfo | None = None
        self.max_runs = MAX_RUNS  # runs kept (outside a race); see set_max_runs
        self._n_runs = 0
        self._race_id = 0
        self._race_modes: tuple[str, ...] = ()
        self.last_request: rq.Request | None = None  # what "Replay cold start" reruns
        #: A run or race stopped during a compile (:meth:`abandon`) that the compute thread is still finishing;
        #: its events are dropped until its RequestDone arrives.
        self.background: rq.Request | None = None
        self._keep = 0  # runs kept at least (recorded runs opened together), until the next live run
        self._program_entry = ""  # the entry point of the program running (from its ProgramLoaded)
        self._program_first_run = 0  # runs after this number belong to the program request running

    def set_max_runs(self, n: int) -> None:
        """Keep at most ``n`` >= 1 runs (the oldest go first, now and at the next run; the lanes of the
        newest race always stay together). Raises ValueError for ``n < 1``."""
        if n < 1:
            raise ValueError(f"max_runs must be >= 1, got {n}")
        self.max_runs = n
        self._retain()

    def _retain(self) -> list[RunState]:
        """Drop the oldest runs beyond :attr:`max_runs` and say which went (status). The one retention rule of
        the window: the plot, the race table and the exports show :attr:`runs`. Never dropped: a lane of the
        newest race, and the recorded runs of the session files opened last (:attr:`_keep` of them) — replays
        go first, so replaying a recorded race again and again never pushes the recording off the plot (issue 29,
        flaw 4: a later replay lost the torch lane, the next said "Nothing to replay"). Returns the runs dropped."""
        newest_race = self.runs[-1].race if self.runs else None
        recorded = [r for r in self.runs if r.origin and not r.replay][-self._keep:] if self._keep else []
        protected = {id(r) for r in self.runs if newest_race is not None and r.race == newest_race}
        protected |= {id(r) for r in recorded}
        if self.runs:  # the run just started (a replay included) is never the one dropped
            protected.add(id(self.runs[-1]))
        cap = max(self.max_runs, len(protected))
        excess = len(self.runs) - cap
        if excess <= 0:
            return []
        replays = [r for r in self.runs if r.replay and id(r) not in protected]
        others = [r for r in self.runs if not r.replay and id(r) not in protected]
        victims = {id(r) for r in (replays + others)[:excess]}
        dropped = [r for r in self.runs if id(r) in victims]
        self.runs[:] = [r for r in self.runs if id(r) not in victims]
        self.events.status.emit(
            f"Runs on the plot: {cap} at most, so {', '.join(r.label for r in dropped)} left the plot "
            "(plot menu ▸ Runs on the plot)")
        return dropped

    def clear_runs(self) -> None:
        """Forget the runs kept for the plot (the user cleared it); refused while a run is active."""
        if not self.running:
            self.runs.clear()

    def disconnect_all(self) -> None:
        """Drop every subscriber (a closing window calls it: no reference cycle outlives it)."""
        self.events = SessionEvents()

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
        return isinstance(self.active or self.pending, rq.ProgramRequest)

    @property
    def racing(self) -> bool:
        return isinstance(self.active or self.pending, rq.RaceRequest)

    @property
    def current(self) -> RunState | None:
        return self.runs[-1] if self.runs else None

    def figures(self) -> LiveFigures:
        return LiveFigures.of(self.current) if self.current else LiveFigures()

    def race_rows(self) -> list[dict[str, Any]]:
        """Summary rows of the finished lanes of the newest race (or of the newest run)."""
        run = self.current
        if run is None:
            return []
        lanes = [r for r in self.runs if r.race == run.race] if run.race is not None else [run]
        return summary_rows({r.mode: r.finished for r in lanes if r.finished is not None})

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

    def race(self, prompt: str, modes: list[str], settings: GenerationSettings, eager_tokens: int,
             model: str, dtype: str = "float32") -> bool:
        """Race ``modes`` on ``model`` (loaded first if it changed). False when busy or no modes."""
        if not modes:
            return False
        return self._start(rq.RaceRequest(prompt, tuple(modes), settings, eager_tokens), model, dtype)

    def run_program(self, request: rq.ProgramRequest) -> bool:
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
        if isinstance(self.last_request, rq.ProgramRequest) and not self.busy:
            return self.run_program(self.last_request)
        if self.busy or self.last_request is None or self.loaded is None:
            return False
        self.submit(rq.CacheRequest("clear_memory"))
        return self._start(self.last_request, self.loaded.request.model, self.loaded.request.dtype)

    def _start(self, request: rq.Request, model: str, dtype: str) -> bool:
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
        if isinstance(request, rq.ProgramRequest):  # its runs start with their first call (LaneEvent)
            self.events.status.emit("Running the program…")
            self._busy_changed()
            self.submit(request)
            return
        if isinstance(request, rq.RaceRequest):
            self._race_id += 1
            self._race_modes = request.modes
        else:
            self._new_run(request.settings.mode, None)
        self.events.status.emit("Running…" if isinstance(request, rq.RunRequest) else "Racing…")
        self._busy_changed()  # now a run (Stop applies), no longer only a load
        self.submit(request)

    def profile(self, prompt: str, step: str = "decode", n_steps: int = 20,
                program: rq.ProgramRequest | None = None) -> bool:
        """Profile the loaded model's ``step`` in the latest run's mode when that mode is profilable (jit-loop:
        its loop, one step per iteration), else jit-static's — or, with ``program``, ``n_steps`` calls of the
        user's program's entry point (no model needed); refused (False) while busy or with no model."""
        if self.busy or (self.loaded is None and program is None):
            return False
        from app.core.modes.catalog import MODE_NAMES, mode_info

        run = self.current
        mode = (run.mode if program is None and run is not None and not run.program and not run.origin
                and run.mode in MODE_NAMES and mode_info(run.mode).profilable else "")
        self.active = request = rq.ProfileRequest(prompt, step, n_steps, program, mode)
        self._busy_changed()
        what = f"calls of {program.entry or program.name}" if program is not None else f"{step} steps"
        self.events.status.emit(f"Profiling {n_steps} {what}…")
        self.submit(request)
        return True

    def open_capture(self, path: str, hlo: str = "") -> bool:
        """Open a profiler capture (with its optimized HLO text ``hlo``; ``""``: the one beside it) or a folder
        of XLA dumps recorded on another machine (:class:`app.core.session.requests.CaptureRequest`; no model
        needed); refused (False) while busy."""
        if self.busy:
            return False
        self.active = request = rq.CaptureRequest(path, hlo)
        self._busy_changed()
        self.events.status.emit(f"Opening {path}…")
        self.submit(request)
        return True

    def open_sessions(self, paths: list[str]) -> bool:
        """Read session files on the compute thread (no JAX is started for it) and answer with
        ``events.sessionsRead``, after which the session is idle again (the views then show the runs);
        refused (False) while busy."""
        if self.busy or not paths:
            return False
        self.active = request = rq.OpenSessionsRequest(tuple(str(p) for p in paths))
        self._busy_changed()
        self.submit(request)
        return True

    def passes(self, step: str = "decode", fusion_log: bool = False, mode: str = "", xla_flags: str = "",
               program: rq.ProgramRequest | None = None) -> bool:
        """Record XLA's pass pipeline of the compiled ``step`` (of ``mode``; ``""``: the latest JAX mode
        that compiled it) — or, with ``program``, of the user's program's entry point (no model needed) — with
        ``xla_flags`` (XLA option text, validated on the compute thread); refused (False) while busy or with no
        model. Stop ends it (the worker's stop flag)."""
        if self.busy or (self.loaded is None and program is None):
            return False
        if program is not None:
            step = program.entry or "program"
        self.active = request = rq.PassesRequest(step, fusion_log, mode, xla_flags, program)
        self.last_error = None
        self._busy_changed()
        self.events.status.emit(f"Recording XLA's passes of the {step} step"
                                + (" with the fusion log…" if fusion_log else "…"))
        self.submit(request)
        return True

    def cache(self, action: str, directory: str = "") -> None:
        self.submit(rq.CacheRequest(action, directory))

    def set_mesh(self, text: str) -> None:
        self.submit(rq.MeshRequest(text))

    def list_devices(self) -> None:
        self.submit(rq.DevicesRequest())

    def set_device(self, platform: str) -> bool:
        """Run on ``platform`` (``"cpu"``, ``"gpu"``, ``"tpu"``; ``""``: JAX's default) from now on: the loaded
        model is loaded again there (its compiled steps are the old device's) and the devices listed anew.
        False (nothing changes) while busy or when it is the platform in use."""
        if self.busy or platform == (self.device or self.platform):
            return False
        self.device = platform
        model = self.loaded.request if self.loaded is not None else None
        if model is not None:
            self.load(model.model, model.dtype)
        self.list_devices()
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
        if not isinstance(request, (rq.RunRequest, rq.RaceRequest, rq.ProgramRequest)):
            return False
        self._end_stopped(self.current)
        self.background, self.active = request, None
        self.events.background.emit(True)
        self.events.idle.emit(self._done_message(request) or "Stopped. The compiler finishes in the background; a "
                              "new run waits for it.")
        self._busy_changed()
        return True

    def _end_stopped(self, run: RunState | None) -> None:
        """End ``run`` as ``stopped`` with what it has (no-op when it finished)."""
        if run is None or run.finished is not None:
            return
        tokens = run.tokens
        total_ms = tokens[-1].elapsed_ms if tokens else sum(r.wall_ms for r in run.records)
        summary = Summary.from_records(run.mode, run.records, len(tokens),
                                       tokens[0].elapsed_ms if tokens else None, total_ms)
        run.finished = FinishedEvent("stopped", summary, [t.token_id for t in tokens],
                                     "".join(t.text for t in tokens))
        self.events.figures.emit(self.figures())
        self.events.runFinished.emit(run)
        self.events.raceSummary.emit(self.race_rows())

    # -- recorded runs (session files) ------------------------------------------------------------------
    def new_race_id(self) -> int:
        """A fresh race number (the lanes of a recorded race are shown as one race)."""
        self._race_id += 1
        return self._race_id

    def begin_recorded(self, label: str, mode: str, origin: str, race: int | None = None, replay: bool = False,
                       keep: int = 1) -> RunState | None:
        """Start showing a recorded run (from a session file): a new run in :attr:`runs` named ``label``,
        recorded at ``origin``; feed its events with :meth:`apply_all`, then call :meth:`end_recorded`.
        ``replay``: the session is busy until then (a live run waits; :class:`ReplayRequest`). ``keep``: at
        least this many runs stay on the plot until the next live run (runs of files opened together).
        Refused (None) while a load, run or race is queued or executing."""
        if self.busy:
            return None
        self._keep = max(self._keep, keep)
        if replay:
            self.active = ReplayRequest(label)
            self._busy_changed()
        self._n_runs += 1
        run = RunState(label, mode, race, run_id=self._n_runs, origin=origin, replay=replay)
        self.runs.append(run)
        self._retain()
        self.events.runStarted.emit(run)
        self.events.figures.emit(self.figures())
        return run

    def end_recorded(self, run: RunState, message: str = "") -> None:
        """The recorded run ``run`` is shown (or its replay ended or was stopped: it ends as ``stopped``
        when its :class:`FinishedEvent` did not come); the session is idle again."""
        self._end_stopped(run)
        if isinstance(self.active, ReplayRequest):
            self.active = None
            self._busy_changed()
        self.events.idle.emit(message)

    def apply_all(self, events: list[Any]) -> None:
        """Take a batch: consecutive call records and tokens are announced once per batch. Events of an
        abandoned request (:meth:`abandon`) are dropped: the compute thread handles requests in order, so
        everything before that request's RequestDone is its own."""
        if self.background is not None:
            done = next((i for i, e in enumerate(events)
                         if isinstance(e, rq.RequestDone) and e.request is self.background), None)
            if done is None:
                return
            events = events[done + 1:]
            self.background = None
            self.events.background.emit(False)
            self.events.status.emit("The compute thread is free.")
        records: list[CallRecord] = []
        tokens: list[TokenEvent] = []
        for event in events:
            if isinstance(event, CallRecord) and self.current is not None:
                self.current.records.append(event)
                records.append(event)
            elif isinstance(event, TokenEvent) and self.current is not None:
                self.current.tokens.append(event)
                tokens.append(event)
            else:
                self._flush(records, tokens)
                self.apply(event)
        self._flush(records, tokens)

    def _flush(self, records: list[CallRecord], tokens: list[TokenEvent]) -> None:
        if records:
            self.events.records.emit(list(records))
        if tokens:
            self.events.tokens.emit(list(tokens))
        if records or tokens:
            self.events.figures.emit(self.figures())
        records.clear()
        tokens.clear()

    def _handlers(self) -> dict[type, Callable[[Any], None]]:
        return {
            rq.ModelLoaded: self._on_loaded, rq.RequestFailed: self._on_failed, rq.RequestDone: self._on_done,
            LaneEvent: self._on_lane, PromptEvent: self._on_prompt, FinishedEvent: self._on_finished,
            CallRecord: lambda e: self.apply_all([e]), TokenEvent: lambda e: self.apply_all([e]),
            PhaseEvent: self.events.phase.emit, IREvent: self.events.ir.emit,
            rq.Notice: lambda e: self.events.notice.emit(e.text), rq.SourceMapReady: lambda e: self.events.sourceMap.emit(e.step, e.source_map),
            rq.CollectivesReady: lambda e: self.events.collectives.emit(e.step, e.collectives),
            rq.DevicesListed: self._on_devices,
            rq.MeshChanged: self._on_mesh, rq.CacheInfo: self._on_cache,
            rq.ProfileReady: self._on_profile, rq.PassesReady: self._on_passes,
            rq.SessionsRead: self._on_sessions_read,
            rq.ProgramLoaded: self._on_program_loaded, rq.ProgramFailed: self.events.programFailed.emit,
        }

    def _on_devices(self, event: rq.DevicesListed) -> None:
        self.platforms, self.platform = list(event.platforms), event.platform
        self.events.devices.emit(event.devices)
        self.events.platforms.emit(self.platforms, self.platform)

    def _on_loaded(self, event: rq.ModelLoaded) -> None:
        if self.load_queue and self.load_queue[0] == event.request:
            self.load_queue.pop(0)
        self.loaded = event
        self.mesh = event.mesh
        self.events.modelLoaded.emit(event)
        if not self.load_queue and self.pending is not None:
            self.send_pending()

    def _on_failed(self, event: rq.RequestFailed) -> None:
        self.last_error = event
        if isinstance(event.request, rq.LoadRequest):
            if event.request in self.load_queue:
                self.load_queue.remove(event.request)
            self.pending = None  # it was meant for the model that failed
        self.events.error.emit(event)

    def _on_done(self, event: rq.RequestDone) -> None:
        request = event.request
        if isinstance(request, (rq.RunRequest, rq.RaceRequest, rq.ProfileRequest, rq.PassesRequest,
                                rq.ProgramRequest, rq.CaptureRequest, rq.OpenSessionsRequest)) and request is self.active:
            self.active = None
            self.events.idle.emit(self._done_message(request))
        self._busy_changed()

    def _on_program_loaded(self, event: rq.ProgramLoaded) -> None:
        self._program_entry = event.entry
        self.events.programLoaded.emit(event)

    def _on_profile(self, event: rq.ProfileReady) -> None:
        self.last_profile = event
        self.last_origin = event.origin or self.last_origin
        self.events.profile.emit(event)

    def _on_sessions_read(self, event: rq.SessionsRead) -> None:
        if event.request is self.active:  # idle before the views show the runs (recorded runs need an idle session)
            self.active = None
            self._busy_changed()
        self.events.sessionsRead.emit(event)

    def _on_passes(self, event: rq.PassesReady) -> None:
        self.last_passes = event
        self.last_origin = event.origin or self.last_origin
        self.events.passes.emit(event)

    def _done_message(self, request: rq.Request) -> str:
        if self.last_error is not None and self.last_error.request is request:
            return ""
        if isinstance(request, rq.PassesRequest):
            ready = self.last_passes
            if ready is None or ready.request is not request:
                return "Pass recording stopped."
            p = ready.pipeline
            return (f"Recorded {ready.mode} · {ready.step}: {len(p.snapshots)} snapshots, {len(ready.rows)} passes, "
                    f"compile {ready.breakdown['total_ms']:,.0f} ms, in {ready.seconds:.1f} s")
        if isinstance(request, rq.CaptureRequest):
            origin, self.last_origin = self.last_origin, ""
            return f"Opened {origin}: shown in the {'Passes' if origin.startswith('dumps') else 'Profile'} tab" \
                if origin else ""
        if isinstance(request, rq.ProgramRequest) and request.trace_only:
            entry = self._program_entry or request.entry or "the program"
            return f"Traced {entry} as you type: jaxpr, StableHLO and HLO updated (Ctrl+Enter runs and times it)."
        if isinstance(request, rq.ProgramRequest):
            return "; ".join(program_line(r) for r in self.runs if r.program and r.finished is not None
                             and r.run_id > self._program_first_run) or "Stopped before the first call ended."
        if isinstance(request, rq.ProfileRequest):
            p = self.last_profile.profile if self.last_profile is not None else None
            if p is None or p.step != request.step:
                return ""
            return f"Profiled {p.n_steps} {p.step} steps: {profile_summary(p)}"
        if isinstance(request, rq.RaceRequest):
            rows = self.race_rows()
            done = [r["mode"] for r in rows if r["reason"] != "stopped"]
            stopped = [r["mode"] for r in rows if r["reason"] == "stopped"]
            steady = [r for r in rows if r["steady_ms_per_token"] and r["mode"] in done]
            best = min(steady, key=lambda r: r["steady_ms_per_token"], default=None)
            tail = (f" · fastest steady decode: {best['mode']} ({best['steady_ms_per_token']:.2f} ms/token)"
                    if best and len(done) > 1 else "")
            if stopped or len(rows) < len(request.modes):
                untouched = [m for m in request.modes if m not in done + stopped]
                return (f"Race stopped: finished {', '.join(done) or 'none'}"
                        + (f"; stopped {', '.join(stopped)}" if stopped else "")
                        + (f"; not run {', '.join(untouched)}" if untouched else "") + tail)
            return f"Race done: {', '.join(done)}{tail}"
        return ""

    def _on_lane(self, event: LaneEvent) -> None:
        request = self.active
        if isinstance(request, rq.ProgramRequest):  # a program's run (one of two for jit vs no-jit, sweeps)
            if event.index == 0:
                self._program_first_run = self._n_runs
                if event.n_lanes > 1:
                    self._race_id += 1
            run = self._new_run(event.mode, self._race_id if event.n_lanes > 1 else None,
                                program=self._program_entry or request.entry or "program")
            if event.n_lanes > 1:
                self.events.status.emit(f"Run {event.index + 1}/{event.n_lanes}: {run.label}…")
            return
        self._new_run(event.mode, self._race_id)
        asked = getattr(getattr(self.active, "settings", None), "max_new_tokens", None)
        capped = (f" (capped at {event.max_new_tokens} tokens: the Demo kit's eager tokens)"
                  if asked is not None and event.max_new_tokens < asked else "")
        self.events.status.emit(f"Race {event.index + 1}/{event.n_lanes}: {event.mode}{capped}…")

    def _on_prompt(self, event: PromptEvent) -> None:
        if self.current is not None:
            self.current.prompt = event
            self.events.prompt.emit(event)
            if note := cap_note(event):  # a cap says so when it applies
                self.events.notice.emit(note)

    def _on_finished(self, event: FinishedEvent) -> None:
        run = self.current
        if run is None:
            return
        run.finished = event
        self.events.figures.emit(self.figures())
        self.events.runFinished.emit(run)
        self.events.raceSummary.emit(self.race_rows())

    def _on_mesh(self, event: rq.MeshChanged) -> None:
        self.mesh = event.label
        self.events.mesh.emit(event)

    def _on_cache(self, event: rq.CacheInfo) -> None:
        self.cache_info = event
        self.events.cache.emit(event)

    def _new_run(self, mode: str, race: int | None, program: str = "") -> RunState:
        self._n_runs += 1
        label = f"run {self._n_runs} · {mode}" + (f" · {program}" if program else "")
        run = RunState(label, mode, race, run_id=self._n_runs, program=program)
        self.runs.append(run)  # earlier runs stay (a race's lanes beside them) unless the cap forces them out
        self._retain()
        self.events.runStarted.emit(run)
        self.events.figures.emit(self.figures())
        return run

    def _busy_changed(self) -> None:
        self.events.busyChanged.emit(self.busy)
