"""``tradeoff``: a gallery program's entry under several settings as JSON lines that add up, with the first
differing pass per setting; the race kept in a session file that ``show-session`` prints without JAX; settings
refused by name before anything loads."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import main
from app.core.recording import SessionFile
from tests.session_helpers import BLOCK_HEAVY_IMPORTS

ROOT = Path(__file__).resolve().parents[3]


def run_cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def program_race(tmp_path_factory):
    """``tradeoff`` on a gallery program's training step, saved: (session path, its JSON lines)."""
    path = tmp_path_factory.mktemp("tradeoff") / "race.session"
    code, out, err = run_cli("tradeoff", "--program", "app/examples/07_mlp_training.py", "--setting", "O3",
                             "--setting", "cpu-no-ynn,--xla_cpu_use_xnnpack=true", "--calls", "4", "--json",
                             "--save-session", str(path), "--steady-rounds", "3", "--steady-budget", "0.5")
    assert code == 0, err
    assert f"[session] wrote {path}" in err
    return path, [json.loads(line) for line in out.splitlines()]


def test_one_line_per_setting_that_adds_up_and_a_summary(program_race):
    _, lines = program_race
    settings = [x for x in lines if x["event"] == "setting"]
    assert [s["name"] for s in settings] == ["default", "O3", "cpu-no-ynn", "--xla_cpu_use_xnnpack=true"]
    for s in settings:
        split = s["trace_ms"] + s["lower_ms"] + s["compile_ms"]
        assert abs(split - s["compile_total_ms"]) <= 0.05 * s["compile_total_ms"]  # the lines add up
        assert s["steady_ms"] > 0 and s["peak_bytes"] > 0 and s["unit"] == "call" and s["n_calls"] == 4
        # XLA's compile itself, from a profiler capture of it: its HLO passes, then codegen
        assert 0 < s["passes_ms"] and s["passes_ms"] + s["codegen_ms"] == pytest.approx(s["compile_ms"], rel=0.05)
    # a different dot kernel may move the last bits: only cpu-no-ynn may differ, and the summary says so
    assert [s["outputs_equal"] for s in settings if s["name"] != "cpu-no-ynn"] == [True, True, True]
    summary = lines[-1]
    assert summary["unequal"] == [s["name"] for s in settings if not s["outputs_equal"]]
    assert summary["event"] == "settings-summary" and summary["baseline"] == "default" and summary["pareto"]
    assert summary["step"] == "program" and "train_step" in summary["title"]
    # the dots go to YNNPACK by default: without it the pipelines part at the pass that rewrites them
    parts = summary["first_differing_pass"]
    assert parts["cpu-no-ynn"] is not None and parts["--xla_cpu_use_xnnpack=true"] is None  # XLA's default already
    assert settings[2]["first_differing_pass"] == parts["cpu-no-ynn"]
    assert "no pass differs" in summary["partings"]["--xla_cpu_use_xnnpack=true"]["text"]
    # each "vs baseline" from paired rounds of the settings' executables (issue 54), in words and numbers
    paired = summary["paired"]  # at least 3 rounds kept, or 6 run when preempted ones were dropped
    assert paired["baseline"] == "default" and (paired["rounds"] >= 3 or paired["rounds"] + paired["dropped"] >= 6)
    for s in settings[1:]:
        assert s["paired_rounds"] == paired["rounds"] and s["dropped"] == paired["dropped"]
        if s["ci_low"] is None:  # fewer than 2 rounds kept on a busy machine: said so, no ratio claimed
            assert "too few rounds to tell" in s["verdict_text"]
        else:
            assert s["ci_low"] <= s["ratio"] <= s["ci_high"] and f"{s['paired_rounds']} paired rounds; A/A ±" in \
                s["verdict_text"]


def test_the_session_keeps_the_race_and_show_session_prints_it_without_jax(program_race):
    path, lines = program_race
    session = SessionFile.load(path)
    assert session.runs == [] and len(session.settings_races) == 1
    script = BLOCK_HEAVY_IMPORTS + f"""
import io
from app.cli import main
for extra in ([], ["--json"]):
    out, err = io.StringIO(), io.StringIO()
    assert main(["show-session", {str(path)!r}, *extra], out=out, err=err) == 0, err.getvalue()
    sys.stdout.write(out.getvalue() + "\\f")
assert not any(m.split(".")[0] in ("jax", "torch", "transformers") for m in sys.modules)
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    text, as_json, _ = done.stdout.split("\f")
    rows = text.splitlines()
    head = rows.index("== settings race")
    assert "train_step" in rows[head + 1] and rows[head + 2].split()[:3] == ["setting", "compile", "ms"]
    assert any(r.startswith("XLA's compile, by a profiler capture of it: default: XLA passes ") for r in rows)
    assert [r.split()[0] for r in rows[head + 4:head + 8]] == ["default", "O3", "cpu-no-ynn",
                                                              "--xla_cpu_use_xnnpack=true"]
    assert any(r.strip().startswith("cpu-no-ynn parts from default at ") for r in rows)
    assert any(r.startswith("paired rounds: ") for r in rows)  # the verdicts, as tradeoff printed them
    assert any(r.strip() == lines[1]["verdict_text"] for r in rows)
    assert [json.loads(line) for line in as_json.splitlines()] == lines  # the lines tradeoff --json printed


@pytest.mark.parametrize(("argv", "named"), [
    (["--setting", "O9"], "Unknown compiler setting 'O9'"),
    (["--setting", "O3", "--setting", "gpu-autotune-0"], "gpu-autotune-0 is an XLA:GPU setting and this run is on cpu"),
    (["--step", "loop", "--setting", "inductor-max-autotune"], "inductor-max-autotune is an Inductor setting"),
    (["--step", "loop"], "Name at least one setting"),
])
def test_a_setting_is_refused_by_name_before_the_model_loads(argv, named):
    code, out, err = run_cli("tradeoff", "--model", "no-such-org/never-loaded", *argv)
    assert code == 2 and named in err and out == ""
    assert "never-loaded" not in err  # refused before the (failing) load


def test_a_step_is_a_model_s():
    code, _, err = run_cli("tradeoff", "--program", "app/examples/01_jit_speedup.py", "--step", "prefill",
                           "--setting", "O3")
    assert code == 2 and "--step prefill is a model's step" in err
