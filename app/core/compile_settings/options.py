"""The XLA compile options of this thread's compiles: ``Lowered.compile(compiler_options=…)`` (JAX ≥ 0.4.36).

XLA reads ``XLA_FLAGS`` once per process, when the backend starts; a per-compile ``compiler_options`` dict carries
the same debug options (``xla_cpu_enable_fast_math``, ``xla_cpu_use_onednn``, …) plus the effort levels
(``optimization_level`` / ``memory_fitting_level``, ``"O0"``…``"O3"``: JAX puts them on the executable's build options,
``jax/_src/compiler.py``) to one compile only. Every compile of the app — a model step
(``app.core.runtime.compiled_step``) or a program entry (``app.core.programs.runner``) — passes :func:`current`, so a
settings race sets the options once around a lane with :func:`compiling_with`. Options are per thread (the compute
thread owns every compile); a name XLA does not know fails the compile with ``INVALID_ARGUMENT: No such compile
option``. Compile options are part of JAX's persistent-cache key, so two settings never share an entry.

Outside a race a step may bring its own options (:func:`step_options`: a model's decode step on XLA:CPU compiles
with YNNPACK off for dots, measured faster, issue 38); a race's lane replaces them, its ``default`` lane with
XLA's own defaults. :func:`compile_lowered` compiles and remembers what each ``Lowered`` was compiled with
(:func:`compiled_with`), so a pass recording of the step compiles it the same way and every view names it.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

_local = threading.local()
_USED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

#: What a model's decode step and decode loop compile with on XLA:CPU: YNNPACK off for dots
#: (``--xla_cpu_experimental_ynn_fusion_type=``). SmolLM2-135M on this 2-core CPU, ``tradeoff`` in one process
#: (docs/compile-settings.md): decode step 16.9 → 15.5 ms/call, decode loop 21.6 → 14.4 ms/token, tokens equal;
#: the GPT-2-small shape's decode has no YNNPACK fusion (the same HLO). Prefill keeps XLA's default: its
#: matrix-matrix products run 1.4-1.8x slower without YNNPACK (82.7 against 151.2 ms on SmolLM2).
DECODE_CPU = {"xla_cpu_experimental_ynn_fusion_type": ""}


def current() -> dict[str, Any] | None:
    """The options a settings race set for this thread's compiles (a copy; ``{}``: XLA's defaults), or None
    outside a race (each compile then takes its step's own, :func:`step_options`)."""
    options = getattr(_local, "options", None)
    return None if options is None else dict(options)


def step_options(step: str, platform: str) -> dict[str, Any]:
    """The options a model's ``step`` (``"prefill"``, ``"decode"``) compiles with outside a race on ``platform``
    (``"cpu"``, ``"gpu"``, ``"tpu"``): :data:`DECODE_CPU` for a decode step on the CPU, else none."""
    return dict(DECODE_CPU) if step == "decode" and platform == "cpu" else {}


def compile_lowered(lowered: Any, own: Mapping[str, Any] | None = None) -> Any:
    """``lowered.compile(…)`` with this thread's race options, else ``own`` (the step's, :func:`step_options`);
    what it used is kept for :func:`compiled_with`. Raises what ``Lowered.compile`` raises."""
    options = current()
    options = dict(own or {}) if options is None else options
    _USED[lowered] = options
    return lowered.compile(options or None)


def compiled_with(lowered: Any) -> dict[str, Any]:
    """The options ``lowered`` was last compiled with through :func:`compile_lowered` (``{}``: XLA's defaults, or
    never compiled there)."""
    try:
        return dict(_USED.get(lowered, {}))
    except TypeError:  # not weak-referenceable
        return {}


@contextmanager
def compiling_with(options: Mapping[str, Any] | None) -> Iterator[None]:
    """Within the block, every compile on this thread gets ``options`` (XLA debug-option names without the leading
    ``--``, e.g. ``{"xla_cpu_enable_fast_math": True}``; ``{"optimization_level": "O3"}``). Nests: the outer options
    come back on exit."""
    before = getattr(_local, "options", None)
    _local.options = None if options is None else dict(options)
    try:
        yield
    finally:
        _local.options = before
