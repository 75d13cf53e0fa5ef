"""One window per user (issue 56, part 2): a second start with a ``.session`` argument — what a double-click
runs — hands the file to the running window through Qt's local socket and exits; the running window opens it
and remembers it. Two real processes of the app's entry point (``python -m app``) on a real X11 screen (Xvfb),
no model loaded."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from qt_helpers import synthetic_run

from app.core.events import FinishedEvent, PromptEvent, Summary, TokenEvent
from app.core.recording import RecordedRun, SessionFile

ROOT = Path(__file__).resolve().parents[3]


def _session(path: Path, label: str) -> Path:
    records = synthetic_run(6)
    t, tokens = 0.0, []
    for r in records:
        t += r.wall_ms
        tokens.append(TokenEvent(r.index, 40 + r.index, f" w{r.index}", r.index, t))
    summary = Summary.from_records("jit-static", records, len(tokens), tokens[0].elapsed_ms, t)
    finished = FinishedEvent("length", summary, [x.token_id for x in tokens], "".join(x.text for x in tokens))
    run = RecordedRun(label=label, mode="jit-static", model="pydoc-llama", prompt="Hello",
                      prompt_event=PromptEvent("Hello", 2, False), tokens=tokens, records=records, finished=finished,
                      environment={"platform": "cpu", "device_kind": "cpu", "device_count": 1},
                      recorded_at="2026-12-06T10:00:00+00:00")
    SessionFile(runs=[run]).save(path)
    return path


def _wait_for(predicate, what: str, proc: subprocess.Popen, timeout: float = 25.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert proc.poll() is None, f"the window exited ({proc.returncode}) waiting for {what}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


@pytest.mark.parametrize("x_display", [(1280, 720)], indirect=True)
def test_a_second_start_hands_its_session_file_to_the_running_window(x_display, tmp_path):
    first, second = _session(tmp_path / "first.session", "first"), _session(tmp_path / "second.session", "second")
    config, cache = tmp_path / "config", tmp_path / "cache"
    env = {**os.environ, "TORCHAX_PLAYGROUND_CONFIG_DIR": str(config), "TORCHAX_PLAYGROUND_CACHE_DIR": str(cache),
           "QT_QPA_PLATFORM": "xcb", "DISPLAY": x_display}
    window = subprocess.Popen([sys.executable, "-m", "app", str(first)], cwd=ROOT, env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        actions = cache / "crash" / "runs" / str(window.pid) / "actions.log"
        _wait_for(lambda: "sessions read: first.session" in (actions.read_text() if actions.exists() else ""),
                  "the first window to open first.session", window)
        started = time.monotonic()
        other = subprocess.run([sys.executable, "-m", "app", str(second)], cwd=tmp_path, env=env, text=True,
                               capture_output=True, timeout=60)
        assert other.returncode == 0, other.stderr[-2000:]
        assert f"torchax-playground is already running: it opens {second}" in other.stdout
        print(f"hand-off: second start exited after {time.monotonic() - started:.2f} s")
        _wait_for(lambda: "sessions read: second.session" in actions.read_text(),
                  "the running window to open second.session", window)
        assert "second start handed over 1 file(s)" in actions.read_text()
        assert "failed" not in actions.read_text()
        window.send_signal(signal.SIGTERM)  # closes the window the normal way: settings saved
        window.wait(timeout=30)
    finally:
        if window.poll() is None:
            window.kill()
    assert window.returncode == 0, window.stderr.read()[-2000:] if window.stderr else ""
    saved = json.loads((config / "gui.json").read_text())
    assert saved["recent_sessions"][:2] == [str(second), str(first)]
    assert not (cache / "crash" / "runs" / str(window.pid)).exists()  # a clean exit: no fault file left


def test_a_socket_left_by_a_crashed_window_is_taken_over(qtbot, config_dir):
    """A window that died left its socket file behind: nobody answers there, so the next start takes the name."""
    import socket

    from PySide6.QtNetwork import QLocalServer

    from app.gui.lifecycle.single_instance import InstanceServer, hand_off, server_name

    probe = QLocalServer()
    assert probe.listen(server_name())
    path = probe.fullServerName()
    probe.close()
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(path)  # a bound socket file with no listener, as a killed window leaves it
    stale.close()
    try:
        assert Path(path).exists() and not hand_off([])
        server = InstanceServer()
        assert not server.listen()  # the name is taken by the stale file
        assert server.listen(take_over=True)
        got: list[list[str]] = []
        server.attach(got.append)
        server.close()
        assert not Path(path).exists()
    finally:
        Path(path).unlink(missing_ok=True)
