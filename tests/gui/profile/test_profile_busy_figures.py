"""Issue 37: the Profile summary gave two busy figures that disagree without saying which is which (on the H200
capture ``busy_ms`` 96.5 µs, the rows' sum, and ``device_busy_ms`` 87.2 µs, their union on the timeline); the CLI
explained them, the window showed "ops running" only. The window's summary now names both, its tool tip gives the
arithmetic."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

CAPTURE = Path(__file__).resolve().parents[2] / "fixtures" / "gpu" / "h200-pydoc-llama-decode-profile.xplane.pb.gz"


def test_the_h200_captures_summary_names_both_busy_figures(qtbot, make_window):
    win = make_window("pydoc-llama", autoload=False, size=(1280, 720))
    assert win.profile.open_capture(str(CAPTURE))
    qtbot.waitUntil(lambda: win.profile.last is not None and not win.is_busy(), timeout=60_000)
    profile = win.profile.last.profile
    assert round(profile.busy_ms * 1e3, 1) == 96.5 and round(profile.launch_gaps["device_busy_ms"] * 1e3, 1) == 87.2
    text = win.profile.summary.text()
    assert "ops' time summed 96.5 µs" in text
    assert "device busy (union on the timeline) 87.2 µs per step" in text
    rows_sum = sum(r["us_per_step"] for r in win.profile.table.rows())
    assert round(rows_sum, 1) == 96.5  # "the rows' µs/step" adds up to the summed figure
    tip = win.profile.summary.toolTip()
    assert "÷ 5 = 96.5 µs per step" in tip and "table's µs/step column" in tip
    assert "÷ 5 = 87.2 µs per step" in tip and "/device:GPU:0" in tip and "overlaps counted once" in tip
    assert "96.5 µs − 87.2 µs = 9.3 µs per step" in tip
    assert "ops running" in text  # the share of the step, as before


def test_a_cpu_profile_names_its_figures_without_a_device():
    from app.gui.panels.profile.figures import busy_arithmetic, busy_figures

    cpu = SimpleNamespace(busy_ms=31.25, op_ms=24.5, step_ms=29.0, n_steps=20, device="", launch_gaps={})
    assert busy_figures(cpu) == "ops' time summed 31.250 ms · ops busy (union on the timeline) 24.500 ms per step"
    tip = busy_arithmetic(cpu)
    assert "÷ 20 = 31.250 ms per step" in tip and "host threads" in tip and "84.5% of the 29.000 ms step" in tip
    assert "6.750 ms per step of ops running while another op runs" in tip
    same = SimpleNamespace(busy_ms=2.0, op_ms=2.0, step_ms=4.0, n_steps=1, device="", launch_gaps={})
    assert "−" not in busy_arithmetic(same) and "the profiled step ÷ 1" in busy_arithmetic(same)
