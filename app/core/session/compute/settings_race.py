"""The settings race as the compute service runs it: the core race's stream
(:func:`app.core.compile_settings.race.settings_race`) passed through unchanged — its lanes are runs, as a mode
race's are — with a :class:`app.core.compile_settings.progress.SettingsRaceLanes` at the start and at the end of each
lane, so a view redraws the trade-off lane by lane from plain data, then (with the request's ``steady`` plan) the
paired rounds' progress and, once they end, every lane with its "vs baseline" verdict
(:mod:`app.core.compile_settings.paired`); and where two of its settings part (:class:`SettingsPartingRequest`, the
pass pipelines of the decode step compared in lockstep). A program's entry point races the same way, in its own
package (:func:`app.core.programs.compute.race.program_race_events`). No Qt."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from app.core.compile_settings.catalog import parse_setting
from app.core.compile_settings.parting import record_setting, where_settings_part
from app.core.compile_settings.progress import lanes_events
from app.core.compile_settings.race import settings_race
from app.core.events import PhaseEvent
from app.core.mode_catalog import race_lane_mode
from app.core.passes.lowered import lowered_for
from app.core.passes.record import RecordingStopped
from app.core.programs.runner import ProgramRunner
from app.core.requests import Handlers, Notice, Request
from app.core.session import requests as rq
from app.core.steps import DECODE

if TYPE_CHECKING:
    from app.core.engine.engine import Engine
    from app.core.programs.compute.service import ProgramService


def settings_race_events(engine: Engine, request: rq.SettingsRaceRequest,
                         should_stop: Callable[[], bool]) -> Iterator[Any]:
    """Race ``request.modes`` (compiler settings) on ``engine`` with ``request.settings`` and, with
    ``request.steady``, the paired rounds that state each setting's "vs baseline" ratio; yields the core race's
    events, its setting lanes, paired-round progress and verdicts replaced by
    :class:`~app.core.compile_settings.progress.SettingsRaceLanes` (:func:`lanes_events`). Raises :class:`app.core.errors.InvalidSettingsError` (a setting refused by name) before
    anything runs."""
    stream = settings_race(engine, request.prompt, list(request.modes), request.settings, should_stop,
                           paired=request.steady)
    yield from lanes_events(request, stream)


@dataclass(frozen=True)
class SettingsPartingRequest(Request):
    """Where ``setting`` parts from ``baseline`` (settings' names as the race took them) on the loaded model's
    jit-static decode step (:func:`app.core.compile_settings.parting.where_settings_part`) — or, with ``program``
    (a :class:`app.core.programs.compute.requests.ProgramRequest`, e.g. the program settings race's), on that program's entry point
    (no model needed): two compiles with XLA's pass dumps on → one :class:`SettingsParted`, or nothing when stopped
    (a :class:`Notice` says so)."""

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


def handlers(engine: Callable[[], Engine], programs: Callable[[], ProgramService],
             ran: Callable[[Iterator[Any], Any, bool], Iterator[Any]]) -> Handlers:
    """The settings race's entries in the compute service's table: a model's race (its lanes are runs: ``ran``, the
    service's :meth:`~app.core.session.compute.service.ComputeService.ran`, adds their source maps) and the
    parting."""
    return {
        rq.SettingsRaceRequest: lambda r, stop, live: ran(settings_race_events(engine(), r, stop), live, r.source_maps),
        SettingsPartingRequest: lambda r, stop, live: parting_events(
            programs() if r.program is not None else engine(), r, stop, live),
    }


def parting_events(source: Engine | ProgramService, request: SettingsPartingRequest,
                   should_stop: Callable[[], bool], on_live_phase: Callable[[Any], None] | None) -> Iterator[Any]:
    """Record the pass pipeline of ``source``'s raced step — an engine's jit-static decode step, or with
    ``request.program`` the entry point that the :class:`ProgramService` ``source`` prepares (traced and lowered anew)
    — under ``request.baseline`` and ``request.setting`` and walk them in lockstep; each stage is a live :class:`app.core.events.PhaseEvent` (``"recording passes"``, the setting named).
    Stopped (``should_stop``, polled around each compile): one :class:`Notice`, no answer. Raises
    :class:`app.core.errors.PlaygroundError` when no jit-static decode step was compiled yet, the program's
    :class:`app.core.programs.errors.ProgramError`, and what :func:`where_settings_part` raises (a setting refused
    by name, a recording XLA refused)."""
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
        yield Notice("Stopped: the two settings' passes were not compared.")
        return
    yield SettingsParted(request, parting, time.perf_counter() - t0)


def _parse(name: str) -> Any:
    import jax

    return parse_setting(name, jax.default_backend())
