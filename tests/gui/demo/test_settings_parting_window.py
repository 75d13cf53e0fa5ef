"""Where two raced settings part, from the Demo kit's settings race (issue 40, item 3): after a race, two of its
settings are picked under the trade-off plot, the comparison runs on the one compute thread, and the lockstep view
names the first pass whose output HLO differs (or that none does), with its diff and the fusions each kept. Stop
ends it; an error is said under the plot. Real engine on the built-in pydoc-llama (its decode step: ``default`` and
``cpu-no-ynn`` give the same optimized HLO there; disabling XLA's ``fusion`` pass parts at ``fusion``)."""

from __future__ import annotations

import os
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from conftest import RUN_TIMEOUT_MS  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QPushButton  # noqa: E402

from app.core.session.compute.settings_race import SettingsPartingRequest  # noqa: E402

WINDOW_TOKENS = 4
NO_FUSION = "--xla_disable_hlo_passes=fusion"


def race(qtbot, win, names: list[str], typed: str = "") -> None:
    win.demo.controls.set_steady(False)  # the lanes alone (the paired rounds: test_settings_race_window.py)
    controls = win.demo.settings_race.controls
    controls.set_checked(names)
    controls.typed_edit.setText(typed)
    qtbot.mouseClick(win.findChild(QPushButton, "settingsRaceButton"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not win.is_busy(), timeout=RUN_TIMEOUT_MS)


def compare(qtbot, win, a: str, b: str):
    sr = win.demo.settings_race
    sr.picker.choose(a, b)
    qtbot.mouseClick(win.findChild(QPushButton, "partingButton"), Qt.MouseButton.LeftButton)
    assert isinstance(win.session.active, SettingsPartingRequest)
    qtbot.waitUntil(lambda: not win.is_busy(), timeout=RUN_TIMEOUT_MS)
    return sr.parting_dialog


def test_two_raced_settings_part_at_a_named_pass_or_at_none(qtbot, window):
    sr = window.demo.settings_race
    race(qtbot, window, ["default", "cpu-no-ynn"], typed=NO_FUSION)
    assert sr.picker.names() == ["default", "cpu-no-ynn", NO_FUSION]
    assert window.findChild(QPushButton, "partingButton").isEnabled()
    # a setting that keeps XLA's fusion pass from running: the two pipelines part at that pass
    dlg = compare(qtbot, window, "default", NO_FUSION)
    assert dlg is not None and dlg.isVisible()
    assert dlg.first_pass() == "fusion"
    table = dlg.table
    assert [table.horizontalHeaderItem(c).text() for c in (2, 3)] == ["default", NO_FUSION]
    first = dlg.first
    assert first is not None and table.currentRow() == first  # highlighted and selected
    assert table.item(first, 1).text().startswith("HLO passes")  # the pass's pipeline beside it
    assert table.item(first, 2).text() == "changed" and table.item(first, 3).text() == "–"
    assert all(table.item(r, 2).text() == table.item(r, 3).text() for r in range(1, first))  # lockstep before it
    assert dlg.diff_view.changed_rows()  # the two modules' diff after that pass
    assert "fusion" in dlg.diff_title.text()
    assert dlg.fusions.text().startswith("Fusions kept: default ")
    assert "parts from default at" in dlg.summary.text() and "/ fusion" in dlg.summary.text()
    assert "parts from default" in sr.picker.message_text() and "parts from default" in window.status.text()
    # default and cpu-no-ynn on pydoc-llama's decode step: the same optimized module, said as such
    dlg = compare(qtbot, window, "default", "cpu-no-ynn")
    assert dlg.first_pass() == "no pass differs" and dlg.first is None
    assert "no pass differs" in dlg.summary.text() and "no pass differs" in sr.picker.message_text()
    assert dlg.diff_view.changed_rows() == []
    assert window.findChild(QPushButton, "partingButton").text() == "Compare passes…"


def test_one_setting_twice_is_refused_and_stop_ends_a_comparison(qtbot, window):
    sr = window.demo.settings_race
    race(qtbot, window, ["default", "O0"])
    sr.picker.choose("O0", "O0")
    qtbot.mouseClick(window.findChild(QPushButton, "partingButton"), Qt.MouseButton.LeftButton)
    assert not window.is_busy() and "two different settings" in sr.picker.message_text()
    sr.picker.choose("default", "O0")
    button = window.findChild(QPushButton, "partingButton")
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert button.text().endswith("Stop") and button.isEnabled()
    qtbot.waitUntil(lambda: "s" in sr.picker.message_text() and "Recording" in sr.picker.message_text())
    t0 = time.perf_counter()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)  # Stop: after the compile in progress
    qtbot.waitUntil(lambda: not window.is_busy(), timeout=RUN_TIMEOUT_MS)
    print(f"Stop to idle: {(time.perf_counter() - t0) * 1000:.0f} ms")
    assert sr.picker.message_text().startswith("Stopped after"), sr.picker.message_text()
    assert sr.parting_dialog is None and button.text() == "Compare passes…"


def test_an_error_is_said_under_the_plot(qtbot, window, monkeypatch):
    from app.core.errors import PlaygroundError

    sr = window.demo.settings_race
    race(qtbot, window, ["default", "O0"])

    def fail(*_a, **_k):
        raise PlaygroundError("The decode step of jit-static was not compiled yet.")

    monkeypatch.setattr("app.core.session.compute.settings_race.lowered_for", fail)  # where the service looks it up
    dlg = compare(qtbot, window, "default", "O0")
    assert dlg is None
    assert "not compiled yet" in sr.picker.message_text() and "b91c1c" in sr.picker.message.styleSheet()
