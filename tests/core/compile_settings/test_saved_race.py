"""A settings race kept in a session file: the document written only when a race is there (older files unchanged),
read back lane for lane, and a malformed race refused as a corrupted file."""

from __future__ import annotations

import json
import zipfile

import pytest

from app.core.compile_settings.figures import SettingLane
from app.core.compile_settings.saved import format_race, json_lines, lanes_of, race_document
from app.core.errors import SessionFileError
from app.core.recording.store import MEMBER, SessionFile, load, to_document


def _lanes() -> list[SettingLane]:
    return [SettingLane("default", "nothing", 10.0, 5.0, 985.0, 10.0, 31, peak_bytes=1000, outputs_equal=True),
            SettingLane("O3", "optimization_level=O3", 12.0, 6.0, 3082.0, 9.0, 31, peak_bytes=1000,
                        outputs_equal=True)]


def test_a_race_round_trips_through_a_session_file(tmp_path):
    parting = {"setting": "O3", "pass": "fusion", "text": "O3 parts from default at fusion pipeline / fusion"}
    document = race_document("model tiny | jit-static decode step", "decode", _lanes(), {"O3": parting})
    path = tmp_path / "race.session"
    SessionFile(settings_races=[document]).save(path)
    again = load(path).settings_races
    assert again == [document]
    assert [lane.to_json() for lane in lanes_of(again[0])] == [lane.to_json() for lane in _lanes()]
    text = format_race(again[0])
    assert text.splitlines()[0] == "model tiny | jit-static decode step"
    assert "O3 pays for its extra 2.1 s after 2,100 tokens" in text and text.endswith(parting["text"])
    found = json.loads(json_lines(again[0])[-1])
    assert found["first_differing_pass"] == {"O3": "fusion"} and found["break_even"] == {"O3": 2100}


def test_a_session_without_races_writes_no_races_key():
    assert "settings_races" not in to_document(SessionFile())


def test_a_malformed_race_is_a_corrupted_file(tmp_path):
    path = tmp_path / "bad.session"
    doc = {**to_document(SessionFile()), "settings_races": [{"kind": "settings-race", "lanes": "not a list"}]}
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(MEMBER, json.dumps(doc))
    with pytest.raises(SessionFileError, match="settings_races is not a list of races with lanes"):
        load(path)
