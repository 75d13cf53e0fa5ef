"""``torchax-playground report`` (issue 56, part 3): a window killed with SIGSEGV leaves a report that
``report --last`` prints (its faulthandler dump, versions, last actions); with no report it says so."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from app.cli import main

ROOT = Path(__file__).resolve().parents[2]


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_report_says_when_there_is_none(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHAX_PLAYGROUND_CACHE_DIR", str(tmp_path / "cache"))
    code, out, err = run_cli("report", "--last")
    assert code == 1 and out == "" and "no crash reports in" in err and str(tmp_path / "cache") in err
    code, out, _ = run_cli("report", "--path")
    assert code == 0 and out.strip() == str(tmp_path / "cache" / "crash" / "reports")


def test_a_window_killed_with_sigsegv_leaves_the_report_report_last_prints(tmp_path, monkeypatch):
    """The real entry point (``python -m app``) on a session file (no model loaded), killed by SIGSEGV once up."""
    cache, config = tmp_path / "cache", tmp_path / "config"
    env = {**os.environ, "TORCHAX_PLAYGROUND_CACHE_DIR": str(cache), "TORCHAX_PLAYGROUND_CONFIG_DIR": str(config),
           "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.Popen([sys.executable, "-m", "app", str(tmp_path / "not-there.session")], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        facts = cache / "crash" / "runs" / str(proc.pid) / "facts.txt"
        deadline = time.monotonic() + 25
        while not facts.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert facts.exists(), proc.stderr.read() if proc.poll() is not None else "the window never came up"
        time.sleep(0.5)  # the session file's error is on the status line (an action recorded)
        proc.send_signal(signal.SIGSEGV)
        _, stderr = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGSEGV, stderr[-2000:]
    monkeypatch.setenv("TORCHAX_PLAYGROUND_CACHE_DIR", str(cache))
    code, out, err = run_cli("report", "--last")
    assert code == 0, err
    assert out.startswith("torchax-playground crash report (written on this machine; nothing is uploaded)")
    assert "what: torchax playground crashed: Segmentation fault" in out
    assert "faulthandler dump" in out and "most recent call first" in out and "main.py" in out
    assert "OpenSessionsRequest paths=not-there.session" in out  # the last actions of the dead run
    for name in ("torchax-playground:", "jax:", "torch:", "PySide6:", "XLA_FLAGS:"):
        assert name in out, name
    assert not (cache / "crash" / "runs" / str(proc.pid)).exists()
    code, listing, _ = run_cli("report", "--list")
    assert code == 0 and listing.count("\n") == 1 and "Segmentation fault" in listing
