"""Issue 37: in the Code workspace, clicking an equation inside a ``lax.scan`` body in the jaxpr view scrolled the
editor sideways to the end of the (long) line of the scan. The linked line now comes into view with its start
visible and the editor does not move sideways."""

from __future__ import annotations

import pytest
from programs_helpers import code_window_fixture  # noqa: F401 (the code_window fixture)

from tests.conftest import RUN_TIMEOUT_MS

pytest.importorskip("pytestqt")

PROGRAM = '''import jax
import jax.numpy as jnp


def step(x):
    return jnp.tanh(x * 0.9 + 0.1)


def scan(x):
    def body(carry, _):
        return step(carry), None

    return jax.lax.scan(body, x, length=8)[0]  # one body inside the scan equation, whatever its length: a comment long enough to pass the editor's right edge at 1920 px


def scan_args():
    return (jnp.ones((16,), jnp.float32),)
'''
SCAN_LINE = 13


def test_an_equation_in_a_scan_body_shows_its_line_from_the_start(qtbot, code_window, tmp_path):
    win = code_window
    path = tmp_path / "long_scan.py"
    path.write_text(PROGRAM, encoding="utf-8")
    assert win.programs.open_file(str(path), ask=False)
    win.programs.panel.entry.setCurrentText("scan")
    win.programs.panel.calls.setValue(2)
    assert win.programs.run()
    qtbot.waitUntil(lambda: not win.is_busy(), timeout=RUN_TIMEOUT_MS)
    qtbot.waitUntil(lambda: "scan" in win.inspect.maps, timeout=20_000)
    editor = win.programs.editor
    bar = editor.horizontalScrollBar()
    assert bar.maximum() > 0, "the scan's line is longer than the editor is wide"
    jaxpr = win.ui.ir_tabs.text_of("scan", "jaxpr").splitlines()
    body = next(i for i, text in enumerate(jaxpr, 1) if "tanh" in text)  # an equation of the scan's body
    editor.select_line(1)
    win.inspect.linker.filters["jaxpr"].lineClicked.emit(body)
    qtbot.wait(50)
    assert editor.current_line() == SCAN_LINE
    assert bar.value() == 0, "the editor scrolled sideways to the end of the scan's line"
    assert 0 <= editor.cursorRect().left() < editor.viewport().width()
