"""Which earlier run compiled the step a warm run reuses (:func:`app.core.session.runs.compiled_by`, issue 55: the
IR header named the compiling run as if it were the one shown)."""

from __future__ import annotations

from app.core.events import CallRecord
from app.core.session.runs import RunState, compiled_by


def _run(run_id: int, mode: str, compiled_steps: tuple[str, ...] = (), origin: str = "") -> RunState:
    records = [CallRecord(index=i, step=step, wall_ms=900.0, compiled=True, mode=mode, input_shapes={}, execute_ms=1.0)
               for i, step in enumerate(compiled_steps)]
    records.append(CallRecord(index=len(records), step="decode", wall_ms=9.0, compiled=False, mode=mode,
                              input_shapes={}, execute_ms=9.0))
    return RunState(label=f"run {run_id} · {mode}", mode=mode, run_id=run_id, records=records, origin=origin)


def test_the_latest_earlier_run_that_compiled_the_step_in_the_mode():
    first = _run(1, "jit-static", ("prefill", "decode"))
    other = _run(2, "jit-dynamic", ("prefill", "decode"))
    opened = _run(3, "jit-static", ("prefill", "decode"), origin="recorded on CPU × 1")
    warm = _run(4, "jit-static")
    later = _run(5, "jit-static", ("decode",))
    runs = [first, other, opened, warm, later]
    assert compiled_by(runs, warm, "jit-static", "decode") is first  # not jit-dynamic's, not a file's
    assert compiled_by(runs, warm, "jit-static", "prefill") is first
    assert compiled_by(runs, later, "jit-static", "decode") is first  # runs before it only
    assert compiled_by(runs, warm, "jit-loop", "decode") is None
    assert compiled_by(runs[3:], warm, "jit-static", "decode") is None  # dropped by the cap
