"""Issue 34, item 1, on the command line: ``passes --program app/examples/07_mlp_training.py --json`` in this
process, five times (it aborted the process ~3 runs in 4 when the kernel-IR compile ran in process): each
run returns, prints whether the recording has its kernel IR (``[passes] kernel IR: dumped (…)`` or the note
of a lost one) and writes a ``kernel_ir`` JSON object saying the same."""

from __future__ import annotations

import io
import json
from pathlib import Path

from app.cli import main

EXAMPLE = Path(__file__).resolve().parents[2] / "app" / "examples" / "07_mlp_training.py"


def test_passes_program_with_kernel_ir_five_times_in_process():
    outcomes = []
    for _ in range(5):
        out, err = io.StringIO(), io.StringIO()
        assert main(["passes", "--program", str(EXAMPLE), "--json"], out=out, err=err) == 0, err.getvalue()
        rows = [json.loads(line) for line in out.getvalue().splitlines()]
        ir = next(r for r in rows if r["event"] == "kernel_ir")
        assert ir["kind"] == "LLVM IR" and {"snapshot", "compile_phases"} <= {r["event"] for r in rows}
        lines = [ln for ln in err.getvalue().splitlines() if "kernel IR" in ln]
        assert len(lines) == 1 and lines[0].startswith("[passes] "), err.getvalue()
        if ir["dumped"]:
            assert ir["status"] == "dumped" and ir["kernels"] > 0 and not ir["lost"]
            assert lines[0] == f"[passes] kernel IR: dumped ({ir['kernels']} kernels)"
        else:
            assert ir["lost"] and ir["kernels"] == 0 and "kernel IR" in ir["status"] and "exit " in ir["status"]
            assert lines[0] == f"[passes] {ir['status']}"
        outcomes.append(ir["dumped"])
    assert len(outcomes) == 5


def test_a_models_step_says_kernel_ir_was_not_requested(monkeypatch):
    """Without kernel IR nothing runs in a child, and the line says it was not asked for (here on --program
    with --no-kernel-ir, the cheapest recording)."""
    from app.core.passes import record

    monkeypatch.setattr(record, "_child_command", lambda *a: (_ for _ in ()).throw(AssertionError("no child")))
    out, err = io.StringIO(), io.StringIO()
    assert main(["passes", "--program", str(EXAMPLE), "--no-kernel-ir", "--json"], out=out, err=err) == 0
    ir = next(json.loads(line) for line in out.getvalue().splitlines() if '"kernel_ir"' in line)
    assert ir == {"event": "kernel_ir", "kind": "LLVM IR", "status": "not requested", "dumped": False, "kernels": 0,
                  "lost": False}
    assert "[passes] kernel IR: not requested (--kernel-ir dumps each fusion kernel's LLVM IR)" in err.getvalue()
