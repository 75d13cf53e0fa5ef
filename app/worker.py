"""The compute thread: one long-lived QThread that owns every JAX / torchax / torch call.

:class:`EngineWorker` lives on that thread and executes requests (load a model, run a generation) one at a
time, in order, from its event queue. Engine events cross to the GUI as signals carrying the event objects
of :mod:`app.core.events`; errors cross as text. :class:`ComputeThread` is the GUI-side handle: it
queues requests, stops a run (``threading.Event`` polled by the engine between steps) and shuts the
thread down cleanly (interrupt, quit, wait — a destroyed running QThread would abort the process).
"""

from __future__ import annotations

import threading
import time
import traceback
import weakref
from typing import Any

from PySide6.QtCore import QObject, QThread, Signal, Slot

#: Calls and tokens are sent to the GUI at most this often while steps are fast (seconds).
BATCH_INTERVAL_S = 0.016
#: A token that arrives this long after the previous one is sent at once (slow steps are not delayed).
SLOW_STEP_S = 0.008


def _settle_garbage_collector() -> None:
    """Collect once, then ``gc.freeze()`` what is alive (the libraries and the loaded model, ~500k objects).

    Python's full (generation 2) collections otherwise scan all of them: a 0.25–0.35 s pause of every
    thread, which lands mid-run and freezes the window (measured on a GPT-2-sized model; with the freeze
    the longest GUI stall of a first run fell from ~0.3 s to ~0.09 s). ``unfreeze`` first, so the previous
    model's objects can be collected. Runs on the compute thread, right after a model loads.
    """
    import gc

    gc.unfreeze()
    gc.collect()
    gc.freeze()


def _warnings(engine: Any) -> list[str]:
    return [str(w) for w in getattr(engine, "warnings", None) or []]


class EngineWorker(QObject):
    """Executes requests on the compute thread. Every signal below is emitted from the compute thread.

    Signals
    -------
    phase(PhaseEvent): a loading / converting / tracing / lowering / compiling / running phase.
    batch(list): CallRecord and TokenEvent objects in order, emitted at most every ~16 ms while steps
        are fast (one signal per step when a step takes longer than :data:`SLOW_STEP_S`), so a 1 ms/token
        model does not hand the GIL to the GUI thousands of times per second.
    ir(IREvent): IR captured for a newly compiled step.
    finished(FinishedEvent): a run ended (eos, max_new_tokens, cache_full or stopped).
    loaded(label, model_id, seconds, warnings): a model is ready; ``warnings`` is a list of one-line
        notes (bfloat16 on CPU, random weights, …).
    runStarted(): a run request began executing.
    failed(message, details, kind): a ``'load'`` or ``'run'`` request failed; ``message`` is one line,
        ``details`` a traceback.
    idle(kind): a request (``'load'`` or ``'run'``) is done, successfully or not.
    sourceMapReady(step, SourceMap): the source map of a step whose IR arrived in the run, built after the
        run's last token (so building it never counts in the run's timings).
    collectivesReady(step, list[Collective]): collectives in that step's optimized HLO (empty on 1 device).
    devicesListed(list[DeviceInfo]): the devices JAX sees (answer to :meth:`list_devices`).
    meshChanged(label): the mesh the engine runs on (``"1 device"``, ``"tp=2"``), after a load or a mesh
        change.
    deviceBytes(dict): ``{"weights": {"cpu:0": bytes}, "kv_cache": {...}}`` after a mesh change or a run.
    warning(text): something optional failed (e.g. a source map); the request itself went on.
    Mesh and device requests report errors as ``failed(message, details, 'mesh' | 'devices')`` and emit
    no ``idle``.
    """

    phase = Signal(object)
    batch = Signal(object)
    ir = Signal(object)
    finished = Signal(object)
    loaded = Signal(str, str, float, object)
    runStarted = Signal()
    failed = Signal(str, str, str)
    idle = Signal(str)
    sourceMapReady = Signal(str, object)
    collectivesReady = Signal(str, object)
    devicesListed = Signal(object)
    meshChanged = Signal(str)
    deviceBytes = Signal(object)
    warning = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self._engine: Any = None
        self._key: tuple[str, str] | None = None
        self._mesh: Any = None  # app.core.mesh.MeshSpec chosen by the user, applied to every loaded model
        self._irs: list[Any] = []  # IREvents of the current run

    @property
    def engine(self) -> Any:
        """The loaded :class:`app.core.engine.Engine`, or None. Use only on the compute thread."""
        return self._engine

    def _interrupted(self) -> bool:
        return QThread.currentThread().isInterruptionRequested()

    @Slot(str, str)
    def load(self, model: str, dtype: str) -> None:
        """Load ``model`` (built-in, ``random:…``, hub id or folder) unless it is already loaded."""
        if self._interrupted():
            return
        try:
            if self._key != (model, dtype) or self._engine is None:
                from app.core.engine import load_engine

                t0 = time.perf_counter()
                engine = load_engine(model, dtype, on_event=self.phase.emit)
                self._engine, self._key = engine, (model, dtype)
                _settle_garbage_collector()
                note = self._apply_mesh_after_load(engine)
                notes = _warnings(engine) + ([note] if note else [])
                self.loaded.emit(engine.label, engine.model_id, time.perf_counter() - t0, notes)
                self.meshChanged.emit(engine.mesh_label)
            else:
                self.loaded.emit(self._engine.label, self._engine.model_id, 0.0, _warnings(self._engine))
        except Exception as exc:  # noqa: BLE001 — every failure becomes a visible message
            self._report(exc, "load")
        finally:
            self.idle.emit("load")

    @Slot(str, object, object)
    def run(self, prompt: str, settings: Any, stop: threading.Event) -> None:
        """Stream one generation of the loaded engine; ``stop`` ends it within one decode step."""
        self.run_events(lambda engine, should_stop: engine.generate(prompt, settings, should_stop), stop)

    def run_events(self, make_events: Any, stop: threading.Event) -> None:
        """Run a generation-like request on the compute thread: ``make_events(engine, should_stop)``
        returns an iterator of engine events, forwarded (and followed by ``idle('run')``) as in :meth:`run`.
        Used by :mod:`app.demo_worker` for the mode race."""
        if self._interrupted():
            return
        try:
            if self._engine is None:
                from app.core.errors import PlaygroundError

                raise PlaygroundError("No model is loaded: pick one and press Load.")
            self.runStarted.emit()
            should_stop = lambda: stop.is_set() or self._interrupted()  # noqa: E731 (not a signal)
            self._irs = []
            self._stream(make_events(self._engine, should_stop))
        except Exception as exc:  # noqa: BLE001
            self._report(exc, "run")
        finally:
            self._after_run()
            self.idle.emit("run")

    def _after_run(self) -> None:
        """Source maps and collectives of the IR captured in the run, then bytes per device. Each failure
        is a warning: the run's tokens and timings are already out."""
        from app.core.mesh import collectives
        from app.core.source_map import build_source_map

        irs, self._irs = self._irs, []
        model = getattr(getattr(self._engine, "loaded", None), "model", None)
        for ev in irs:
            try:
                self.sourceMapReady.emit(ev.step, build_source_map(ev.ir, ev.step, model))
            except Exception as exc:  # noqa: BLE001
                self.warning.emit(f"No source map for the {ev.step} step: {type(exc).__name__}: {exc}")
            try:
                self.collectivesReady.emit(ev.step, collectives(getattr(ev.ir, "hlo", None)))
            except Exception as exc:  # noqa: BLE001
                self.warning.emit(f"Could not list the {ev.step} step's collectives: {exc}")
        if self._engine is not None and hasattr(self._engine, "device_bytes"):
            try:
                self.deviceBytes.emit(self._engine.device_bytes())
            except Exception as exc:  # noqa: BLE001
                self.warning.emit(f"Could not measure bytes per device: {exc}")

    @Slot()
    def list_devices(self) -> None:
        """Emit :attr:`devicesListed` (initialises JAX's backend on this thread)."""
        if self._interrupted():
            return
        try:
            from app.core.devices import list_devices

            self.devicesListed.emit(list_devices())
        except Exception as exc:  # noqa: BLE001
            self._report(exc, "devices")

    @Slot(str)
    def set_mesh(self, text: str) -> None:
        """Place the loaded engine on mesh ``text`` (``"tp=2"``; ``""`` or ``"tp=1"`` = one device). On an
        error (bad text, too few devices, tp not dividing the model) the engine stays as it was."""
        if self._interrupted():
            return
        try:
            from app.core.errors import PlaygroundError
            from app.core.mesh import parse_mesh

            spec = parse_mesh(text)
            if self._engine is None:
                raise PlaygroundError("Load a model before choosing a device mesh.")
            self._engine.set_mesh(spec)
            self._mesh = spec if spec.n_devices > 1 else None
            self.meshChanged.emit(self._engine.mesh_label)
            self.deviceBytes.emit(self._engine.device_bytes())
        except Exception as exc:  # noqa: BLE001
            self._report(exc, "mesh")

    def _apply_mesh_after_load(self, engine: Any) -> str | None:
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

    def _stream(self, events: Any) -> None:
        """Forward engine events: calls and tokens batched (≤ ~60 signals/s), everything else at once."""
        from app.core.events import CallRecord, FinishedEvent, IREvent, PhaseEvent, TokenEvent

        pending: list[Any] = []
        last_flush = last_token = time.perf_counter()

        def flush() -> None:
            nonlocal last_flush
            if pending:
                self.batch.emit(list(pending))
                pending.clear()
            last_flush = time.perf_counter()

        for event in events:
            if isinstance(event, (CallRecord, TokenEvent)):
                pending.append(event)
                if isinstance(event, TokenEvent):
                    now = time.perf_counter()
                    if now - last_flush >= BATCH_INTERVAL_S or now - last_token >= SLOW_STEP_S:
                        flush()
                    last_token = now
                continue
            flush()
            if isinstance(event, PhaseEvent):
                self.phase.emit(event)
            elif isinstance(event, IREvent):
                self.ir.emit(event)
                self._irs.append(event)
            elif isinstance(event, FinishedEvent):
                self.finished.emit(event)
        flush()

    def _report(self, exc: BaseException, kind: str) -> None:
        from app.core.errors import PlaygroundError

        details = "".join(traceback.format_exception(exc))
        if isinstance(exc, PlaygroundError):
            message = str(exc)
        else:
            message = f"Unexpected error: {type(exc).__name__}: {exc}".splitlines()[0]
        self.failed.emit(message, details, kind)


class ComputeThread(QObject):
    """GUI-side owner of the compute thread and its :class:`EngineWorker`. Use from the GUI thread.

    Connect to ``self.worker``'s signals with bound-method slots. Call :meth:`shutdown` before the
    application quits (the window does it in ``closeEvent``).
    """

    _load = Signal(str, str)
    _run = Signal(str, object, object)
    _mesh = Signal(str)
    _devices = Signal()
    _instances: weakref.WeakSet[ComputeThread] = weakref.WeakSet()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        ComputeThread._instances.add(self)
        self.thread = QThread()
        self.thread.setObjectName("computeThread")
        self.worker = EngineWorker()
        self.worker.moveToThread(self.thread)
        self._load.connect(self.worker.load)
        self._run.connect(self.worker.run)
        self._mesh.connect(self.worker.set_mesh)
        self._devices.connect(self.worker.list_devices)
        self._stop: threading.Event | None = None
        self.thread.start()

    def request_load(self, model: str, dtype: str) -> None:
        """Queue a model load (runs after any request already queued)."""
        self._load.emit(model, dtype)

    def request_run(self, prompt: str, settings: Any) -> None:
        """Queue a generation with ``settings`` (an ``app.core.settings.GenerationSettings``)."""
        self._run.emit(prompt, settings, self.new_stop_flag())

    def new_stop_flag(self) -> threading.Event:
        """A fresh stop flag for the next run-like request; :meth:`stop` and :meth:`shutdown` set it."""
        self._stop = threading.Event()
        return self._stop

    def request_mesh(self, text: str) -> None:
        """Queue a mesh change (``"tp=2"``; ``"tp=1"`` = one device); answered by ``meshChanged`` or
        ``failed(…, 'mesh')``."""
        self._mesh.emit(text)

    def request_devices(self) -> None:
        """Queue a device listing, answered by ``devicesListed``."""
        self._devices.emit()

    def stop(self) -> None:
        """Ask the current run to stop after its current step (a running compile finishes first)."""
        if self._stop is not None:
            self._stop.set()

    @classmethod
    def live(cls) -> list[ComputeThread]:
        """Every ComputeThread still referenced (tests use it to find threads left running)."""
        return list(cls._instances)

    def is_running(self) -> bool:
        return self.thread.isRunning()

    def shutdown(self) -> None:
        """Stop the current run, drop queued requests, and wait for the thread to finish (never abort)."""
        self.stop()
        if self.thread.isRunning():
            self.thread.requestInterruption()
            self.thread.quit()
            self.thread.wait()
