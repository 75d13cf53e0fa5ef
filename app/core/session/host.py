"""What the bases of :class:`app.core.session.model.Session` use of the session they are part of: the
:class:`SessionHost` Protocol, the type of ``self`` in their methods that need the whole session (is it busy, the model
loaded, the request in progress), so each base keeps its own concept and the type checker still sees every use.
Annotations only: nothing here runs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from app.core.requests import Request, RequestFailed
from app.core.session import requests as rq
from app.core.session.events_group import SessionEvents
from app.core.session.runs import ReplayRequest, RunState


class SessionHost(Protocol):
    """The session as its bases see it (:class:`app.core.session.model.Session` is one)."""

    events: SessionEvents
    loaded: rq.ModelLoaded | None
    last_error: RequestFailed | None
    active: Request | ReplayRequest | None
    background: Request | None
    device: str
    platform: str
    _keep: int

    @property
    def busy(self) -> bool: ...

    def send(self, request: Request, status: str = "") -> bool: ...

    def load(self, model: str, dtype: str = "float32") -> bool: ...

    def list_devices(self) -> None: ...

    def apply(self, event: object) -> None: ...

    def _stream(self, events: list[Any], other: Callable[[Any], None]) -> None: ...

    def profilable_mode(self) -> str: ...

    def _busy_changed(self) -> None: ...

    def _new_run(self, mode: str, race: int | None, program: str = "", label: str | None = None,
                 origin: str = "", replay: bool = False, number: int = 0) -> RunState: ...

    def _end_stopped(self, run: RunState | None) -> None: ...
