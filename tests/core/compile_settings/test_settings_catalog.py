"""The compiler-settings catalog and the race's figures: settings refused by name, XLA_FLAGS strings and jax.config
pairs parsed, per-compile options reaching XLA, break-even calls, the Pareto set and merged rounds."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

from app.core.compile_options import compiling_with, current
from app.core.compile_settings.catalog import NAMES, parse_setting
from app.core.compile_settings.figures import (
    SettingLane,
    break_even_calls,
    break_even_text,
    format_table,
    merge_rounds,
    pareto_names,
    plot_points,
    summary,
)
from app.core.compile_settings.race import check_options, resolve
from app.core.errors import InvalidSettingsError


def test_effort_levels_and_cpu_rows_are_compile_options():
    assert {"O0", "O1", "O2", "O3", "cpu-fast-math", "cpu-onednn", "cpu-no-ynn", "gpu-autotune-0"} <= set(NAMES)
    assert parse_setting("O3").options == {"optimization_level": "O3"}
    assert parse_setting("cpu-no-ynn").options == {"xla_cpu_experimental_ynn_fusion_type": ""}
    assert parse_setting("cpu-fast-math").changes_results


@pytest.mark.parametrize(("text", "named"), [
    ("O4", "'O4'"),                                   # not in the catalog
    ("gpu-autotune-0", "gpu-autotune-0 is an XLA:GPU setting"),  # a backend this run lacks
    ("--xla_gpu_autotune_level=0", "--xla_gpu_autotune_level=0 is an XLA:GPU setting"),
    ("jax_no_such_option=1", "'jax_no_such_option' is not a jax.config option"),
    ("--xla_cpu_use_onednn=true xla_oops", "'xla_oops'"),
])
def test_a_setting_the_backend_lacks_is_refused_by_name(text, named):
    with pytest.raises(InvalidSettingsError, match=named.replace("(", r"\(")):
        parse_setting(text, "cpu")


def test_gpu_rows_pass_on_a_gpu_and_cpu_rows_do_not():
    assert parse_setting("gpu-autotune-0", "gpu").options == {"xla_gpu_autotune_level": 0}
    with pytest.raises(InvalidSettingsError, match="cpu-onednn is an XLA:CPU setting"):
        parse_setting("cpu-onednn", "gpu")


def test_flags_and_config_pairs_are_settings():
    flags = parse_setting("--xla_cpu_enable_fast_math=true --xla_cpu_max_isa=AVX2 --xla_backend_optimization_level=0")
    assert flags.options == {"xla_cpu_enable_fast_math": True, "xla_cpu_max_isa": "AVX2",
                             "xla_backend_optimization_level": 0}
    assert flags.changes_results and flags.backend == "cpu"
    assert parse_setting("jax_optimization_level=O1").options == {"optimization_level": "O1"}
    pair = parse_setting("jax_enable_checks=true")
    assert pair.path == "jax.config" and pair.config == {"jax_enable_checks": True}


def test_an_option_xla_does_not_know_is_refused_before_a_race():
    with pytest.raises(InvalidSettingsError, match="--xla_cpu_no_such_flag=1.*No such compile option"):
        check_options(parse_setting("--xla_cpu_no_such_flag=1"))
    lanes = resolve(["O3", "cpu-fast-math", "O3"], "cpu")
    assert [s.name for s in lanes] == ["default", "O3", "cpu-fast-math"]


def test_options_reach_every_compile_of_the_thread():
    """The race's options get to XLA through the app's own compile paths (a model step's and a program's)."""
    from app.core.runtime.compiled_step import CompiledStep

    step = CompiledStep(lambda x: x * 3, "decode", ("x",))
    with compiling_with({"xla_cpu_no_such_flag": True}):
        assert current() == {"xla_cpu_no_such_flag": True}
        with pytest.raises(Exception, match="No such compile option"):
            list(step(jnp.ones(3)))
    assert current() is None
    out = [x for x in step(jnp.ones(3)) if not hasattr(x, "phase")][-1]
    assert float(out.outputs[0]) == 3.0


def _lane(name, compile_ms, steady_ms, unit="token", equal=True):
    return SettingLane(name, name, 0.0, 0.0, compile_ms, steady_ms, 10, unit, equal)


def test_break_even_only_for_slower_compile_and_faster_calls():
    base, o3 = _lane("default", 1000.0, 10.0), _lane("O3", 3100.0, 9.0)
    assert break_even_calls(base, o3) == 2100  # 2,100 ms extra / 1 ms saved per token
    assert break_even_text(base, o3) == "O3 pays for its extra 2.1 s after 2,100 tokens"
    assert break_even_calls(base, _lane("O0", 500.0, 12.0)) is None      # faster compile, slower calls
    assert break_even_calls(base, _lane("slow", 2000.0, 11.0)) is None   # slower at both


def test_pareto_front_and_table():
    lanes = [_lane("default", 1000.0, 10.0), _lane("O0", 500.0, 12.0), _lane("O3", 3100.0, 9.0),
             _lane("bad", 3200.0, 11.0, equal=False)]
    assert pareto_names(lanes) == ["default", "O0", "O3"]
    found = summary(lanes)
    assert found["break_even"] == {"O3": 2100} and found["unequal"] == ["bad"]
    table = format_table(lanes)
    assert "O3 *" in table and "bad *" not in table
    assert "O3 1.11× faster than default (one pass, no CI)" in table  # no paired rounds: 10 ms over 9 ms, no CI
    assert "O0 1.20× slower than default (one pass, no CI)" in table
    assert table.splitlines()[-1] == "O3 pays for its extra 2.1 s after 2,100 tokens"


def test_merged_rounds_take_medians():
    lanes = [_lane("default", 1000.0, 10.0), _lane("O3", 2000.0, 8.0), _lane("default", 3000.0, 12.0),
             _lane("O3", 2200.0, 9.0), _lane("default", 1100.0, 11.0), _lane("O3", 9000.0, 7.0, equal=False)]
    merged = merge_rounds(lanes)
    assert [(m.name, m.compile_ms, m.steady_ms, m.rounds, m.outputs_equal) for m in merged] == [
        ("default", 1100.0, 11.0, 3, True), ("O3", 2200.0, 8.0, 3, False)]


def test_program_compiles_read_the_options():
    from app.core.programs.loader import load_program
    from app.core.programs.runner import ProgramRunner

    prepared = load_program(source="import jax.numpy as jnp\ndef f(x):\n    return x * 2\ndef f_args():\n"
                                   "    return (jnp.ones(4),)\n", name="opts_probe.py").prepare()
    with compiling_with({"xla_cpu_no_such_flag": True}), pytest.raises(Exception, match="No such compile option"):
        ProgramRunner(prepared).call()
    assert jax.numpy.allclose(ProgramRunner(prepared).call().outputs, 2.0)


def test_plot_points_carry_what_the_plot_draws():
    lanes = [_lane("default", 1000.0, 10.0), _lane("O0", 500.0, 12.0), _lane("O3", 3100.0, 9.0),
             _lane("stopped", 800.0, None)]
    points = plot_points(lanes)
    assert [(p["name"], p["baseline"], p["pareto"]) for p in points] == [
        ("default", True, True), ("O0", False, True), ("O3", False, True)]
    assert points[2]["break_even"] == "O3 pays for its extra 2.1 s after 2,100 tokens"
    assert points[2]["split"] == {"trace": 0.0, "lower": 0.0, "compile": 3100.0}
