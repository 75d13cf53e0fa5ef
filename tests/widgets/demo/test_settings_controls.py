"""The settings-race controls: checkable catalog rows (refused rows greyed, never raced), typed settings split at
';', Race and Stop following the compute thread's state, progress with elapsed time, a refusal message."""

from __future__ import annotations

from PySide6.QtCore import Qt

from widgets.demo.settings_controls import SettingRow, SettingsRaceControls

ROWS = [SettingRow("default", "nothing"), SettingRow("O0", "optimization_level=O0"),
        SettingRow("O3", "optimization_level=O3"),
        SettingRow("gpu-autotune-0", "--xla_gpu_autotune_level=0", "gpu-autotune-0 is an XLA:GPU setting")]


def make(qtbot, checked=("default", "O3", "gpu-autotune-0")) -> SettingsRaceControls:
    w = SettingsRaceControls(ROWS, checked)
    qtbot.addWidget(w)
    return w


def test_checked_rows_then_typed_settings_are_raced(qtbot):
    w = make(qtbot)
    assert w.checked() == ["default", "O3"]  # a refused row is never checked
    refused = w.list.item(3)
    assert not refused.flags() & Qt.ItemFlag.ItemIsEnabled and refused.toolTip().startswith("gpu-autotune-0 is")
    w.typed_edit.setText(" --xla_cpu_enable_fast_math=true --xla_cpu_max_isa=AVX2 ;; jax_optimization_level=O1 ")
    assert w.typed() == ["--xla_cpu_enable_fast_math=true --xla_cpu_max_isa=AVX2", "jax_optimization_level=O1"]
    with qtbot.waitSignal(w.raceRequested) as blocker:
        qtbot.mouseClick(w.race_button, Qt.MouseButton.LeftButton)
    assert blocker.args == [["default", "O3", "--xla_cpu_enable_fast_math=true --xla_cpu_max_isa=AVX2",
                             "jax_optimization_level=O1"]]
    w.set_checked(["O0", "gpu-autotune-0"])
    w.typed_edit.setText("")
    assert w.names() == ["O0"]
    w.set_checked([])
    assert not w.race_button.isEnabled()  # nothing to race


def test_refused_rows_follow_the_backend(qtbot):
    w = make(qtbot)
    w.set_refused({"O3": "O3 is not here", "gpu-autotune-0": ""})
    assert w.checked() == ["default"] and w.list.item(1).flags() & Qt.ItemFlag.ItemIsEnabled
    assert w.list.item(3).flags() & Qt.ItemFlag.ItemIsEnabled and not w.list.item(2).flags() & Qt.ItemFlag.ItemIsEnabled
    assert w.list.item(2).toolTip() == "O3 is not here"


def test_busy_racing_progress_and_message(qtbot):
    w = make(qtbot)
    assert w.race_button.isEnabled() and not w.stop_button.isEnabled()
    w.set_busy(True, racing=False)  # another request: Race waits, Stop is not this race's
    assert not w.race_button.isEnabled() and not w.stop_button.isEnabled()
    w.set_busy(True, racing=True)
    assert w.stop_button.isEnabled()
    with qtbot.waitSignal(w.stopRequested):
        qtbot.mouseClick(w.stop_button, Qt.MouseButton.LeftButton)
    w.set_progress(1, 3, "O3")
    assert w.progress_text().startswith("lane 2/3 · O3 · ") and w.progress_text().endswith(" s")
    assert (w.progress.value(), w.progress.maximum()) == (1, 3)
    qtbot.wait(450)
    assert float(w.progress_text().split(" · ")[-1].removesuffix(" s")) >= 0.4  # the clock runs
    w.set_progress(3, 3, "")
    w.set_busy(False, racing=False)
    assert w.progress_text().startswith("3/3 lanes done · ") and w.race_button.isEnabled()
    w.set_message("Unknown compiler setting 'O9'")
    assert w.message_text() == "Unknown compiler setting 'O9'" and not w.message.isHidden()
    w.set_message("")
    assert w.message_text() == "" and w.message.isHidden()
