"""The settings race as the compute service runs it: the core race's stream
(:func:`app.core.compile_settings.race.settings_race`) passed through unchanged — its lanes are runs, as a mode
race's are — with a :class:`app.core.session.requests.SettingsRaceLanes` at the start and at the end of each lane,
so a view redraws the trade-off lane by lane from plain data, then (with the request's ``steady`` plan) the paired
rounds' progress and, once they end, every lane with its "vs baseline" verdict (:mod:`app.core.compile_settings.
paired`); and where two of its settings part
(:class:`SettingsPartingRequest`, the pass pipelines of the decode step compared in lockstep). A program's entry point
races the same way (:class:`ProgramSettingsRaceRequest`, :func:`program_race_events`): its lanes are program runs
(unit ``"call"``), no model needed. No Qt."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from app.core.compile_settings.figures import SettingLane
from app.core.events import CallRecord, FinishedEvent, LaneEvent
from app.core.mode_catalog import race_lane_mode
from app.core.session import requests as rq
from app.core.steps import DECODE

if TYPE_CHECKING:
    from app.core.engine.engine import Engine
    from app.core.session.programs_service import ProgramService


def settings_race_events(engine: Engine, request: rq.SettingsRaceRequest,
                         should_stop: Callable[[], bool]) -> Iterator[Any]:
    """Race ``request.modes`` (compiler settings) on ``engine`` with ``request.settings`` and, with
    ``request.steady``, the paired rounds that state each setting's "vs baseline" ratio; yields the core race's
    events, its :class:`SettingLane` s, paired-round progress and verdicts replaced by :class:`SettingsRaceLanes`
    (:func:`lanes_events`). Raises :class:`app.core.errors.InvalidSettingsError` (a setting refused by name) before
    anything runs."""
    from app.core.compile_settings.race import settings_race

    stream = settings_race(engine, request.prompt, list(request.modes), request.settings, should_stop,
                           paired=request.steady)
    yield from lanes_events(request, stream)


#: ``SettingsRaceLanes.index`` of the paired rounds after the lanes: ``running`` then says where they are.
PAIRED_INDEX = -1


def lanes_events(request: rq.Request, stream: Iterator[Any]) -> Iterator[Any]:
    """``stream``'s events with its :class:`SettingLane` s replaced by :class:`SettingsRaceLanes` carrying copies of
    every lane so far (the compute thread never changes what a view holds): one as each lane starts and ends; during
    the paired rounds one per block with ``index`` :data:`PAIRED_INDEX` and ``running`` its progress line
    (``"paired rounds · round 4 (≥ 9) · O3 · 6.3 s of 30 s"``); after them one with every lane and its verdict
    (``SettingLane.verdict``)."""
    from app.core.compile_settings.paired import PHASE, SettingsVerdicts, attach
    from app.core.events import SteadyBlockEvent
    from app.core.verdict.words import progress_line

    lanes: list[SettingLane] = []
    n_lanes = 0
    for event in stream:
        if isinstance(event, SettingLane):
            lanes.append(dataclasses.replace(event))
            yield rq.SettingsRaceLanes(request, tuple(lanes), "", len(lanes) - 1, n_lanes)
        elif isinstance(event, SteadyBlockEvent):
            line = progress_line(event.round, event.label, event.elapsed_s, event.budget_s, event.min_rounds)
            yield rq.SettingsRaceLanes(request, tuple(lanes), line.replace("steady state", PHASE), PAIRED_INDEX,
                                       n_lanes)
        elif isinstance(event, SettingsVerdicts):
            lanes = [dataclasses.replace(lane) for lane in lanes]
            attach(lanes, event.doc)
            yield rq.SettingsRaceLanes(request, tuple(lanes), "", len(lanes) - 1, n_lanes)
        else:
            if isinstance(event, LaneEvent):
                n_lanes = event.n_lanes
                yield rq.SettingsRaceLanes(request, tuple(lanes), event.mode, event.index, n_lanes)
            yield event


@dataclass(frozen=True)
class ProgramSettingsRaceRequest(rq.ProgramRequest):
    """Race the entry point of the user's program (the :class:`rq.ProgramRequest` fields: its text, entry point,
    argument spec, ``n_calls`` calls per lane) under the compiler settings ``names`` (as
    :class:`rq.SettingsRaceRequest` names them; Inductor's are refused by name: a JAX program has nothing for it)
    (:func:`app.core.programs.compute.race.program_settings_race`): each lane a program run named after its
    setting, followed by :class:`rq.SettingsRaceLanes` (lanes with ``unit == "call"``). It is a program request: no
    model needed, its errors are the program's (:class:`rq.ProgramFailed` at the user's line). With ``steady`` (a
    :class:`app.core.steady.SteadyPlan`), paired rounds of the settings' executables state each "vs baseline" ratio."""

    names: tuple[str, ...] = ()
    #: the paired rounds after the lanes (an :class:`app.core.steady.SteadyPlan`; None: the lanes alone)
    steady: Any = None
    label = "settings race"


def program_race_events(programs: ProgramService, request: ProgramSettingsRaceRequest,
                        should_stop: Callable[[], bool]) -> Iterator[Any]:
    """Load and prepare ``request``'s program (``programs`` keeps it warm for a later run), say so
    (:class:`rq.ProgramLoaded`), then race its entry point under ``request.names`` on JAX's default backend: per lane
    a :class:`LaneEvent`, its :class:`CallRecord` s, a :class:`FinishedEvent` (``"calls"``, ``"stopped"`` or
    ``"error"``; the program run's summary) and :class:`rq.SettingsRaceLanes` before and after it; unless stopped,
    the entry point's IR and source map last (:meth:`ProgramService.ir_events`: one more compile). Raises
    :class:`app.core.errors.InvalidSettingsError` (a setting refused by name) before any lane, and the program's
    :class:`app.core.programs.errors.ProgramError` (after its :class:`rq.ProgramFailed`)."""
    from app.core.programs.errors import ProgramError
    from app.core.programs.specs import SpecError
    from app.core.session.programs_service import entry_infos, failed

    try:
        try:
            program, prepared, _runner = programs.prepare(request, should_stop)
        except SpecError as exc:
            raise ProgramError(str(exc), error_type="SpecError", stage="args") from None
        yield rq.ProgramLoaded(request, program.path, program.display_name, entry_infos(program),
                               prepared.entry.name, prepared.describe_args(), prepared.backend)
        yield from _program_lanes(prepared, request, should_stop)
        if not should_stop():  # the IR views show the entry point as XLA's defaults compile it (the lanes keep no IR;
            yield from programs.ir_events(prepared, prepared.entry.name, should_stop)  # a model race's first lane does)
    except ProgramError as exc:
        yield failed(request, exc)
        raise


def _program_lanes(prepared: Any, request: ProgramSettingsRaceRequest,
                   should_stop: Callable[[], bool]) -> Iterator[Any]:
    import jax

    from app.core.programs.compute.race import program_settings_race
    from app.core.programs.errors import ProgramError
    from app.core.programs.runner import program_summary

    lane: dict[str, Any] = {"mode": "", "records": [], "t0": time.perf_counter()}  # the lane running
    stream = program_settings_race(prepared, request.names, jax.default_backend(), request.n_calls, should_stop,
                                   paired=request.steady)

    def with_summaries() -> Iterator[Any]:  # each lane's FinishedEvent (its program run's summary) before its figures
        for event in stream:
            if isinstance(event, SettingLane):
                summary = program_summary(event.name, lane["records"], (time.perf_counter() - lane["t0"]) * 1000)
                yield FinishedEvent("stopped" if event.stopped else "calls", summary)
                lane["mode"] = ""
            elif isinstance(event, LaneEvent):
                lane.update(mode=event.mode, records=[], t0=time.perf_counter())
            elif isinstance(event, CallRecord):
                lane["records"].append(event)
            yield event

    try:
        yield from lanes_events(request, with_summaries())
    except ProgramError:
        if lane["mode"]:  # the lane that failed ends as an error, with the calls it made
            ms = (time.perf_counter() - lane["t0"]) * 1000
            yield FinishedEvent("error", program_summary(lane["mode"], lane["records"], ms))
        raise


@dataclass(frozen=True)
class SettingsPartingRequest(rq.Request):
    """Where ``setting`` parts from ``baseline`` (settings' names as the race took them) on the loaded model's
    jit-static decode step (:func:`app.core.compile_settings.parting.where_settings_part`) — or, with ``program``
    (a :class:`rq.ProgramRequest`, e.g. the :class:`ProgramSettingsRaceRequest` raced), on that program's entry point
    (no model needed): two compiles with XLA's pass dumps on → one :class:`SettingsParted`, or nothing when stopped
    (a :class:`rq.Notice` says so)."""

    baseline: str
    setting: str
    program: Any = None
    label = "settings parting"


@dataclass(frozen=True)
class SettingsParted:
    """The answer to a :class:`SettingsPartingRequest`: ``parting`` the :class:`app.core.compile_settings.parting.
    Parting` (plain data: snapshot texts zlib-compressed, no JAX), ``seconds`` the wall time of both recordings."""

    request: SettingsPartingRequest
    parting: Any
    seconds: float


def parting_events(source: Engine | ProgramService, request: SettingsPartingRequest,
                   should_stop: Callable[[], bool], on_live_phase: Callable[[Any], None] | None) -> Iterator[Any]:
    """Record the pass pipeline of ``source``'s raced step — an engine's jit-static decode step, or with
    ``request.program`` the entry point that the :class:`ProgramService` ``source`` prepares (traced and lowered anew)
    — under ``request.baseline`` and ``request.setting`` and walk them in lockstep; each stage is a live :class:`app.core.events.PhaseEvent` (``"recording passes"``, the setting named).
    Stopped (``should_stop``, polled around each compile): one :class:`rq.Notice`, no answer. Raises
    :class:`app.core.errors.PlaygroundError` when no jit-static decode step was compiled yet, the program's
    :class:`app.core.programs.errors.ProgramError`, and what :func:`where_settings_part` raises (a setting refused
    by name, a recording XLA refused)."""
    from app.core.compile_settings.parting import record_setting, where_settings_part
    from app.core.events import PhaseEvent
    from app.core.passes.lowered import lowered_for
    from app.core.passes.record import RecordingStopped
    from app.core.programs.runner import ProgramRunner

    t0 = time.perf_counter()
    if request.program is not None:  # the program race's entry point: its prepared call (kept warm)
        prepared = cast("ProgramService", source).prepare(request.program, should_stop)[1]
        lowered = lowered_for(ProgramRunner(prepared), should_stop=should_stop)[1]
    else:
        lowered = lowered_for(cast("Engine", source), DECODE, race_lane_mode("xla"))[1]
    base, other = (_parse(n) for n in (request.baseline, request.setting))

    def progress(name: str) -> Callable[[str], None]:
        def say(message: str) -> None:
            if on_live_phase is not None:
                on_live_phase(PhaseEvent("recording passes", True, f"{name}: {message}"))
        return say

    try:
        a = record_setting(lowered, base, should_stop=should_stop, on_progress=progress(base.name))
        parting = where_settings_part(lowered, base, other, should_stop=should_stop,
                                      on_progress=progress(other.name), baseline_pipeline=a)
    except RecordingStopped:
        yield rq.Notice("Stopped: the two settings' passes were not compared.")
        return
    yield SettingsParted(request, parting, time.perf_counter() - t0)


def _parse(name: str) -> Any:
    import jax

    from app.core.compile_settings.catalog import parse_setting

    return parse_setting(name, jax.default_backend())
