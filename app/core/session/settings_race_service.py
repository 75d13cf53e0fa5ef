"""The settings race as the compute service runs it: the core race's stream
(:func:`app.core.compile_settings.race.settings_race`) passed through unchanged — its lanes are runs, as a mode
race's are — with a :class:`app.core.session.requests.SettingsRaceLanes` at the start and at the end of each lane,
so a view redraws the trade-off lane by lane from plain data; and where two of its settings part
(:class:`SettingsPartingRequest`, the pass pipelines of the decode step compared in lockstep). No Qt."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.core.compile_settings.figures import SettingLane
from app.core.events import LaneEvent
from app.core.session import requests as rq

if TYPE_CHECKING:
    from app.core.engine.engine import Engine


def settings_race_events(engine: Engine, request: rq.SettingsRaceRequest,
                         should_stop: Callable[[], bool]) -> Iterator[Any]:
    """Race ``request.modes`` (compiler settings) on ``engine`` with ``request.settings``; yields the core race's
    events, its :class:`SettingLane` s replaced by :class:`SettingsRaceLanes` carrying every lane so far. Raises
    :class:`app.core.errors.InvalidSettingsError` (a setting refused by name) before anything runs."""
    from app.core.compile_settings.race import settings_race

    lanes: list[SettingLane] = []
    n_lanes = 0
    for event in settings_race(engine, request.prompt, list(request.modes), request.settings, should_stop):
        if isinstance(event, SettingLane):
            lanes.append(event)
            yield rq.SettingsRaceLanes(request, tuple(lanes), "", len(lanes) - 1, n_lanes)
            continue
        if isinstance(event, LaneEvent):
            n_lanes = event.n_lanes
            yield rq.SettingsRaceLanes(request, tuple(lanes), event.mode, event.index, n_lanes)
        yield event


@dataclass(frozen=True)
class SettingsPartingRequest(rq.Request):
    """Where ``setting`` parts from ``baseline`` (settings' names as the race took them) on the loaded model's
    jit-static decode step (:func:`app.core.compile_settings.parting.where_settings_part`): two compiles with XLA's
    pass dumps on → one :class:`SettingsParted`, or nothing when stopped (a :class:`rq.Notice` says so)."""

    baseline: str
    setting: str
    label = "settings parting"


@dataclass(frozen=True)
class SettingsParted:
    """The answer to a :class:`SettingsPartingRequest`: ``parting`` the :class:`app.core.compile_settings.parting.
    Parting` (plain data: snapshot texts zlib-compressed, no JAX), ``seconds`` the wall time of both recordings."""

    request: SettingsPartingRequest
    parting: Any
    seconds: float


def parting_events(engine: Engine, request: SettingsPartingRequest, should_stop: Callable[[], bool],
                   on_live_phase: Callable[[Any], None] | None) -> Iterator[Any]:
    """Record the decode step's pass pipeline under ``request.baseline`` and ``request.setting`` and walk them in
    lockstep; each stage is a live :class:`app.core.events.PhaseEvent` (``"recording passes"``, the setting named).
    Stopped (``should_stop``, polled around each compile): one :class:`rq.Notice`, no answer. Raises
    :class:`app.core.errors.PlaygroundError` when no jit-static decode step was compiled yet, and what
    :func:`where_settings_part` raises (a setting refused by name, a recording XLA refused)."""
    from app.core.compile_settings.parting import record_setting, where_settings_part
    from app.core.events import PhaseEvent
    from app.core.passes.lowered import lowered_for
    from app.core.passes.record import RecordingStopped

    t0 = time.perf_counter()
    _mode, lowered = lowered_for(engine, "decode", "jit-static")
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
