"""The window paints before the compute thread starts working: :class:`HoldUntilPainted` keeps every request
for the compute thread (the start-up model load and its conversion, the device list, the caches) until the
window has painted once, so a first start shows its layout and a progress line at once instead of a black
window while JAX, torch and a GGUF conversion take the interpreter. A window that is never shown (a script,
a hidden benchmark window) releases them :data:`FALLBACK_MS` after the event loop first runs. GUI thread only."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QWidget

#: A window not painted this long after the event loop's first turn (never shown) releases the held requests
#: anyway (ms). Counted from that turn, not from the window's construction: on a slow machine building the window
#: took 1.5-2 s, and a fallback counted from construction could release the compute thread's work just before the
#: first paint, which then waited behind it.
FALLBACK_MS = 2000


class HoldUntilPainted(QObject):
    """Wraps ``submit`` (the compute thread's): :meth:`submit` queues requests until ``window`` (or a widget
    in it) has received its first paint event, then forwards them in order on the next turn of the event loop
    (after the painted frame reached the screen) and every later request at once. ``painted_s`` and
    ``released_s``: seconds from this object's creation to the first paint and to the release (None before)."""

    def __init__(self, window: QWidget, submit: Callable[[Any], None]) -> None:
        super().__init__(window)
        self._window, self._submit = window, submit
        self.held: list[Any] = []
        self.open = False
        self.painted_s: float | None = None
        self.released_s: float | None = None
        self._t0 = time.perf_counter()
        self._watching_app = False
        if window.isVisible():
            self._watch_app()
        else:
            window.installEventFilter(self)  # its Show event starts the application-wide watch
        QTimer.singleShot(0, self, self._arm_fallback)  # runs on the event loop's first turn

    def _watch_app(self) -> None:
        app = QApplication.instance()
        if app is not None and not self._watching_app:
            app.installEventFilter(self)
            self._watching_app = True

    def _arm_fallback(self) -> None:
        if not self.open:
            QTimer.singleShot(FALLBACK_MS, self, self.release)

    def submit(self, request: Any) -> None:
        if self.open:
            self._submit(request)
        else:
            self.held.append(request)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if not self._watching_app and watched is self._window and event.type() == QEvent.Type.Show:
            self._watch_app()
        if (not self.open and event.type() == QEvent.Type.Paint and isinstance(watched, QWidget)
                and watched.window() is self._window):
            if self.painted_s is None:
                self.painted_s = time.perf_counter() - self._t0
            QTimer.singleShot(0, self, self.release)  # after this paint is flushed to the screen
        return False

    def release(self) -> None:
        """Forward what was held, in order, and every request from now on."""
        if self.open:
            return
        self.open = True
        self.released_s = time.perf_counter() - self._t0
        app = QApplication.instance()
        if app is not None:
            app.removeEventFilter(self)
        self._window.removeEventFilter(self)
        held, self.held = self.held, []
        for request in held:
            self._submit(request)
