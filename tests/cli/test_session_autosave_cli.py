"""``--save-session`` is recorded as the command goes (issue 34, no work lost): the file is rewritten after each
run ends, write-then-rename, so a process killed mid-race leaves a readable file with the lanes finished before
the kill."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from app.core.errors import SessionFileError
from app.core.events import CallRecord, FinishedEvent, LaneEvent, PromptEvent, Summary, TokenEvent
from app.core.recording import RunRecorder, load

ROOT = Path(__file__).resolve().parents[2]
TOKENS = 6


def _lane(mode: str, index: int, n_lanes: int = 3) -> list:
    record = CallRecord(0, "prefill", mode, {"input_ids": [1, 2]}, 5.0, 4.0, False, None, None, None, None, None,
                        1_700_000_000.0)
    summary = Summary.from_records(mode, [record], 1, 5.0, 6.0)
    return [LaneEvent(mode, index, n_lanes, 4), PromptEvent("hi", 2), record, TokenEvent(0, 7, "x", 0, 5.0),
            FinishedEvent("max_new_tokens", replace(summary, mode=mode), [7], "x")]


def test_the_recorder_rewrites_its_file_whole_after_each_run(tmp_path, monkeypatch):
    path = tmp_path / "race.session"
    written: list[tuple[int, int]] = []
    rec = RunRecorder("tiny", settings={"mode": "torch", "max_new_tokens": 4}, autosave_to=path,
                      on_autosave=lambda session, size: written.append((len(session.runs), size)))
    for event in _lane("torch", 0):
        rec.feed(event)
    assert [r.mode for r in load(path).runs] == ["torch"] and written[0][0] == 1 and written[0][1] > 0
    second = _lane("jit-static", 1)
    for event in second[:-1]:  # a lane in progress is not in the file
        rec.feed(event)
    assert len(load(path).runs) == 1 and len(written) == 1
    rec.feed(second[-1])
    runs = load(path).runs
    assert [(r.mode, r.race, len(r.tokens), len(r.records)) for r in runs] == [("torch", 1, 1, 1),
                                                                             ("jit-static", 1, 1, 1)]
    assert runs[1].finished.token_ids == [7] and runs[1].environment.get("packages")

    # a write that dies half-way leaves the previous file whole (and no temporary file behind)
    def broken(self, *args, **kwargs):  # noqa: ANN001
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(zipfile.ZipFile, "writestr", broken)
    with pytest.raises(SessionFileError, match="cannot be written"):
        for event in _lane("torchax-eager", 2):
            rec.feed(event)
    monkeypatch.undo()
    assert [r.mode for r in load(path).runs] == ["torch", "jit-static"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["race.session"]
    # the final write (what write_session_outputs does) has every run; session() writes nothing by itself
    assert len(written) == 2
    assert len(rec.session().runs) == 3 and len(written) == 2


def test_a_race_killed_mid_lane_leaves_the_lanes_finished_before_the_kill(gui_model, tmp_path):
    """The real CLI in a process, SIGKILLed while its third lane (torchax-eager, slow: every op dispatched on
    its own) runs: the file reopens with the two lanes finished before, each whole."""
    path = tmp_path / "race.session"
    path.write_bytes(b"an older file at this path")  # replaced at the start: never taken for this race's
    cmd = [sys.executable, "-m", "app", "race", "--model", gui_model, "--prompt", "The jit", "--modes", "torch",
           "jit-static", "torchax-eager", "--max-new-tokens", TOKENS, "--eager-tokens", TOKENS, "--ignore-eos",
           "--save-session", path]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen([str(c) for c in cmd], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    runs, alive, deadline = [], False, time.monotonic() + 240
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                runs = load(path).runs
            except SessionFileError:  # the older file, until the race has started
                runs = []
            if len(runs) >= 2:
                alive = proc.poll() is None
                proc.send_signal(signal.SIGKILL)
                break
            time.sleep(0.05)
    finally:
        if proc.poll() is None:
            proc.kill()
        _, err = proc.communicate(timeout=60)
    assert alive and proc.returncode == -signal.SIGKILL, err[-3000:]
    assert "[session] 2 runs so far in" in err and "[session] wrote" not in err
    reopened = load(path)  # read again after the kill: whole, the lanes finished before it
    assert [(r.mode, r.race) for r in reopened.runs] == [("torch", 1), ("jit-static", 1)]
    for run in reopened.runs:
        assert run.finished is not None and run.finished.reason == "max_new_tokens"
        assert len(run.tokens) == TOKENS and len(run.finished.token_ids) == TOKENS
        assert len(run.records) == TOKENS and run.summary.n_tokens == TOKENS
        assert run.environment.get("packages")
    assert reopened.runs[0].token_ids == reopened.runs[1].token_ids
    assert [p.name for p in tmp_path.iterdir()] == ["race.session"]  # no temporary file left by a write
