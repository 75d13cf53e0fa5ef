"""Session files: a real run round-trips, opens without JAX or torch, bad files fail with one typed error,
the Perfetto trace is valid, runs compare and their IR diffs."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from app.cli import main
from app.core.errors import PlaygroundError, SessionFileError
from app.core.events import CallRecord, FinishedEvent, LaneEvent, PromptEvent, Summary, TokenEvent
from app.core.profile.model import StepProfile, Timeline, TimelineBar
from app.core.recording import FORMAT_VERSION, RecordedRun, RunRecorder, SessionFile, load
from app.core.recording.compare import compare_rows, format_compare, ir_diff
from app.core.recording.perfetto import trace_document, validate
from app.core.recording.store import MEMBER
from app.core.recording.text import json_lines
from app.core.recording.timing import call_spans, replay_schedule, token_intervals_ms
from tests.session_helpers import BLOCK_HEAVY_IMPORTS

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def recorded(model_dirs, tmp_path_factory):
    """A real jit-static run of the tiny Llama saved with --save-session: (path, generate --json lines)."""
    path = tmp_path_factory.mktemp("session") / "run.session"
    out, err = io.StringIO(), io.StringIO()
    code = main(["generate", "--model", model_dirs("llama"), "--prompt", "The jit", "--max-new-tokens", "4",
                 "--mode", "jit-static", "--json", "--save-session", str(path)], out=out, err=err)
    assert code == 0, err.getvalue()
    return path, out.getvalue().splitlines()


def test_round_trip_of_a_real_run(recorded):
    path, lines = recorded
    session = SessionFile.load(path)
    assert session.format_version == FORMAT_VERSION and len(session.runs) == 1
    run = session.runs[0]
    summary = json.loads(lines[-1])
    assert run.token_ids == summary["token_ids"] and run.text == summary["text"]
    assert [json.loads(x) for x in json_lines(run)] == [json.loads(x) for x in lines]
    assert [r.step for r in run.records] == ["prefill", "decode", "decode", "decode"]
    assert run.records[0].compiled and run.records[0].trace_ms > 0
    assert set(run.ir) == {"prefill", "decode"}
    ir = run.ir["decode"]
    assert ir.jaxpr and ir.jaxpr_source and ir.stablehlo.startswith("module") and ir.hlo.startswith("HloModule")
    assert ir.cost["flops"] > 0 and ir.memory and ir.n_equations > 0 and ir.traced_jaxpr is None
    assert run.source_maps["decode"].groups, "the source map is saved with the run"
    env = run.environment
    assert env["packages"]["jax"] and env["device_kind"] and env["device_count"] >= 1 and env["cpu_count"] >= 1
    assert run.recorded_label.startswith("recorded on CPU × ") and f"jax {env['packages']['jax']}" in run.recorded_label
    assert [t.elapsed_ms for t in run.tokens] == sorted(t.elapsed_ms for t in run.tokens)
    # saving again gives an equal session
    again = path.with_name("again.session")
    session.save(again)
    assert load(again).runs[0].to_dict() == run.to_dict()


def test_loading_needs_no_jax_and_no_torch(recorded, tmp_path):
    path, lines = recorded
    script = BLOCK_HEAVY_IMPORTS + f"""
import io
from app.cli import main
from app.core.recording import load
from app.core.recording.text import format_session
from app.core.recording.perfetto import trace_document
s = load({str(path)!r})
text = format_session(s)
assert "recorded on CPU" in text and "HLO instructions" in text, text
assert s.runs[0].ir["decode"].hlo.startswith("HloModule")
trace_document(s.runs)
out, err = io.StringIO(), io.StringIO()
assert main(["show-session", {str(path)!r}, "--json"], out=out, err=err) == 0, err.getvalue()
sys.stdout.write(out.getvalue())
assert not any(m.split(".")[0] in ("jax", "torch", "transformers") for m in sys.modules)
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == lines


# -- synthetic runs (no model) ----------------------------------------------------------------------------

def _run(label="run 1 · jit-static", device_kind="cpu", wall=(900.0, 20.0, 5.0, 5.0), hlo="HloModule a\n%fusion.1 = f32[4] add\nROOT %t.2 = tuple()") -> RecordedRun:
    rec = RunRecorder("tiny", "tiny-id", {"hidden_size": 8}, {"mode": "jit-static", "max_new_tokens": 4}, "hi")
    t0 = 1_700_000_000.0
    events = [PromptEvent("hi", 2)]
    end = t0
    records = []
    for i, w in enumerate(wall):
        end += w / 1000
        compiled = i < 2
        r = CallRecord(i, "prefill" if i == 0 else "decode", "jit-static", {"input_ids": [1, 1]}, w, w * 0.1 if compiled else w,
                       compiled, w * 0.2 if compiled else None, w * 0.1 if compiled else None,
                       w * 0.5 if compiled else None, False if compiled else None,
                       "first call" if compiled else None, end)
        records.append(r)
        events += [r, TokenEvent(i, 10 + i, f"t{i}", i, (end - t0) * 1000 + 1.0)]
    total = (end - t0) * 1000 + 2.0
    events.append(FinishedEvent("max_new_tokens", Summary.from_records("jit-static", records, len(wall), events[2].elapsed_ms, total),
                                [10 + i for i in range(len(wall))], "t0t1t2t3"))
    (run,) = rec.feed_all(events)
    from app.core.inspect.ir import StepIR
    run.ir["decode"] = StepIR(hlo=hlo, jaxpr="{ lambda ; a:f32[4]. let b = sin a in (b,) }")
    run.environment.update(platform="tpu" if device_kind != "cpu" else "cpu", device_kind=device_kind, device_count=8)
    run.label = label
    return run


def test_recorder_splits_a_race_into_lanes():
    rec = RunRecorder("tiny", settings={"mode": "torch", "max_new_tokens": 8})
    s = Summary.from_records("torch", [], 0, None, 1.0)
    events = [LaneEvent("torch", 0, 2, 8), PromptEvent("p", 1), FinishedEvent("eos", s),
              LaneEvent("torchax-eager", 1, 2, 3), PromptEvent("p", 1), FinishedEvent("eos", replace(s, mode="torchax-eager"))]
    runs = rec.feed_all(events)
    assert [(r.label, r.mode, r.race, r.settings["max_new_tokens"]) for r in runs] == [
        ("run 1 · torch", "torch", 1, 8), ("run 2 · torchax-eager", "torchax-eager", 1, 3)]


def test_timing_and_replay():
    run = _run()
    spans = call_spans(run)
    assert all(a.end_ms <= b.start_ms + 1e-9 for a, b in zip(spans, spans[1:]))
    assert [s.end_ms - s.start_ms for s in spans] == pytest.approx([900.0, 20.0, 5.0, 5.0], abs=1e-3)
    schedule = replay_schedule(run)
    times = [t for t, _ in schedule]
    assert times == sorted(times)
    tokens = [(t, e) for t, e in schedule if isinstance(e, TokenEvent)]
    assert [round(t, 6) for t, _ in tokens] == [round(e.elapsed_ms, 6) for _, e in tokens]
    assert any(getattr(e, "phase", None) == "compiling" for _, e in schedule)
    fast = replay_schedule(run, speed=2.0)
    assert [round(t * 2, 6) for t, _ in fast] == [round(t, 6) for t, _ in schedule]
    skipped = replay_schedule(run, skip_compile=True)
    assert skipped[-1][0] < schedule[-1][0] - 700 and not any(getattr(e, "phase", None) for _, e in skipped)
    assert token_intervals_ms(run) == pytest.approx([20.0, 5.0, 5.0], abs=1e-3)


def test_perfetto_trace_is_valid_and_nested():
    run = _run()
    run.profile = StepProfile("decode", "jit_step", 2, 5.0, 5.0, 4.0, 4.0, 0.8, 0.2, 0.1, 0.1, None, 0, 0, None, [], {},
                              Timeline(0, 5000.0, [TimelineBar("t0", 0.0, 100.0, "fusion.1", "kLoop", "a.py:1"),
                                                   TimelineBar("t0", 90.0, 50.0, "fusion.2", "kLoop", "a.py:2"),
                                                   TimelineBar("t1", 10.0, 20.0, "dot.3", "dot", "a.py:3")],
                                       threads=["t0", "t1"]))
    doc = json.loads(json.dumps(trace_document([run, _run("run 2 · jit-static")])))
    assert validate(doc) == []
    events = doc["traceEvents"]
    calls = [e for e in events if e.get("cat") == "call" and e["pid"] == 1]
    phases = [e for e in events if e.get("cat") == "phase" and e["pid"] == 1]
    assert len(calls) == 4 and sum(e["name"] == "compile" for e in phases) == 2
    assert sum(e["name"] == "execute" for e in phases) == 4
    assert sum(e["ph"] == "i" for e in events if e["pid"] == 1) == 4
    assert {e["args"]["name"] for e in events if e["ph"] == "M" and e["pid"] == 1001} >= {"t0", "t1"}
    assert len([e for e in events if e.get("cat") == "op"]) == 3
    bad = {"traceEvents": [{"name": "a", "ph": "X", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
                           {"name": "b", "ph": "X", "pid": 1, "tid": 1, "ts": 5, "dur": 10}]}
    assert "partially overlaps" in validate(bad)[0]


def test_compare_and_ir_diff():
    cpu, tpu = _run(), _run("run 1 · jit-static", "TPU v6e", (4370.0, 13.0, 13.0, 13.0),
                            hlo="HloModule a\n%fusion.7 = f32[4] add\n%copy.3 = f32[4] copy\nROOT %t.9 = tuple()")
    rows = compare_rows([cpu, tpu])
    assert [r["machine"] for r in rows] == ["CPU × 8 · jax " + cpu.environment["packages"]["jax"],
                                            "TPU v6e × 8 · jax " + cpu.environment["packages"]["jax"]]
    table = format_compare([cpu, tpu])
    assert "TPU v6e × 8" in table and "best TTFT" in table
    diff = ir_diff(cpu, tpu, "decode")
    assert "+%copy.3 = f32[4] copy" in diff and "-%fusion.1" not in diff  # fusion.1 ≡ fusion.7 after normalizing
    assert "1 only in the second" in diff
    with pytest.raises(KeyError, match="no IR of the prefill step"):
        ir_diff(cpu, tpu, "prefill")


# -- bad files --------------------------------------------------------------------------------------------

def _write_doc(path: Path, doc) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(MEMBER, doc if isinstance(doc, (str, bytes)) else json.dumps(doc))
    return path


@pytest.fixture
def good(tmp_path) -> Path:
    path = tmp_path / "good.session"
    SessionFile([_run()]).save(path)
    return path


def test_bad_files_give_one_typed_error(good, tmp_path):
    data = good.read_bytes()
    cases = {
        "missing": (tmp_path / "nope.session", "no such file"),
        "truncated": (tmp_path / "t.session", "truncated"),
        "corrupted": (tmp_path / "c.session", "corrupted"),
        "newer": (_write_doc(tmp_path / "n.session", {"format": "torchax-playground-session", "format_version": 99,
                                                       "runs": []}), "newer torchax-playground"),
        "text file": (tmp_path / "x.session", "not a session file"),
        "other zip": (tmp_path / "z.session", "not a session file"),
        "other json": (_write_doc(tmp_path / "j.session", {"hello": 1}), "not a session file"),
        "bad json": (_write_doc(tmp_path / "b.session", "{nope"), "not valid JSON"),
        "bad run": (_write_doc(tmp_path / "r.session", {"format": "torchax-playground-session", "format_version": 1,
                                                         "runs": [{"label": "x"}]}), "run 1 lacks"),
        "empty": (tmp_path / "e.session", "empty"),
    }
    cases["truncated"][0].write_bytes(data[: len(data) // 2])
    i = 30 + len(MEMBER) + 20  # flip bytes inside the deflated member (after its local header)
    cases["corrupted"][0].write_bytes(data[:i] + bytes(b ^ 0x55 for b in data[i:i + 64]) + data[i + 64:])
    cases["text file"][0].write_text("def f(): pass\n")
    with zipfile.ZipFile(cases["other zip"][0], "w") as zf:
        zf.writestr("readme.txt", "hi")
    cases["empty"][0].write_bytes(b"")
    for name, (path, problem) in cases.items():
        with pytest.raises(SessionFileError) as info:
            load(path)
        assert isinstance(info.value, PlaygroundError)
        assert str(path) in str(info.value) and problem in str(info.value), (name, str(info.value))
    assert load(good).runs[0].token_ids == [10, 11, 12, 13]  # nothing else changed


def test_save_failure_leaves_no_file(tmp_path):
    with pytest.raises(SessionFileError, match="cannot be written"):
        SessionFile([_run()]).save(tmp_path / "no-such-dir" / "a.session")
