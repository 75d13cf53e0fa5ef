"""Start the desktop app: ``python -m app.gui [--model NAME]`` or ``torchax-playground`` (no subcommand)."""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PySide6.QtWidgets import QWidget

STYLE = Path(__file__).resolve().parents[1] / "assets" / "style.qss"


def main(argv: list[str] | None = None) -> int:
    """Create the QApplication, show the window on ``--model`` (else the remembered or built-in model).

    Unrecognised arguments are passed to Qt (e.g. ``-platform offscreen``). Returns the exit code.
    """
    parser = argparse.ArgumentParser(prog="torchax-playground gui", add_help=True)
    parser.add_argument("--model", default=None, help="built-in name, random:<preset>, hub id or folder")
    args, qt_args = parser.parse_known_args(sys.argv[1:] if argv is None else argv)

    import pyqtgraph as pg
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([sys.argv[0], *qt_args])
    app.setApplicationName("torchax-playground")
    app.setStyle("Fusion")
    pg.setConfigOptions(antialias=True, background="w", foreground="#374151")
    if STYLE.exists():
        app.setStyleSheet(STYLE.read_text(encoding="utf-8"))

    from app.user_settings import UserSettings
    from app.window import MainWindow

    settings = UserSettings.load()
    if args.model:
        settings.model = args.model
    window = MainWindow(settings=settings)
    window.show()
    previous = _close_on_signals(window)
    try:
        return app.exec()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _close_on_signals(window: QWidget) -> dict:
    """Ctrl+C / SIGTERM close the window the normal way (save settings, stop and wait for the compute
    thread) instead of killing the process mid-compile. A timer lets Python run its signal handlers.
    Returns the previous handlers."""
    from PySide6.QtCore import QTimer

    previous = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        previous[sig] = signal.signal(sig, lambda *_: window.close())
    timer = QTimer(window, interval=200)
    timer.timeout.connect(_noop)
    timer.start()
    return previous


def _noop() -> None:
    """Gives the interpreter a chance to run pending signal handlers."""


if __name__ == "__main__":
    sys.exit(main())
