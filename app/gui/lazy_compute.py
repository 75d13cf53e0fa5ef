"""Requests held back until a model is wanted, so a window that only shows session files never starts JAX.

Listing the devices and setting up the compilation caches (the device panel and the demo kit ask at
start-up) import JAX and torch on the compute thread. :class:`DeferUntilModel` keeps those requests
until the first request that needs a model (a load, run, race, profile or mesh) and then sends them first,
in order: with a model loaded at start-up nothing changes; a window opened on a ``.session`` file (no
autoload) stays free of JAX and torch until the user loads a model.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: Requests that can wait for the first model (they only describe the machine and its caches).
DEFERRABLE = ("DevicesRequest", "CacheRequest")
#: Requests that need no JAX: forwarded at once without opening the gate (reading session files).
NO_JAX = ("OpenSessionsRequest",)


class DeferUntilModel:
    """Wraps ``submit`` (the compute thread's): :meth:`submit` holds :data:`DEFERRABLE` requests until the
    first other request, then forwards everything in order. :attr:`held` lists what waits."""

    def __init__(self, submit: Callable[[Any], None]) -> None:
        self._submit = submit
        self.held: list[Any] = []
        self.open = False

    def submit(self, request: Any) -> None:
        if not self.open and type(request).__name__ in DEFERRABLE:
            self.held.append(request)
            return
        if not self.open and type(request).__name__ in NO_JAX:
            self._submit(request)
            return
        self.release()
        self._submit(request)

    def release(self) -> None:
        """Send what was held (in order) and forward every request from now on."""
        if self.open:
            return
        self.open = True
        held, self.held = self.held, []
        for request in held:
            self._submit(request)
