"""The session's run list with its signals: :class:`RunList`, the part of
:class:`app.core.session.model.Session` that numbers runs and races, starts and ends them, takes their call
records and tokens, keeps at most :attr:`RunList.max_runs` of them (:func:`app.core.session.runs.retain`) and
announces each change on :attr:`RunList.events`; it takes the worker's batches (:meth:`RunList.apply_all`) and shows
recorded runs (:meth:`RunList.begin_recorded`, :meth:`RunList.end_recorded`). What a run belongs to (the request in
progress) is the session's; everything here runs on the thread that calls the session."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from app.core.events import CallRecord, FinishedEvent, LaneEvent, PromptEvent, TokenEvent
from app.core.mode_catalog import MODE_NAMES, mode_info
from app.core.programs.compute.requests import ProgramLoaded
from app.core.report.text import cap_note
from app.core.requests import RequestDone, RequestFailed
from app.core.session import figures
from app.core.session import requests as rq
from app.core.session.events_group import SessionEvents
from app.core.session.figures import LiveFigures
from app.core.session.runs import MAX_RUNS, ReplayRequest, RunState, retain, stopped_finish

if TYPE_CHECKING:
    from app.core.session.host import SessionHost


class RunList:
    """The runs kept for the latency plot, the race table and the exports (:attr:`runs`, oldest first) and the
    signals that announce them (:attr:`events`)."""

    def __init__(self) -> None:
        self.events = SessionEvents()
        self.runs: list[RunState] = []
        self.max_runs = MAX_RUNS  # runs kept (outside a race); see set_max_runs
        self._n_runs = 0
        self._race_id = 0
        self._race_modes: tuple[str, ...] = ()
        self._keep = 0  # runs kept at least (recorded runs opened together), until the next live run
        self._program_entry = ""  # the entry point of the program running (from its ProgramLoaded)
        self._program_first_run = 0  # runs after this number belong to the program request running
        #: the loaded model's decode bound (:class:`app.core.profile.bound.MemoryBound`), None when unmeasured
        self.bound: Any = None

    def set_max_runs(self, n: int) -> None:
        """Keep at most ``n`` >= 1 runs (the oldest go first, now and at the next run; the lanes of the
        newest race always stay together). Raises ValueError for ``n < 1``."""
        if n < 1:
            raise ValueError(f"max_runs must be >= 1, got {n}")
        self.max_runs = n
        self._retain()

    def _retain(self) -> list[RunState]:
        """Drop the oldest runs beyond :attr:`max_runs` (:func:`app.core.session.runs.retain`; never the
        recorded runs of the session files opened last, :attr:`_keep` of them) and say which went (status).
        Returns the runs dropped."""
        dropped, cap = retain(self.runs, self.max_runs, self._keep)
        if dropped:
            self.events.status.emit(
                f"Runs on the plot: {cap} at most (a race counts as one), so "
                f"{', '.join(r.label for r in dropped)} left the plot (plot menu ▸ Runs on the plot)")
            self.events.runsDropped.emit([r.run_id for r in dropped])
        return dropped

    def _forget_refused(self, event: RequestFailed) -> RequestFailed:
        """A run or race refused before its first call (a prompt longer than the KV cache, a cache longer than
        the model's positions) leaves no trace: its runs with no call record and no end leave the session
        (``runsDropped``), so no empty legend entry and no "0 tokens" row in the Save dialog (issue 55).
        Runs that made a call stay. Returns ``event``."""
        if not isinstance(event.request, (rq.RunRequest, rq.RaceRequest)):
            return event
        refused: list[RunState] = []
        while self.runs and not self.runs[-1].records and self.runs[-1].finished is None and not self.runs[-1].origin:
            refused.append(self.runs.pop())
        if refused:
            self.events.runsDropped.emit([r.run_id for r in refused])
        return event

    def disconnect_all(self) -> None:
        """Drop every subscriber (a closing window calls it: no reference cycle outlives it)."""
        self.events = SessionEvents()

    # -- queries ----------------------------------------------------------------------------------------
    @property
    def current(self) -> RunState | None:
        return self.runs[-1] if self.runs else None

    def figures(self) -> LiveFigures:
        """The current run's live figures, with the steady decode's share of the memory-bandwidth bound
        (:attr:`bound`) for a live model run (not a program's, not a recorded one)."""
        run, bound = self.current, self.bound
        f = LiveFigures.of(run) if run is not None else LiveFigures()
        if bound is None or run is None or run.program or run.origin or f.steady_ms is None:
            return f
        return dataclasses.replace(f, bandwidth_share=bound.share(f.steady_ms), bound_note=bound.explain())

    def race_rows(self) -> list[dict[str, Any]]:
        """Summary rows of the finished lanes of the newest race (or of the newest run)."""
        return figures.race_rows(self.runs, self.bound.bound_ms if self.bound is not None else None)

    def profilable_mode(self) -> str:
        """The latest run's mode when a profile can measure it (jit-loop: its loop, one step per iteration);
        "" (the profile picks jit-static) for a program's run, a recorded run or a mode that is not profilable."""
        run = self.current
        return (run.mode if run is not None and not run.program and not run.origin
                and run.mode in MODE_NAMES and mode_info(run.mode).profilable else "")

    def new_race_id(self) -> int:
        """A fresh race number (the lanes of a recorded race are shown as one race)."""
        self._race_id += 1
        return self._race_id

    # -- a run starts, streams and ends -----------------------------------------------------------------
    def _new_run(self, mode: str, race: int | None, program: str = "", label: str | None = None,
                 origin: str = "", replay: bool = False, number: int = 0) -> RunState:
        """Start run number ``n`` (label ``"run n · mode"``, `` · program`` for a program's run, unless
        ``label`` names it): the next number, or ``number`` (a reopened run's own) when no run of this session
        had it yet — numbers only grow, so it stays unique. The cap may drop older runs, never this one."""
        self._n_runs = max(self._n_runs + 1, number)
        if label is None:
            label = f"run {self._n_runs} · {mode}" + (f" · {program}" if program else "")
        run = RunState(label, mode, race, run_id=self._n_runs, origin=origin, replay=replay, program=program)
        self.runs.append(run)  # earlier runs stay (a race's lanes beside them) unless the cap forces them out
        self._retain()
        self.events.runStarted.emit(run)
        self.events.figures.emit(self.figures())
        return run

    def _begin_runs(self, request: rq.RunRequest | rq.RaceRequest) -> None:
        """A run request starts its run now; a race request, a race whose lanes start with their
        :class:`LaneEvent`."""
        if isinstance(request, rq.RaceRequest):
            self._race_id += 1
            self._race_modes = request.modes
        else:
            self._new_run(request.settings.mode, None)

    def _program_lane(self, event: LaneEvent, program: str) -> None:
        """A run of the user's ``program`` starts (one of two for jit vs no-jit, sweeps: a race of its own)."""
        if event.index == 0:
            self._program_first_run = self._n_runs
            if event.n_lanes > 1:
                self._race_id += 1
        run = self._new_run(event.mode, self._race_id if event.n_lanes > 1 else None, program=program)
        if event.n_lanes > 1:
            self.events.status.emit(f"Run {event.index + 1}/{event.n_lanes}: {run.label}…")

    def _race_lane(self, event: LaneEvent, asked: int | None) -> None:
        """A lane of the race in progress starts (``asked``: the tokens the race asked for)."""
        self._new_run(event.mode, self._race_id)
        capped = (f" (capped at {event.max_new_tokens} tokens: the Demo kit's eager tokens)"
                  if asked is not None and event.max_new_tokens < asked else "")
        self.events.status.emit(f"Race {event.index + 1}/{event.n_lanes}: {event.mode}{capped}…")

    def _stream(self, events: list[Any], other: Callable[[Any], None]) -> None:
        """Take a batch in order: call records and tokens go to the current run, consecutive ones announced
        once (:meth:`_flush`); any other event goes to ``other``."""
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
                other(event)
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

    def _on_program_loaded(self, event: ProgramLoaded) -> None:
        self._program_entry = event.entry  # its runs are named after it
        self.events.programLoaded.emit(event)

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
        self._announce_end(run)

    def _end_stopped(self, run: RunState | None) -> None:
        """End ``run`` as ``stopped`` with what it has (no-op when it finished)."""
        if run is None or run.finished is not None:
            return
        run.finished = stopped_finish(run)
        self._announce_end(run)

    def _announce_end(self, run: RunState) -> None:
        self.events.figures.emit(self.figures())
        self.events.runFinished.emit(run)
        self.events.raceSummary.emit(self.race_rows())

    def apply_all(self: SessionHost, events: list[Any]) -> None:
        """Take a batch: consecutive call records and tokens are announced once per batch. Events of an
        abandoned request (:meth:`abandon`) are dropped: the compute thread handles requests in order, so
        everything before that request's RequestDone is its own."""
        if self.background is not None:
            done = next((i for i, e in enumerate(events)
                         if isinstance(e, RequestDone) and e.request is self.background), None)
            if done is None:
                return
            events = events[done + 1:]
            self.background = None
            self.events.background.emit(False)
            self.events.status.emit("The compute thread is free.")
        self._stream(events, self.apply)

    # -- recorded runs (session files) ------------------------------------------------------------------
    def begin_recorded(self: SessionHost, label: str, mode: str, origin: str, race: int | None = None, replay: bool = False,
                       keep: int = 1, program: str = "") -> RunState | None:
        """Start showing a recorded run (from a session file): a new run in :attr:`runs` named ``label``,
        recorded at ``origin``; feed its events with :meth:`apply_all`, then call :meth:`end_recorded`.
        ``replay``: the session is busy until then (a live run waits; :class:`ReplayRequest`). ``keep``: at
        least this many runs stay on the plot until the next live run (runs of files opened together).
        ``program``: the entry point of a recorded program run (its views show calls, not tokens).
        Refused (None) while a load, run or race is queued or executing."""
        if self.busy:
            return None
        self._keep = max(self._keep, keep)
        if replay:
            self.active = ReplayRequest(label)
            self._busy_changed()
        # a reopened run keeps its file's number where it is free (issue 37: a file's runs 4–8 showed as 1–5)
        own = re.match(r"run (\d+)\b", label)
        number = int(own.group(1)) if own and not replay else 0
        return self._new_run(mode, race, program, label=label, origin=origin, replay=replay, number=number)

    def end_recorded(self: SessionHost, run: RunState, message: str = "") -> None:
        """The recorded run ``run`` is shown (or its replay ended or was stopped: it ends as ``stopped``
        when its :class:`FinishedEvent` did not come); the session is idle again."""
        self._end_stopped(run)
        if isinstance(self.active, ReplayRequest):
            self.active = None
            self._busy_changed()
        self.events.idle.emit(message)
