"""Demo-kit requests on the compute thread: the mode race and the compilation caches.

:class:`DemoWorker` lives on the same QThread as :class:`app.worker.EngineWorker`, so its requests and the
engine worker's run in the order they were queued, and it uses that worker's engine. A race streams
through :meth:`EngineWorker.run_events`: its events arrive on the engine worker's usual signals (phase,
batch, ir, finished, runStarted, failed, idle), with ``lane(mode)`` emitted before each mode's first
event. :class:`DemoCompute` is the GUI-side handle that queues the requests.
"""

from __future__ import annotations

import threading
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QThread, Signal, Slot

from app.worker import ComputeThread, EngineWorker

EAGER_MODE = "torchax-eager"


@dataclass(frozen=True)
class CacheInfo:
    """State of the compilation caches after a request.

    ``enabled``: the persistent cache is on; ``directory``: the directory measured (the one in use when
    on); ``n_files`` / ``n_bytes``: what it holds; ``message``: one line about the request, e.g. bytes freed.
    """

    enabled: bool
    directory: str
    n_files: int
    n_bytes: int
    message: str = ""


def lane_settings(settings: Any, mode: str, eager_tokens: int) -> Any:
    """``settings`` for one lane of a race: ``mode`` set, torchax-eager capped at ``eager_tokens``."""
    if mode == EAGER_MODE:
        settings = settings.with_(max_new_tokens=min(settings.max_new_tokens, max(1, eager_tokens)))
    return settings.with_(mode=mode)


class DemoWorker(QObject):
    """Runs on the compute thread. Signals (emitted there):

    lane(mode): a mode of the race starts; its events follow on the engine worker's signals.
    cacheInfo(CacheInfo): after every cache request and after a race.
    failed(message, details, kind): a cache request failed (kind ``'cache'``); no ``idle`` follows.
    """

    lane = Signal(str)
    cacheInfo = Signal(object)
    failed = Signal(str, str, str)

    def __init__(self, host: EngineWorker) -> None:
        super().__init__()
        self._host = host
        self._dir = ""

    @Slot(str, object, object, int, object)
    def race(
        self, prompt: str, modes: list[str], settings: Any, eager_tokens: int, stop: threading.Event
    ) -> None:
        """Run ``prompt`` through each mode in turn, each from cold (``app.core.race.race``)."""

        def lanes(engine: Any, should_stop: Callable[[], bool]) -> Iterator[Any]:
            from app.core.race import race

            for mode in modes:
                if should_stop():
                    return
                self.lane.emit(mode)
                for tagged in race(
                    engine, prompt, [mode], lane_settings(settings, mode, eager_tokens), should_stop
                ):
                    yield tagged.event

        self._host.run_events(lanes, stop)
        if not self._interrupted():
            self.refresh(self._dir)

    @Slot(bool, str)
    def set_persistent(self, enabled: bool, directory: str) -> None:
        """Turn JAX's persistent compilation cache on (in ``directory``) or off."""
        from app.core.compilation_cache import set_persistent_cache

        def work() -> str:
            used = set_persistent_cache(directory if enabled else None)
            return f"Persistent cache on: {used}" if used else "Persistent cache off."

        self._do(work, directory)

    @Slot(str)
    def clear_memory(self, directory: str) -> None:
        """Drop the engine's compiled steps and JAX's in-memory caches: the next run compiles again."""
        from app.core.compilation_cache import clear_in_memory_caches

        def work() -> str:
            engine = self._host.engine
            engine.clear_compiled() if engine is not None else clear_in_memory_caches()
            return "In-memory caches cleared: the next run compiles again."

        self._do(work, directory)

    @Slot(str)
    def clear_disk(self, directory: str) -> None:
        """Delete the files of the persistent cache in ``directory``; the message says how much was freed."""
        from app.core.compilation_cache import clear_disk_cache
        from widgets.format import nbytes

        self._do(lambda: f"Disk cache cleared: {nbytes(clear_disk_cache(directory))} freed.", directory)

    @Slot(str)
    def refresh(self, directory: str) -> None:
        """Measure ``directory`` and report the cache state (no message)."""
        self._do(lambda: "", directory)

    def _do(self, work: Callable[[], str], directory: str) -> None:
        if self._interrupted():
            return
        try:
            from app.core.compilation_cache import disk_cache_size, persistent_cache_dir

            message = work()
            in_use = persistent_cache_dir()
            self._dir = str(in_use) if in_use else (directory or self._dir)
            n_files, n_bytes = disk_cache_size(self._dir) if self._dir else (0, 0)
            self.cacheInfo.emit(CacheInfo(in_use is not None, self._dir, n_files, n_bytes, message))
        except Exception as exc:  # noqa: BLE001 — every failure becomes a visible message
            message = f"Cache request failed: {type(exc).__name__}: {exc}".splitlines()[0]
            self.failed.emit(message, "".join(traceback.format_exception(exc)), "cache")

    def _interrupted(self) -> bool:
        return QThread.currentThread().isInterruptionRequested()


class DemoCompute(QObject):
    """GUI-side handle of the :class:`DemoWorker` on ``compute``'s thread. Use from the GUI thread."""

    _race = Signal(str, object, object, int, object)
    _persistent = Signal(bool, str)
    _clear_memory = Signal(str)
    _clear_disk = Signal(str)
    _refresh = Signal(str)

    def __init__(self, compute: ComputeThread, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.compute = compute
        self.worker = DemoWorker(compute.worker)
        self.worker.moveToThread(compute.thread)
        self._race.connect(self.worker.race)
        self._persistent.connect(self.worker.set_persistent)
        self._clear_memory.connect(self.worker.clear_memory)
        self._clear_disk.connect(self.worker.clear_disk)
        self._refresh.connect(self.worker.refresh)

    def request_race(self, prompt: str, modes: list[str], settings: Any, eager_tokens: int) -> None:
        """Queue a race; the window's Stop (``ComputeThread.stop``) ends it between or within modes."""
        self._race.emit(prompt, list(modes), settings, int(eager_tokens), self.compute.new_stop_flag())

    def request_persistent(self, enabled: bool, directory: str | Path) -> None:
        self._persistent.emit(enabled, str(directory))

    def request_clear_memory(self, directory: str | Path = "") -> None:
        self._clear_memory.emit(str(directory))

    def request_clear_disk(self, directory: str | Path) -> None:
        self._clear_disk.emit(str(directory))

    def request_refresh(self, directory: str | Path) -> None:
        self._refresh.emit(str(directory))
