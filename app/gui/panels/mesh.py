"""The window's device panel: devices listed by the compute thread, mesh changes sent to it as queued
requests, bytes per device after each mesh change and run. GUI thread only; every JAX call happens on the
compute thread (:class:`app.core.session.compute.service.ComputeService`).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal, Slot

from app.core.requests import RequestFailed
from app.core.session.model import Session
from app.core.session.requests import MeshChanged, MeshRequest, ModelLoaded
from widgets.devices.device_panel import DevicePanel


class MeshWiring(QObject):
    """Keeps ``panel`` in step with the engine's mesh. ``current`` is the mesh the engine runs on as last
    reported (``"1 device"`` or ``"tp=2"``). ``message(str)``: a line for the status bar."""

    message = Signal(str)

    def __init__(self, panel: DevicePanel, session: Session, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.panel = panel
        self.session = session
        self._requested: str | None = None
        session.events.devices.connect(self.on_devices)
        session.events.mesh.connect(self.on_mesh_changed)
        session.events.modelLoaded.connect(self.on_model_loaded)
        session.events.error.connect(self.on_failed)
        panel.meshRequested.connect(self.request_mesh)
        panel.platformRequested.connect(self.request_platform)
        session.events.platforms.connect(panel.set_platforms)
        session.list_devices()

    @property
    def current(self) -> str:
        """The mesh the engine runs on, as last reported (``"1 device"`` or ``"tp=2"``)."""
        return self.session.mesh

    @Slot(str)
    def request_mesh(self, text: str) -> None:
        """Ask the compute thread to place the model on ``text`` (after any queued request)."""
        self._requested = text
        self.panel.set_error("")
        self.message.emit(f"Applying mesh {text}…")
        self.session.set_mesh(text)

    @Slot(str)
    def request_platform(self, platform: str) -> None:
        """Run on ``platform`` from now on: the model is loaded again there (refused while a run is busy)."""
        if self.session.set_device(platform):
            self.message.emit(f"Loading the model on {platform.upper()}: every mode runs there from the next run.")
        elif self.session.busy:
            self.panel.set_platforms(self.session.platforms, self.session.platform)
            self.message.emit("Wait for the run to end before changing the device.")

    def on_devices(self, devices: list[Any]) -> None:
        self.panel.set_devices(devices)

    def on_mesh_changed(self, event: MeshChanged) -> None:
        self.panel.set_mesh(event.label)
        self.panel.set_device_bytes(event.device_bytes)
        if self._requested is not None:
            self._requested = None
            label = event.label
            note = (
                "one device" if label == "1 device" else f"{label}: weights and KV cache split over the mesh"
            )
            self.message.emit(f"Mesh applied ({note}); the next run compiles again.")

    def on_model_loaded(self, event: ModelLoaded) -> None:
        self.panel.set_tp_sizes(event.tp_sizes)
        self.panel.set_mesh(event.mesh)
        self.panel.set_device_bytes({})

    def on_failed(self, event: RequestFailed) -> None:
        if isinstance(event.request, MeshRequest):
            self._requested = None
            self.panel.set_mesh(self.current)  # nothing changed: show the mesh still in use
            self.panel.set_error(event.message)
