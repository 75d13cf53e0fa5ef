"""The host's time inside the compiled steps' host callbacks, from timestamps taken in the callbacks (issue 55).

A step whose program calls the host (a mixture-of-experts model's routing, recorded by
:class:`app.core.inspect.routing.RoutingRecorder` through ``jax.debug.callback``) spends host time in the middle of
the device's run, time the host's clock around the call cannot tell from the device's: on XLA:CPU such an
executable runs synchronously, inside its call (PJRT runs a program holding a host callback inline, on the
calling thread), so the whole run reads as dispatch. This clock adds up, process-wide, the time spent inside every
``jax.debug.callback`` from the moment JAX's callback implementation (``debug_callback_p.impl``: the operands put
on the CPU device, three configuration contexts, the user's function) is entered to its return, measured with
``time.perf_counter`` inside the callback; :class:`app.core.runtime.compiled_step.CompiledStep` reads it before
and after a call and books the difference as the call's ``callback`` part (:data:`app.core.events.HOST_PARTS`).

Not on this clock: XLA's own entry into the callback (the custom call's FFI handler taking the GIL and wrapping
the operands as NumPy arrays) and its return; those stay in the part they fall in (``dispatch`` or ``wait``).

Thread-safe: callbacks run on XLA's threads (on XLA:CPU, the thread that called the executable). No Qt.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from app.core.jax_private import time_debug_callbacks

_lock = threading.Lock()
_total_ms = 0.0
_calls = 0
_installed = False


def add(ms: float) -> None:
    """Book ``ms`` milliseconds of host time spent inside a host callback."""
    global _total_ms, _calls
    with _lock:
        _total_ms += ms
        _calls += 1


def reading() -> tuple[float, int]:
    """``(ms, calls)``: the host time inside the timed callbacks since the process started (ms) and how many
    ran; subtract two readings for what happened between them."""
    with _lock:
        return _total_ms, _calls


def timed(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` with its time booked on this clock (entered to returned or raised)."""

    def wrapper(*args: object, **kwargs: object) -> Any:
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            add((time.perf_counter() - t0) * 1000)

    return wrapper


def install() -> None:
    """Time every ``jax.debug.callback`` from now on (idempotent; :func:`app.core.jax_private.time_debug_callbacks`).
    Steps lowered before keep working: JAX looks the implementation up at each callback."""
    global _installed
    with _lock:
        if _installed:
            return
        _installed = True
    time_debug_callbacks(timed)
