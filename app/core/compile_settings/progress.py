"""A settings race's progress as plain data, for a model step's race and a program entry's alike:
:class:`SettingsRaceLanes` (the lanes so far, the one running) and :func:`lanes_events`, which puts them into a race's
stream (:func:`app.core.compile_settings.race.settings_race`, :func:`app.core.programs.compute.race.
program_settings_race`). No Qt."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from app.core.compile_settings.figures import SettingLane
from app.core.compile_settings.paired import PHASE, SettingsVerdicts, attach
from app.core.events import LaneEvent, SteadyBlockEvent
from app.core.requests import Request
from app.core.verdict.words import progress_line


@dataclass(frozen=True)
class SettingsRaceLanes:
    """A settings race's progress: ``lanes`` the finished lanes so far (:class:`app.core.compile_settings.figures.
    SettingLane`, plain data, the baseline first), ``running`` the setting of the lane starting (``""`` after a
    lane), ``index`` / ``n_lanes`` its place (0-based) among the race's lanes; ``request`` the race's (a
    :class:`app.core.session.requests.SettingsRaceRequest`, or a program's
    :class:`app.core.programs.compute.requests.ProgramSettingsRaceRequest`)."""

    request: Request
    lanes: tuple[Any, ...]
    running: str = ""
    index: int = 0
    n_lanes: int = 0


#: ``SettingsRaceLanes.index`` of the paired rounds after the lanes: ``running`` then says where they are.
PAIRED_INDEX = -1


def lanes_events(request: Request, stream: Iterator[Any]) -> Iterator[Any]:
    """``stream``'s events with its :class:`SettingLane` s replaced by :class:`SettingsRaceLanes` carrying copies of
    every lane so far (the compute thread never changes what a view holds): one as each lane starts and ends; during
    the paired rounds one per block with ``index`` :data:`PAIRED_INDEX` and ``running`` its progress line
    (``"paired rounds · round 4 (≥ 9) · O3 · 6.3 s of 30 s"``); after them one with every lane and its verdict
    (``SettingLane.verdict``)."""
    lanes: list[SettingLane] = []
    n_lanes = 0
    for event in stream:
        if isinstance(event, SettingLane):
            lanes.append(dataclasses.replace(event))
            yield SettingsRaceLanes(request, tuple(lanes), "", len(lanes) - 1, n_lanes)
        elif isinstance(event, SteadyBlockEvent):
            line = progress_line(event.round, event.label, event.elapsed_s, event.budget_s, event.min_rounds)
            yield SettingsRaceLanes(request, tuple(lanes), line.replace("steady state", PHASE), PAIRED_INDEX,
                                       n_lanes)
        elif isinstance(event, SettingsVerdicts):
            lanes = [dataclasses.replace(lane) for lane in lanes]
            attach(lanes, event.doc)
            yield SettingsRaceLanes(request, tuple(lanes), "", len(lanes) - 1, n_lanes)
        else:
            if isinstance(event, LaneEvent):
                n_lanes = event.n_lanes
                yield SettingsRaceLanes(request, tuple(lanes), event.mode, event.index, n_lanes)
            yield event
