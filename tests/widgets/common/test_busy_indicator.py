"""The busy indicator: phase, elapsed time and the stopping state."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from widgets.common.busy_indicator import BusyIndicator  # noqa: E402


def test_busy_indicator_phase_elapsed_and_stopping(qtbot):
    busy = BusyIndicator()
    qtbot.addWidget(busy)
    busy.start("compiling", "decode step")
    qtbot.wait(250)
    assert busy.text().startswith("compiling decode step… 0.")
    assert busy.is_uninterruptible()
    busy.set_stopping()
    assert busy.text().startswith("stopping after compile…")
    busy.stop()
    assert not busy.isVisible()
