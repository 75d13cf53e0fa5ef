"""The demo workspace's widgets: the phase bars split torch.compile's compile into its own phases, and the
compile log's row of a compiling call is annotated with a recorded split (note after its phases, parts in
the tooltip)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from app.core.events import COMPILE_PHASES_FIELD  # noqa: E402
from app.core.report.columns import COMPILE_COLUMNS  # noqa: E402
from widgets.demo.compile_log import CompileLog  # noqa: E402


def test_phase_bars_split_torch_compiles_compile_into_its_own_phases(qtbot):
    from widgets.demo.phase_bars import PhaseBars, PhaseCall

    bars = PhaseBars()
    qtbot.addWidget(bars)
    parts = (("dynamo", 900.0), ("aot autograd", 300.0), ("inductor lowering", 2000.0), ("inductor codegen", 800.0),
             ("c++ compile", 6000.0))
    bars.set_calls([PhaseCall("jit-static · prefill #0", 200, 40, 700, 5),
                    PhaseCall("torch-compile · prefill #0", 0, 0, 10_000, 30, compile_parts=parts)])
    assert [n for n, _ in bars.calls()[1].segments()] == ["trace", "lower", *[n for n, _ in parts], "execute"]
    drawn = bars.segment_widths()
    assert drawn["c++ compile"] == [6000.0] and drawn["compile"] == [700.0]
    assert "c++ compile" in bars.legend_text() and "dynamo" in bars.legend_text()


def test_compile_log_annotate_the_steps_row(qtbot):
    log = CompileLog(COMPILE_COLUMNS)
    qtbot.addWidget(log)
    phases = {"trace": 100.0, "lower": 30.0, "compile": 600.0}
    for call, step in ((0, "prefill"), (1, "decode")):
        log.add_row({"run": "1 · jit-static", "call": call, "step": step, "reason": "first call",
                     "compile_total_ms": 730.0, "compile_phases": phases, "disk_cache": False})
    where = {"run": "1 · jit-static", "call": 1, "step": "decode"}
    assert log.annotate(where, "XLA: HLO passes 70 ms · backend 500 ms", "Recorded compile\n  LLVM: 400 ms",
                        key=COMPILE_PHASES_FIELD)
    rows = log.rows()
    assert rows[1]["phases"].endswith("‖ XLA: HLO passes 70 ms · backend 500 ms") and "‖" not in rows[0]["phases"]
    assert "LLVM" in log.item(1, 0).toolTip()
    # a second note replaces the first
    assert log.annotate(where, "XLA: HLO passes 80 ms", "again", key=COMPILE_PHASES_FIELD)
    assert log.rows()[1]["phases"].count("‖") == 1 and log.rows()[1]["phases"].endswith("80 ms")
    assert not log.annotate({"run": "2 · jit-static", "call": 1, "step": "decode"}, "x", "y",
                            key=COMPILE_PHASES_FIELD)
