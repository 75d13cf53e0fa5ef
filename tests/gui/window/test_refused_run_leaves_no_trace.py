"""A refused run leaves no trace, and its error does not outlive the next run that works (issue 55: a KV cache
too short for the prompt left an empty legend entry, a "0 tokens" row in the Save dialog, and a red error over
the prompt through later successful runs)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPushButton

from tests.conftest import run_and_wait

WINDOW_TOKENS = 2  # the window fixture's max new tokens: one run that works is all the test needs


def _refused_run(qtbot, win) -> None:
    """Click Run with a 2-position KV cache: the prompt does not fit, the run is refused."""
    button = win.findChild(QPushButton, "runButton")
    errors = []
    win.session.events.error.connect(errors.append)
    qtbot.waitUntil(lambda: button.isEnabled())
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(errors) and not win.is_busy(), timeout=30_000)


def test_a_refused_run_leaves_nothing_and_its_error_goes_at_the_next_run(qtbot, window):
    win = window
    runs, ids, labels = len(win.session.runs), win.ui.plot.run_ids(), win.ui.plot.run_labels()
    win.ui.form.cache_len.setValue(2)
    _refused_run(qtbot, win)
    assert "KV cache" in win.status.text() and win.ui.prompt.error_text()  # said where the problem is
    assert len(win.session.runs) == runs  # nothing for the Save dialog, the session file or the race table
    assert win.ui.plot.run_ids() == ids and win.ui.plot.run_labels() == labels  # no empty legend entry

    # a KV cache longer than the model's positions: the engine's refusal is said under the KV cache field
    win.ui.form.cache_len.setValue(100_000)
    _refused_run(qtbot, win)
    note = win.ui.form.cache_len.note
    assert note.isVisible() and "exceeds the model's" in note.text() and "max_cache_len" not in note.text()
    assert len(win.session.runs) == runs and win.ui.plot.run_ids() == ids

    win.ui.form.cache_len.setValue(0)  # auto: the next run works (plain PyTorch: nothing to compile)
    win.ui.form.mode.setCurrentText("torch")
    run_and_wait(qtbot, win)
    assert len(win.session.runs) == runs + 1
    assert win.ui.prompt.error_text() == ""  # the red error went with the run that worked
    assert not win.ui.status_label.property("error")
    assert "KV cache" not in win.status.text()
    assert not note.isVisible()  # the field's note went with the run that worked
