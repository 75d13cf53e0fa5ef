"""Every compile a program's call makes names its cause and cost, per call site (issue 41): the jitted functions
an entry run op by op calls, a static argument changing, a new shape, a re-created function, JAX's own diff."""

from __future__ import annotations

import textwrap

import pytest

from app.core.programs.gallery import example
from app.core.programs.lanes import run_calls
from app.core.programs.loader import load_program
from app.core.programs.runner import JIT, NO_JIT
from app.core.programs.sites import compile_sites, format_site_table


def _prepared(tmp_path, source: str, entry: str = "main"):
    path = tmp_path / "mine.py"
    path.write_text(textwrap.dedent(source))
    return load_program(str(path)).prepare(entry)


@pytest.fixture(scope="module")
def gallery_run():
    prepared = load_program(example("compile_sites").path).prepare("main")
    return run_calls(prepared, 2, NO_JIT)


def test_a_no_jit_entry_reports_its_jitted_functions_per_call_site(gallery_run):
    records = gallery_run.records
    assert not records[0].compiled and len(records[0].inner_compiles) >= 5 and records[1].inner_compiles == []
    sites = {s.function: s for s in compile_sites(records)}
    power, normalize = sites["power"], sites["normalize"]
    assert power.site == "10_compile_sites.py:27 (main)" and normalize.site == "10_compile_sites.py:28 (main)"
    assert power.n_compiles == 4 and normalize.n_compiles == 1
    assert power.causes == ["first call", "static argument n changed: 1 → 2", "static argument n changed: 2 → 3",
                            "static argument n changed: 3 → 4"]
    assert power.compile_ms > 0 and power.trace_ms > 0 and power.lower_ms > 0 and power.backend_ms > 0
    assert power.compile_ms == pytest.approx(power.trace_ms + power.lower_ms + power.backend_ms)
    ordered = compile_sites(records)
    assert [s.compile_ms for s in ordered] == sorted((s.compile_ms for s in ordered), reverse=True)
    # the run's summary counts them; the call that compiled is not a steady call
    assert gallery_run.summary.n_compiles == sum(s.n_compiles for s in ordered)
    assert gallery_run.summary.steady_decode_ms == records[1].wall_ms
    table = format_site_table(ordered)
    assert "10_compile_sites.py:27 (main)" in table and "static argument n changed: 3 → 4" in table


def test_causes_in_the_users_words(tmp_path):
    prepared = _prepared(tmp_path, """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def norm(x):
            return x / jnp.linalg.norm(x)

        def main(x):
            norm(x)
            norm(jnp.ones(5, jnp.float32))
            for s in (2.0, 3.0, 3.0):
                g = jax.jit(lambda v: v * s)
                g(x)
            return x

        def main_args():
            return (jnp.ones(4, jnp.float32),)
    """)
    records = run_calls(prepared, 1, NO_JIT).records
    compiles = [c for c in records[0].inner_compiles if "op by op" not in c["function"]]
    by_function = {}
    for c in compiles:
        by_function.setdefault(c["function"], []).append(c)
    shape = by_function["norm"][1]
    assert shape["compile_reason"] == "new input shape: x f32[4] → f32[5]"
    assert "different input types" in shape["jax_explanation"] and shape["compile_site"] == "mine.py:11 (main)"
    lambdas = [c["compile_reason"] for c in by_function["<lambda>"]]
    assert lambdas[0] == "first call"
    assert lambdas[1].startswith("changed closure constant: s 2.0 → 3.0")
    assert lambdas[2].startswith("new function identity")


def test_a_jit_entry_names_its_site_and_jax_s_diff(tmp_path):
    prepared = _prepared(tmp_path, """
        import jax.numpy as jnp

        def main(x):
            return jnp.sin(x) * 2

        def main_args():
            return (jnp.ones(4, jnp.float32),)
    """)
    from app.core.programs.runner import ProgramRunner

    runner = ProgramRunner(prepared)
    first = runner.call(mode=JIT).record
    second = runner.call((jnp_ones(5),), 1, JIT).record
    assert first.compiled and first.compile_site == "mine.py:4 (main)" and first.compile_reason == "first call"
    assert second.compiled and "different input types" in (second.jax_explanation or "")
    assert [s.n_compiles for s in compile_sites([first, second])] == [2]


def jnp_ones(n: int):
    import jax.numpy as jnp

    return jnp.ones(n, jnp.float32)


def test_causes_hold_when_jax_had_cached_the_trace():
    """The window's live mode traces the entry under jit first: the jitted functions' traces are then cached, JAX
    explains nothing, and the causes come from the calls themselves."""
    from app.core.programs.ir import entry_ir

    prepared = load_program(example("compile_sites").path).prepare("main")
    entry_ir(prepared)  # traces power for n = 1…4 inside main's jit
    records = run_calls(prepared, 1, NO_JIT).records
    sites = {s.function: s for s in compile_sites(records)}
    assert sites["power"].causes == ["first call", "static argument n changed: 1 → 2",
                                     "static argument n changed: 2 → 3", "static argument n changed: 3 → 4"]
    assert sites["power"].site == "10_compile_sites.py:27 (main)" and sites["normalize"].n_compiles == 1
