"""What a raced step's XLA compile spent its time on, read from a profiler capture of that one compile: XLA's HLO
passes against code generation, and on XLA:GPU the autotuner and ptxas inside them (issue 40).

The race compiles the step as a run does (:class:`app.core.runtime.compiled_step.CompiledStep`'s ``compile``
timer, the *compile* of trace / lower / compile); :class:`CompileCapturer` wraps that one compile in a profiler
session (``jax.profiler.start_trace``) and :func:`compile_split` reads it with the pass recorder's reader
(:func:`app.core.passes.compile_capture.read_compile`, the backend row's event names of :mod:`app.core.backends`):

- ``passes_ms``: XLA's HLO passes: the top-level pipeline spans (``"<pipeline> (<module>)"``, those inside the
  backend and XLA:GPU's autotuning pipeline included), as the Passes tab's compile breakdown counts them
  (:func:`app.core.passes.query.compile_breakdown`).
- ``codegen_ms``: the rest of the compile timer: the backend (LLVM, on a GPU PTX and ptxas, thunk emission) and JAX's
  own work around XLA's compile, so that ``passes_ms + codegen_ms`` is the compile timer's ms.
- ``autotune_ms`` (XLA:GPU: the autotuning pipeline's spans, inside the passes) and ``ptxas_ms`` (XLA:GPU: wall
  time in which at least one ``PTX->CUBIN`` ran, inside codegen); None elsewhere.

Profiling a compile costs a session start and stop (~30 ms here, outside the timer). When a profiler session is
already running (a ``profile`` in progress) the compile is not captured and the split stays None.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from typing import Any

from app.core.backends import BACKENDS, CPU
from app.core.passes.compile_capture import read_compile
from app.core.passes.dumps import capture_source, find_capture

#: The split's keys, in order (ms or None).
KEYS = ("passes_ms", "codegen_ms", "autotune_ms", "ptxas_ms")


def compile_split(source: str | os.PathLike, module: str, platform: str, compile_ms: float) -> dict[str, float | None]:
    """:data:`KEYS` of module ``module``'s compile in the capture ``source`` (an ``.xplane.pb`` path, or
    ``.xplane.pb.gz``) on ``platform`` (``"cpu"``, ``"gpu"``), ``compile_ms`` being that compile's timer (see the
    module doc). Raises ``ValueError`` when the capture has no compile of ``module``."""
    facts = BACKENDS.get(platform, CPU)
    c = read_compile(capture_source(source), module, [], facts)
    passes = min(sum(p.ms for p in c.pipelines if p.depth == 0), compile_ms)
    return {"passes_ms": passes, "codegen_ms": compile_ms - passes, "autotune_ms": c.autotune_ms,
            "ptxas_ms": c.ptxas_wall_ms if c.n_ptxas else None}


class CompileCapturer:
    """A compile observer (:func:`app.core.compile_options.observing_compiles`) that profiles the first
    compile of step ``step`` (``"decode"``, ``"prefill"``) on ``platform``: :attr:`split` (:data:`KEYS`, or None
    when the profiler was busy or the capture had no such compile) and :attr:`compile_ms` (that compile alone,
    without the profiler's start and stop). Every other compile runs as it would. Compute thread."""

    def __init__(self, step: str, platform: str) -> None:
        self.step, self.platform = step, platform
        self.split: dict[str, float | None] | None = None
        self.compile_ms: float | None = None

    def fill(self, lane: Any) -> None:
        """Put the split on ``lane`` (a :class:`app.core.compile_settings.figures.SettingLane`: its :data:`KEYS`
        fields), when one was read."""
        for key, ms in (self.split or {}).items():
            setattr(lane, key, ms)

    def __call__(self, step: str, module: str, compile: Callable[[], Any]) -> Any:
        import jax

        if step != self.step or self.compile_ms is not None:
            return compile()
        with tempfile.TemporaryDirectory(prefix="race-compile-") as tmp:
            try:
                jax.profiler.start_trace(tmp)
            except RuntimeError:  # "Profile has already been started" (a profile in progress): no split
                return compile()
            try:
                t0 = time.perf_counter()
                out = compile()
                self.compile_ms = (time.perf_counter() - t0) * 1000
            finally:
                jax.profiler.stop_trace()
            capture = find_capture(tmp)
            try:
                self.split = compile_split(capture, module, self.platform, self.compile_ms) if capture else None
            except ValueError:
                self.split = None
        return out
