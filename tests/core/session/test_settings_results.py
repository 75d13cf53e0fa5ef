"""The newest settings race lives in the session (issue 57: it was kept in the Demo kit's panel): its lanes follow the
active race's progress events, an abandoned race's late events change nothing, a model race names the model it ran
on even after another loads, and a race reopened from a session file comes back with its title and lanes."""

from __future__ import annotations

from app.core.compile_settings.figures import SettingLane
from app.core.compile_settings.progress import PAIRED_INDEX, SettingsRaceLanes
from app.core.programs.compute.requests import ProgramSettingsRaceRequest
from app.core.session import requests as rq
from app.core.session.model import Session
from app.core.settings import GenerationSettings


def _lane(name: str, compile_ms: float, steady_ms: float, unit: str = "token") -> SettingLane:
    return SettingLane(name, "", 1.0, 2.0, compile_ms, steady_ms, 8, unit=unit)


def _session() -> tuple[Session, list]:
    s = Session(lambda _r: None)
    seen: list = []
    s.events.settingsRace.connect(seen.append)
    return s, seen


def test_the_active_model_race_keeps_its_lanes_and_model_and_saves_them():
    s, seen = _session()
    s.loaded = rq.ModelLoaded(rq.LoadRequest("smollm2-135m-instruct"), "SmolLM2", "smollm2", 1.0)
    race = rq.SettingsRaceRequest("The jit", ("default", "O0"), GenerationSettings())
    s.active = race
    base, o0 = _lane("default", 90.0, 4.0), _lane("O0", 30.0, 9.0)
    s.apply(SettingsRaceLanes(race, (), "default", 0, 2))
    s.apply(SettingsRaceLanes(race, (base,), "", 0, 2))
    s.loaded = rq.ModelLoaded(rq.LoadRequest("another-model"), "other", "other", 1.0)  # the race stays named
    s.apply(SettingsRaceLanes(race, (base, o0), "", 1, 2))
    s.apply(SettingsRaceLanes(race, (base, o0), "paired round 3 of 9", PAIRED_INDEX, 2))  # progress, same lanes
    shown = s.settings_race
    assert shown is not None and shown.request is race and shown.lanes == [base, o0] and shown.program is None
    assert shown.what() == "model smollm2-135m-instruct | jit-static decode step" and shown.entry() == ""
    assert len(seen) == 4  # every event announced, after the session kept it
    doc = shown.document()
    assert doc["kind"] == "settings-race" and doc["step"] == "decode" and doc["title"] == shown.what()
    assert [lane["name"] for lane in doc["lanes"]] == ["default", "O0"]

    reopened = s.show_settings_race(doc, "talk.jsonl")  # read back from a session file
    assert s.settings_race is reopened and reopened.request is None and reopened.origin == "talk.jsonl"
    assert [lane.name for lane in reopened.lanes] == ["default", "O0"] and reopened.lanes[1].compile_ms == 30.0
    assert reopened.what() == doc["title"] and reopened.document()["title"] == doc["title"]


def test_an_abandoned_race_changes_nothing_and_a_program_race_names_its_entry():
    s, seen = _session()
    old = rq.SettingsRaceRequest("The jit", ("default", "O3"), GenerationSettings())
    program = ProgramSettingsRaceRequest("def f(x): return x\n", name="prog.py", entry="f", names=("default", "O1"))
    s.active = program
    s.apply(SettingsRaceLanes(old, (_lane("default", 1.0, 1.0),), "", 0, 2))  # late: not the active request
    assert s.settings_race is None and seen == []
    s.apply(SettingsRaceLanes(program, (_lane("default", 5.0, 0.1, "call"),), "", 0, 2))
    shown = s.settings_race
    assert shown.program is program and shown.model == "" and shown.entry() == "prog.py:f"
    assert shown.what() == "program f" and shown.document()["step"] == "program"
    assert s.settings_race.document() is not None and len(seen) == 1
