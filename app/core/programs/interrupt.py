"""Stop a program stuck in a Python loop: a ``sys.settrace`` hook on the user's own frames.

While :func:`stoppable` is active in a thread, every frame whose code lives in the program's file gets a
local trace function that checks ``should_stop()`` on each line it executes and raises
:class:`ProgramStopped` there. Frames of other files (JAX, torch, this app) get no line tracing, so the cost
is one Python call per function call made while tracing. This catches a stuck ``while`` / ``for`` loop in
the program while it loads, while JAX traces it, and in no-jit runs; it cannot interrupt a single long call
into C (an XLA compile, ``time.sleep``): those end at their next user line.

Chosen over a child process because the views need the live jaxpr and the executables in this process,
and a trace hook needs no pickling of the user's functions.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable, Iterator

from app.core.programs.errors import ProgramStopped


@contextlib.contextmanager
def stoppable(path: str, should_stop: Callable[[], bool] | None) -> Iterator[None]:
    """Within this block, user code from ``path`` raises :class:`ProgramStopped` at its next line once
    ``should_stop()`` is true. Only the calling thread is traced; an existing trace function (a debugger,
    coverage) is left alone and then nothing is installed. ``should_stop=None`` does nothing."""
    if should_stop is None or sys.gettrace() is not None:
        yield
        return

    def local(frame, event, arg):
        if event == "line" and should_stop():
            raise ProgramStopped("Stopped inside the program at "
                                 f"{frame.f_code.co_filename}:{frame.f_lineno}.")
        return local

    def global_trace(frame, event, arg):
        if frame.f_code.co_filename == path:
            if should_stop():
                raise ProgramStopped("Stopped.")
            return local
        return None

    thread = threading.get_ident()
    sys.settrace(global_trace)
    try:
        yield
    finally:
        if threading.get_ident() == thread:
            sys.settrace(None)
