"""Helpers of the window tests that run the real engine (tests/test_window_inspect.py,
tests/test_window_mesh.py): a window on the built-in model, and Run-and-wait."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPushButton

from app.core.models import DEFAULT_MODEL, MODELS_DIR

LOAD_TIMEOUT_MS = 120_000
RUN_TIMEOUT_MS = 240_000
PROMPT = "The jit function"


@pytest.fixture(scope="module")
def gui_model(request):
    """The built-in default model if its files are present, else a tiny saved Llama (conftest)."""
    if (MODELS_DIR / DEFAULT_MODEL / "config.json").exists():
        return DEFAULT_MODEL
    return request.getfixturevalue("model_dirs")("llama")


def open_window(qtbot, model: str, max_new_tokens: int = 8):
    """A shown MainWindow on ``model``, its model loaded and its devices listed."""
    from app.gui.user_settings import UserSettings
    from app.gui.window import MainWindow

    win = MainWindow(
        settings=UserSettings(model=model, prompt=PROMPT, generation={"max_new_tokens": max_new_tokens})
    )
    qtbot.addWidget(win)
    win.resize(1600, 1000)
    win.show()
    qtbot.waitUntil(lambda: win._loaded is not None, timeout=LOAD_TIMEOUT_MS)
    qtbot.waitUntil(lambda: win.ui.device_panel.device_count() > 0, timeout=LOAD_TIMEOUT_MS)
    return win


def run_and_wait(qtbot, win) -> None:
    """Click Run and wait until the run (and the hidden IR tabs' texts) are done."""
    qtbot.mouseClick(win.findChild(QPushButton, "runButton"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: win.is_busy(), timeout=2000)
    qtbot.waitUntil(lambda: not win.is_busy(), timeout=RUN_TIMEOUT_MS)
    qtbot.waitUntil(lambda: not win.ui.ir_tabs.pending(), timeout=5000)
