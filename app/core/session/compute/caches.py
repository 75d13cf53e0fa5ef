"""The compilation caches as the compute service answers them: one toggle, one clear button for both compilers —
JAX's persistent compilation cache in a directory, Inductor's FX-graph / AOT-autograd caches beside it
(:func:`app.core.compile_cache.switch.inductor_dir_for`) — and their size after an action or a run. No Qt."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from app.core.compile_cache.switch import cache_action, inductor_dir_for
from app.core.compile_cache.xla import disk_cache_size, persistent_cache_dir
from app.core.requests import Handlers
from app.core.session import requests as rq


class CacheState:
    """The persistent cache's directory last measured (``directory``: ``""`` until one is used or asked for)."""

    def __init__(self) -> None:
        self.directory = ""

    def handlers(self, clear_compiled: Callable[[], Callable[[], None] | None]) -> Handlers:
        """The caches' entry in the compute service's table (``clear_compiled()``: the loaded engine's, or None)."""
        return {rq.CacheRequest: lambda r, _stop, _live: self.events(r, clear_compiled())}

    def events(self, request: rq.CacheRequest, clear_compiled: Callable[[], None] | None) -> Iterator[rq.CacheInfo]:
        """Do ``request.action`` (:func:`app.core.compile_cache.switch.cache_action`; ``clear_compiled``: the loaded
        engine's, to drop its compiled steps with the in-memory cache) → one :class:`rq.CacheInfo`."""
        message = cache_action(request.action, request.directory, clear_compiled)
        yield self.info(request.directory, message)

    def info(self, directory: str = "", message: str = "") -> rq.CacheInfo:
        """The caches' state: the directory in use (else ``directory``, else the last one), its files and bytes
        with Inductor's beside it."""
        in_use = persistent_cache_dir()
        self.directory = str(in_use) if in_use else (directory or self.directory)
        n_files, n_bytes = disk_cache_size(self.directory) if self.directory else (0, 0)
        if self.directory:
            more_files, more_bytes = disk_cache_size(inductor_dir_for(self.directory))
            n_files, n_bytes = n_files + more_files, n_bytes + more_bytes
        return rq.CacheInfo(in_use is not None, self.directory, n_files, n_bytes, message)
