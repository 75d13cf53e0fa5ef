"""The Devices card's Device picker (issue 30): the machine's JAX platforms, the one in use selected, a choice
emitted as ``platformRequested``; disabled when there is no choice."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from widgets.devices.device_panel import DevicePanel  # noqa: E402


def test_platform_picker_lists_platforms_and_emits_the_choice(qtbot):
    panel = DevicePanel()
    qtbot.addWidget(panel)
    panel.set_platforms(["cpu"], "cpu")
    assert panel.platform() == "cpu" and not panel.platform_picker.isEnabled()
    panel.set_platforms(["cpu", "gpu"], "cpu")
    assert panel.platform_picker.isEnabled()
    assert [panel.platform_picker.itemText(i) for i in range(panel.platform_picker.count())] == ["CPU", "GPU"]
    with qtbot.waitSignal(panel.platformRequested) as blocker:
        panel.platform_picker.setCurrentIndex(1)
        panel.platform_picker.activated.emit(1)
    assert blocker.args == ["gpu"]
    panel.set_platforms(["cpu", "gpu"], "gpu")  # the engine reported the new platform: no second request
    assert panel.platform() == "gpu"
