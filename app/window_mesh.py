"""The window's device panel (issue #7): devices listed by the compute thread, mesh changes sent to it as
queued requests, bytes per device after each mesh change and run. GUI thread only; every JAX call
happens in :class:`app.worker.EngineWorker` (``list_devices``, ``set_mesh``, ``device_bytes``).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal, Slot

from app.worker import ComputeThread
from widgets.device_panel import DevicePanel


class MeshWiring(QObject):
    """Keeps ``panel`` in step with the engine's mesh. ``current`` is the mesh the engine runs on as last
    reported (``"1 device"`` or ``"tp=2"``). ``message(str)``: a line for the status bar."""

    message = Signal(str)

    def __init__(self, panel: DevicePanel, compute: ComputeThread, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.panel = panel
        self.compute = compute
        self.current = "1 device"
        self._requested: str | None = None
        w = compute.worker
        w.devicesListed.connect(self.on_devices)
        w.meshChanged.connect(self.on_mesh_changed)
        w.deviceBytes.connect(self.on_device_bytes)
        w.failed.connect(self.on_failed)
        panel.meshRequested.connect(self.request_mesh)
        compute.request_devices()

    @Slot(str)
    def request_mesh(self, text: str) -> None:
        """Ask the compute thread to place the model on ``text`` (after any queued request)."""
        self._requested = text
        self.message.emit(f"Applying mesh {text}…")
        self.compute.request_mesh(text)

    @Slot(object)
    def on_devices(self, devices: list[Any]) -> None:
        self.panel.set_devices(devices)

    @Slot(str)
    def on_mesh_changed(self, label: str) -> None:
        self.current = label
        self.panel.set_mesh(label)
        self.panel.set_device_bytes({})
        if self._requested is not None:
            self._requested = None
            note = (
                "one device" if label == "1 device" else f"{label}: weights and KV cache split over the mesh"
            )
            self.message.emit(f"Mesh applied ({note}); the next run compiles again.")

    @Slot(object)
    def on_device_bytes(self, per_device: dict[str, dict[str, int]]) -> None:
        self.panel.set_device_bytes(per_device)

    @Slot(str, str, str)
    def on_failed(self, _message: str, _details: str, kind: str) -> None:
        if kind == "mesh":
            self._requested = None
            self.panel.set_mesh(self.current)  # nothing changed: show the mesh still in use
