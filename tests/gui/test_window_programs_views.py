"""The Code workspace's views speak of programs (issue 21): the latency plot's key and the stats strip say
"call" / "steady call" / "first call" for a program run; a shape sweep (and its power-of-two buckets) draws
two runs, one compile per distinct shape and per bucket, each with its reason in the compile log."""

from __future__ import annotations

import pytest

from tests.conftest import RUN_TIMEOUT_MS

pytest.importorskip("pytestqt")


@pytest.fixture
def code_window(make_window, gui_model):
    win = make_window(gui_model, autoload=False, size=(1280, 720))
    yield win
    win.close()


def _example(stem: str) -> str:
    from app.core.programs.gallery import example

    return example(stem).path


def _run(qtbot, win) -> None:
    assert win.programs.run()
    qtbot.waitUntil(lambda: not win.is_busy(), timeout=RUN_TIMEOUT_MS)
    qtbot.waitUntil(lambda: not win.ui.ir_tabs.pending(), timeout=5000)


def test_program_run_speaks_of_calls(qtbot, code_window):
    win = code_window
    win.programs.open_example(_example("jit_speedup"))
    win.programs.panel.calls.setValue(4)
    _run(qtbot, win)
    plot, stats = win.ui.plot, win.ui.stats
    key = plot.key_text()
    assert "● call" in key and "compiling call" in key
    assert "prefill" not in key and "decode" not in key and "tok/s" not in key
    assert "steady call" in key and " ms" in plot.median_text()
    assert [stats.caption(k) for k in ("ttft", "tps", "tokens", "compiles")] == [
        "first call", "steady call", "calls", "compiles"]
    assert stats.cards["steady"].isHidden()
    assert stats.text("tokens") == "4" and stats.text("compiles") == "1"
    assert stats.text("ttft").endswith("ms") and stats.text("tps").endswith("ms")
    # a model run's words come back
    plot.set_program(False)
    stats.set_program(False)
    assert "■ prefill" in plot.key_text() and "steady decode" in plot.key_text()
    assert stats.caption("ttft") == "TTFT" and not stats.cards["steady"].isHidden()


def test_sweep_compiles_per_shape_and_per_bucket(qtbot, code_window):
    win = code_window
    win.programs.open_example(_example("static_shapes"))
    win.programs.panel.set_values({"sweep": "1:9", "bucket": True})
    _run(qtbot, win)
    plain, padded = win.session.runs[-2:]
    assert plain.mode == "jit" and padded.mode != "jit" and plain.program == padded.program == "normalize"
    assert win.ui.plot.run_count() == 2  # side by side on one plot
    assert len(plain.records) == len(padded.records) == 9
    assert sum(r.compiled for r in plain.records) == 9  # one per distinct shape
    assert sum(r.compiled for r in padded.records) == 5  # buckets 1, 2, 4, 8, 16
    reasons = [r.compile_reason for r in plain.records if r.compiled][1:]
    assert "new input shape: arg 0 f32[1,128] → f32[2,128]" in reasons[0]
    log = win.demo.log.rows()
    assert any("f32[7,128] → f32[8,128]" in " ".join(row.values()) for row in log)
