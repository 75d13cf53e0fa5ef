"""Shared helpers of the GUI tests (imported by tests/test_widgets.py and tests/test_window.py)."""

from __future__ import annotations

import os
from types import SimpleNamespace
from typing import Any

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


@pytest.fixture
def no_thread_left(qtbot):  # noqa: ARG001 — qtbot makes sure a QApplication exists
    """Fail the test if a compute thread is still running when it ends (then stop it, never abort)."""
    from app.gui.worker import ComputeThread

    yield
    leaked = [c for c in ComputeThread.live() if c.thread.isRunning()]
    for c in leaked:
        c.shutdown()
    if leaked:
        pytest.fail(f"{len(leaked)} compute thread(s) left running")


@pytest.fixture
def config_dir(tmp_path, monkeypatch):
    """Point the GUI's settings file at a temp dir."""
    monkeypatch.setenv("TORCHAX_PLAYGROUND_CONFIG_DIR", str(tmp_path / "config"))
    return tmp_path / "config"


@pytest.fixture
def no_dialogs(monkeypatch):
    """Patch QMessageBox / QFileDialog so nothing modal blocks; returns the list of message boxes shown."""
    from PySide6.QtWidgets import QFileDialog, QMessageBox

    shown: list[Any] = []

    def fake_exec(box):  # noqa: ANN001
        shown.append((box.text(), box.detailedText()))
        return int(QMessageBox.StandardButton.Close)

    monkeypatch.setattr(QMessageBox, "exec", fake_exec)
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: ("", "")))
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", staticmethod(lambda *a, **k: ""))
    return shown


def call_record(
    index: int, step: str = "decode", wall_ms: float = 10.0, compiled: bool = False
) -> SimpleNamespace:
    """A synthetic stand-in for ``app.core.events.CallRecord``."""
    return SimpleNamespace(
        index=index,
        step=step,
        mode="jit-static",
        input_shapes={"input_ids": [1, 1]},
        wall_ms=wall_ms,
        execute_ms=wall_ms * 0.9,
        compiled=compiled,
        trace_ms=210.0 if compiled else None,
        lower_ms=40.0 if compiled else None,
        compile_ms=760.0 if compiled else None,
        persistent_cache_hit=False if compiled else None,
        compile_reason="first call" if compiled else None,
        timestamp=0.0,
    )


def synthetic_run(n: int = 20) -> list[SimpleNamespace]:
    """Prefill + decode records where the first two calls compile (~1 s) and the rest take ~10 ms."""
    return [
        call_record(i, "prefill" if i == 0 else "decode", 1010.0 + i if i < 2 else 9.5 + (i % 3) * 0.2, i < 2)
        for i in range(n)
    ]
