"""What another machine recorded, opened on the compute thread with no model: session files
(:func:`open_sessions_events`: JSON only, no JAX, torch or model) and a profiler capture of a step or a folder of XLA
dumps (:func:`capture_events`). Progress as live phases. No Qt."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from app.core.backends import CPU
from app.core.errors import SessionFileError
from app.core.events import PhaseEvent
from app.core.passes.dumps import open_dumps
from app.core.profile.offline import profile_capture
from app.core.recording import load_all
from app.core.requests import Handlers
from app.core.session import requests as rq
from app.core.session.compute.passes import passes_ready
from app.core.session.compute.profile import profile_rows

LivePhase = Callable[[Any], None] | None


def handlers() -> Handlers:
    """The entries in the compute service's table of what was recorded elsewhere (no model needed)."""
    return {rq.CaptureRequest: lambda r, _stop, live: capture_events(r, live),
            rq.OpenSessionsRequest: lambda r, _stop, live: open_sessions_events(r, live)}


def open_sessions_events(request: rq.OpenSessionsRequest, on_live_phase: LivePhase) -> Iterator[Any]:
    """Read session files; progress as a live phase naming the files and their size; a bad file is answered as
    :class:`rq.SessionsRead` ``error`` (nothing else changes)."""
    if on_live_phase is not None:
        sizes = sum(Path(p).stat().st_size for p in request.paths if Path(p).is_file())
        names = ", ".join(Path(p).name for p in request.paths)
        on_live_phase(PhaseEvent("opening", True, f"{names} ({sizes / 1e6:.1f} MB)"))
    t0 = time.perf_counter()
    try:
        files = load_all(list(request.paths))
    except SessionFileError as exc:
        yield rq.SessionsRead(request, [], (time.perf_counter() - t0) * 1000, str(exc))
        return
    yield rq.SessionsRead(request, files, (time.perf_counter() - t0) * 1000)


def capture_events(request: rq.CaptureRequest, on_live_phase: LivePhase) -> Iterator[Any]:
    """Open a capture (→ :class:`rq.ProfileReady`) or a dump folder (→ :class:`rq.PassesReady`) recorded elsewhere;
    progress as a live phase."""
    path = Path(request.path)
    if on_live_phase is not None:
        on_live_phase(PhaseEvent("opening capture", True, path.name))
    t0 = time.perf_counter()
    if path.is_dir():
        pipeline = open_dumps(path)
        ready = passes_ready(rq.PassesRequest(step=pipeline.module), "recorded elsewhere", pipeline,
                             time.perf_counter() - t0)
        yield dataclasses.replace(ready, origin=f"dumps {path.name} · {pipeline.platform or CPU.platform}")
        return
    profile = profile_capture(path, request.hlo or None)
    rows = profile_rows(profile)
    device = getattr(profile, "device", "") or CPU.platform
    yield rq.ProfileReady(profile, rows, profile.timeline.to_dict(), None, origin=f"capture {path.name} · {device}")
