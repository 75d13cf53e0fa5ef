"""The settings race as the compute service runs it: the core race's stream
(:func:`app.core.compile_settings.race.settings_race`) passed through unchanged — its lanes are runs, as a mode
race's are — with a :class:`app.core.session.requests.SettingsRaceLanes` at the start and at the end of each lane,
so a view redraws the trade-off lane by lane from plain data. No Qt."""

from __future__ import annotations

from collections.abc import Callable, Iterator
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
