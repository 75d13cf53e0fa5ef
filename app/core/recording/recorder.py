"""Build :class:`RecordedRun` objects from the event stream of a run or a race (the CLI and the window's
``Session`` feed the same events)."""

from __future__ import annotations

import os
import time
import zlib
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from app.core.events import (
    CallRecord,
    FinishedEvent,
    IREvent,
    LaneEvent,
    PromptEvent,
    TokenEvent,
    VerdictsEvent,
)
from app.core.inspect.ir import StepIR
from app.core.inspect.source_map import SourceMap
from app.core.profile.model import StepProfile
from app.core.recording.environment import environment
from app.core.recording.model import RecordedPasses, RecordedRun
from app.core.recording.store import SessionFile, utc_now

if TYPE_CHECKING:
    from app.core.passes.model import Snapshot


class RecordablePasses(Protocol):
    """What :meth:`RunRecorder.add_passes` reads of a recorded pass pipeline (the session's ``PassesReady``, a
    floor above this package: app.core.session.requests), by its attributes."""

    @property
    def step(self) -> str: ...
    @property
    def mode(self) -> str: ...
    @property
    def pipeline(self) -> object: ...
    @property
    def rows(self) -> list[dict[str, Any]]: ...
    @property
    def snapshots(self) -> list[dict[str, Any]]: ...
    @property
    def breakdown(self) -> dict[str, Any]: ...
    @property
    def fusions(self) -> list[dict[str, Any]]: ...
    @property
    def decisions(self) -> list[dict[str, Any]]: ...
    @property
    def seconds(self) -> float: ...


class RunRecorder:
    """Consumes :mod:`app.core.events` events with :meth:`feed` and keeps one :class:`RecordedRun` per run.

    ``model``: the engine's label; ``model_id``: what was loaded; ``config``: a config summary
    (:func:`app.core.recording.model.config_summary`); ``settings``: the run's
    :class:`app.core.settings.GenerationSettings` as a dict (a race lane's mode and token cap are taken from
    its :class:`LaneEvent`); ``prompt``: the user's text; ``first_run``: number of the first run's label
    (``"run 1 · jit-static"``). A run starts at a :class:`LaneEvent`, or at the first
    :class:`PromptEvent` / :class:`CallRecord` / :class:`TokenEvent` when none is running, and ends at its
    :class:`FinishedEvent`. A race's :class:`VerdictsEvent` is kept in :attr:`verdicts` (:func:`verdict_record`:
    the race's number and the machine with it). :class:`PhaseEvent` and unknown events are ignored. The
    environment is taken when a run ends (JAX's devices only if JAX is imported by then).

    ``autosave_to``: a session file rewritten with the finished runs each time a run ends (:meth:`autosave`,
    through the store's write-then-rename :func:`app.core.recording.store.save`), so a process killed in
    the middle of a race or a program's runs leaves a readable file holding every run finished before the
    kill; ``on_autosave(session, size)`` is called after each such write (e.g. to say so on stderr). A file
    that cannot be written raises :class:`app.core.errors.SessionFileError` from the call that ended the run.
    """

    def __init__(self, model: str, model_id: str = "", config: dict[str, Any] | None = None,
                 settings: dict[str, Any] | None = None, prompt: str = "", first_run: int = 1,
                 autosave_to: str | os.PathLike | None = None,
                 on_autosave: Callable[[SessionFile, int], None] | None = None) -> None:
        self.model, self.model_id, self.config = model, model_id, dict(config or {})
        self.settings, self.prompt = dict(settings or {}), prompt
        self.autosave_to, self.on_autosave = autosave_to, on_autosave
        self.runs: list[RecordedRun] = []
        #: the steady-state verdicts of the races recorded (:func:`verdict_record` each)
        self.verdicts: list[dict[str, Any]] = []
        self.current: RecordedRun | None = None
        self._next = first_run
        self._race: int | None = None
        self._lane_settings: dict[str, Any] | None = None

    def start(self, mode: str | None = None, label: str | None = None, race: int | None = None,
              settings: dict[str, Any] | None = None) -> RecordedRun:
        """Start a run explicitly (the window passes its own label, e.g. ``"run 3 · jit-static"``)."""
        settings = dict(settings if settings is not None else self._lane_settings or self.settings)
        run_mode: str = mode or settings.get("mode", "")
        run = RecordedRun(label=label or f"run {self._next} · {run_mode}", mode=run_mode, model=self.model,
                          model_id=self.model_id, config=self.config, settings=settings, prompt=self.prompt,
                          race=race, started_at=time.time())
        self._next += 1
        self.current = run
        return run

    def feed(self, event: object) -> RecordedRun | None:
        """Record one event; returns the run it completed (on a :class:`FinishedEvent`), else None."""
        if isinstance(event, LaneEvent):
            if event.index == 0:
                self._race = (self._race or 0) + 1
            self._lane_settings = {**self.settings, "mode": event.mode, "max_new_tokens": event.max_new_tokens}
            self.start(event.mode, race=self._race)
            return None
        if isinstance(event, VerdictsEvent):
            self.verdicts.append(verdict_record(event, self._race))
            if self.autosave_to is not None:
                self.autosave()
            return None
        if not isinstance(event, (PromptEvent, CallRecord, TokenEvent, IREvent, FinishedEvent)):
            return None
        run = self.current
        if run is None:
            run = self.start(getattr(event, "mode", None) or None)
        if isinstance(event, PromptEvent):
            run.prompt_event = event
        elif isinstance(event, CallRecord):
            run.records.append(event)
            run.mode = event.mode or run.mode
        elif isinstance(event, TokenEvent):
            run.tokens.append(event)
        elif isinstance(event, IREvent):
            ir = event.ir.plain() if isinstance(event.ir, StepIR) else event.ir
            run.ir[event.step] = ir
        elif isinstance(event, FinishedEvent):
            run.finished = event
            self.finish(run)
            return run
        return None

    def feed_all(self, events: Iterable[object]) -> list[RecordedRun]:
        """:meth:`feed` each event; returns the runs completed."""
        return [run for run in (self.feed(e) for e in events) if run is not None]

    def finish(self, run: RecordedRun | None = None, autosave: bool = True) -> RecordedRun | None:
        """End ``run`` (default: the current one) even without a :class:`FinishedEvent` (a stopped or failed
        run keeps what it recorded): stamps its environment and time and adds it to :attr:`runs`; then, with
        ``autosave_to`` (and ``autosave``), rewrites that file with the finished runs (:meth:`autosave`)."""
        run = run or self.current
        if run is None:
            return None
        env = environment()
        env["mesh"] = run.mesh
        env["persistent_cache_hits"] = run.persistent_cache_hits
        run.environment = env
        run.recorded_at = utc_now()
        if run not in self.runs:
            self.runs.append(run)
        if run is self.current:
            self.current = None
        if autosave and self.autosave_to is not None:
            self.autosave()
        return run

    def autosave(self) -> int | None:
        """Write the finished runs (not the one in progress) to ``autosave_to`` through a temporary file
        renamed over it, so the file is always whole: the previous version or this one, never half of one.
        Returns the bytes written (None without ``autosave_to``); raises
        :class:`app.core.errors.SessionFileError` when it cannot be written."""
        if self.autosave_to is None:
            return None
        session = SessionFile(runs=list(self.runs), verdicts=list(self.verdicts))
        size = session.save(self.autosave_to)
        if self.on_autosave is not None:
            self.on_autosave(session, size)
        return size

    def add_source_map(self, step: str, source_map: SourceMap, run: RecordedRun | None = None) -> None:
        """Attach a step's :class:`app.core.inspect.source_map.SourceMap` to ``run`` (default: the newest run
        with IR of ``step``, else the newest run; the map is built after the run it belongs to has ended)."""
        runs = self.runs + ([self.current] if self.current is not None else [])
        target = run or next((r for r in reversed(runs) if step in r.ir), runs[-1] if runs else None)
        if target is not None:
            target.source_maps[step] = source_map

    def add_passes(self, ready: RecordablePasses, run: RecordedRun | None = None) -> RecordedPasses | None:
        """Attach a recorded pass pipeline (an :class:`app.core.session.requests.PassesReady`, read by its
        attributes) to ``run`` (default: the last run) as a :class:`RecordedPasses`: its pass rows, snapshot
        summaries, compile-time breakdown, fusions, fusion log and the module before and after the passes."""
        target = run or self.current or (self.runs[-1] if self.runs else None)
        if target is None:
            return None
        p = ready.pipeline

        def text(snapshot: Snapshot | None) -> str | None:  # not through Snapshot.text: that would keep the text unpacked
            return None if snapshot is None else zlib.decompress(snapshot.compressed).decode("utf-8")

        target.passes = RecordedPasses(
            step=ready.step, mode=ready.mode, module=getattr(p, "module", ""),
            compile_ms=getattr(p, "compile_ms", None), rows=list(ready.rows), snapshots=list(ready.snapshots),
            breakdown=dict(ready.breakdown), fusions=list(ready.fusions), decisions=list(ready.decisions),
            seconds=float(ready.seconds), initial_hlo=text(getattr(p, "before", None)),
            final_hlo=text(getattr(p, "final", None)))
        return target.passes

    def add_profile(self, profile: StepProfile, run: RecordedRun | None = None) -> None:
        """Attach a measured :class:`app.core.profile.model.StepProfile` (its ``source_map`` goes to the run's
        ``source_maps``) to ``run`` (default: the last run)."""
        target = run or self.current or (self.runs[-1] if self.runs else None)
        if target is None:
            return
        if getattr(profile, "source_map", None) is not None:
            target.source_maps.setdefault(profile.step, profile.source_map)
        target.profile = replace(profile, source_map=None)

    def session(self) -> SessionFile:
        """A :class:`SessionFile` of the finished runs (and the current one, ended as it stands)."""
        if self.current is not None:
            self.finish(autosave=False)  # the caller writes the session it asked for
        return SessionFile(runs=list(self.runs), verdicts=list(self.verdicts))


def verdict_record(event: VerdictsEvent, race: int | None) -> dict[str, Any]:
    """What a session file keeps of a race's verdicts: the event's JSON (pairs, rounds, A/A, threads, load
    average, …), ``race`` (the number of the race whose lanes it follows) and ``environment`` (CPU model, cores,
    package versions: :func:`app.core.recording.environment.environment`)."""
    return {**event.to_json(), "race": race, "environment": environment()}
