"""Connects the process's crash hooks (:mod:`app.core.crash.hooks`) to the window: an exception on the GUI
thread, the compute thread or any Python thread shows the :class:`CrashDialog` (on the GUI thread, from the
event loop, never inside the hook); the window goes on. At start it offers the report of a previous run that
crashed (:meth:`CrashReporter.offer_previous`). It also keeps the last actions a report lists: every compute
request (its kind and names, never a prompt), every menu action, each model loaded and each error shown."""

from __future__ import annotations

import threading
from functools import partial
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, Qt, QThread, QTimer, Signal, Slot
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMainWindow

from app.core.crash import hooks, store
from app.core.crash.actions import describe_request
from app.core.crash.report import CrashReport
from app.gui.lifecycle.crash_dialog import CrashDialog


def thread_name() -> str:
    """``"GUI thread"``, ``"compute thread"`` (the QThread named ``computeThread``), else the thread's name."""
    app = QCoreApplication.instance()
    current = QThread.currentThread()
    if app is not None and current is app.thread():
        return "GUI thread"
    if current.objectName() == "computeThread":
        return "compute thread"
    return f"thread {current.objectName() or threading.current_thread().name}"


class CrashReporter(QObject):
    """Owns the crash dialog of ``window``. :attr:`reported` may be emitted from any thread (the hooks do);
    it is delivered queued on the GUI thread, which shows or extends the dialog.

    Signals
    -------
    reported(CrashReport, Path | None): a report and where it was saved (any thread → GUI thread).
    shown(CrashDialog): the dialog was shown or extended (GUI thread; tests wait on it).
    """

    reported = Signal(object, object)
    shown = Signal(object)

    def __init__(self, window: QMainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.dialog: CrashDialog | None = None
        self.reported.connect(self._show, Qt.ConnectionType.QueuedConnection)
        hooks.set_handler(self.reported.emit, thread_name)
        window.destroyed.connect(lambda *_: hooks.set_handler(None))
        self._track(window)

    def _track(self, window: Any) -> None:
        """Record the last actions: compute requests, menu actions, model loads, errors shown."""
        compute = getattr(window, "compute", None)
        if compute is not None:
            compute._request.connect(lambda request, _stop: hooks.record(describe_request(request)))
        for action in window.findChildren(QAction):
            if action.text() and not action.isSeparator():
                action.triggered.connect(partial(_record_action, action.text().replace("&", "")))
        events = getattr(getattr(window, "session", None), "events", None)
        if events is not None:
            events.modelLoaded.connect(self._on_loaded)
            events.error.connect(lambda e: hooks.record(f"error shown: {str(e.message).splitlines()[0][:120]}"))
            events.sessionsRead.connect(_record_sessions_read)

    @Slot(object)
    def _on_loaded(self, event: Any) -> None:
        hooks.record(f"model loaded: {event.label} ({event.mesh})")
        hooks.record_facts()  # the backend is known now

    @Slot(object, object)
    def _show(self, report: CrashReport, path: Path | None) -> None:
        """Show ``report`` in the open dialog, or in a new one (GUI thread)."""
        if self.dialog is None or not self.dialog.isVisible() or self.dialog.previous:
            self.dialog = CrashDialog(self.window)
        self.dialog.add(report, path)
        self.present(self.dialog)

    def present(self, dialog: CrashDialog) -> None:
        dialog.show()
        dialog.raise_()
        dialog.activateWindow()
        self.shown.emit(dialog)

    def offer_previous(self, delay_ms: int = 0) -> list[Path]:
        """Offer the reports of previous runs that crashed hard (each once: :func:`store.take_offers`), in a
        dialog shown ``delay_ms`` after the call (once the window has painted). Returns their paths."""
        paths = store.take_offers()
        if paths:
            dialog = CrashDialog(self.window, previous=True)
            for path in paths[-3:]:
                dialog.add_saved(path)
            self.dialog = dialog
            QTimer.singleShot(delay_ms, dialog, lambda: self.present(dialog))
        return paths


def _record_sessions_read(event: Any) -> None:
    names = ",".join(Path(p).name for p in event.request.paths)
    hooks.record(f"sessions read: {names}" + (f" (failed: {event.error[:120]})" if event.error else ""))


def _record_action(text: str, *_args: Any) -> None:
    hooks.record(f"menu: {text}")
