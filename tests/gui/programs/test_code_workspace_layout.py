"""Issue 55 flaws 1 and 2 at 1280×720: the Code workspace's plot collapsed as program runs accumulated (149 → 128 →
71 → 45 px of drawing area: the IR header wrapped to four lines, a 2–4-row legend and a two-line key took the rest),
and the editor/IR splitter moved on live compiles and tab switches (567 → 506 → 547 px: the IR card's minimum width
followed its header's run name and its views' info lines). Rules: the plot's drawing area stays ≥ 180 px whatever has
run; no control moves more than 4 px between two runs of the same workspace."""

from __future__ import annotations

import contextlib

import pytest
from programs_helpers import code_window_fixture  # noqa: F401 (the code_window fixture)

from tests.conftest import RUN_TIMEOUT_MS

pytest.importorskip("pytestqt")

CODE_WINDOW_WORKSPACE = "Code"
MIN_DRAWING_PX = 180
MAX_MOVE_PX = 4
#: (example, mode): five program runs, two of them "jit vs no-jit": seven runs on the plot
RUNS = [("jit_speedup", "jit"), ("jit_speedup", "compare"), ("jit_speedup", "no-jit"), ("pytrees", "jit"),
        ("compile_sites", "compare")]


def _drawing_height(win) -> float:
    return win.ui.plot.plotItem.getViewBox().sceneBoundingRect().height()


def _controls(win) -> dict[str, tuple[int, int, int, int]]:
    """Window-relative rectangles of the Code workspace's controls."""
    from PySide6.QtCore import QPoint

    panel = win.programs.panel
    widgets = {"run": panel.run_button, "stop": panel.stop_button, "editor": win.programs.editor,
               "ir tabs": win.ui.ir_tabs.tabs, "plot": win.ui.plot}
    out = {}
    for name, w in widgets.items():
        p = w.mapTo(win, QPoint(0, 0))
        out[name] = (p.x(), p.y(), w.width(), w.height())
    out["splitter"] = tuple(win.workspaces.code_split.sizes()) + (0, 0)
    return out


def _moved(a: dict, b: dict) -> dict[str, int]:
    return {k: max(abs(x - y) for x, y in zip(a[k], b[k])) for k in a
            if max(abs(x - y) for x, y in zip(a[k], b[k])) > MAX_MOVE_PX}


def test_program_runs_keep_the_plot_readable_and_the_layout_still(qtbot, code_window):
    from app.core.programs.gallery import example

    win = code_window
    assert (win.width(), win.height()) == (1280, 720)
    win.programs.panel.live.setChecked(False)  # the runs are the subject (live compiles have their own tests)
    before = None
    for name, mode in RUNS:
        assert win.programs.open_example(example(name).path)
        win.workspaces.show("Code")
        win.programs.panel.set_values({"mode": mode, "n_calls": 2})
        assert win.programs.run()
        qtbot.waitUntil(lambda: not win.is_busy() and not win.ui.ir_tabs.pending(), timeout=RUN_TIMEOUT_MS)
        # the plot redraws every 50 ms while points arrive and fits its legend and key after the last: on a loaded
        # machine that lags (CI of 6 Dec measured 173 px 50 ms after the seventh run, 12 s runs alone pass)
        with contextlib.suppress(qtbot.TimeoutError):
            qtbot.waitUntil(lambda: _drawing_height(win) >= MIN_DRAWING_PX, timeout=3000)
        assert _drawing_height(win) >= MIN_DRAWING_PX, (name, mode, _drawing_height(win), len(win.session.runs))
        now = _controls(win)
        if before is not None:
            assert not _moved(before, now), (name, mode, _moved(before, now), before, now)
        before = now
    assert len(win.ui.plot.run_labels()) >= 6
    for workspace in ("Run", "Inspect", "Code"):  # a visit elsewhere and back
        win.workspaces.show(workspace)
        qtbot.wait(50)
    assert not _moved(before, _controls(win)), _moved(before, _controls(win))
    assert _drawing_height(win) >= MIN_DRAWING_PX
