"""What the result views show besides the runs: the session's last profile and pass recordings (measured here,
opened from a capture or dumps made elsewhere, or read from a session file), kept in the session model so every
view of them reads the same one and none keeps its own copy; and the user's intents that make them (profile, record
the passes, open a capture or session files)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.core.programs.compute.requests import ProgramRequest
from app.core.session import figures
from app.core.session import requests as rq
from app.core.session.events_group import SessionEvents
from app.core.steps import DECODE

if TYPE_CHECKING:
    from app.core.session.host import SessionHost


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

    def profile(self: SessionHost, prompt: str, step: str = DECODE, n_steps: int = 20,
                program: ProgramRequest | None = None) -> bool:
        """Profile the loaded model's ``step`` in the latest run's mode when that mode is profilable (jit-loop:
        its loop, one step per iteration), else jit-static's — or, with ``program``, ``n_steps`` calls of the
        user's program's entry point (no model needed); refused (False) while busy or with no model."""
        if self.busy or (self.loaded is None and program is None):
            return False
        mode = self.profilable_mode() if program is None else ""
        what = f"calls of {program.entry or program.name}" if program is not None else f"{step} steps"
        return self.send(rq.ProfileRequest(prompt, step, n_steps, program, mode), f"Profiling {n_steps} {what}…")

    def open_capture(self: SessionHost, path: str, hlo: str = "") -> bool:
        """Open a profiler capture (with its optimized HLO text ``hlo``; ``""``: the one beside it) or a folder
        of XLA dumps recorded on another machine (:class:`app.core.session.requests.CaptureRequest`; no model
        needed); refused (False) while busy."""
        if self.busy:
            return False
        return self.send(rq.CaptureRequest(path, hlo), f"Opening {path}…")

    def open_sessions(self: SessionHost, paths: list[str]) -> bool:
        """Read session files on the compute thread (no JAX is started for it) and answer with
        ``events.sessionsRead``, after which the session is idle again (the views then show the runs);
        refused (False) while busy."""
        if self.busy or not paths:
            return False
        return self.send(rq.OpenSessionsRequest(tuple(str(p) for p in paths)))

    def passes(self: SessionHost, step: str = DECODE, fusion_log: bool = False, mode: str = "", xla_flags: str = "",
               program: ProgramRequest | None = None) -> bool:
        """Record XLA's pass pipeline of the compiled ``step`` (of ``mode``; ``""``: the latest JAX mode
        that compiled it) — or, with ``program``, of the user's program's entry point (no model needed) — with
        ``xla_flags`` (XLA option text, validated on the compute thread); refused (False) while busy or with no
        model. Stop ends it (the worker's stop flag)."""
        if self.busy or (self.loaded is None and program is None):
            return False
        if program is not None:
            step = program.entry or "program"
        self.last_error = None
        return self.send(rq.PassesRequest(step, fusion_log, mode, xla_flags, program),
                         f"Recording XLA's passes of the {step} step" + (" with the fusion log…" if fusion_log else "…"))

    def _results_done(self, request: rq.PassesRequest | rq.CaptureRequest | rq.ProfileRequest) -> str:
        """The status line when a recording, a capture or a profile is done."""
        if isinstance(request, rq.PassesRequest):
            return figures.passes_done(request, self.last_passes)
        if isinstance(request, rq.CaptureRequest):
            origin, self.last_origin = self.last_origin, ""
            return figures.capture_done(origin)
        return figures.profile_done(request, self.last_profile)

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
