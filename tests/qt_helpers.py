"""Synthetic call records for the widget tests (the fixtures live in tests/conftest.py)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from app.core.events import CallRecord  # noqa: E402


def call_record(index: int, step: str = "decode", wall_ms: float = 10.0, compiled: bool = False) -> CallRecord:
    """A synthetic :class:`app.core.events.CallRecord` (a compiling call: trace 210, lower 40, compile 760 ms)."""
    phases = {"trace": 210.0, "lower": 40.0, "compile": 760.0} if compiled else {}
    return CallRecord(
        index=index,
        step=step,
        mode="jit-static",
        input_shapes={"input_ids": [1, 1]},
        wall_ms=wall_ms,
        execute_ms=wall_ms * 0.9,
        compiled=compiled,
        trace_ms=phases.get("trace"),
        lower_ms=phases.get("lower"),
        compile_ms=phases.get("compile"),
        persistent_cache_hit=False if compiled else None,
        compile_reason="first call" if compiled else None,
        compile_phases=phases,
    )


def synthetic_run(n: int = 20) -> list[CallRecord]:
    """Prefill + decode records where the first two calls compile (~1 s) and the rest take ~10 ms."""
    return [
        call_record(i, "prefill" if i == 0 else "decode", 1010.0 + i if i < 2 else 9.5 + (i % 3) * 0.2, i < 2)
        for i in range(n)
    ]


def settings_stop_to_idle_s(qtbot, win) -> float:
    """Click the Settings race tab's Stop; seconds until the window is idle again (printed, for the test log)."""
    import time

    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QPushButton

    t0 = time.perf_counter()
    qtbot.mouseClick(win.findChild(QPushButton, "settingsStopButton"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not win.is_busy(), timeout=10_000)
    elapsed = time.perf_counter() - t0
    print(f"Stop to idle: {elapsed * 1000:.0f} ms")
    return elapsed
