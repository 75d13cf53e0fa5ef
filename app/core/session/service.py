"""The compute service: executes typed requests on the compute thread and yields plain events.

One :class:`ComputeService` per compute thread owns the loaded :class:`app.core.engine.engine.Engine`, the chosen
device mesh and the persistent-cache directory. :meth:`ComputeService.handle` turns one request of
:mod:`app.core.session.requests` into a stream of events: engine events for runs and races, the answers of
:mod:`app.core.session.requests` otherwise, a :class:`RequestFailed` when it fails (every exception becomes data,
nothing escapes) and always one final :class:`RequestDone`. No Qt: the window's worker
(:mod:`app.gui.worker`) forwards the stream as signals; a script can iterate it directly.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from app.core.backends import CPU
from app.core.compile_cache.switch import cache_action, inductor_dir_for
from app.core.errors import PlaygroundError
from app.core.events import IREvent
from app.core.mode_catalog import profiling_mode
from app.core.profile.bound import memory_bound
from app.core.session import requests as rq
from app.core.session import settings_race_service as srs

if TYPE_CHECKING:
    from app.core.engine.engine import Engine
    from app.core.profile.model import StepProfile
    from app.core.programs.compute.service import ProgramService


def settle_garbage_collector() -> None:
    """Collect once, then ``gc.freeze()`` what is alive (the libraries and the loaded model, ~500k objects).

    Python's full (generation 2) collections otherwise scan all of them: a 0.25–0.35 s pause of every
    thread, which lands mid-run and freezes the window (measured on a GPT-2-sized model). ``unfreeze``
    first, so the previous model's objects can be collected. See the ``gc.freeze`` documentation.
    """
    import gc

    gc.unfreeze()
    gc.collect()
    gc.freeze()


def failure(request: rq.Request, exc: BaseException) -> rq.RequestFailed:
    """The :class:`RequestFailed` of ``exc``: the app's own errors keep their message; anything else is
    reported as unexpected, with its type."""
    details = "".join(traceback.format_exception(exc))
    if isinstance(exc, PlaygroundError):
        message = str(exc)
    else:
        message = f"Unexpected error: {type(exc).__name__}: {exc}".splitlines()[0]
    return rq.RequestFailed(request, message, details, _field_at_fault(request, exc))


def _field_at_fault(request: rq.Request, exc: BaseException) -> str:
    """Which input of the window ``exc`` is about (see :class:`app.core.session.requests.RequestFailed`)."""
    from app.core.errors import EmptyPromptError, InvalidSettingsError, PromptTooLongError

    if isinstance(request, rq.LoadRequest):
        return "model"
    if isinstance(request, rq.MeshRequest):
        return "mesh"
    if isinstance(request, rq.ProgramRequest):
        return "program"
    if isinstance(exc, (PromptTooLongError, EmptyPromptError)):
        return "prompt"
    return getattr(exc, "field", "settings") if isinstance(exc, InvalidSettingsError) else ""  # a setting's name


def profile_rows(profile: StepProfile) -> dict[str, list[dict[str, Any]]]:
    """A profile's rows aggregated four ways, as dicts (:attr:`app.core.session.requests.ProfileReady.rows`)."""
    from app.core.profile.build import aggregate

    return {by: [r.to_dict() for r in aggregate(profile, by, fold_layers=(by == "module"))]
            for by in ("line", "op", "fusion", "module")}


class ComputeService:
    """Executes requests one at a time. Use from one thread (the engine is not thread-safe)."""

    def __init__(self) -> None:
        self.engine: Engine | None = None
        self._key: tuple[str, str, str] | None = None
        self._mesh: Any = None  # app.core.parallel.mesh.MeshSpec chosen by the user, applied to every loaded model
        self._cache_dir = ""
        #: Run after a model load: collect once, then freeze what is alive (:func:`settle_garbage_collector`).
        #: The window runs it on the GUI thread instead (``app.gui.worker``): cyclic garbage may hold Qt
        #: widgets, which must not be destroyed on the compute thread.
        self.settle_gc: Callable[[], None] = settle_garbage_collector
        self._programs: Any = None  # app.core.programs.compute.service.ProgramService, made at the first program
        #: (mode, step) → (the engine's StepIR, its source map): a map is built once per compile
        self._maps: dict[tuple[str, str], tuple[Any, Any]] = {}

    def handle(
        self,
        request: rq.Request,
        should_stop: Callable[[], bool] = lambda: False,
        on_live_phase: Callable[[Any], None] | None = None,
        reraise: bool = False,
    ) -> Iterator[Any]:
        """Execute ``request``; yields its events, then one :class:`RequestDone`. A failure is a
        :class:`RequestFailed` event (the window shows it); with ``reraise`` (the CLI, which prints its own
        message and exit code) the exception is raised instead, after the :class:`RequestDone`."""
        handler = {
            rq.LoadRequest: self._load, rq.RunRequest: self._run, rq.RaceRequest: self._race,
            rq.CacheRequest: self._cache, rq.MeshRequest: self._set_mesh, rq.DevicesRequest: self._devices,
            rq.ProfileRequest: self._profile, rq.PassesRequest: self._passes, rq.ProgramRequest: self._program,
            rq.CaptureRequest: self._capture, rq.OpenSessionsRequest: self._open_sessions,
            rq.SettingsRaceRequest: self._race,
            srs.SettingsPartingRequest: lambda r, stop, live: srs.parting_events(
                self.programs if r.program is not None else self._engine(), r, stop, live),
            rq.ProgramSettingsRaceRequest: self._program_race,
            rq.ProgramCompileRequest: self._program,  # the Code workspace's live compile
        }[type(request)]
        try:
            yield from handler(request, should_stop, on_live_phase)
        except Exception as exc:  # noqa: BLE001 — every failure becomes a visible message
            if reraise:
                raise
            yield failure(request, exc)
        finally:
            yield rq.RequestDone(request)

    # -- models -----------------------------------------------------------------------------------------
    def _load(self, request: rq.LoadRequest, _stop: Any, on_live_phase: Any) -> Iterator[Any]:
        from app.core.engine.engine import load_engine

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

        from app.core.parallel.mesh import tp_sizes

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

    def _engine(self) -> Engine:
        if self.engine is None:
            raise PlaygroundError("No model is loaded: pick one and press Load.")
        return self.engine

    # -- runs -------------------------------------------------------------------------------------------
    def _run(self, request: rq.RunRequest, should_stop: Any, on_live_phase: Any) -> Iterator[Any]:
        engine = self._engine()
        irs: list[IREvent] = []
        try:
            for event in engine.generate(request.prompt, request.settings, should_stop, on_live_phase):
                if isinstance(event, IREvent):
                    irs.append(event)
                yield event
        finally:
            yield from self.after_run(irs, on_live_phase, request.source_maps)

    def _race(self, request: rq.RaceRequest, should_stop: Any, on_live_phase: Any) -> Iterator[Any]:
        from app.core.race import race

        engine = self._engine()
        irs: list[IREvent] = []
        try:
            if isinstance(request, rq.SettingsRaceRequest):  # one lane per compiler setting, the same stream
                from app.core.session.settings_race_service import settings_race_events

                stream = settings_race_events(engine, request, should_stop)
            else:
                stream = race(engine, request.prompt, list(request.modes), request.settings, should_stop,
                              cold=request.cold, eager_tokens=request.eager_tokens, on_live_phase=on_live_phase,
                              steady=request.steady)
            for event in stream:
                if isinstance(event, IREvent):
                    irs.append(event)
                yield event
        finally:
            yield from self.after_run(irs, on_live_phase, request.source_maps)

    def after_run(self, irs: list[IREvent], on_live_phase: Callable[[Any], None] | None = None,
                  source_maps: bool = True) -> Iterator[Any]:
        """Source maps and collectives of the IR captured in the run (each step's latest), then bytes per
        device and the persistent cache's size, each announced as a live phase (``"source map"``: the run has
        ended, its tokens are out; what the window waits for is named, ~0.5 s per step on SmolLM2). Each failure
        is a :class:`Notice`: the run's tokens and timings are already out."""
        from app.core.events import PhaseEvent
        from app.core.inspect.source_map import build_source_map
        from app.core.parallel.mesh import collectives

        engine = self._engine()
        latest = {(ev.mode, ev.step): ev for ev in irs}
        for (mode, step), ev in latest.items():
            if ev.ir.compiler != "xla" or not source_maps:
                continue
            if on_live_phase is not None:
                on_live_phase(PhaseEvent("source map", True, f"of the {step} step ({mode})"))
            try:
                yield rq.SourceMapReady(step, self._source_map(engine, mode, step, build_source_map))
            except Exception as exc:  # noqa: BLE001
                yield rq.Notice(f"No source map for the {step} step: {type(exc).__name__}: {exc}")
            try:
                yield rq.CollectivesReady(step, collectives(ev.ir.hlo))
            except Exception as exc:  # noqa: BLE001
                yield rq.Notice(f"Could not list the {step} step's collectives: {exc}")
        try:
            yield rq.MeshChanged(engine.mesh_label, engine.device_bytes(), memory_bound(engine))
            yield self._cache_info("")  # the run may have written to the persistent cache
        except Exception as exc:  # noqa: BLE001
            yield rq.Notice(f"Could not measure bytes per device or the cache: {exc}")

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

    def _program(self, request: rq.ProgramRequest, should_stop: Any, _live: Any) -> Iterator[Any]:
        """The user's own program (:mod:`app.core.programs.compute.service`): the same events as a model run."""
        yield from self.programs.handle(request, should_stop)

    def _program_race(self, request: rq.ProgramSettingsRaceRequest, should_stop: Callable[[], bool],
                      _live: Any) -> Iterator[Any]:
        """A program entry point's settings race (:func:`app.core.programs.compute.race.program_race_events`)."""
        from app.core.programs.compute.race import program_race_events

        yield from program_race_events(self.programs, request, should_stop)

    @property
    def programs(self) -> ProgramService:
        """The one :class:`~app.core.programs.compute.service.ProgramService` (its program kept warm for runs,
        profiles and pass recordings alike), made on first use."""
        if self._programs is None:
            from app.core.programs.compute.service import ProgramService

            self._programs = ProgramService()
        return self._programs

    def _profile(self, request: rq.ProfileRequest, _stop: Any, on_live_phase: Any) -> Iterator[Any]:
        """Profile the step on the compute thread, outside any run's timings; progress as live phases."""
        from app.core.events import PhaseEvent
        from app.core.profile.step import profile_step

        def progress(message: str) -> None:
            if on_live_phase is not None:
                on_live_phase(PhaseEvent("profiling", True, message))

        if request.program is not None:  # the user's program: its entry point, its file:line rows
            profile, live = self.programs.profile(request.program, request.n_steps, _stop, progress)
            yield rq.ProfileReady(profile, profile_rows(profile), profile.timeline.to_dict(), live.plain())
            return
        engine = self._engine()
        mode = request.mode or profiling_mode()
        profile = profile_step(engine, request.prompt, request.step, request.n_steps, on_progress=progress,
                               mode=mode)
        profile.mode = mode
        rows = profile_rows(profile)
        ir = engine.ir.get((mode, request.step))
        yield rq.ProfileReady(profile, rows, profile.timeline.to_dict(), ir.plain() if ir is not None else None)

    def _open_sessions(self, request: rq.OpenSessionsRequest, _stop: Any, on_live_phase: Any) -> Iterator[Any]:
        """Read session files (no JAX, torch or model); progress as a live phase naming the files and their
        size; a bad file is answered as :class:`SessionsRead` ``error`` (nothing else changes)."""
        from pathlib import Path

        from app.core.errors import SessionFileError
        from app.core.events import PhaseEvent
        from app.core.recording import load_all

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

    def _capture(self, request: rq.CaptureRequest, _stop: Any, on_live_phase: Any) -> Iterator[Any]:
        """Open a capture or a dump folder recorded elsewhere (no engine needed); progress as a live phase."""
        import dataclasses
        from pathlib import Path

        from app.core.events import PhaseEvent

        path = Path(request.path)
        if on_live_phase is not None:
            on_live_phase(PhaseEvent("opening capture", True, path.name))
        t0 = time.perf_counter()
        if path.is_dir():
            from app.core.passes.dumps import open_dumps
            from app.core.session.passes_service import passes_ready

            pipeline = open_dumps(path)
            ready = passes_ready(rq.PassesRequest(step=pipeline.module), "recorded elsewhere", pipeline,
                                 time.perf_counter() - t0)
            yield dataclasses.replace(ready, origin=f"dumps {path.name} · {pipeline.platform or CPU.platform}")
            return
        from app.core.profile.offline import profile_capture

        profile = profile_capture(path, request.hlo or None)
        rows = profile_rows(profile)
        device = getattr(profile, "device", "") or CPU.platform
        yield rq.ProfileReady(profile, rows, profile.timeline.to_dict(), None, origin=f"capture {path.name} · {device}")

    def _passes(self, request: rq.PassesRequest, should_stop: Any, on_live_phase: Any) -> Iterator[Any]:
        """Record XLA's pass pipeline of a compiled step (:mod:`app.core.session.passes_service`)."""
        from app.core.session.passes_service import record_passes

        started = time.perf_counter()  # the recording's seconds: the whole wait, a program's lowering included

        if request.program is not None:  # the user's program: lower its entry point (no model needed)
            from app.core.passes.lowered import lowered_for
            from app.core.programs.runner import ProgramRunner

            _program, prepared, _runner = self.programs.prepare(request.program, should_stop)
            yield from record_passes(None, request, should_stop, on_live_phase,
                                     lowered=lowered_for(ProgramRunner(prepared), should_stop=should_stop), started=started)
            return
        yield from record_passes(self._engine(), request, should_stop, on_live_phase, started=started)

    # -- devices and mesh -------------------------------------------------------------------------------
    def _devices(self, _request: rq.DevicesRequest, _stop: Any, _live: Any) -> Iterator[Any]:
        from app.core.engine.device import available_platforms, default_platform
        from app.core.parallel.devices import list_devices

        device = getattr(self.engine, "device", None)
        platform = getattr(device, "platform", None) or default_platform()
        yield rq.DevicesListed(list_devices(platform), available_platforms(), platform)

    def _set_mesh(self, request: rq.MeshRequest, _stop: Any, _live: Any) -> Iterator[Any]:
        """On an error (bad text, too few devices, tp not dividing the model) the engine stays as it was."""
        from app.core.parallel.mesh import parse_mesh

        spec = parse_mesh(request.text)
        engine = self.engine
        if engine is None:
            raise PlaygroundError("Load a model before choosing a device mesh.")
        engine.set_mesh(spec)
        self._mesh = spec if spec.n_devices > 1 else None
        yield rq.MeshChanged(engine.mesh_label, engine.device_bytes(), memory_bound(engine))

    # -- compilation caches -----------------------------------------------------------------------------
    def _cache(self, request: rq.CacheRequest, _stop: Any, _live: Any) -> Iterator[Any]:
        """One toggle, one clear button for both compilers: JAX's persistent compilation cache in the
        directory, Inductor's FX-graph / AOT-autograd caches beside it (:func:`inductor_dir_for`)."""
        directory = request.directory
        engine = self.engine
        message = cache_action(request.action, directory, engine.clear_compiled if engine is not None else None)
        yield self._cache_info(directory, message)

    def _cache_info(self, directory: str, message: str = "") -> rq.CacheInfo:
        from app.core.compile_cache.xla import disk_cache_size, persistent_cache_dir

        in_use = persistent_cache_dir()
        self._cache_dir = str(in_use) if in_use else (directory or self._cache_dir)
        n_files, n_bytes = disk_cache_size(self._cache_dir) if self._cache_dir else (0, 0)
        if self._cache_dir:
            more_files, more_bytes = disk_cache_size(inductor_dir_for(self._cache_dir))
            n_files, n_bytes = n_files + more_files, n_bytes + more_bytes
        return rq.CacheInfo(in_use is not None, self._cache_dir, n_files, n_bytes, message)
