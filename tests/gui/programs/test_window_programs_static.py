"""The Code workspace's seed and static_argnums fields: the CLI's ``program --seed`` and ``--static`` on the
window (issue 35, item 2: one feature set on both surfaces; the same ProgramRequest fields)."""

from __future__ import annotations

import io
import json

import pytest
from programs_helpers import code_window_fixture  # noqa: F401 (the code_window fixture)

from tests.conftest import RUN_TIMEOUT_MS

pytest.importorskip("pytestqt")

POWER = '''import jax.numpy as jnp


def power(x, n):
    out = x
    for _ in range(n - 1):
        out = out * x
    return out


def power_args():
    return (jnp.ones((4,)), 3)
'''


CODE_WINDOW_WORKSPACE = "Code"  # programs_helpers.code_window shows it first


def _run(qtbot, win) -> bool:
    started = win.programs.run()
    qtbot.waitUntil(lambda: not win.is_busy(), timeout=RUN_TIMEOUT_MS)
    return started


def test_window_static_argnums_and_seed_reach_the_request_and_the_compiles(qtbot, code_window, tmp_path):
    win = code_window
    path = tmp_path / "power.py"
    path.write_text(POWER)  # the file declares no static argument: a Python int n would be traced
    win.programs.open_file(str(path), ask=False)
    win.programs.panel.set_values({"static": "1", "seed": 7, "spec": "f32[4], 3", "static_values": "n=2,3,3"})
    request = win.programs.request()
    assert request.static == (1,) and request.seed == 7
    assert _run(qtbot, win)
    run = win.session.runs[-1]
    assert [r.compiled for r in run.records] == [True, True, False]  # n static: a new value compiles again
    assert "static argument n changed" in " ".join(r.compile_reason or "" for r in run.records)
    # the CLI's --static and --seed make the same calls
    out, err = io.StringIO(), io.StringIO()
    from app.cli import main

    code = main(["program", f"{path}:power", "--args", "f32[4], 3", "--seed", "7", "--static", "1",
                 "--static-values", "n=2,3,3", "--json"], out=out, err=err)
    assert code == 0, err.getvalue()
    calls = [json.loads(line) for line in out.getvalue().splitlines() if '"call"' in line]
    assert [c["compiled"] for c in calls] == [r.compiled for r in run.records]


def test_window_refuses_bad_static_argnums_with_a_message_and_no_run(qtbot, code_window, tmp_path):
    win = code_window
    path = tmp_path / "power.py"
    path.write_text(POWER)
    win.programs.open_file(str(path), ask=False)
    win.programs.panel.set_values({"static": "n", "static_values": ""})
    runs = len(win.session.runs)
    assert not _run(qtbot, win)
    assert len(win.session.runs) == runs
    assert "Static argument indices 'n'" in win.programs.panel.error_text()
