"""The Devices card's Device picker (issue 30): the machine's JAX platforms, the one in use selected, a choice
emitted as ``platformRequested``; disabled when there is no choice. Its tensor-parallel picker greys out the
sizes the model does not allow."""

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


def test_device_panel_greys_out_tp_sizes_the_model_does_not_allow(qtbot):
    from types import SimpleNamespace

    from widgets.devices.device_panel import DevicePanel

    panel = DevicePanel()
    qtbot.addWidget(panel)
    devices = [SimpleNamespace(id=i, platform="cpu", kind="cpu", key=f"cpu:{i}", memory_bytes=None,
                               memory_in_use=None, process_index=0) for i in range(4)]
    panel.set_devices(devices)
    assert [panel.picker.itemData(i) for i in range(panel.picker.count())] == ["tp=1", "tp=2", "tp=4"]
    panel.set_tp_sizes((1, 3))  # SmolLM2: 9 heads, 3 KV heads
    offered = {panel.picker.itemData(i): panel.picker.model().item(i).isEnabled() for i in range(panel.picker.count())}
    assert offered == {"tp=1": True, "tp=2": False, "tp=3": True, "tp=4": False}
    assert "does not divide" in panel.picker.itemText(1)
