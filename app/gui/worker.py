"""The compute thread: one long-lived QThread and one worker object on it that owns every JAX / torchax /
torch call.

The GUI sends typed requests (:mod:`app.core.session.requests`) with :meth:`ComputeThread.submit`; the worker
executes them in order with :class:`app.core.session.compute.service.ComputeService` and sends the answers back as
:attr:`ComputeWorker.events` (lists of plain events, batched). :meth:`ComputeThread.stop` ends a run
within one decode step (a ``threading.Event`` the engine polls between steps); :meth:`ComputeThread.shutdown`
stops, drops queued requests and waits for the thread (a destroyed running QThread would abort the process:
pytest-qt #276).
"""

from __future__ import annotations

import threading
import time
import weakref
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QThread, Signal, Slot

from app.core.programs.compute.requests import ProgramRequest
from app.core.session.compute.service import ComputeService, settle_garbage_collector

if TYPE_CHECKING:
    from app.core.engine.engine import Engine

#: Calls and tokens are sent to the GUI at most this often while steps are fast (seconds).
BATCH_INTERVAL_S = 0.016
#: A token that arrives this long after the previous one is sent at once (slow steps are not delayed).
SLOW_STEP_S = 0.008
#: After a run's end is sent, the compute thread leaves the interpreter to the GUI thread this long (seconds).
FINISH_YIELD_S = 0.05


class ComputeWorker(QObject):
    """Lives on the compute thread; executes one request at a time.

    Signals (emitted on the compute thread)
    -------
    events(list): the request's events in order. Call records and tokens are batched (at most every
        ~16 ms while steps are fast; one signal per step when a step takes longer than :data:`SLOW_STEP_S`; a
        step ends with its token, a program's call, which has none, with its record),
        so a 1 ms/token model does not hand the GIL to the GUI thousands of times per second; every other
        event is sent at once.
    live(PhaseEvent): a phase reported while a call blocks (loading progress, torch.compile's phases).
    """

    events = Signal(object)
    live = Signal(object)
    #: after a model load: asks the GUI thread to collect and freeze the garbage collector (see ComputeThread)
    settleRequested = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.service = ComputeService()
        self.service.settle_gc = self.settleRequested.emit  # collected on the GUI thread, not here
        self._stop = threading.Event()

    @property
    def engine(self) -> Engine | None:
        """The loaded :class:`app.core.engine.engine.Engine`, or None. Use only on the compute thread."""
        return self.service.engine

    def _should_stop(self) -> bool:
        return self._stop.is_set() or QThread.currentThread().isInterruptionRequested()

    @Slot(object, object)
    def handle(self, request: Any, stop: threading.Event) -> None:
        """Execute ``request``; ``stop`` is its stop flag (set by :meth:`ComputeThread.stop`)."""
        if QThread.currentThread().isInterruptionRequested():
            return
        self._stop = stop
        pending: list[Any] = []
        last_flush = last_token = time.perf_counter()
        # a model's call record is followed by its token (sent together); a program's calls have no tokens
        closing = "CallRecord" if isinstance(request, ProgramRequest) else "TokenEvent"
        for event in self.service.handle(request, self._should_stop, self.live.emit):
            batched = type(event).__name__ in ("CallRecord", "TokenEvent")
            if batched:
                pending.append(event)
                if type(event).__name__ != closing:
                    continue
                now = time.perf_counter()
                slow = now - last_token >= SLOW_STEP_S
                last_token = now
                if now - last_flush < BATCH_INTERVAL_S and not slow:
                    continue
            else:
                pending.append(event)
            self.events.emit(pending)
            pending = []
            last_flush = time.perf_counter()
            if type(event).__name__ == "FinishedEvent":
                # the run's end reaches the screen before the after-run work (source maps, ~0.5 s of Python per
                # step) competes with the GUI thread for the interpreter: measured, jit-loop's Stop on SmolLM2
                # showed the stopped run 449 ms after Stop without this pause
                time.sleep(FINISH_YIELD_S)
        if pending:
            self.events.emit(pending)


class ComputeThread(QObject):
    """GUI-side owner of the compute thread and its :class:`ComputeWorker`. Use from the GUI thread.

    Connect to ``self.worker.events`` / ``.live`` with bound-method slots. Call :meth:`shutdown` before the
    application quits (the window does it in ``closeEvent``).
    """

    _request = Signal(object, object)
    _instances: weakref.WeakSet[ComputeThread] = weakref.WeakSet()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        ComputeThread._instances.add(self)
        self.qthread = QThread()  # not `thread`: that would hide QObject.thread()
        self.qthread.setObjectName("computeThread")
        self.worker = ComputeWorker()
        self.worker.moveToThread(self.qthread)
        self._request.connect(self.worker.handle)
        self.worker.settleRequested.connect(self._settle_gc)  # queued: runs on this (the GUI) thread
        self._stop = threading.Event()
        self.qthread.start()

    @Slot()
    def _settle_gc(self) -> None:
        """After a model load, on the GUI thread: collect (Qt objects in cyclic garbage are destroyed on their
        own thread) and freeze what is alive, so later full collections skip the model's objects."""
        settle_garbage_collector()

    def submit(self, request: Any) -> None:
        """Queue ``request`` (runs after every request already queued). A run or race gets a fresh stop
        flag, which :meth:`stop` sets."""
        if type(request).__name__ in ("RunRequest", "RaceRequest", "SettingsRaceRequest", "PassesRequest",
                                      "ProgramRequest", "ProgramCompileRequest", "SettingsPartingRequest",
                                      "ProgramSettingsRaceRequest"):
            self._stop = threading.Event()
        self._request.emit(request, self._stop)

    def stop(self) -> None:
        """Ask the current run to stop after its current step (a running compile finishes first)."""
        self._stop.set()

    @classmethod
    def live(cls) -> list[ComputeThread]:
        """Every ComputeThread still referenced (tests use it to find threads left running)."""
        return list(cls._instances)

    def shutdown(self, wait_ms: int | None = None) -> bool:
        """Stop the current run, drop queued requests, and wait for the thread to finish (never abort): until
        it ends, or at most ``wait_ms``. Returns True when the thread has ended (False: it is still inside a
        compile that cannot be interrupted; destroying it now would abort the process, so the caller ends the
        process instead: :func:`app.gui.main.end_process`)."""
        self.stop()
        if self.qthread.isRunning():
            self.qthread.requestInterruption()
            self.qthread.quit()
            if wait_ms is None:
                self.qthread.wait()
            else:
                self.qthread.wait(wait_ms)
        return not self.qthread.isRunning()
