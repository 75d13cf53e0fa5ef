"""app.core.passes.compare: flag parsing and validation by XLA, and two recordings compared."""

from __future__ import annotations

import pytest

from app.core.passes.compare import (
    XlaFlagError,
    compare_pipelines,
    flags_text,
    parse_xla_flags,
    validate_xla_flags,
)


def test_parse_flags():
    assert parse_xla_flags("--xla_cpu_enable_fast_math=true  xla_backend_optimization_level=1 --xla_b") == {
        "xla_cpu_enable_fast_math": True, "xla_backend_optimization_level": "1", "xla_b": True}
    assert parse_xla_flags("") == {}
    with pytest.raises(XlaFlagError) as e:
        parse_xla_flags("--xla_a=1 --foo=2")
    assert e.value.flag == "--foo=2"
    with pytest.raises(XlaFlagError, match="xla_dump_to"):
        parse_xla_flags("--xla_dump_to=/tmp/x")
    assert flags_text({"xla_a": True, "xla_b": "1"}) == "--xla_a=true --xla_b=1"


def test_validate_by_xla():
    validate_xla_flags({"xla_cpu_enable_fast_math": True, "xla_disable_hlo_passes": "algsimp"})
    with pytest.raises(XlaFlagError) as e:
        validate_xla_flags({"xla_cpu_enable_fast_math": False, "xla_not_a_flag": "1"})
    assert e.value.flag == "xla_not_a_flag" and "Unknown XLA flag --xla_not_a_flag" in str(e.value)
    with pytest.raises(XlaFlagError, match="xla_cpu_enable_fast_math"):
        validate_xla_flags({"xla_cpu_enable_fast_math": "sometimes"})


def test_compare_two_recordings():
    import jax
    import jax.numpy as jnp

    from app.core.passes.record import record_pipeline

    def f(x):
        return jnp.tanh(x @ x.T) * 2.0 + 1.0

    lowered = jax.jit(f).lower(jnp.ones((16, 16)))
    a = record_pipeline(lowered)
    b = record_pipeline(lowered, compiler_options={"xla_disable_hlo_passes": "fusion"})
    assert b.compiler_options == {"xla_disable_hlo_passes": "fusion"}
    c = compare_pipelines(a, b, ("plain", "no fusion"))
    rows = {r[0]: r[1:] for r in c.counts}
    assert rows["instructions (final)"][0] != rows["instructions (final)"][1]
    assert rows["compile ms"][0] > 0 and rows["compile ms"][1] > 0
    assert c.diff is not None and c.diff.added + c.diff.removed > 0
    assert "plain" in c.table() and c.summary()["options"][1] == {"xla_disable_hlo_passes": "fusion"}
    # the structural diff (issue 58): fusion off changes the program; a recording against itself is the same
    assert c.structural is not None and not c.structural.same and c.summary()["structural"]["same"] is False
    assert "Optimized HLO (structural diff): " in c.table()
    same = compare_pipelines(a, record_pipeline(lowered), ("plain", "plain again"))
    assert same.structural is not None and same.structural.same, same.program_line()
