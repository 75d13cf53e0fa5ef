"""File ▸ Open profiler capture… / Open XLA dumps… (issue 30): what a GPU machine recorded, opened in the window
on this CPU-only machine with no model loaded — the Profile tab's rows and the Passes tab's nvptx pipelines."""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "gpu"
CAPTURE = FIXTURES / "h200-pydoc-llama-decode-profile.xplane.pb.gz"
DUMPS = FIXTURES / "passes" / "llama-decode"


def test_open_a_gpu_capture_and_gpu_dumps_without_a_model(qtbot, make_window):
    win = make_window("pydoc-llama", autoload=False)
    assert win.loaded is None
    file_menu = next(a.menu() for a in win.menuBar().actions() if a.text().replace("&", "") == "File")
    assert {"Open profiler capture…", "Open XLA dumps…"} <= {a.text().replace("&", "") for a in file_menu.actions()}

    assert win.profile.open_capture(str(CAPTURE))  # the .hlo.txt.gz beside it is found
    qtbot.waitUntil(lambda: win.profile.last is not None and not win.is_busy(), timeout=60_000)
    ready = win.profile.last
    assert ready.origin.startswith("capture h200-pydoc-llama-decode-profile.xplane.pb.gz") and "GPU" in ready.origin
    assert "h200-pydoc-llama-decode-profile" in win.profile.summary.text()
    assert "xla_gpu_enable_command_buffer" in win.profile.summary.text()  # why per-op times come from the schedule
    lines = [r["key"] for r in ready.rows["line"]]
    assert any("modeling_llama.py" in key for key in lines), lines[:5]
    assert win.profile.table.rows()
    assert "Opened capture" in win.status.text() and "Profile tab" in win.status.text()
    assert any("GPU:0" in lane for lane in win.profile.timeline.lanes())

    assert win.profile.open_capture(str(DUMPS))
    qtbot.waitUntil(lambda: win.passes.last is not None and not win.is_busy(), timeout=60_000)
    passes = win.passes
    assert passes.last.origin == "dumps llama-decode · gpu"
    assert "opened from dumps llama-decode" in passes.status.text()
    pipelines = {r["pipeline"] for r in passes.last.rows}
    assert any(p.startswith("nvptx") for p in pipelines), pipelines
    assert any(part["group"] == "autotune" or "autotun" in part["label"] for part in passes.last.breakdown["parts"])
    # the XLA:GPU page: pipelines with their ms, the autotune phase, the thunk sequence
    assert passes.detail.isTabVisible(passes.extras_index)
    assert passes.detail.tabText(passes.extras_index) == "XLA:GPU"  # titled by the extras
    gpu_text = passes.extras_view.toPlainText()
    assert "nvptx post-layout_assignment part 1" in gpu_text and "autotune (config-assigner)" in gpu_text
    assert "kCommandBuffer" in gpu_text and "PTX per fusion: not dumped" in gpu_text


def test_a_capture_without_its_hlo_says_what_to_do(qtbot, make_window, tmp_path):
    import shutil

    win = make_window("pydoc-llama", autoload=False)
    alone = tmp_path / "alone.xplane.pb.gz"
    shutil.copy(CAPTURE, alone)
    assert win.profile.open_capture(str(alone))
    qtbot.waitUntil(lambda: not win.is_busy(), timeout=60_000)
    assert win.profile.last is None
    assert "No optimized HLO text beside alone.xplane.pb.gz" in win.status.text()


def test_a_capture_opened_after_a_run_replaces_the_runs_ir_and_comes_to_the_front(qtbot, window):
    """Issue 37: an opened GPU capture sat under the local model's header, the jaxpr and StableHLO tabs still on
    the local model; opened from Run, the Profile tab stayed behind the demo kit."""
    from conftest import run_and_wait

    run_and_wait(qtbot, window)
    tabs = window.ui.ir_tabs
    assert tabs.text_of("decode", "jaxpr")  # the local run's
    window.demo.demo_dock.raise_()  # the Run workspace with the demo kit in front
    assert window.profile.open_capture(str(CAPTURE))
    qtbot.waitUntil(lambda: window.profile.last is not None and not window.is_busy(), timeout=60_000)
    step = window.profile.last.profile.step
    assert tabs.text_of(step, "hlo") == window.profile.last.profile.hlo_text
    assert tabs.text_of(step, "jaxpr") is None and tabs.text_of(step, "stablehlo") is None
    assert "opened · capture h200-pydoc-llama-decode-profile" in tabs.origin_text()
    assert tabs.tabs.currentWidget() is window.profile.page
    assert not window.ui.ir_dock.visibleRegion().isEmpty()  # in front of the demo kit's docks
