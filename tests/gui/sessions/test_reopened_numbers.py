"""A reopened session keeps its runs' numbers (issue 37: a file's runs 4–8 showed as 1–5 in a fresh window, or
as 22–26 after other runs, with nothing saying which file run each was)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from test_window_sessions import synthetic_recorded, write_session  # noqa: E402


def test_a_fresh_window_shows_the_files_run_numbers_and_a_reused_number_says_so(qtbot, make_window, gui_model,
                                                                                 tmp_path):
    path = write_session(tmp_path / "four-to-six.session",
                         *[synthetic_recorded(6, label=f"run {i}") for i in (4, 5, 6)])
    win = make_window(gui_model, autoload=False)
    try:
        assert win.sessions.open_paths([path])
        assert [r.run_id for r in win.session.runs] == [4, 5, 6]
        assert [r.legend_name().split(" · ")[0] for r in win.ui.plot._runs] == ["run 4", "run 5", "run 6"]
        assert not any(" as run " in label for label in win.ui.plot.run_labels())
        assert win.sessions.open_paths([path])  # again: 4–6 are taken, the runs get new numbers and say theirs
        shown = [(r.run_id, r.label) for r in win.ui.plot._runs][-3:]
        assert [rid for rid, _ in shown] == [7, 8, 9], shown
        assert [label.rsplit(" as ", 1)[-1] for _, label in shown] == ["run 4", "run 5", "run 6"], shown
    finally:
        win.close()


def test_a_reopened_program_run_shows_calls_not_tokens(qtbot, make_window, gui_model, tmp_path):
    """Issue 37 (views never stale): a program run opened from a session file left the stats strip and the
    plot's key on a model's figures (TTFT, tokens/s, "steady decode") — its run had no entry point."""
    import dataclasses

    from qt_helpers import synthetic_run

    from app.core.recording import RecordedRun

    records = [dataclasses.replace(r, step="normalize") for r in synthetic_run(6)]
    run = RecordedRun(label="run 2 · jit · normalize", mode="jit", model="02_static_shapes.py:normalize",
                      records=records, settings={"mode": "jit", "calls": 6}, environment={"platform": "cpu"})
    path = write_session(tmp_path / "program.session", run)
    win = make_window(gui_model, autoload=False)
    try:
        assert win.sessions.open_paths([path])
        assert win.session.current.program == "normalize"
        assert win.ui.stats.is_program() and win.ui.stats.caption("ttft") == "first call"
        assert win.ui.plot.is_program() and "steady call" in win.ui.plot.key_text()
        assert "02_static_shapes.py:normalize" in win.ui.plot.run_labels()[-1]
    finally:
        win.close()
