"""Compile once per suite (issue 53): the suite's own persistent compilation caches, shared by every test.

Most of the suite's time was XLA and Inductor compiling the same small programs again, module after module
(tests/core/engine/test_engine.py: 87 s cold, 40 s once the same programs are in a persistent cache). So the
suite keeps JAX's persistent compilation cache — and Inductor's FX graph and AOT autograd caches — in its own
scratch folder (:data:`SUITE_CACHE`, under the run's scratch root, never the user's), for the test process and
for every process a test starts (the ``JAX_COMPILATION_CACHE_DIR`` environment variable, read by JAX at import:
jax/_src/config.py). A compile served from it skips XLA's passes and code generation; tracing and lowering
still run, so each call still records its trace / lower / compile phases.

The app does not see this cache: when the app turns its persistent caches off (the window does so at start
unless its settings say otherwise: ``DemoKit.restore``), the wrapped ``use_persistent_caches`` turns them off as
asked and then puts the suite's cache back underneath, and the cache information the window shows (the session
service's) reports it as off. Where the
app sets a cache directory of its own (the cache toggle, ``--persistent-cache``), that directory is used as
usual. Code that switches JAX's cache off itself to compile cold — the pass recorder, the compiler-settings
race (``app.core.compile_cache.xla.set_persistent_cache(None)``) — still compiles cold.

A test that is *about* a cold compile (a compile spike, the compile split, cache hits and misses, the first
call's time) opts out with ``@pytest.mark.cold_compile`` (or a module's ``pytestmark``): for that test no
shared cache is underneath, in this process or in the processes it starts, so every compile the app does not
cache itself is cold. :data:`COUNTS` counts the run's cold compiles (persistent-cache misses), the shared ones
(hits) and the opted-out tests, for the budget summary (:mod:`tests.suite_budget`).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

#: The suite's cache root; set by :func:`configure_environment` (before JAX is imported).
SUITE_CACHE: Path | None = None
#: ``misses`` / ``hits``: XLA compiles of the run that went to / came from the suite's cache (all threads);
#: ``cold_tests``: tests marked ``cold_compile``.
COUNTS: Counter[str] = Counter()
_ENV_VARS = ("JAX_COMPILATION_CACHE_DIR", "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS",
             "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "JAX_COMPILATION_CACHE_MAX_SIZE", "TORCHINDUCTOR_CACHE_DIR")
#: JAX's own duration events (jax/_src/dispatch.py: JAXPR_TRACE_EVENT, JAXPR_TO_MLIR_MODULE_EVENT,
#: BACKEND_COMPILE_EVENT) summed into :data:`COUNTS` under these keys, in seconds, every thread; a compile served
#: from a persistent cache records no backend compile.
PHASE_EVENTS = {"/jax/core/compile/jaxpr_trace_duration": "trace_s",
                "/jax/core/compile/jaxpr_to_mlir_module_duration": "lower_s",
                "/jax/core/compile/backend_compile_duration": "compile_s"}
#: XLA backend compile seconds per test (node id), for the summary's "most XLA compile time" line.
TEST_COMPILE_S: dict[str, float] = {}
_state: dict[str, Any] = {"cold": False, "test": None}
_lock = threading.Lock()


#: Where the suite keeps its compile cache between runs unless told otherwise (see :func:`cache_root`).
CACHE_ENV = "TORCHAX_PLAYGROUND_TEST_COMPILE_CACHE"
#: JAX's persistent cache is capped (least recently used entries go first); a full run fills about 0.3 GiB.
XLA_CACHE_MAX_BYTES = 3 * 1024**3
#: A cache folder of other versions is removed once no run has opened it for this long (s).
STALE_AFTER_S = 24 * 3600
_VERSIONED = ("jax", "jaxlib", "torch", "torchax", "transformers")


def cache_root(scratch_home: str, environ: dict[str, str] | None = None) -> Path:
    """The folder under which the suite's compile cache lives: this run's scratch folder (the default, and with
    ``$TORCHAX_PLAYGROUND_TEST_COMPILE_CACHE`` empty or ``run``), or the folder that variable names, kept between
    runs — for a developer re-running a few files (``tests/core/engine/test_architectures.py``: 130 s with an
    empty cache, 36 s warm). Inside it, one sub-folder per set of versions (:func:`versions_key`); sub-folders of
    other versions no run has opened for a day are removed.

    Why kept between runs is not the default (measured 6 Dec): JAX's cache key leaves source locations out
    (``strip-debuginfo`` before hashing, jax/_src/cache_key.py), so an executable cached by an earlier run names
    *that* run's files in its HLO metadata — a program written to an earlier run's temporary folder, a checkout
    elsewhere — and the tests of source links and of "first call" notes read the stale names. Keeping locations in
    the key (``jax_compilation_cache_include_metadata_in_key``) mends that but keys every torchax-eager op by its
    whole call stack: the suite's cold compiles rose and single tests went from under 30 s to 124 s."""
    env = os.environ if environ is None else environ
    chosen = env.get(CACHE_ENV, "")
    return Path(scratch_home) if chosen in ("", "run") else Path(chosen)


def versions_key() -> str:
    """``py3.12-jax0.12.0.1-jaxlib0.12.0.1-torch2.13.0-...`` from the installed distributions (no import)."""
    from importlib import metadata

    parts = [f"py{sys.version_info.major}.{sys.version_info.minor}"]
    for dist in _VERSIONED:
        try:
            parts.append(f"{dist}{metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            parts.append(f"{dist}-none")
    return "-".join(parts).replace("+", "_")


def configure_environment(scratch_home: str, root: Path | None = None) -> Path:
    """Point JAX (min compile time 0 s, min entry size 0 bytes: our CPU compiles are shorter than JAX's 1 s
    default; at most :data:`XLA_CACHE_MAX_BYTES`) and Inductor at ``<root>/suite-compile-cache/<versions>``
    (``root`` from :func:`cache_root`), through the environment. Must run before JAX is imported. Returns the
    folder."""
    global SUITE_CACHE
    if SUITE_CACHE is not None:  # tests/conftest.py imported a second time, by name: keep the run's cache
        return SUITE_CACHE
    base = (root if root is not None else cache_root(scratch_home)) / "suite-compile-cache"
    SUITE_CACHE = base / versions_key()
    (SUITE_CACHE / "xla").mkdir(parents=True, exist_ok=True)
    os.utime(SUITE_CACHE)  # in use: not stale for another checkout's run
    for other in base.iterdir():  # caches of other versions, unused for a day (another checkout may still run)
        if (other.is_dir() and other != SUITE_CACHE and not os.environ.get("PYTEST_XDIST_WORKER")
                and time.time() - other.stat().st_mtime > STALE_AFTER_S):
            import shutil

            shutil.rmtree(other, ignore_errors=True)
    os.environ.update({"JAX_COMPILATION_CACHE_DIR": str(SUITE_CACHE / "xla"),
                       "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
                       "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0",
                       "JAX_COMPILATION_CACHE_MAX_SIZE": str(XLA_CACHE_MAX_BYTES),
                       "TORCHINDUCTOR_CACHE_DIR": str(SUITE_CACHE / "inductor")})
    return SUITE_CACHE


def _xla_dir() -> str:
    assert SUITE_CACHE is not None, "configure_environment() was not called"
    return str(SUITE_CACHE / "xla")


def _put_shared_cache_back(inductor_too: bool) -> None:
    """The suite's JAX cache (and, on this thread, Inductor's) underneath the app, unless this test is cold."""
    import jax

    from app.core.compile_cache import inductor
    from app.core.jax_private import reset_compilation_cache

    if _state["cold"]:
        return
    jax.config.update("jax_compilation_cache_dir", _xla_dir())
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    reset_compilation_cache()
    if inductor_too:
        assert SUITE_CACHE is not None
        inductor.set_inductor_cache(SUITE_CACHE / "inductor")


def install() -> None:
    """Wrap the app's cache switch and cache query (see the module docstring) and count cache hits and misses."""
    import jax

    from app.core.compile_cache import switch, xla

    original_use, original_dir = switch.use_persistent_caches, xla.persistent_cache_dir

    def _use_persistent_caches(directory: str | Path | None) -> tuple[Path | None, Path | None]:
        used = original_use(directory)
        if directory is None:
            _put_shared_cache_back(inductor_too=True)
        return used

    def _persistent_cache_dir() -> Path | None:
        found = original_dir()
        # what the window shows (the session's cache info: app.core.session.compute.caches) reports the suite's
        # cache as off; code that turns the cache off to compile cold (the pass recorder, the settings race) is
        # told the truth
        shown = sys._getframe(1).f_globals.get("__name__") == "app.core.session.compute.caches"
        return None if shown and found is not None and str(found) == _xla_dir() else found

    switch.use_persistent_caches = _use_persistent_caches
    xla.persistent_cache_dir = _persistent_cache_dir

    def count(event: str, **_kwargs: Any) -> None:
        if event == "/jax/compilation_cache/compile_requests_use_cache":
            with _lock:
                COUNTS["requests"] += 1
        elif event == "/jax/compilation_cache/cache_hits":
            with _lock:
                COUNTS["hits"] += 1
                COUNTS["misses"] = COUNTS["requests"] - COUNTS["hits"]

    jax.monitoring.register_event_listener(count)

    def seconds(event: str, duration_secs: float, **_kwargs: Any) -> None:
        key = PHASE_EVENTS.get(event)
        if key is not None:
            with _lock:
                COUNTS[key] += duration_secs  # type: ignore[assignment]  # a Counter of seconds too
                test = _state["test"]
                if key == "compile_s" and test:
                    TEST_COMPILE_S[test] = TEST_COMPILE_S.get(test, 0.0) + duration_secs

    jax.monitoring.register_event_duration_secs_listener(seconds)


def begin_test(cold: bool, monkeypatch: Any, nodeid: str | None = None) -> None:
    """Before a test: the shared cache underneath, or — for a ``cold_compile`` test — none at all (in this
    process and in the processes the test starts). ``nodeid`` names the test its XLA compile time is put on."""
    import jax

    from app.core.jax_private import reset_compilation_cache

    _state["cold"], _state["test"] = cold, nodeid
    if not cold:
        if xla_dir_in_use() != _xla_dir():  # a test before it (or its window) turned JAX's cache off
            _put_shared_cache_back(inductor_too=False)
        return
    COUNTS["cold_tests"] += 1
    for var in _ENV_VARS:
        monkeypatch.delenv(var, raising=False)
    if xla_dir_in_use() == _xla_dir():
        jax.config.update("jax_compilation_cache_dir", None)
        reset_compilation_cache()


def xla_dir_in_use() -> str | None:
    """JAX's persistent cache folder as JAX sees it (the suite's included)."""
    import jax

    return jax.config.jax_compilation_cache_dir


def end_test() -> None:
    """After a test: back to sharing."""
    _state["cold"], _state["test"] = False, None
    with _lock:
        COUNTS["misses"] = COUNTS["requests"] - COUNTS["hits"]
