"""Issue 55 flaw 6: the stats strip said "0 compiles" beside a no-jit run that compiled 11 times — its figures
counted only the entry's own executables (``CallRecord.compiled``), not what XLA compiled inside the calls
(op-by-op primitives, the jitted functions the entry calls: ``CallRecord.inner_compiles``). The strip's count is
now the compile-site table's total, and a call that compiled inside is not a steady call."""

from __future__ import annotations

from dataclasses import replace

from app.core.events import CallRecord
from app.core.programs.runner import program_summary
from app.core.programs.sites import compile_sites
from app.core.session.figures import LiveFigures
from app.core.session.runs import RunState


def _inner(n: int) -> list[dict]:
    return [{"compile_site": "prog.py:4 (f)", "function": f"jit(op{i})", "compile_reason": "first call",
             "trace_ms": 1.0, "lower_ms": 1.0, "compile_ms": 3.0} for i in range(n)]


def _no_jit_run() -> RunState:
    records = [CallRecord(index=i, step="f", mode="no-jit", input_shapes={}, wall_ms=50.0 if i == 0 else 2.0, execute_ms=2.0,
                          timestamp=0.0, inner_compiles=_inner(11) if i == 0 else [])
               for i in range(5)]
    return RunState("run 1 · no-jit · f", "no-jit", records=records, program="f")


def test_a_no_jit_runs_figures_count_what_xla_compiled_inside_its_calls():
    run = _no_jit_run()
    figures = LiveFigures.of(run)
    assert figures.n_compiles == 11 == sum(s.n_compiles for s in compile_sites(run.records))
    assert figures.n_compiles == program_summary("no-jit", run.records, 58.0).n_compiles  # the run's summary
    assert figures.steady_ms == 2.0  # the first call compiled inside: not steady
    assert figures.n_calls == 5


def test_a_jit_runs_figures_count_its_own_compile_once():
    run = _no_jit_run()
    run.records[0] = replace(run.records[0], compiled=True, inner_compiles=[])
    assert LiveFigures.of(run).n_compiles == 1
