"""The compute service: executes typed requests on the compute thread and yields plain events.

One :class:`ComputeService` per compute thread owns the loaded :class:`app.core.engine.engine.Engine`, the chosen
device mesh and the persistent-cache directory. :meth:`ComputeService.handle` turns one request of
:mod:`app.core.session.requests` into a stream of events: engine events for runs and races, the answers of
:mod:`app.core.session.requests` otherwise, a :class:`RequestFailed` when it fails (every exception becomes data,
nothing escapes) and always one final :class:`RequestDone`. No Qt: the window's worker
(:mod:`app.gui.worker`) forwards the stream as signals; a script can iterate it directly.
"""

from __future__ import annotations

import gc
import time
import traceback
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from app.core.engine.device import available_platforms, default_platform
from app.core.errors import EmptyPromptError, InvalidSettingsError, PlaygroundError, PromptTooLongError
from app.core.events import IREvent, PhaseEvent
from app.core.inspect.source_map import build_source_map
from app.core.parallel.devices import list_devices
from app.core.parallel.mesh import collectives, parse_mesh, tp_sizes
from app.core.profile.bound import memory_bound
from app.core.programs.compute.handlers import handlers as program_handlers
from app.core.programs.compute.requests import ProgramRequest
from app.core.programs.compute.service import ProgramService
from app.core.race import race
from app.core.requests import Handlers, Notice, Request, RequestDone, RequestFailed, SourceMapReady
from app.core.session import requests as rq
from app.core.session.compute import passes, profile, recorded
from app.core.session.compute import settings_race as srs
from app.core.session.compute.caches import CacheState

if TYPE_CHECKING:
    from app.core.engine.engine import Engine


StopFn = Callable[[], bool]
LivePhase = Callable[[Any], None] | None


def settle_garbage_collector() -> None:
    """Collect once, then ``gc.freeze()`` what is alive (the libraries and the loaded model, ~500k objects).

    Python's full (generation 2) collections otherwise scan all of them: a 0.25–0.35 s pause of every
    thread, which lands mid-run and freezes the window (measured on a GPT-2-sized model). ``unfreeze``
    first, so the previous model's objects can be collected. See the ``gc.freeze`` documentation.
    """
    gc.unfreeze()
    gc.collect()
    gc.freeze()


def failure(request: Request, exc: BaseException) -> RequestFailed:
    """The :class:`RequestFailed` of ``exc``: the app's own errors keep their message; anything else is
    reported as unexpected, with its type."""
    details = "".join(traceback.format_exception(exc))
    if isinstance(exc, PlaygroundError):
        message = str(exc)
    else:
        message = f"Unexpected error: {type(exc).__name__}: {exc}".splitlines()[0]
    return RequestFailed(request, message, details, _field_at_fault(request, exc))


def _field_at_fault(request: Request, exc: BaseException) -> str:
    """Which input of the window ``exc`` is about (see :class:`app.core.requests.RequestFailed`)."""
    if isinstance(request, rq.LoadRequest):
        return "model"
    if isinstance(request, rq.MeshRequest):
        return "mesh"
    if isinstance(request, ProgramRequest):
        return "program"
    if isinstance(exc, (PromptTooLongError, EmptyPromptError)):
        return "prompt"
    return getattr(exc, "field", "settings") if isinstance(exc, InvalidSettingsError) else ""  # a setting's name


class ComputeService:
    """Executes requests one at a time. Use from one thread (the engine is not thread-safe)."""

    def __init__(self) -> None:
        self.engine: Engine | None = None
        self._key: tuple[str, str, str] | None = None
        self._mesh: Any = None  # app.core.parallel.mesh.MeshSpec chosen by the user, applied to every loaded model
        self._caches = CacheState()
        #: Run after a model load: collect once, then freeze what is alive (:func:`settle_garbage_collector`).
        #: The window runs it on the GUI thread instead (``app.gui.worker``): cyclic garbage may hold Qt
        #: widgets, which must not be destroyed on the compute thread.
        self.settle_gc: Callable[[], None] = settle_garbage_collector
        self._programs: Any = None  # app.core.programs.compute.service.ProgramService, made at the first program
        #: (mode, step) → (the engine's StepIR, its source map): a map is built once per compile
        self._maps: dict[tuple[str, str], tuple[Any, Any]] = {}
        #: request type → handler: a model's own here, each other concept's from its module
        self._table: Handlers = {
            rq.LoadRequest: self._load, rq.RunRequest: self._run, rq.RaceRequest: self._race,
            rq.MeshRequest: self._set_mesh, rq.DevicesRequest: self._devices,
            **self._caches.handlers(self._clear_compiled), **recorded.handlers(),
            **profile.handlers(self._engine, self._programs_), **passes.handlers(self._engine, self._programs_),
            **srs.handlers(self._engine, self._programs_, self.ran), **program_handlers(self._programs_),
        }

    def handle(
        self,
        request: Request,
        should_stop: Callable[[], bool] = lambda: False,
        on_live_phase: Callable[[Any], None] | None = None,
        reraise: bool = False,
    ) -> Iterator[Any]:
        """Execute ``request``; yields its events, then one :class:`RequestDone`. A failure is a
        :class:`RequestFailed` event (the window shows it); with ``reraise`` (the CLI, which prints its own
        message and exit code) the exception is raised instead, after the :class:`RequestDone`."""
        handler = self._table[type(request)]
        try:
            yield from handler(request, should_stop, on_live_phase)
        except Exception as exc:  # noqa: BLE001 — every failure becomes a visible message
            if reraise:
                raise
            yield failure(request, exc)
        finally:
            yield RequestDone(request)

    # -- models -----------------------------------------------------------------------------------------
    def _load(self, request: rq.LoadRequest, _stop: StopFn, on_live_phase: LivePhase) -> Iterator[Any]:
        from app.core.engine.engine import load_engine  # noqa: PLC0415 - heavy: jax

        if self.engine is not None and self._key == (request.model, request.dtype, request.device):
            yield self._loaded(request, 0.0, [])
            return
        phases: list[Any] = []
        t0 = time.perf_counter()
        engine = load_engine(request.model, request.dtype, on_event=on_live_phase or phases.append,
                             device=request.device or None)
        yield from phases
        self.engine, self._key = engine, (request.model, request.dtype, request.device)
        self.settle_gc()
        note = self._apply_mesh_after_load(engine)
        yield self._loaded(request, time.perf_counter() - t0, [note] if note else [])

    def _loaded(self, request: rq.LoadRequest, seconds: float, notes: list[str]) -> rq.ModelLoaded:
        import jax

        engine = self._engine()
        warnings = tuple(str(w) for w in engine.warnings) + tuple(notes)
        return rq.ModelLoaded(request, engine.label, engine.model_id, seconds, warnings, engine.mesh_label,
                              engine.chat_template, engine.chat_default, tp_sizes(engine.config, len(jax.devices())),
                              memory_bound(engine))

    def _apply_mesh_after_load(self, engine: Engine) -> str | None:
        """Keep the chosen mesh for a newly loaded model. If it does not fit, the model runs on one device
        and the returned note (shown with the model's warnings) says why."""
        if self._mesh is None:
            return None
        try:
            engine.set_mesh(self._mesh)
        except Exception as exc:  # noqa: BLE001
            note = f"The mesh {self._mesh} chosen earlier does not fit this model: {exc} It runs on 1 device."
            self._mesh = None
            return note
        return None

    def adopt(self, engine: Engine, model: str, dtype: str, device: str = "") -> None:
        """Take ``engine``, loaded by the caller (the CLI loads with its own options: GGUF, mesh, device), as
        this service's model: runs and races then go through :meth:`handle` as the window's do."""
        self.engine, self._key = engine, (model, dtype, device)

    def _clear_compiled(self) -> Callable[[], None] | None:
        return self.engine.clear_compiled if self.engine is not None else None

    def _engine(self) -> Engine:
        if self.engine is None:
            raise PlaygroundError("No model is loaded: pick one and press Load.")
        return self.engine

    # -- runs -------------------------------------------------------------------------------------------
    def _run(self, request: rq.RunRequest, should_stop: StopFn, on_live_phase: LivePhase) -> Iterator[Any]:
        engine = self._engine()
        return self.ran(engine.generate(request.prompt, request.settings, should_stop, on_live_phase), on_live_phase,
                        request.source_maps)

    def _race(self, request: rq.RaceRequest, should_stop: StopFn, on_live_phase: LivePhase) -> Iterator[Any]:
        engine = self._engine()
        return self.ran(race(engine, request.prompt, list(request.modes), request.settings, should_stop,
                             cold=request.cold, eager_tokens=request.eager_tokens, on_live_phase=on_live_phase,
                             steady=request.steady), on_live_phase, request.source_maps)

    def ran(self, stream: Iterator[Any], on_live_phase: LivePhase = None, source_maps: bool = True) -> Iterator[Any]:
        """``stream``'s events (a model run's, a race's), then what :meth:`after_run` adds for the IR they captured —
        also when the stream fails or is closed."""
        irs: list[IREvent] = []
        try:
            for event in stream:
                if isinstance(event, IREvent):
                    irs.append(event)
                yield event
        finally:
            yield from self.after_run(irs, on_live_phase, source_maps)

    def after_run(self, irs: list[IREvent], on_live_phase: Callable[[Any], None] | None = None,
                  source_maps: bool = True) -> Iterator[Any]:
        """Source maps and collectives of the IR captured in the run (each step's latest), then bytes per
        device and the persistent cache's size, each announced as a live phase (``"source map"``: the run has
        ended, its tokens are out; what the window waits for is named, ~0.5 s per step on SmolLM2). Each failure
        is a :class:`Notice`: the run's tokens and timings are already out."""
        engine = self._engine()
        latest = {(ev.mode, ev.step): ev for ev in irs}
        for (mode, step), ev in latest.items():
            if ev.ir.compiler != "xla" or not source_maps:
                continue
            if on_live_phase is not None:
                on_live_phase(PhaseEvent("source map", True, f"of the {step} step ({mode})"))
            try:
                yield SourceMapReady(step, self._source_map(engine, mode, step, build_source_map))
            except Exception as exc:  # noqa: BLE001
                yield Notice(f"No source map for the {step} step: {type(exc).__name__}: {exc}")
            try:
                yield rq.CollectivesReady(step, collectives(ev.ir.hlo))
            except Exception as exc:  # noqa: BLE001
                yield Notice(f"Could not list the {step} step's collectives: {exc}")
        try:
            yield rq.MeshChanged(engine.mesh_label, engine.device_bytes(), memory_bound(engine))
            yield self._caches.info()  # the run may have written to the persistent cache
        except Exception as exc:  # noqa: BLE001
            yield Notice(f"Could not measure bytes per device or the cache: {exc}")

    def _source_map(self, engine: Engine, mode: str, step: str, build: Callable[..., Any]) -> Any:
        """The source map of the engine's ``step`` in ``mode``: built once per compile (a warm run's reused IR
        gets the map built at its compile: :attr:`IREvent.reused`)."""
        step_ir = engine.ir[(mode, step)]
        kept = self._maps.get((mode, step))
        if kept is not None and kept[0] is step_ir:
            return kept[1]
        source_map = build(step_ir, step, engine.model)
        self._maps[(mode, step)] = (step_ir, source_map)
        return source_map

    def _programs_(self) -> ProgramService:
        return self.programs

    @property
    def programs(self) -> ProgramService:
        """The one :class:`~app.core.programs.compute.service.ProgramService` (its program kept warm for runs,
        profiles and pass recordings alike), made on first use."""
        if self._programs is None:
            self._programs = ProgramService()
        return self._programs

    # -- devices and mesh -------------------------------------------------------------------------------
    def _devices(self, _request: rq.DevicesRequest, _stop: StopFn, _live: LivePhase) -> Iterator[Any]:
        device = getattr(self.engine, "device", None)
        platform = getattr(device, "platform", None) or default_platform()
        yield rq.DevicesListed(list_devices(platform), available_platforms(), platform)

    def _set_mesh(self, request: rq.MeshRequest, _stop: StopFn, _live: LivePhase) -> Iterator[Any]:
        """On an error (bad text, too few devices, tp not dividing the model) the engine stays as it was."""
        spec = parse_mesh(request.text)
        engine = self.engine
        if engine is None:
            raise PlaygroundError("Load a model before choosing a device mesh.")
        engine.set_mesh(spec)
        self._mesh = spec if spec.n_devices > 1 else None
        yield rq.MeshChanged(engine.mesh_label, engine.device_bytes(), memory_bound(engine))
