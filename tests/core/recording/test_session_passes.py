"""A pass pipeline recorded for a step is kept in a session file (issue 23): pass rows, snapshot summaries,
the module before and after the passes (compressed); format_version stays 1 (a field added)."""

from __future__ import annotations

import json
import zipfile

import pytest
from session_helpers import BEFORE, FINAL, passes_ready

from app.core.recording import FORMAT_VERSION, RecordedRun, RunRecorder, SessionFile, load


def test_a_pass_pipeline_is_saved_and_read_back(tmp_path):
    rec = RunRecorder("pydoc-llama")
    run = rec.start("jit-static")
    rec.finish(run)
    kept = rec.add_passes(passes_ready(), run=run)
    assert kept is not None and kept.final_hlo == FINAL and kept.initial_hlo == BEFORE
    path = tmp_path / "passes.session"
    SessionFile(runs=[run]).save(path)
    with zipfile.ZipFile(path) as zf:
        doc = json.loads(zf.read("session.json"))
    assert doc["format_version"] == FORMAT_VERSION == 1
    stored = doc["runs"][0]["passes"]
    assert "final_hlo" not in stored and len(stored["final_hlo_z"]) < len(FINAL) / 4  # compressed
    back = load(path).runs[0].passes
    assert back is not None and back.step == "decode" and back.mode == "jit-static" and back.module == "jit_step"
    assert back.rows[1]["pass"] == "dce" and back.n_changed == 1 and back.compile_ms == 12.5
    assert [s["pass"] for s in back.snapshots] == ["before optimizations", "fusion", "after optimizations"]
    assert back.initial_hlo == BEFORE and back.final_hlo == FINAL
    assert back.fusions[0]["absorbed"] == [["a", "add", "m.py:3"]]


def test_a_run_without_passes_and_a_damaged_pipeline(tmp_path):
    run = RecordedRun(label="run 1 · torch", mode="torch", model="m")
    d = run.to_dict()
    assert d["passes"] is None and RecordedRun.from_dict(d).passes is None
    del d["passes"]  # a file of the first version 1 writer
    assert RecordedRun.from_dict(d).passes is None
    d["passes"] = {"step": "decode", "mode": "jit", "final_hlo_z": "bm90IHpsaWI="}
    with pytest.raises(ValueError):
        RecordedRun.from_dict(d)
