"""One window per user: the first start listens on a local socket (``QLocalServer``, named per user and per
config folder, reachable by this user only); a second start — or a double-clicked ``.session`` — connects,
hands over its files and exits, and the running window opens them and comes to the front. (Qt's
``UserAccessOption`` is not used: it renames its socket into place, over a running window's.)

The message is one JSON line ``{"files": [absolute paths], "pid": N}``; the window answers ``ok``. A socket
left by a crashed window is removed and taken over. A running window that does not answer within
:data:`ANSWER_MS` (its GUI thread blocked) gets no hand-off: the new start opens its own window."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtNetwork import QAbstractSocket, QLocalServer, QLocalSocket

from app.core.crash import hooks
from app.core.paths import config_dir

CONNECT_MS = 500
ANSWER_MS = 5000


def server_name() -> str:
    """Where the running window listens: ``$XDG_RUNTIME_DIR/torchax-playground-<hash>.sock`` (a folder only this
    user can enter), else ``torchax-playground-<user>-<hash>`` in Qt's temporary folder; the hash is of the
    config folder: one window per user and settings folder (a test's scratch config gets its own)."""
    digest = hashlib.sha1(str(config_dir().expanduser().resolve()).encode()).hexdigest()[:10]
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if runtime and os.path.isdir(runtime):
        return str(Path(runtime) / f"torchax-playground-{digest}.sock")
    user = str(os.getuid()) if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    return f"torchax-playground-{user}-{digest}"


def hand_off(files: list[str], name: str | None = None) -> bool:
    """Give ``files`` (may be empty: just raise the window) to a running window. True when it answered; False
    when none runs (or it did not answer in time). Needs a QCoreApplication."""
    sock = QLocalSocket()
    sock.connectToServer(name or server_name())
    if not sock.waitForConnected(CONNECT_MS):
        return False
    message = {"files": [str(Path(f).expanduser().resolve()) for f in files], "pid": os.getpid()}
    sock.write((json.dumps(message) + "\n").encode())
    sock.flush()  # writes what it can now; waitForBytesWritten then has nothing left to wait for
    if sock.bytesToWrite():
        sock.waitForBytesWritten(ANSWER_MS)
    reply = bytes(sock.readAll().data()) if sock.waitForReadyRead(ANSWER_MS) else b""
    sock.disconnectFromServer()
    return reply.strip() == b"ok"


class InstanceServer(QObject):
    """The running window's end. :meth:`listen` first; then each hand-off emits :attr:`received` and calls
    ``deliver(files)`` (set with :meth:`attach`; hand-offs that arrive before are kept for it).

    Signals (GUI thread): received(list[str]): the files of one hand-off (may be empty)."""

    received = Signal(list)

    def __init__(self, parent: QObject | None = None, name: str | None = None) -> None:
        super().__init__(parent)
        self.name = name or server_name()
        self.server = QLocalServer(self)
        self.server.newConnection.connect(self._accept)
        self.deliver: Callable[[list[str]], None] | None = None
        self.waiting: list[list[str]] = []
        self._buffers: dict[QLocalSocket, bytes] = {}

    def listen(self, take_over: bool = False) -> bool:
        """Start listening. ``take_over``: remove a socket left by a window that crashed (only after a hand-off
        to it failed). Returns False when another window holds the name."""
        if self.server.listen(self.name):
            return True
        if take_over and self.server.serverError() == QAbstractSocket.SocketError.AddressInUseError:
            QLocalServer.removeServer(self.name)
            return self.server.listen(self.name)
        return False

    def attach(self, deliver: Callable[[list[str]], None]) -> None:
        self.deliver = deliver
        for files in self.waiting:
            deliver(files)
        self.waiting.clear()

    def close(self) -> None:
        self.server.close()

    @Slot()
    def _accept(self) -> None:
        while self.server.hasPendingConnections():
            sock = self.server.nextPendingConnection()
            self._buffers[sock] = b""
            sock.readyRead.connect(lambda s=sock: self._read(s))
            sock.disconnected.connect(lambda s=sock: self._forget(s))
            if sock.bytesAvailable():
                self._read(sock)

    def _forget(self, sock: QLocalSocket) -> None:
        self._buffers.pop(sock, None)
        sock.deleteLater()

    def _read(self, sock: QLocalSocket) -> None:
        data = self._buffers.get(sock, b"") + bytes(sock.readAll().data())
        self._buffers[sock] = data
        if b"\n" not in data:
            return
        line = data.split(b"\n", 1)[0]
        try:
            message = json.loads(line)
            files = [str(f) for f in message.get("files", []) if isinstance(f, str)]
        except (ValueError, AttributeError):
            sock.write(b"bad\n")
            return
        sock.write(b"ok\n")
        sock.flush()
        self.received.emit(files)
        if self.deliver is None:
            self.waiting.append(files)
        else:
            self.deliver(files)


class OpenInWindow:
    """``deliver`` of :class:`InstanceServer` for the main window: bring it to the front and open the session
    files handed over (``window.sessions.open_paths``); during a run they wait until it ends, said on the
    status line. ``window``: the main window (its ``session``, ``sessions`` and ``status``)."""

    def __init__(self, window: Any) -> None:
        self.window = window
        self.pending: list[str] = []
        self._waiting = False

    def __call__(self, files: list[str]) -> None:
        w = self.window
        hooks.record(f"second start handed over {len(files)} file(s)")
        if w.isMinimized():
            w.showNormal()
        w.show()
        w.raise_()
        w.activateWindow()
        self.pending += [f for f in files if f not in self.pending]
        self._open()

    def _open(self, *_args: object) -> None:
        w = self.window
        if not self.pending:
            return
        if w.session.busy:
            names = ", ".join(Path(p).name for p in self.pending)
            w.status.show(f"{names} opens when this run ends (Stop to open it now).")
            if not self._waiting:
                self._waiting = True
                w.session.events.busyChanged.connect(self._when_idle)
            return
        paths, self.pending = self.pending, []
        w.sessions.open_paths(paths, background=True)

    def _when_idle(self, busy: bool) -> None:
        if not busy:
            self._open()
