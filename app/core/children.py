"""Child processes the app starts (compile workers that may abort: :mod:`app.core.passes.record`), kept so that
quitting ends them too: the window's process ends with ``os._exit`` (:func:`app.gui.main.end_process`), which
would otherwise leave a child compiling on its own. No Qt, no JAX."""

from __future__ import annotations

import subprocess
import threading

_lock = threading.Lock()
_live: set[subprocess.Popen] = set()


def started(proc: subprocess.Popen) -> subprocess.Popen:
    """Remember ``proc`` until :func:`ended`; returns it."""
    with _lock:
        _live.add(proc)
    return proc


def ended(proc: subprocess.Popen) -> None:
    """Forget ``proc`` (it has exited or was killed)."""
    with _lock:
        _live.discard(proc)


def end_all() -> int:
    """Kill every remembered child still running (SIGKILL: they hold nothing the user made); returns how many."""
    with _lock:
        procs = list(_live)
        _live.clear()
    n = 0
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            n += 1
    return n
