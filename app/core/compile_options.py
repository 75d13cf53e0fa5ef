"""The XLA compile options of this thread's compiles: ``Lowered.compile(compiler_options=…)`` (JAX ≥ 0.4.36).

XLA reads ``XLA_FLAGS`` once per process, when the backend starts; a per-compile ``compiler_options`` dict carries
the same debug options (``xla_cpu_enable_fast_math``, ``xla_cpu_use_onednn``, …) plus the effort levels
(``optimization_level`` / ``memory_fitting_level``, ``"O0"``…``"O3"``: JAX puts them on the executable's build options,
``jax/_src/compiler.py``) to one compile only. Every compile of the app — a model step
(``app.core.runtime.compiled_step``) or a program entry (``app.core.programs.runner``) — passes :func:`current`, so a
settings race sets the options once around a lane with :func:`compiling_with`. Options are per thread (the compute
thread owns every compile); a name XLA does not know fails the compile with ``INVALID_ARGUMENT: No such compile
option``. Compile options are part of JAX's persistent-cache key, so two settings never share an entry.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from typing import Any

_local = threading.local()


def current() -> dict[str, Any] | None:
    """The options of this thread's compiles (a copy), or None when none are set (XLA's defaults; JAX then keeps
    its own in-memory executable cache, which it skips for a compile given options)."""
    options = getattr(_local, "options", None)
    return dict(options) if options else None


@contextmanager
def _for_this_thread(name: str, value: Any) -> Iterator[None]:
    """This thread's ``name`` is ``value`` within the block, then what it was (so the blocks nest)."""
    before = getattr(_local, name, None)
    setattr(_local, name, value)
    try:
        yield
    finally:
        setattr(_local, name, before)


def compiling_with(options: Mapping[str, Any] | None) -> AbstractContextManager[None]:
    """Within the block, every compile on this thread gets ``options`` (XLA debug-option names without the leading
    ``--``, e.g. ``{"xla_cpu_enable_fast_math": True}``; ``{"optimization_level": "O3"}``). Nests: the outer options
    come back on exit."""
    return _for_this_thread("options", dict(options) if options else None)


def torch_compile_mode() -> str | None:
    """The ``torch.compile`` mode a settings race's Inductor lane set for this thread (:func:`compiling_inductor`),
    or None (the ``torch-compile`` mode's own choice, :func:`app.core.modes.torch_compile.compile_mode`)."""
    return getattr(_local, "inductor_mode", None)


def compiling_inductor(mode: str | None) -> AbstractContextManager[None]:
    """Within the block, every ``torch.compile`` of this thread's ``torch-compile`` runs uses ``mode``
    (``"default"``, ``"reduce-overhead"``, ``"max-autotune"``); None leaves the mode's own choice. Nests."""
    return _for_this_thread("inductor_mode", mode)


def module_name(jitted: Any, fallback: str) -> str:
    """The HLO module name ``jax.jit`` gives ``jitted``'s compile: ``jit_<function name>`` (``fallback`` for a
    function without ``__name__``), which a profiler capture of the compile carries (:func:`run_compile`)."""
    return f"jit_{getattr(jitted, '__name__', fallback)}"


def run_compile(step: str, module: str, compile: Callable[[], Any]) -> Any:
    """``compile()`` (one XLA compile of step ``step``, HLO module ``module``), through this thread's compile
    observer when a settings race set one (:func:`observing_compiles`: it profiles the raced step's compile); the
    compile's own ms is then :func:`observed_compile_ms`."""
    observer = getattr(_local, "observer", None)
    if observer is None:
        return compile()
    timed: dict[str, float] = {}

    def alone() -> Any:
        t0 = time.perf_counter()
        out = compile()
        timed["ms"] = (time.perf_counter() - t0) * 1000
        return out

    out = observer(step, module, alone)
    _local.compile_ms = timed.get("ms")
    return out


def observed_compile_ms() -> float | None:
    """The ms of the latest compile an observer ran on this thread, the compile alone (without what the observer
    did around it: a profiler session's start and stop), then forgotten; None when no observer ran one."""
    ms, _local.compile_ms = getattr(_local, "compile_ms", None), None
    return ms


def observing_compiles(observer: Callable[[str, str, Callable[[], Any]], Any] | None) -> AbstractContextManager[None]:
    """Within the block, every model-step and program compile of this thread goes through ``observer(step, module,
    compile)``, which must call ``compile()`` once and return what it returned. Nests."""
    return _for_this_thread("observer", observer)

