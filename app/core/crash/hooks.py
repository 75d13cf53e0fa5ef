"""The process's crash hooks, installed before any Qt code (:func:`install`):

- ``faulthandler`` writes the Python stacks of every thread to this run's ``fault.log`` on a segmentation
  fault, abort, bus error or illegal instruction (:mod:`app.core.crash.store`; the next start reports it);
- ``sys.excepthook`` (an exception nobody caught: a Qt slot on the GUI thread, a slot on the compute QThread),
  ``threading.excepthook`` (a Python thread) and ``sys.unraisablehook`` (an exception in ``__del__``) each
  save a report to ``reports/``, print the traceback on stderr as Python would, and call the handler the
  window registers (:func:`set_handler`; it shows the dialog on the GUI thread). An unraisable exception is
  saved and recorded but calls no handler: it stopped nothing.

Every hook keeps the process running; a failure inside a hook falls back to Python's own printing.
"""

from __future__ import annotations

import faulthandler
import shutil
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from app.core.crash import store
from app.core.crash.actions import ActionLog
from app.core.crash.facts import facts_lines
from app.core.crash.report import CrashReport, Kind, from_exception

#: The last actions of this process (written to the run folder once :func:`install` ran).
ACTIONS = ActionLog()
#: ``handler(report, saved_path)``: called on the failing thread (the window re-emits it to the GUI thread).
Handler = Callable[[CrashReport, "Path | None"], None]


@dataclass
class _Installed:
    fault_file: IO[str] | None
    previous: tuple[Any, Any, Any]
    handler: Handler | None = None
    thread_name: Callable[[], str] | None = None


_state: _Installed | None = None
_busy = threading.local()


def record(text: str) -> None:
    """Add one line to the last actions (any thread; only names, never a prompt's text)."""
    ACTIONS.record(text)


def installed() -> bool:
    return _state is not None


def install(fault_file: bool = True) -> None:
    """Install the hooks (again: no-op). ``fault_file``: enable ``faulthandler`` on this run's ``fault.log``
    (off for a test process whose own runner has faulthandler on stderr). Reports of earlier runs that died
    hard are made first (:func:`app.core.crash.store.harvest`). A folder that cannot be written leaves
    faulthandler off and the other hooks on."""
    global _state
    if _state is not None:
        return
    store.harvest()
    handle = None
    folder = store.run_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        ACTIONS.path = folder / store.ACTIONS
        if fault_file:
            handle = open(folder / store.FAULT, "w", encoding="utf-8")  # noqa: SIM115 - open for the process's life
            faulthandler.enable(file=handle, all_threads=True)
    except OSError:
        handle = None
    _state = _Installed(handle, (sys.excepthook, threading.excepthook, sys.unraisablehook))
    sys.excepthook = _excepthook
    threading.excepthook = _thread_excepthook
    sys.unraisablehook = _unraisablehook


def set_handler(handler: Handler | None, thread_name: Callable[[], str] | None = None) -> None:
    """Who is told of a report (the window's dialog), and how to name the current thread (``"GUI thread"``,
    ``"compute thread"``); None: nobody (the traceback is still printed and saved)."""
    if _state is not None:
        _state.handler = handler
        _state.thread_name = thread_name


def record_facts() -> None:
    """Write this run's versions and backend next to its fault file (a hard crash's report lists them)."""
    try:
        (store.run_dir() / store.FACTS).write_text("\n".join(facts_lines()) + "\n", encoding="utf-8")
    except OSError:
        pass


def uninstall(clean: bool = True) -> None:
    """Put Python's hooks back and stop ``faulthandler``; ``clean``: the run ended normally, so its folder
    goes (a hard crash never gets here and leaves its fault file)."""
    global _state
    if _state is None:
        return
    state, _state = _state, None
    sys.excepthook, threading.excepthook, sys.unraisablehook = state.previous
    if state.fault_file is not None:
        faulthandler.disable()
        state.fault_file.close()
    ACTIONS.path = None
    if clean:
        shutil.rmtree(store.run_dir(), ignore_errors=True)


def _thread_label() -> str:
    if _state is not None and _state.thread_name is not None:
        try:
            return _state.thread_name()
        except Exception:  # noqa: BLE001
            pass
    current = threading.current_thread()
    return "main thread" if current is threading.main_thread() else f"thread {current.name}"


def _report(exc_type: type[BaseException], exc: BaseException, tb: Any, kind: Kind, thread: str,
            notify: bool) -> None:
    """Build, save, and hand ``exc``'s report to the handler; never raises."""
    if getattr(_busy, "on", False):  # an exception inside a hook: Python's printing only
        return
    _busy.on = True
    try:
        report = from_exception(exc_type, exc, tb, thread=thread, actions=ACTIONS.lines(), kind=kind)
        try:
            path = store.save_report(report)
        except OSError:
            path = None
        ACTIONS.record(f"error: {report.title}")
        handler = _state.handler if _state is not None else None
        if notify and handler is not None:
            handler(report, path)
    except Exception:  # noqa: BLE001
        pass
    finally:
        _busy.on = False


def _excepthook(exc_type: type[BaseException], exc: BaseException, tb: Any) -> None:
    previous = _state.previous[0] if _state is not None else sys.__excepthook__
    previous(exc_type, exc, tb)  # the terminal shows it as ever
    if not issubclass(exc_type, KeyboardInterrupt | SystemExit):
        _report(exc_type, exc, tb, "exception", _thread_label(), notify=True)


def _thread_excepthook(args: Any) -> None:
    previous = _state.previous[1] if _state is not None else threading.__excepthook__
    previous(args)
    if args.exc_value is not None and not issubclass(args.exc_type, SystemExit):
        name = f"thread {args.thread.name}" if args.thread is not None else _thread_label()
        _report(args.exc_type, args.exc_value, args.exc_traceback, "exception", name, notify=True)


def _unraisablehook(args: Any) -> None:
    previous = _state.previous[2] if _state is not None else sys.__unraisablehook__
    previous(args)
    if args.exc_value is not None:
        _report(args.exc_type, args.exc_value, args.exc_traceback, "unraisable", _thread_label(), notify=False)
