"""The Code workspace makes the same calls as the CLI's ``program`` (issue 35: one lane planner,
:func:`app.core.programs.lanes.plan_lanes`): static values (one call per value, a changed value compiles again)
and a sweep of an argument named by parameter name."""

from __future__ import annotations

from pathlib import Path

import pytest
from programs_helpers import code_window_fixture  # noqa: F401 (the code_window fixture)

from tests.conftest import RUN_TIMEOUT_MS

pytest.importorskip("pytestqt")

TWO_ARGS = '''from functools import partial

import jax
import jax.numpy as jnp


def scale(w, x):
    return jnp.tanh(x) * w


def scale_args():
    return (jnp.float32(2.0), jnp.ones((4, 8)))
'''


CODE_WINDOW_WORKSPACE = "Code"  # programs_helpers.code_window shows it first


def _run(qtbot, win) -> None:
    assert win.programs.run()
    qtbot.waitUntil(lambda: not win.is_busy(), timeout=RUN_TIMEOUT_MS)


def test_static_values_make_one_call_per_value_and_compile_per_new_value(qtbot, code_window):
    from app.core.programs.gallery import example

    win = code_window
    win.programs.open_file(example("04_static_argnums").path, ask=False)
    win.programs.panel.set_values({"static_values": "length=5,5,8,5", "mode": "jit"})
    _run(qtbot, win)
    run = win.session.runs[-1]
    assert len(run.records) == 4  # one call per value, not the "calls" count
    assert [r.compiled for r in run.records] == [True, False, True, False]
    assert "static argument length changed" in " ".join(r.compile_reason or "" for r in run.records)


def test_a_sweep_of_a_named_argument(qtbot, code_window, tmp_path):
    win = code_window
    path = tmp_path / "two_args.py"
    path.write_text(TWO_ARGS)
    win.programs.open_file(str(path), ask=False)
    win.programs.panel.set_values({"sweep": "x=1:4", "bucket": True, "static_values": ""})
    _run(qtbot, win)
    lanes = win.session.runs[-2:]
    assert [r.mode for r in lanes] == ["jit", "jit, bucketed"]
    assert [r.input_shapes["arg 1"] for r in lanes[0].records] == [[1, 8], [2, 8], [3, 8], [4, 8]]  # x, not w
    assert sum(r.compiled for r in lanes[0].records) == 4  # one compile per new shape
    assert sum(r.compiled for r in lanes[1].records) == 3  # buckets 1, 2, 4


def test_static_values_with_a_sweep_are_refused_with_a_clear_message(qtbot, code_window):
    from app.core.programs.gallery import example

    win = code_window
    win.programs.open_file(example("04_static_argnums").path, ask=False)
    win.programs.panel.set_values({"static_values": "length=5,8", "sweep": "1:4"})
    runs = len(win.session.runs)
    _run(qtbot, win)
    assert len(win.session.runs) == runs
    assert "both set the calls" in win.programs.panel.status.text() + win.status.text()


def test_cli_sweeps_a_named_argument_like_the_window(tmp_path):
    import io
    import json

    from app.cli import main

    path = Path(tmp_path / "two_args.py")
    path.write_text(TWO_ARGS)
    out, err = io.StringIO(), io.StringIO()
    code = main(["program", f"{path}:scale", "--sweep", "1:4", "--sweep-arg", "x", "--bucket", "--json"],
                out=out, err=err)
    assert code == 0, err.getvalue()
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    calls = [e for e in events if e.get("event") == "call"]
    assert len(calls) == 8
    assert sum(e["compiled"] for e in calls[:4]) == 4 and sum(e["compiled"] for e in calls[4:]) == 3
    # unnamed, the sweep takes the first array argument (x: w is a scalar), as the window's field does
    out = io.StringIO()
    assert main(["program", f"{path}:scale", "--sweep", "1:3", "--json"], out=out, err=io.StringIO()) == 0
    assert len([line for line in out.getvalue().splitlines() if '"call"' in line]) == 3
