"""The compile spike taken apart in the widgets: the compile bar led by trace and lower, and the compile
log's row of a compiling call annotated with a recorded split (note after its phases, parts in the tooltip)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from app.core.report.columns import COMPILE_COLUMNS  # noqa: E402
from widgets.demo.compile_log import CompileLog  # noqa: E402
from widgets.passes.compile_bar import CompileBar  # noqa: E402


def test_compile_bar_with_trace_and_lower(qtbot):
    w = CompileBar()
    qtbot.addWidget(w)
    parts = [{"label": "trace", "ms": 100.0, "group": "trace"}, {"label": "lower", "ms": 30.0, "group": "lower"},
             {"label": "HLO passes: simplification", "ms": 70.0, "group": "HLO passes"},
             {"label": "LLVM", "ms": 700.0, "group": "backend"}, {"label": "outside XLA", "ms": 100.0, "group": "other"}]
    w.set_parts(1000.0, parts)
    assert w.caption() == ("first call's compile 1,000 ms = trace 100 ms (10%) + lower 30 ms (3%) + "
                           "HLO passes 70 ms (7%) + backend 700 ms (70%) + other 100 ms (10%)")
    assert [p["colour"] for p in w.parts()][:2] == ["#7c3aed", "#0f766e"]
    w.resize(900, w.sizeHint().height())
    w.grab()


def test_compile_log_annotate_the_steps_row(qtbot):
    log = CompileLog(COMPILE_COLUMNS)
    qtbot.addWidget(log)
    phases = {"trace": 100.0, "lower": 30.0, "compile": 600.0}
    for call, step in ((0, "prefill"), (1, "decode")):
        log.add_row({"run": "1 · jit-static", "call": call, "step": step, "reason": "first call",
                     "compile_total_ms": 730.0, "compile_phases": phases, "disk_cache": False})
    where = {"run": "1 · jit-static", "call": 1, "step": "decode"}
    assert log.annotate(where, "XLA: HLO passes 70 ms · backend 500 ms", "Recorded compile\n  LLVM: 400 ms")
    rows = log.rows()
    assert rows[1]["phases"].endswith("‖ XLA: HLO passes 70 ms · backend 500 ms") and "‖" not in rows[0]["phases"]
    assert "LLVM" in log.item(1, 0).toolTip()
    assert log.annotate(where, "XLA: HLO passes 80 ms", "again")  # a second note replaces the first
    assert log.rows()[1]["phases"].count("‖") == 1 and log.rows()[1]["phases"].endswith("80 ms")
    assert not log.annotate({"run": "2 · jit-static", "call": 1, "step": "decode"}, "x", "y")
