"""The newest settings race in the session (issue 57: its results were kept in the Demo kit's panel): its lanes so
far, what it raced (the loaded model's decode step or a program's entry point) and on which model — raced here, or
reopened from a session file — so the trade-off plots, the verdict line, Compare passes… and a saved session read
the same one and no view keeps its own copy."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from app.core.compile_settings.figures import SettingLane
from app.core.compile_settings.progress import PAIRED_INDEX, SettingsRaceLanes
from app.core.compile_settings.saved import lanes_of, race_document
from app.core.programs.compute.requests import ProgramSettingsRaceRequest
from app.core.requests import Request
from app.core.session.events_group import SessionEvents
from app.core.steps import DECODE


@dataclass
class SettingsRaceShown:
    """One settings race: ``lanes`` (its finished lanes, in race order: the baseline first), ``request`` (the
    request that raced them; None for a race reopened from a file), ``model`` (the model a model race ran on: the
    session's loaded model at its first lane, not whatever the model box says later; ``""`` for a program race),
    ``title`` and ``origin`` (a reopened race's saved title and the file's name; ``""`` for a live race)."""

    lanes: list[SettingLane] = field(default_factory=list)
    request: Request | None = None
    model: str = ""
    title: str = ""
    origin: str = ""

    @property
    def program(self) -> ProgramSettingsRaceRequest | None:
        """The program race's request (Compare passes… records that entry point), None for a model race."""
        return self.request if isinstance(self.request, ProgramSettingsRaceRequest) else None

    def entry(self, program_label: str = "") -> str:
        """``"name:entry"`` of a program race (``program_label`` when its request names no entry), ``""``
        otherwise."""
        req = self.program
        if req is None:
            return ""
        return f"{req.name}:{req.entry}" if req.entry else program_label

    def what(self) -> str:
        """What the points are: ``"program selu"`` / ``"model smollm2-135m-instruct | jit-static decode step"``, or a
        reopened race's title."""
        req = self.program
        if req is not None:
            return f"program {req.entry or req.name}"
        if self.request is None:
            return self.title
        return f"model {self.model} | jit-static decode step"

    def document(self) -> dict[str, Any] | None:
        """The race as a session file keeps it (:func:`app.core.compile_settings.saved.race_document`: its title,
        step and lanes), None before its first lane."""
        if not self.lanes:
            return None
        return race_document(self.what(), "program" if self.program is not None else DECODE, list(self.lanes))


class SettingsRaceResults:
    """The newest settings race (:attr:`settings_race`, None before any), updated from the compute thread's
    :class:`SettingsRaceLanes` before they are announced on ``events.settingsRace``, or from a session file
    (:meth:`show_settings_race`). A base of :class:`app.core.session.model.Session`; same thread as it."""

    events: SessionEvents
    active: Any
    loaded: Any

    def _init_settings_race(self) -> None:
        self.settings_race: SettingsRaceShown | None = None

    def _settings_race_handlers(self) -> dict[type, Callable[[Any], None]]:
        return {SettingsRaceLanes: self._on_settings_race}

    def _on_settings_race(self, event: SettingsRaceLanes) -> None:
        """A lane starts or ends (or the paired rounds say where they are): the race's lanes so far. An abandoned
        race's late answer changes nothing and is not announced."""
        if event.request is not self.active:
            return
        if event.index != PAIRED_INDEX:
            shown = self.settings_race
            if shown is None or shown.request is not event.request:  # a new race: on the model loaded now
                model = "" if isinstance(event.request, ProgramSettingsRaceRequest) or self.loaded is None \
                    else self.loaded.request.model
                shown = self.settings_race = SettingsRaceShown(request=event.request, model=model)
            shown.lanes = list(event.lanes)
        self.events.settingsRace.emit(event)

    def show_settings_race(self, document: dict[str, Any], origin: str) -> SettingsRaceShown:
        """Make a race read from a session file (``document``: :func:`race_document`'s form; ``origin``: the
        file's name) the newest. Raises ``KeyError`` / ``TypeError`` for a malformed lane (as
        :func:`app.core.compile_settings.saved.lanes_of`)."""
        self.settings_race = SettingsRaceShown(lanes_of(document), None, "", str(document.get("title", "")), origin)
        return self.settings_race
