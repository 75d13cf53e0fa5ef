"""The session's devices, mesh and compilation caches: the requests that change them (the platform runs go to:
:meth:`DeviceState.set_device`) and the answers that say what they are now, announced on ``events``
(``devices``, ``platforms``, ``mesh``, ``cache``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from app.core.requests import Request
from app.core.session import requests as rq
from app.core.session.events_group import SessionEvents

if TYPE_CHECKING:
    from app.core.session.host import SessionHost


class DeviceState:
    """A base of :class:`app.core.session.model.Session` (which sets the fields declared here in its
    ``__init__``); same thread as it."""

    events: SessionEvents
    submit: Callable[[Request], None]
    platforms: list[str]
    platform: str
    mesh: str
    bound: Any
    cache_info: rq.CacheInfo | None

    def cache(self, action: str, directory: str = "") -> None:
        self.submit(rq.CacheRequest(action, directory))

    def set_device(self: SessionHost, platform: str) -> bool:
        """Run on ``platform`` (``"cpu"``, ``"gpu"``, ``"tpu"``; ``""``: JAX's default) from now on: the loaded
        model is loaded again there (its compiled steps are the old device's) and the devices listed anew.
        False (nothing changes) while busy or when it is the platform in use."""
        if self.busy or platform == (self.device or self.platform):
            return False
        self.device = platform
        model = self.loaded.request if self.loaded is not None else None
        if model is not None:
            self.load(model.model, model.dtype)
        self.list_devices()
        return True

    def set_mesh(self, text: str) -> None:
        self.submit(rq.MeshRequest(text))

    def list_devices(self) -> None:
        self.submit(rq.DevicesRequest())

    def _on_devices(self, event: rq.DevicesListed) -> None:
        self.platforms, self.platform = list(event.platforms), event.platform
        self.events.devices.emit(event.devices)
        self.events.platforms.emit(self.platforms, self.platform)

    def _on_mesh(self, event: rq.MeshChanged) -> None:
        self.mesh = event.label
        self.bound = event.bound  # the weights each device reads change with the mesh
        self.events.mesh.emit(event)

    def _on_cache(self, event: rq.CacheInfo) -> None:
        self.cache_info = event
        self.events.cache.emit(event)
