"""``race --settings``: pydoc-llama's decode step and a gallery program under several compiler settings, as a table
and as JSON lines, and settings refused by name before anything loads."""

from __future__ import annotations

import io
import json

import pytest

from app.cli import main


def run_cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_model_decode_step_under_effort_levels_and_flags_as_json():
    """Each setting's line and the summary; each "vs baseline" ratio from paired rounds (issue 54): ``ratio``,
    ``ci_low``, ``ci_high``, ``paired_rounds``, ``aa_noise``, ``dropped``, the verdict's words; ``rounds`` is still
    the cold lanes merged."""
    code, out, err = run_cli("race", "--model", "pydoc-llama", "--settings", "O0,O3",
                             "--flags=--xla_cpu_enable_fast_math=true", "--max-new-tokens", "6", "--ignore-eos",
                             "--json", "--steady-budget", "0.5", "--steady-rounds", "3")
    assert code == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    settings = [x for x in lines if x["event"] == "setting"]
    assert [s["name"] for s in settings] == ["default", "O0", "O3", "--xla_cpu_enable_fast_math=true"]
    for s in settings:
        assert s["compile_total_ms"] == pytest.approx(s["trace_ms"] + s["lower_ms"] + s["compile_ms"])
        assert s["steady_ms"] > 0 and s["peak_bytes"] > 0 and s["unit"] == "token" and s["n_calls"] == 5
    assert settings[0]["outputs_equal"] and settings[-1]["changes_results"]
    found = lines[-1]
    assert found["event"] == "settings-summary" and found["baseline"] == "default" and found["pareto"]
    assert set(found["break_even"]) <= {"O0", "O3", "--xla_cpu_enable_fast_math=true"}
    paired = found["paired"]  # at least 3 rounds kept, or 6 run when preempted ones were dropped
    assert paired["baseline"] == "default" and (paired["rounds"] >= 3 or paired["rounds"] + paired["dropped"] >= 6)
    assert paired["stopped_by"] in ("precise", "budget")
    assert settings[0]["ratio"] == 1.0 and settings[0]["ci_low"] is None
    if paired["aa_noise"] is not None:
        assert settings[0]["versus_baseline"].startswith("baseline (A/A ±")
    else:  # too few rounds kept on a busy machine for an A/A floor (clean-clone CI, 7 Dec): none claimed
        assert settings[0]["versus_baseline"].split(" · ")[0] == "baseline"
    for s in settings[1:]:
        assert s["rounds"] == 1 and s["paired_rounds"] == paired["rounds"] and s["dropped"] == paired["dropped"]
        assert s["aa_noise"] == paired["aa_noise"]
        if s["ci_low"] is None:  # fewer than 2 rounds kept on a busy machine: said so, no ratio claimed
            assert "too few rounds to tell" in s["verdict_text"]
            continue
        assert s["ci_low"] <= s["ratio"] <= s["ci_high"]
        faster = s["ratio"] > 1.0 and s["ci_low"] > 1.0
        said = (f"{s['name']} is {s['ratio']:.2f}× faster than default" if faster
                else "no clear difference" if s["ci_low"] <= 1.0 <= s["ci_high"]
                else f"default is {1 / s['ratio']:.2f}× faster than {s['name']}")
        assert said in s["verdict_text"], s["verdict_text"]


def test_program_entry_table():
    code, out, err = run_cli("race", "--program", "app/examples/01_jit_speedup.py", "--settings", "O3,cpu-no-ynn",
                             "--calls", "4", "--no-steady")
    assert code == 0, err
    header, rule, *rows = out.splitlines()[1:6]
    assert header.split()[:3] == ["setting", "compile", "ms"] and set(rule) == {"-"}
    assert [r.split()[0] for r in rows] == ["default", "O3", "cpu-no-ynn"]
    assert "calls per setting" in out.splitlines()[0] and "[settings] 3/3 cpu-no-ynn" in err
    assert "one pass, no CI" in rows[1] and "one pass per lane, no confidence interval" in out  # --no-steady


@pytest.mark.parametrize(("argv", "named"), [
    (["--settings", "O9"], "Unknown compiler setting 'O9'"),
    (["--settings", "O3,gpu-autotune-0"], "gpu-autotune-0 is an XLA:GPU setting and this run is on cpu"),
    (["--settings", "O3,inductor-default", "--program", "app/examples/01_jit_speedup.py"],
     "inductor-default is an Inductor setting: Inductor compiles PyTorch and has no JAX program"),
    (["--flags=--xla_cpu_no_such_flag=1"], "No such compile option: 'xla_cpu_no_such_flag'"),
])
def test_a_setting_is_refused_by_name_before_the_model_loads(argv, named):
    code, out, err = run_cli("race", "--model", "no-such-org/never-loaded", *argv)
    assert code == 2 and named in err and out == ""
    assert "never-loaded" not in err  # refused before the (failing) load


def test_list_settings():
    code, out, _ = run_cli("race", "--list-settings")
    assert code == 0
    rows = {line.split()[0]: line for line in out.splitlines()}
    assert "optimization_level=O3" in rows["O3"] and "XLA:GPU" not in rows["O3"]
    assert rows["gpu-autotune-0"].split()[1:3] == ["XLA", "gpu"]
    assert rows["inductor-max-autotune"].split()[1] == "Inductor"
