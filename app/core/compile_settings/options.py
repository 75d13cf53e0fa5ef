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
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

_local = threading.local()


def current() -> dict[str, Any] | None:
    """The options of this thread's compiles (a copy), or None when none are set (XLA's defaults; JAX then keeps
    its own in-memory executable cache, which it skips for a compile given options)."""
    options = getattr(_local, "options", None)
    return dict(options) if options else None


@contextmanager
def compiling_with(options: Mapping[str, Any] | None) -> Iterator[None]:
    """Within the block, every compile on this thread gets ``options`` (XLA debug-option names without the leading
    ``--``, e.g. ``{"xla_cpu_enable_fast_math": True}``; ``{"optimization_level": "O3"}``). Nests: the outer options
    come back on exit."""
    before = getattr(_local, "options", None)
    _local.options = dict(options) if options else None
    try:
        yield
    finally:
        _local.options = before


def torch_compile_mode() -> str | None:
    """The ``torch.compile`` mode a settings race's Inductor lane set for this thread (:func:`compiling_inductor`),
    or None (the ``torch-compile`` mode's own choice, :func:`app.core.modes.torch_compile.compile_mode`)."""
    return getattr(_local, "inductor_mode", None)


@contextmanager
def compiling_inductor(mode: str | None) -> Iterator[None]:
    """Within the block, every ``torch.compile`` of this thread's ``torch-compile`` runs uses ``mode``
    (``"default"``, ``"reduce-overhead"``, ``"max-autotune"``); None leaves the mode's own choice. Nests."""
    before = getattr(_local, "inductor_mode", None)
    _local.inductor_mode = mode
    try:
        yield
    finally:
        _local.inductor_mode = before

