"""Stop pressed before a run's trace begins never waits for the compiler either (issue 55, found by the walk: seed 1
at 1024×600, Stop 0.8 s into a cold run, before its phase was "tracing": the stop was only a flag, and the run ended
15 s later, when its compile did). When the uninterruptible phase begins with a stop requested, the run ends as
stopped at once and the compiler finishes in the background, as a Stop during the compile does
(``test_stop_quit.py``). A compile made long on purpose (``TORCHAX_PLAYGROUND_TEST_COMPILE_DELAY_S``)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from conftest import RUN_TIMEOUT_MS, run_and_wait  # noqa: E402
from PySide6.QtWidgets import QPushButton  # noqa: E402

from app.core.runtime.compiled_step import COMPILE_DELAY_ENV  # noqa: E402

COMPILE_DELAY_S = 8.0


def test_stop_before_the_trace_frees_the_window_when_the_trace_begins(qtbot, window, monkeypatch):
    window.ui.form.set_values({"mode": "jit-static", "max_new_tokens": 4, "ignore_eos": True})
    run_and_wait(qtbot, window)
    window.session.cache("clear_memory")  # the next run compiles again
    qtbot.waitUntil(lambda: not window.is_busy(), timeout=RUN_TIMEOUT_MS)
    monkeypatch.setenv(COMPILE_DELAY_ENV, str(COMPILE_DELAY_S))
    run_button = window.findChild(QPushButton, "runButton")
    run_button.click()
    assert window.is_busy() and not window.ui.busy.is_uninterruptible()  # no phase yet: Stop is a request
    window.stop()
    # usable long before the compile (8 s) ends: the run stopped when its trace began
    qtbot.waitUntil(lambda: not window.is_busy() and run_button.isEnabled(), timeout=int(COMPILE_DELAY_S * 1000 / 2))
    assert window.session.current.finished.reason == "stopped"
    monkeypatch.setenv(COMPILE_DELAY_ENV, "0")
    qtbot.waitUntil(lambda: window.session.background is None, timeout=RUN_TIMEOUT_MS + int(COMPILE_DELAY_S * 1000))
