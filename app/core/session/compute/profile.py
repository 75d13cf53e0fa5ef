"""Profiles as the compute service answers them: a model's step (jit-static, or the profilable mode asked for) or,
with :attr:`app.core.session.requests.ProfileRequest.program`, a program's entry point, measured under
``jax.profiler`` on the compute thread outside any run's timings (:func:`profile_events`), and a profile's rows
aggregated four ways (:func:`profile_rows`). No Qt."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from app.core.events import PhaseEvent
from app.core.mode_catalog import profiling_mode
from app.core.profile.build import BY, aggregate
from app.core.profile.columns import BY_MODULE
from app.core.profile.step import profile_step
from app.core.requests import Handlers
from app.core.session import requests as rq

if TYPE_CHECKING:
    from app.core.engine.engine import Engine
    from app.core.profile.model import StepProfile
    from app.core.programs.compute.service import ProgramService


def profile_rows(profile: StepProfile) -> dict[str, list[dict[str, Any]]]:
    """A profile's rows aggregated four ways, as dicts (:attr:`app.core.session.requests.ProfileReady.rows`)."""
    return {by: [r.to_dict() for r in aggregate(profile, by, fold_layers=(by == BY_MODULE))]
            for by in BY}


def handlers(engine: Callable[[], Engine], programs: Callable[[], ProgramService]) -> Handlers:
    """The profile's entry in the compute service's table."""
    return {rq.ProfileRequest: lambda r, stop, live: profile_events(r, engine, programs, stop, live)}


def profile_events(request: rq.ProfileRequest, engine: Callable[[], Engine], programs: Callable[[], ProgramService],
                   should_stop: Callable[[], bool], on_live_phase: Callable[[Any], None] | None) -> Iterator[Any]:
    """Profile ``request``'s step of ``engine()`` (raises :class:`app.core.errors.PlaygroundError` when no model is
    loaded) or its program's entry point (kept warm by ``programs()``) → one :class:`rq.ProfileReady`; progress as
    live phases (``"profiling"``)."""
    def progress(message: str) -> None:
        if on_live_phase is not None:
            on_live_phase(PhaseEvent("profiling", True, message))

    if request.program is not None:  # the user's program: its entry point, its file:line rows
        profile, live = programs().profile(request.program, request.n_steps, should_stop, progress)
        yield rq.ProfileReady(profile, profile_rows(profile), profile.timeline.to_dict(), live.plain())
        return
    model = engine()
    mode = request.mode or profiling_mode()
    profile = profile_step(model, request.prompt, request.step, request.n_steps, on_progress=progress, mode=mode)
    profile.mode = mode
    ir = model.ir.get((mode, request.step))
    yield rq.ProfileReady(profile, profile_rows(profile), profile.timeline.to_dict(),
                          ir.plain() if ir is not None else None)
