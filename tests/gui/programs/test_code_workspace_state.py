"""Issue 55, the Code workspace's state across files and runs: opening a new file kept the previous file's
``static_argnums`` (its run failed with "static_argnums=(5,), but only accepts 2 positional arguments"); the IR
header named the run and step but not the file."""

from __future__ import annotations

import pytest
from programs_helpers import code_window_fixture  # noqa: F401 (the code_window fixture)

from tests.conftest import RUN_TIMEOUT_MS

pytest.importorskip("pytestqt")

CODE_WINDOW_WORKSPACE = "Code"

WIDE = '''import jax.numpy as jnp


def wide(a, b, c, d, e, n):
    return a + b + c + d + e * n


def wide_args():
    return (jnp.ones(3), jnp.ones(3), jnp.ones(3), jnp.ones(3), jnp.ones(3), 2)
'''

SMALL = '''import jax.numpy as jnp


def small(x, y):
    return x * y


def small_args():
    return (jnp.ones(3), jnp.ones(3))
'''


def test_opening_a_new_file_forgets_the_previous_files_static_arguments(qtbot, code_window, tmp_path):
    win = code_window
    win.programs.panel.live.setChecked(False)  # no live compile in between: the run is the subject
    first, second = tmp_path / "wide.py", tmp_path / "small.py"
    first.write_text(WIDE)
    second.write_text(SMALL)
    assert win.programs.open_file(str(first), ask=False)
    win.programs.panel.set_values({"static": "5", "static_values": "n=2,3"})
    assert win.programs.request().static == (5,)
    assert win.programs.open_file(str(second), ask=False)
    values = win.programs.panel.values()
    assert values["static"] == "" and values["static_values"] == ""
    assert win.programs.request().static in ((), None)
    win.programs.panel.calls.setValue(2)
    assert win.programs.run()
    qtbot.waitUntil(lambda: not win.is_busy(), timeout=RUN_TIMEOUT_MS)
    assert not win.programs.panel.error_text(), win.programs.panel.error_text()
    assert win.session.runs and win.session.runs[-1].records
    # the IR header names the run, the file and the step; the checked Step button is that step (issue 55 flaw 5)
    tabs = win.ui.ir_tabs
    qtbot.waitUntil(lambda: not tabs.pending(), timeout=RUN_TIMEOUT_MS)
    run = win.session.runs[-1]
    assert tabs.origin_text() == f"run {run.run_id} · jit · small.py · small", tabs.origin_text()
    assert [s for s, b in tabs.step_buttons.items() if b.isChecked() and b.isVisible()] == ["small"]
