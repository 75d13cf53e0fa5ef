"""``--save-session`` / ``--perfetto`` on generate and race, and ``show-session`` (text, --json, --compare,
--diff-ir, --perfetto, bad files)."""

from __future__ import annotations

import io
import json

from app.cli import main
from app.core.recording import load
from app.core.recording.perfetto import validate


def run_cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_race_saves_every_lane_and_a_perfetto_trace(model_dirs, tmp_path):
    session, trace = tmp_path / "race.session", tmp_path / "race.json"
    code, out, err = run_cli("race", "--model", model_dirs("llama"), "--prompt", "The jit", "--max-new-tokens", 3,
                             "--modes", "torch", "jit-static", "--save-session", session, "--perfetto", trace,
                             "--steady-budget", 0, "--steady-rounds", 3)
    assert code == 0, err
    assert f"[session] wrote {session}" in err and f"[perfetto] wrote {trace}" in err
    runs = load(session).runs
    assert [(r.mode, r.race) for r in runs] == [("torch", 1), ("jit-static", 1)]
    assert runs[0].token_ids == runs[1].token_ids and runs[1].summary.n_compiles == 2
    doc = json.loads(trace.read_text())
    assert validate(doc) == []
    assert sum(e.get("name") == "compile" for e in doc["traceEvents"]) == 2  # jit-static's prefill and decode

    code, out, err = run_cli("show-session", session)
    assert code == 0, err
    assert out.count("recorded on CPU") == 2 and "time to first token" in out and "mode torch" in out
    # the steady-state verdicts, with where they were measured (CPU, cores, load, threads, versions)
    (kept,) = load(session).verdicts
    assert kept["race"] == 1 and kept["pairs"][0]["mode"] == "jit-static" and kept["environment"]["cpu_count"]
    assert "== verdicts of race 1\nmachine " in out and " cores · load " in out and "\nversions jax " in out
    assert "steady state: " in out and "threads torch intra-op " in out and kept["pairs"][0]["text"] in out
    code, out, err = run_cli("show-session", session, "--json")
    assert code == 0, err
    verdict = [json.loads(line) for line in out.splitlines() if '"event": "verdict"' in line]
    assert [(v["mode"], v["against"]) for v in verdict] == [("jit-static", "torch")]
    assert {"ratio", "ci_low", "ci_high", "rounds", "aa_noise", "dropped"} <= set(verdict[0])
    code, out, _ = run_cli("show-session", session, "--compare")
    assert code == 0 and "machine" in out and "run 2 · jit-static" in out and "best steady" in out
    code, _, err = run_cli("show-session", session, "--diff-ir", "decode")
    assert code == 2 and err.startswith("error: ") and "no IR of the decode step" in err
    again = tmp_path / "again.json"
    code, _, err = run_cli("show-session", session, "--perfetto", again)
    assert code == 0 and validate(json.loads(again.read_text())) == []


def test_generate_session_shows_as_its_json_and_diffs_its_ir(model_dirs, tmp_path):
    session = tmp_path / "gen.session"
    code, gen_out, err = run_cli("generate", "--model", model_dirs("llama"), "--prompt", "The jit",
                                 "--max-new-tokens", 3, "--json", "--save-session", session)
    assert code == 0, err
    code, out, err = run_cli("show-session", session, "--json")
    assert code == 0, err
    assert out == gen_out
    code, out, _ = run_cli("show-session", session, session, "--diff-ir", "decode", "--ir", "stablehlo")
    assert code == 0 and "0 only in the first, 0 only in the second (identical after normalizing)" in out
    code, out, _ = run_cli("show-session", session, session, "--diff-ir", "prefill", "--runs", 1, 2)
    assert code == 0 and "(prefill hlo," in out


def test_generate_saves_the_source_maps_the_window_builds(model_dirs, tmp_path):
    """generate goes through the window's service: its session file holds each step's source map, built after
    the run by ComputeService.after_run (as a window run's), linking the jaxpr to the model's files."""
    session = tmp_path / "maps.session"
    code, _, err = run_cli("generate", "--model", model_dirs("llama"), "--prompt", "The jit", "--max-new-tokens", 3,
                           "--save-session", session)
    assert code == 0, err
    (run,) = load(session).runs
    assert set(run.source_maps) == {"prefill", "decode"} == set(run.ir)
    assert any("modeling_llama.py" in g.file for g in run.source_maps["decode"].groups)


def test_show_session_refuses_a_bad_file_in_one_line(tmp_path):
    bad = tmp_path / "bad.session"
    bad.write_text("not a session")
    code, out, err = run_cli("show-session", bad)
    assert code == 2 and out == ""
    assert err.strip() == f"error: {bad}: is not a session file (not a zip archive)"


def test_old_session_files_without_verdicts_open_and_bad_verdicts_are_named(tmp_path):
    import zipfile

    import pytest

    from app.core.errors import SessionFileError
    from app.core.recording.store import MEMBER, SessionFile, to_document

    doc = to_document(SessionFile())
    assert "verdicts" not in doc  # written only when a race had a steady-state phase
    old = tmp_path / "old.session"
    with zipfile.ZipFile(old, "w") as zf:
        zf.writestr(MEMBER, json.dumps(doc))
    assert load(old).verdicts == []
    with zipfile.ZipFile(tmp_path / "bad.session", "w") as zf:
        zf.writestr(MEMBER, json.dumps({**doc, "verdicts": [{"pairs": 3}]}))
    with pytest.raises(SessionFileError, match="verdicts is not a list of verdicts with pairs"):
        load(tmp_path / "bad.session")
