"""What the result views show besides the runs: the session's last profile and pass recordings (measured here,
opened from a capture or dumps made elsewhere, or read from a session file), kept in the session model so every
view of them reads the same one and none keeps its own copy."""

from __future__ import annotations

from app.core.session import requests as rq
from app.core.session.events_group import SessionEvents


class ShownResults:
    """The profile (:attr:`last_profile`) and pass recordings (:attr:`last_passes`, the last two in
    :attr:`passes_history`, oldest first: the Passes tab's Compare…) the views show, announced on ``events``
    (``profile``, ``passes``). A base of :class:`app.core.session.model.Session`; same thread as it."""

    events: SessionEvents

    def _init_results(self) -> None:
        self.last_profile: rq.ProfileReady | None = None
        self.last_passes: rq.PassesReady | None = None
        self.passes_history: list[rq.PassesReady] = []
        #: where the last capture opened from another machine was recorded (CaptureRequest), "" after its message
        self.last_origin = ""

    def show_profile(self, ready: rq.ProfileReady) -> None:
        """Make ``ready`` (read from a session file: ``recorded``) the profile the views show."""
        self.last_profile = ready
        self.events.profile.emit(ready)

    def show_passes(self, ready: rq.PassesReady) -> None:
        """Make ``ready`` (read from a session file: ``recorded``) the pass recording the views show."""
        self.last_passes = ready
        self.passes_history = [*self.passes_history[-1:], ready]
        self.events.passes.emit(ready)

    def forget_passes(self) -> None:
        """A new model: its steps are not the ones recorded."""
        self.last_passes, self.passes_history = None, []

    def _on_profile(self, event: rq.ProfileReady) -> None:
        self.last_origin = event.origin or self.last_origin
        self.show_profile(event)

    def _on_passes(self, event: rq.PassesReady) -> None:
        self.last_origin = event.origin or self.last_origin
        self.show_passes(event)
