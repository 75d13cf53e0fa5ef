"""Session files in the window, the choices (issue 23): Save session asks which runs to save, Replay
session… picks the run and the speed, and a recorded profile shows in the Profile tab."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QDialog, QFileDialog  # noqa: E402
from test_window_sessions import synthetic_recorded, write_session  # noqa: E402

from app.core.profile.model import ProfileRow, StepProfile, Timeline, TimelineBar  # noqa: E402
from app.core.recording import load  # noqa: E402
from app.gui.panels.sessions.dialogs import ReplayDialog, SaveRunsDialog  # noqa: E402


def _three_runs(tmp_path):
    runs = [synthetic_recorded(6, label=f"run {i}") for i in (1, 2, 3)]
    return write_session(tmp_path / "three.session", *runs)


def test_save_session_asks_which_runs_and_writes_only_those(qtbot, make_window, gui_model, tmp_path,
                                                             monkeypatch):
    win = make_window(gui_model, autoload=False)
    try:
        assert win.sessions.open_paths([_three_runs(tmp_path)])
        out = tmp_path / "picked.session"
        seen: list[list[str]] = []

        def pick(dialog: SaveRunsDialog) -> int:  # the user unticks the second run
            seen.append([dialog.list.item(i).text() for i in range(dialog.list.count())])
            assert len(dialog.selected()) == 3  # all checked at first
            dialog.set_checked(1, False)
            return int(QDialog.DialogCode.Accepted)

        monkeypatch.setattr(SaveRunsDialog, "exec", pick)
        monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(out), "")))
        win.sessions.save_dialog()
        assert len(seen[0]) == 3 and "run 2" in seen[0][1] and "TPU v6e × 8" in seen[0][1]
        assert [r.label for r in load(out).runs] == ["run 1 · jit-static", "run 3 · jit-static"]
        assert "Saved 2 runs" in win.ui.status_label.text()

        def none(dialog: SaveRunsDialog) -> int:  # nothing ticked: Save is disabled, nothing is written
            dialog.set_all(False)
            assert not dialog.buttons.button(dialog.buttons.StandardButton.Save).isEnabled()
            return int(QDialog.DialogCode.Rejected)

        out.unlink()
        monkeypatch.setattr(SaveRunsDialog, "exec", none)
        win.sessions.save_dialog()
        assert not out.exists()
    finally:
        win.close()


def test_replay_picker_plays_the_chosen_run_at_the_chosen_speed(qtbot, make_window, gui_model, tmp_path,
                                                                monkeypatch):
    win = make_window(gui_model, autoload=False)
    try:
        assert win.sessions.open_paths([_three_runs(tmp_path)])
        assert len(win.sessions.replay_choices()) == 3
        titles: list[str] = []

        def pick(dialog: ReplayDialog) -> int:
            titles.extend(dialog.run.itemText(i) for i in range(dialog.run.count()))
            assert dialog.run.currentIndex() == 2  # the newest preselected
            dialog.run.setCurrentIndex(0)
            dialog.speed.setCurrentIndex(2)  # skip the compile wait
            return int(QDialog.DialogCode.Accepted)

        monkeypatch.setattr(ReplayDialog, "exec", pick)
        assert any("Replay session…" in a.text() for a in win.sessions.replay_actions)
        win.sessions.replay_dialog()
        replay = win.sessions.replay
        assert replay.running and replay.skip_compile and replay.speed == 1.0
        assert "run 1" in titles[0]
        qtbot.waitUntil(lambda: not replay.running, timeout=20_000)
        state = win.session.current
        assert state.replay and state.label == f"run {state.run_id} · jit-static ▶ replay"  # the plot's number
        assert win.status.text().startswith(f"Replay done: run {state.run_id} (replay of run 1 · jit-static)")
        assert win.ui.plot.run_labels()[-1].startswith("jit-static ▶ replay")
        assert not any(getattr(e, "phase", None) == "compiling" for _, e in replay.emitted)
        assert len(win.sessions.replay_choices()) == 3  # a replay is not offered again
    finally:
        win.close()


def test_a_race_is_one_replay_choice():
    lanes = [synthetic_recorded(4, label=f"run {i}") for i in (1, 2)]
    for lane in lanes:
        lane.race = 1
    dialog = ReplayDialog([("race · 2 lanes", lanes)])
    runs, speed, skip = dialog.choice()
    assert runs == lanes and speed == 1.0 and not skip
    dialog.speed.setCurrentIndex(1)
    assert dialog.choice()[1] == 4.0


HLO = ("HloModule decode\n\nENTRY %main {\n  %p = f32[4] parameter(0)\n"
       "  ROOT %fusion.1 = f32[4] fusion(%p), kind=kLoop\n}\n")


def test_a_recorded_profile_shows_in_the_profile_tab(qtbot, make_window, gui_model, tmp_path):
    run = synthetic_recorded(8)
    run.ir["decode"].hlo = HLO
    run.profile = StepProfile(
        "decode", "jit_step", 20, 5.0, 5.0, 4.0, 4.0, 0.8, 0.2, 0.1, 0.1, None, 0, 0, None,
        [ProfileRow("fusion.1", 4000.0, 4000.0, 0.8, 1.0, source="model.py:12", module="model.layers.0",
                    aten="aten::add", kind="kLoop", instructions=["fusion.1"], hlo_line=5)], {},
        Timeline(0, 5000.0, [TimelineBar("t0", 0.0, 4000.0, "fusion.1", "kLoop", "model.py:12")], threads=["t0"]),
        hlo_text=HLO)
    path = write_session(tmp_path / "profiled.session", run)
    win = make_window(gui_model, autoload=False)
    try:
        assert win.sessions.open_paths([path])
        profile = win.profile
        assert profile.last is not None and profile.last.profile.step == "decode"
        assert [r["key"] for r in profile.last.rows["fusion"]] == ["fusion.1"]
        assert set(profile.last.rows) == {"line", "op", "fusion", "module"}
        assert "recorded on TPU v6e × 8" in profile.summary.text() and profile.recorded_origin
        assert profile.timeline is not None and profile.export_button.isEnabled()
    finally:
        win.close()


def test_a_recorded_pass_pipeline_is_saved_with_the_run_and_shown_when_opened(qtbot, window, make_window,
                                                                             gui_model, tmp_path):
    from conftest import run_and_wait
    from session_helpers import FINAL, passes_ready

    run_and_wait(qtbot, window)
    window.session.events.passes.emit(passes_ready(window.session.current.mode))
    path = tmp_path / "passes.session"
    assert window.sessions.save(path) > 0
    kept = load(path).runs[0].passes
    assert kept is not None and kept.final_hlo == FINAL and kept.rows[0]["pass"] == "fusion"
    other = make_window(gui_model, autoload=False)
    try:
        assert other.sessions.open_paths([path])
        passes = other.passes
        assert passes.last is not None and passes.last.step == "decode"
        assert "recorded on" in passes.status.text() and "read-only" in passes.status.text()
        assert passes.pass_list is not None and other.ui.ir_tabs.tabs.currentWidget() is passes.page
    finally:
        other.close()


def test_a_session_with_a_profile_and_passes_opens_with_jax_and_torch_missing(tmp_path):
    import subprocess
    import sys

    from session_helpers import passes_ready
    from test_window_sessions import NO_JAX_SCRIPT, ROOT

    from app.core.recording import RunRecorder

    run = synthetic_recorded(10)
    run.ir["decode"].hlo = HLO
    run.profile = StepProfile(
        "decode", "jit_step", 20, 5.0, 5.0, 4.0, 4.0, 0.8, 0.2, 0.1, 0.1, None, 0, 0, None,
        [ProfileRow("fusion.1", 4000.0, 4000.0, 0.8, 1.0, kind="kLoop", instructions=["fusion.1"], hlo_line=5)],
        {}, Timeline(0, 5000.0, [TimelineBar("t0", 0.0, 4000.0, "fusion.1", "kLoop", "")], threads=["t0"]),
        hlo_text=HLO)
    RunRecorder("m").add_passes(passes_ready(), run=run)
    path = write_session(tmp_path / "all.session", run)
    script = NO_JAX_SCRIPT.replace("\nwin.close()", "\nprint(f'EXTRA profile={win.profile.last is not None} "
                                   "passes={win.passes.last is not None}')\nwin.close()")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT),
           "TORCHAX_PLAYGROUND_CONFIG_DIR": str(tmp_path / "config")}
    proc = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, env=env,
                          timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "loaded=[]" in proc.stdout and "EXTRA profile=True passes=True" in proc.stdout, proc.stdout


def test_the_ir_diff_dialog_aligns_by_source_line(qtbot, make_window, gui_model, tmp_path):
    from app.core.inspect.ir import StepIR

    meta = 'metadata={op_name="jit(f)/add" source_file="/x/model.py" source_line=7}'
    hlo = ("HloModule decode\n\nENTRY %main {\n  %p = f32[4] parameter(0)\n"
           f"  ROOT %add.1 = f32[4] add(%p, %p), {meta}\n}}\n")
    cpu, tpu = synthetic_recorded(6, "cpu", 1, label="run 1"), synthetic_recorded(6, "TPU v6e", 8, label="run 2")
    cpu.ir["decode"] = StepIR(hlo=hlo)
    tpu.ir["decode"] = StepIR(hlo=hlo.replace("f32[4]", "bf16[4]"))
    a, b = write_session(tmp_path / "cpu.session", cpu), write_session(tmp_path / "tpu.session", tpu)
    win = make_window(gui_model, autoload=False)
    try:
        assert win.sessions.open_paths([a, b])
        win.sessions.show_diff()
        dialog = win.sessions.diff_dialog
        assert dialog.align.currentData() == "text"
        dialog.align.setCurrentIndex(dialog.align.findData("source"))
        text = dialog.text.toPlainText()
        assert "aligned by source line" in text and "@@ model.py:7 " in text and "bf16[4]" in text
        dialog.which.setCurrentText("stablehlo")
        assert "needs a text with source locations" in dialog.text.toPlainText()
        dialog.close()
    finally:
        win.close()
