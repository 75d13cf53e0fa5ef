"""Start the desktop app: ``python -m app.gui.main [--model NAME] [--devices N] [PATH.session …]`` or
``torchax-playground [PATH.session …]`` (no subcommand). With session files the window opens them and loads
no model (JAX and torch are not even imported until a model is wanted).

As the app's entry point (``end=True``) it first installs the crash hooks (:mod:`app.core.crash.hooks`, before
any Qt code), hands its files to a window already running for this user instead of opening a second one
(:mod:`app.gui.lifecycle.single_instance`), offers the report of a previous run that crashed, and says when the
settings file was kept aside."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from typing import TYPE_CHECKING, Any

from app.core.children import end_all
from app.core.crash import hooks
from app.core.paths import asset
from app.gui.user_settings import UserSettings
from app.options import add_devices_arg, apply_devices

if TYPE_CHECKING:
    from PySide6.QtWidgets import QWidget

STYLE = asset("style.qss")
#: The app's icon (window, taskbar, the desktop entry's): :data:`app.core.desktop.ICON`.
ICON = asset("icons", "torchax-playground.svg")
#: What :func:`end_process` does before the process ends (close the single-instance socket, whose file
#: ``os._exit`` would leave behind).
_ending: list[Any] = []
#: How long closing the window waits for the compute thread before the process ends without it (ms): a decode
#: step ends by then; a compile, which cannot be interrupted, is abandoned. Quit ends the process within ~1 s.
QUIT_WAIT_MS = 500


def configure_application(app) -> None:
    """The app's look: Fusion style, pyqtgraph colours and antialiasing, ``assets/style.qss``, the app's icon
    (and the desktop entry's name, so a Wayland/X11 desktop pairs the window with its menu entry).
    Also used by ``bench/gui_responsiveness.py`` so it measures the window users see."""
    import pyqtgraph as pg
    from PySide6.QtGui import QIcon  # noqa: PLC0415 - Qt: the CLI imports this module

    app.setApplicationName("torchax-playground")
    app.setDesktopFileName("torchax-playground")
    if ICON.exists():
        app.setWindowIcon(QIcon(str(ICON)))
    app.setStyle("Fusion")
    pg.setConfigOptions(antialias=True, background="w", foreground="#374151")
    if STYLE.exists():
        app.setStyleSheet(STYLE.read_text(encoding="utf-8"))


def main(argv: list[str] | None = None, end: bool = True) -> int:
    """Create the QApplication, show the window on ``--model`` (else the remembered or built-in model).

    ``--devices N`` simulates N CPU devices for the device panel's mesh (set before JAX starts; no effect
    once it has). Unrecognised arguments are passed to Qt (e.g. ``-platform offscreen``). With ``end`` (the
    app's entry point) the process ends when the window closes (:func:`end_process`: this call does not
    return); ``end=False`` (a caller that goes on, such as a test) waits for the compute thread and returns
    the exit code; it installs no process-wide hook and opens its window whatever else runs.
    """
    if end:  # before any Qt code: a crash from here on leaves a report (app.core.crash)
        hooks.install()
    args, qt_args = parse_args(argv)

    from PySide6.QtWidgets import QApplication  # noqa: PLC0415 - Qt: the CLI imports this module

    app = QApplication.instance() or QApplication([sys.argv[0], *qt_args])
    configure_application(app)
    server = None
    if end:
        from app.gui.lifecycle.single_instance import InstanceServer, hand_off  # noqa: PLC0415 - heavy: Qt

        if hand_off(args.sessions):  # a window runs already: it opens the files and comes to the front
            print("torchax-playground is already running: " + (f"it opens {', '.join(args.sessions)}"
                  if args.sessions else "brought its window to the front"), flush=True)
            end_process(0)
            return 0
        server = InstanceServer(app)
        if not server.listen():  # another start got there first, or a crashed window left its socket behind
            if hand_off(args.sessions):
                end_process(0)
                return 0
            if not server.listen(take_over=True):
                server = None  # cannot listen: this window runs on its own
        _ending.append(server.close if server is not None else _noop)  # its socket file goes at the end
    window = _open_window(args)
    if end:
        _lifecycle(window, server)
    previous, timer = _close_on_signals(window)
    try:
        code = app.exec()
    finally:
        timer.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if end:
        end_process(code)  # does not return
    window.compute.shutdown()
    window.deleteLater()  # the window is closed: free it (and its widgets' timers) on this thread
    return code


def _open_window(args: argparse.Namespace) -> Any:
    """The main window on ``args`` (its model unless session files are opened), shown."""
    from app.gui.window import MainWindow  # noqa: PLC0415 - heavy: pyqtgraph, Qt

    settings = UserSettings.load()
    if args.model:
        settings.model = args.model
    window = MainWindow(settings=settings, autoload=not args.sessions or bool(args.model))
    window.quit_wait_ms = QUIT_WAIT_MS
    window.show_first_time()
    if args.sessions:  # read on the compute thread once the window has painted (it says what it opens)
        window.sessions.open_paths(args.sessions, background=True)
    return window


def _lifecycle(window: Any, server: Any) -> None:
    """The app's own window: the crash dialog and the previous run's report, hand-offs from later starts,
    Help ▸ Reset all settings (restarting the process) and the notice of a settings file kept aside."""
    from app.gui.lifecycle.crash_reporter import CrashReporter  # noqa: PLC0415 - heavy: Qt
    from app.gui.lifecycle.settings_reset import SettingsReset, show_notice  # noqa: PLC0415 - heavy: Qt
    from app.gui.lifecycle.single_instance import OpenInWindow  # noqa: PLC0415 - heavy: Qt

    window.crash_reporter = CrashReporter(window)
    window.crash_reporter.offer_previous(delay_ms=500)  # once the window has painted
    hooks.record_facts()
    if server is not None:
        server.attach(OpenInWindow(window))

    def restart() -> None:
        if server is not None:
            server.close()  # the new process becomes the one window
        subprocess.Popen(list(getattr(sys, "orig_argv", [sys.executable, *sys.argv])), start_new_session=True)
        window.close()

    window.settings_reset = SettingsReset(window, window.settings, window.status.show, restart)
    show_notice(window, window.settings.notice, window.status.warn)


def end_process(code: int) -> None:
    """End the process now with ``code`` (``os._exit``) once the window has closed: the settings, the layout, the
    program draft and every export are already written, and child processes (compile workers) are ended first
    (:func:`app.core.children.end_all`). No Python or Qt teardown runs: it would wait for a compile still running
    on the compute thread (or abort on a running QThread, pytest-qt #276), for the jit-loop's helper thread, and
    for JAX's and torch's exit handlers (measured: the process lived 1.9-6.4 s after the window went)."""
    end_all()
    for step in _ending:
        step()
    hooks.uninstall(clean=True)  # a clean exit: this run's fault file goes
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def parse_args(argv: list[str] | None = None) -> tuple[argparse.Namespace, list[str]]:
    """``(options, arguments left for Qt)``. With ``--devices N``, asks XLA:CPU for N devices now, before
    the compute thread first imports JAX (no effect if JAX has already started). Arguments ending in
    ``.session`` are session files to open (``options.sessions``)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    sessions = [a for a in argv if is_session_path(a)]
    argv = [a for a in argv if not is_session_path(a)]
    parser = argparse.ArgumentParser(prog="torchax-playground gui", add_help=True)
    parser.add_argument("--model", default=None, help="built-in name, random:<preset>, hub id or folder")
    add_devices_arg(parser)
    args, qt_args = parser.parse_known_args(argv)
    args.devices = apply_devices(parser, args)
    args.sessions = sessions
    return args, qt_args


def is_session_path(arg: str) -> bool:
    """A command-line argument naming a session file (``….session``)."""
    return not arg.startswith("-") and arg.endswith(".session")


def _close_on_signals(window: QWidget) -> tuple[dict, Any]:
    """Ctrl+C / SIGTERM close the window the normal way (save settings, stop and wait for the compute
    thread) instead of killing the process mid-compile. A timer lets Python run its signal handlers.
    Returns the previous handlers and that timer (stop it when the event loop ends)."""
    from PySide6.QtCore import QTimer  # noqa: PLC0415 - Qt: the CLI imports this module

    previous = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        previous[sig] = signal.signal(sig, lambda *_: window.close())
    timer = QTimer(window, interval=200)
    timer.timeout.connect(_noop)
    timer.start()
    return previous, timer


def _noop() -> None:
    """Gives the interpreter a chance to run pending signal handlers."""


if __name__ == "__main__":
    sys.exit(main())
