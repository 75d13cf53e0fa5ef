"""A reopened settings race names its lanes and runs as the plot does (issue 55): each lane by its setting ("O3",
not the jit-static mode its decode step ran in), a run whose file number the window had used says which it was
("run 3 · O3 (as run 1)") in its label, not only on the plot, and a replay's status names the number the plot
gives the replay. Synthetic recorded runs in a window without a model (no compile)."""

from __future__ import annotations

import dataclasses
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from test_window_sessions import synthetic_recorded  # noqa: E402

from app.core.compile_settings.figures import SettingLane  # noqa: E402
from app.core.compile_settings.saved import race_document  # noqa: E402
from app.core.recording import SessionFile  # noqa: E402
from app.gui.panels.sessions.naming import lane_named, renumbered  # noqa: E402


def _race_file(path):
    lanes = [SettingLane("default", "nothing", 200.0, 30.0, 500.0, 1.2, 5),
             SettingLane("O3", "optimization_level=O3", 200.0, 30.0, 900.0, 1.0, 5)]
    runs = [dataclasses.replace(synthetic_recorded(6, label=f"run {i + 1}"), label=f"run {i + 1} · {name}", race=1)
            for i, name in enumerate(("default", "O3"))]  # as a live settings race saves them: mode jit-static
    SessionFile(runs=runs, settings_races=[race_document("model pydoc-llama | decode", "decode", lanes)]).save(path)
    return path


def test_lanes_keep_their_setting_names_and_renumbered_runs_say_so(qtbot, make_window, gui_model, tmp_path):
    path = _race_file(tmp_path / "race.session")
    win = make_window(gui_model, autoload=False)
    try:
        assert win.sessions.open_paths([path])
        runs = win.session.runs
        assert [(r.run_id, r.mode, r.label) for r in runs] == [(1, "default", "run 1 · default"), (2, "O3", "run 2 · O3")]
        assert [label.split(" · ")[0] for label in win.ui.plot.run_labels()] == ["default", "O3"]
        assert win.sessions.open_paths([path])  # the same file again, as an overlay: runs 3 and 4
        again = win.session.runs[-2:]
        assert [r.label for r in again] == ["run 3 · default (as run 1)", "run 4 · O3 (as run 2)"]
        assert all(f"as run {n}" in label for n, label in zip((1, 2), win.ui.plot.run_labels()[-2:]))
        source = win.sessions.replay_source()
        assert win.sessions.replay.start(1000.0, True, runs=source)
        qtbot.waitUntil(lambda: not win.sessions.replay.running and not win.is_busy(), timeout=20_000)
        replayed = win.session.runs[-1]
        status = win.status.text()
        assert status.startswith(f"Replay done: run {replayed.run_id} (replay of run 2 · O3)"), status
        assert replayed.label == f"run {replayed.run_id} · O3 ▶ replay"
    finally:
        win.close()


def test_naming_rules():
    run = dataclasses.replace(synthetic_recorded(2), label="run 2 · O3")
    assert lane_named(run, {"O3"}).mode == "O3" and lane_named(run, {"O0"}) is run
    plain = synthetic_recorded(2, label="run 4")  # "run 4 · jit-static"

    class State:
        mode, run_id = "jit-static", 4

    assert renumbered(State, plain) == "run 4 · jit-static"
    State.run_id = 9
    assert renumbered(State, plain) == "run 9 · jit-static (as run 4)"
