"""``program … --save-session`` / ``--perfetto``: a program's runs recorded like a model's (issue 23)."""

from __future__ import annotations

import io
import json

from app.cli import main
from app.core.recording import load
from app.core.recording.perfetto import validate

PROGRAM = '''import jax.numpy as jnp


def f(x):
    return jnp.tanh(x) * 2.0


def f_args():
    return (jnp.ones((4, 8)),)
'''


def run_cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_program_saves_its_runs_to_a_session_and_show_session_prints_them(tmp_path):
    path = tmp_path / "prog.py"
    path.write_text(PROGRAM)
    session, trace = tmp_path / "prog.session", tmp_path / "prog.json"
    code, out, err = run_cli("program", f"{path}:f", "--calls", 3, "--compare-jit", "--json",
                             "--save-session", session, "--perfetto", trace)
    assert code == 0, err
    assert f"[session] wrote {session}" in err and f"[perfetto] wrote {trace}" in err
    printed = [json.loads(line) for line in out.splitlines()]
    runs = load(session).runs
    assert [(r.label, r.mode, r.model) for r in runs] == [
        ("prog.py:f · jit", "jit", "prog.py:f"), ("prog.py:f · no-jit", "no-jit", "prog.py:f")]
    assert runs[0].model_id == str(path) and runs[0].settings["calls"] == 3
    assert [len(r.records) for r in runs] == [3, 3] and runs[0].summary.n_compiles == 1
    assert runs[0].finished.reason == "calls" and runs[0].environment.get("packages")
    calls = [e for e in printed if e["event"] == "call"]
    assert [r.wall_ms for run in runs for r in run.records] == [e["wall_ms"] for e in calls]
    assert validate(json.loads(trace.read_text())) == []

    code, out, err = run_cli("show-session", session)
    assert code == 0, err
    assert "prog.py:f · jit" in out and "prog.py:f · no-jit" in out and "recorded on CPU" in out


def test_program_sweep_is_recorded_as_one_run_per_sweep(tmp_path):
    path = tmp_path / "prog.py"
    path.write_text(PROGRAM)
    session = tmp_path / "sweep.session"
    code, _, err = run_cli("program", f"{path}:f", "--args", "f32[1,8]", "--sweep", "1:4", "--bucket",
                           "--save-session", session)
    assert code == 0, err
    runs = load(session).runs
    assert len(runs) == 2 and "sweep of 4 sizes" in runs[0].label and runs[1].mode != runs[0].mode
    assert [len(r.records) for r in runs] == [4, 4]
