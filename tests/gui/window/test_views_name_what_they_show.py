"""Every view names the run, step and file it shows, and no view keeps another's state (issue 55, a walk through the
real window): a settings race's IR header names the setting its IR was compiled under (not "jit"), the latency
plot's legend names an older settings race by its settings (not "race of 2 modes"), the Code workspace's Profile tab
shows the profile of the step its IR header names or says there is none yet (never the model's decode profile under a
program's header), and a new model without experts hides the previous model's Experts-per-token strip without moving
Run/Stop. Programs are small JAX functions compiled on the CPU; no model compiles."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from conftest import RUN_TIMEOUT_MS  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QPushButton  # noqa: E402

ENTRY = "selu"
FILE = "01_jit_speedup.py"


def _open_program(qtbot, win) -> None:
    from app.core.programs.gallery import example

    assert win.programs.open_example(example("jit_speedup").path)
    assert win.workspaces.current() == "Code"
    win.programs.panel.calls.setValue(3)
    qtbot.waitUntil(lambda: win.programs.panel.entry.count() > 0, timeout=5000)


def _race(qtbot, win, names: list[str]) -> None:
    win.demo.controls.set_steady(False, None)
    controls = win.demo.settings_race.controls
    controls.set_checked(names)
    controls.typed_edit.setText("")
    qtbot.mouseClick(win.findChild(QPushButton, "settingsRaceButton"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: win.is_busy(), timeout=5000)
    qtbot.waitUntil(lambda: not win.is_busy(), timeout=RUN_TIMEOUT_MS)
    qtbot.waitUntil(lambda: not win.ui.ir_tabs.pending(), timeout=5000)


def test_a_program_race_names_the_setting_its_ir_was_compiled_under(qtbot, make_window, gui_model):
    win = make_window(gui_model, autoload=False, size=(1280, 720))
    try:
        _open_program(qtbot, win)
        n_runs = len(win.session.runs)
        _race(qtbot, win, ["default", "O1"])
        base, o1 = win.session.runs[n_runs:]
        assert (base.mode, o1.mode) == ("default", "O1")
        # the entry point is compiled once more after the lanes, under XLA's defaults: the baseline lane's compile
        header = win.ui.ir_tabs.origin_text()
        assert header == f"run {base.run_id} · default · {FILE} · {ENTRY}", header
        assert " jit " not in f" {header} ".replace("·", " ")
    finally:
        win.close()
