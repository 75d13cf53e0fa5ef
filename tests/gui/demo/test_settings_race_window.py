"""The settings race in the window (issue 40, the window side): compiler settings picked in the Demo kit race the
loaded model's decode step through the one compute thread; the trade-off plot fills lane by lane; Stop ends it; a
refused setting is said by name and changes nothing; exports name every setting; presentation mode puts the
trade-off on stage. Real engine on the built-in pydoc-llama."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from conftest import RUN_TIMEOUT_MS  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QFileDialog, QPushButton  # noqa: E402
from qt_helpers import settings_stop_to_idle_s  # noqa: E402

from app.core.session.requests import SettingsRaceRequest  # noqa: E402
from app.core.verdict.words import short_verdict  # noqa: E402
from widgets.demo.tradeoff_plot import split_text  # noqa: E402

WINDOW_TOKENS = 6


def race_settings(qtbot, win, names: list[str], typed: str = "", steady_s: float | None = None) -> None:
    """Race ``names`` (and ``typed``); with ``steady_s`` paired rounds follow the lanes (the Demo kit's steady-state
    box and budget: :func:`test_paired_rounds_state_each_setting_against_the_baseline`), else the lanes alone."""
    win.demo.controls.set_steady(steady_s is not None, steady_s)
    controls = win.demo.settings_race.controls
    controls.set_checked(names)
    controls.typed_edit.setText(typed)
    qtbot.mouseClick(win.findChild(QPushButton, "settingsRaceButton"), Qt.MouseButton.LeftButton)


def wait_done(qtbot, win) -> None:
    qtbot.waitUntil(lambda: not win.is_busy(), timeout=RUN_TIMEOUT_MS)


def test_two_settings_give_two_points_lane_by_lane_and_exports_name_them(qtbot, window, tmp_path, monkeypatch):
    sr = window.demo.settings_race
    seen: list[int] = []  # points on the plot at each answer: it grows lane by lane
    window.session.events.settingsRace.connect(lambda e: seen.append(len(sr.plot.points)))
    race_settings(qtbot, window, ["default", "O0"])
    qtbot.waitUntil(lambda: isinstance(window.session.active, SettingsRaceRequest), timeout=5000)
    assert window.findChild(QPushButton, "settingsStopButton").isEnabled()
    wait_done(qtbot, window)
    assert [p.name for p in sr.plot.points] == ["default", "O0"]
    assert sr.plot.points[0].baseline and not sr.plot.points[1].baseline
    assert all(p.compile_ms > 0 and p.steady_ms > 0 for p in sr.plot.points)
    assert sr.plot.label_texts() == ["default (baseline)", "O0"]  # the dock's plot: names, the sentences under it
    full = sr.stage_plot.label_texts()  # on stage: each name with its break-even sentence, if it has one
    assert [t.split("\n")[0] for t in full] == ["default (baseline)", "O0"]
    sentences = [t.split("\n", 1)[1] for t in full if "\n" in t]
    assert sr.plot.notes.text() == "\n".join(sentences)
    assert list(sr.plot.base.getData()[0]) == [sr.plot.points[0].compile_ms]
    assert 0 in seen and 1 in seen and seen[-1] == 2, seen  # lane 1 drawn before lane 2 ran
    assert sr.controls.progress_text().startswith("2/2 lanes done · ")
    assert [run.mode for run in window.session.runs[-2:]] == ["default", "O0"]  # each lane a run, named for it
    o0 = window.session.runs[-1]  # the IR header names the lane's setting, not its jit-static mode (issue 55)
    step = window.ui.ir_tabs.current_step()
    assert window.ui.ir_tabs.origin_text() == f"run {o0.run_id} · O0 · {step}", window.ui.ir_tabs.origin_text()
    assert window.demo.results.currentIndex() == 1  # the Demo kit shows the trade-off
    assert not window.findChild(QPushButton, "settingsStopButton").isEnabled()
    # exports: the plot (PNG / SVG / PDF) and its points (CSV / JSON), each naming every setting
    for kind in ("PNG", "SVG", "PDF", "CSV", "JSON"):
        path = tmp_path / f"tradeoff.{kind.lower()}"
        monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, p=path, **k: (str(p), "")))
        window.demo.export_actions[f"Trade-off as {kind}…"].trigger()
        assert path.is_file() and path.stat().st_size > 0, kind
    assert (tmp_path / "tradeoff.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = (tmp_path / "tradeoff.svg").read_text()
    assert "default (baseline)" in svg and ">O0<" in svg and all(t in svg for t in sentences)
    cairosvg = pytest.importorskip("cairosvg")  # drawn by a renderer that is not Qt's
    assert len(cairosvg.svg2png(bytestring=svg.encode())) > 1000
    if shutil.which("pdftotext"):
        text = subprocess.run(["pdftotext", str(tmp_path / "tradeoff.pdf"), "-"], capture_output=True, text=True).stdout
        assert "default" in text and "O0" in text
    with open(tmp_path / "tradeoff.csv", newline="") as f:
        assert [r["setting"] for r in csv.DictReader(f)] == ["default", "O0"]
    assert [r["setting"] for r in json.loads((tmp_path / "tradeoff.json").read_text())] == ["default", "O0"]
    assert "trade-off of 2 settings" in window.status.text()


def test_stop_ends_the_settings_race_within_two_seconds(qtbot, window, monkeypatch):
    window.ui.form.set_values({"max_new_tokens": 400})
    monkeypatch.setattr(window.compute.worker.engine, "eos_ids", [])
    race_settings(qtbot, window, ["default", "O0", "O3"])
    qtbot.waitUntil(lambda: len(window.ui.tokens.tokens()) >= 3, timeout=RUN_TIMEOUT_MS)
    elapsed = settings_stop_to_idle_s(qtbot, window)
    assert elapsed < 2.0
    lanes = [run for run in window.session.runs if run.race == window.session.runs[-1].race]
    assert [run.mode for run in lanes] == ["default"]  # the next lanes never started
    assert lanes[0].finished.reason == "stopped"
    assert window.status.text().startswith("Race stopped")
    progress = window.demo.settings_race.controls.progress_text()
    assert progress.startswith("stopped in lane 1/3"), progress  # not "1/3 lanes done": it was stopped
    qtbot.waitUntil(lambda: window.findChild(QPushButton, "settingsRaceButton").isEnabled(), timeout=10_000)


def test_stop_during_a_compile_frees_the_window_at_once(qtbot, window):
    race_settings(qtbot, window, ["default", "O0", "O3"])
    sr = window.demo.settings_race
    qtbot.waitUntil(lambda: len(sr.lanes) == 1 and window.ui.busy.is_uninterruptible(), timeout=RUN_TIMEOUT_MS)
    elapsed = settings_stop_to_idle_s(qtbot, window)  # lane 2 is tracing or compiling: XLA cannot be interrupted
    assert elapsed < 2.0
    qtbot.waitUntil(lambda: window.session.background is None, timeout=RUN_TIMEOUT_MS)  # the compile finished
    assert [p.name for p in sr.plot.points] == ["default"]  # the abandoned lane's late answer is dropped
    assert window.findChild(QPushButton, "settingsRaceButton").isEnabled()


@pytest.mark.parametrize("typed, named", [("gpu-autotune-0", "gpu-autotune-0"), ("O9", "'O9'"),
                                          ("--xla_gpu_autotune_level=0", "--xla_gpu_autotune_level=0")])
def test_a_refused_setting_is_named_and_changes_nothing(qtbot, window, typed, named):
    runs = list(window.session.runs)
    race_settings(qtbot, window, ["default", "O0"], typed=typed)
    message = window.demo.settings_race.controls.message_text()
    assert named in message and named in window.status.text()
    assert not window.is_busy() and window.session.runs == runs and window.session.active is None
    assert window.demo.settings_race.plot.points == []


def test_an_option_xla_refuses_comes_back_by_name(qtbot, window):
    race_settings(qtbot, window, ["default"], typed="--xla_cpu_no_such_flag=true")
    wait_done(qtbot, window)
    message = window.demo.settings_race.controls.message_text()
    assert "--xla_cpu_no_such_flag=true" in message, message
    assert window.demo.settings_race.plot.points == []


def test_presentation_puts_the_trade_off_and_its_paired_verdicts_on_stage(qtbot, window, tmp_path, monkeypatch):
    """Presentation mode puts the trade-off on stage, and (issue 54) the "vs baseline" ratios come from paired rounds
    after the lanes — the two settings' compiled steps again (the Demo kit's steady-state budget; nothing compiles
    again): their progress under the plot, then each verdict with its 95 % interval in the summary line, under each
    name on stage, in the hover text, the CSV export and the session's race."""
    sr, demo, ui = window.demo.settings_race, window.demo, window.ui
    progress: list[str] = []
    window.session.events.settingsRace.connect(lambda e: progress.append(e.running) if e.index < 0 else None)
    race_settings(qtbot, window, ["default", "O0"], steady_s=1.0)  # >= 9 rounds of 3 blocks of ~100 ms
    wait_done(qtbot, window)
    assert any(p.startswith("paired rounds · round 1 (≥ 9) · ") for p in progress), progress[:4]
    assert [run.mode for run in window.session.runs[-2:]] == ["default", "O0"]  # the rounds are not runs
    base, o0 = sr.lanes
    rounds = base.verdict["phase"]["rounds"]
    assert rounds >= 9 and o0.verdict["rounds"] == rounds and o0.verdict["ci_low"] < o0.verdict["ci_high"]
    line = sr.verdict_line.text()
    assert line.startswith(f"vs default, {rounds} paired rounds (") and short_verdict(o0.verdict) in line, line
    assert o0.verdict["text"] in sr.verdict_line.toolTip()
    point = sr.stage_plot.points[1]
    assert point.versus in split_text(point) and point.versus.startswith(short_verdict(o0.verdict))
    path = tmp_path / "tradeoff.csv"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(path), "")))
    window.demo.export_actions["Trade-off as CSV…"].trigger()
    with open(path, newline="") as f:
        row = list(csv.DictReader(f))[1]
    assert float(row["ratio"]) == pytest.approx(o0.verdict["ratio"]) and row["paired_rounds"] == str(rounds)
    assert point.versus.startswith(row["vs_baseline"])  # the point adds where it is placed (paired ratio)
    saved = sr.document()  # what File ▸ Save session keeps
    assert saved is not None and saved["paired"]["rounds"] == rounds
    assert saved["lanes"][1]["verdict"]["text"] == o0.verdict["text"]
    demo.presentation_action.setChecked(True)
    try:
        stage = demo.settings_race.stage_card
        qtbot.waitUntil(lambda: stage.isVisible())
        assert not ui.plot_card.isVisible()
        assert [p.name for p in demo.settings_race.stage_plot.points] == ["default", "O0"]
        assert stage.width() > window.width() // 2  # talk-sized: more than half the window
        assert demo.settings_race.stage_plot._font_pt >= 14
        labels = sr.stage_plot.label_texts()  # what a talk reads: the verdict under each name, the rounds under it all
        assert sr.stage_plot.caption.isVisible() and line.startswith(sr.stage_plot.caption.text().split(" · ")[0])
        assert labels[0].startswith("default (baseline)\nA/A ±")
        assert labels[1].split("\n")[:2] == ["O0", point.verdict_line] and point.verdict_line
    finally:
        demo.presentation_action.setChecked(False)
    # after presentation the trade-off stays where it was (the plot area: the dock is too short for it), at the
    # window's own font size again
    assert demo.settings_race.stage_card.isVisible() == sr.plot_area() != ui.plot_card.isVisible()
    assert sr.stage_plot.font_size() == 0


def test_show_in_the_plot_area_puts_the_trade_off_in_the_latency_plots_place(qtbot, window):
    """Where the Demo kit's dock cannot show the trade-off 240 px tall (issue 55: a strip of ~200 × 70 px at
    1280×720), a settings race opens it in the latency plot's place (Trade-off in the plot area, Ctrl+Alt+P: off
    brings the latency plot back, on again the trade-off); the next run brings the latency plot back."""
    demo, ui = window.demo, window.ui
    stage, plot_width = demo.settings_race.stage_card, ui.plot_card.width()
    race_settings(qtbot, window, ["default", "O0"])
    wait_done(qtbot, window)
    qtbot.waitUntil(lambda: stage.isVisible() and not ui.plot_card.isVisible())
    assert not demo.settings_race.place.fits() and demo.settings_race.plot_area()
    demo.settings_race.in_plot_area.trigger()  # off: the latency plot
    qtbot.waitUntil(lambda: not stage.isVisible() and ui.plot_card.isVisible())
    demo.settings_race.in_plot_area.trigger()  # Demo ▸ Trade-off in the plot area (Ctrl+Alt+P)
    qtbot.waitUntil(lambda: stage.isVisible() and not ui.plot_card.isVisible())
    assert stage.width() >= plot_width * 0.9  # the plot's room, not a sliver
    assert [p.name for p in demo.settings_race.stage_plot.points] == ["default", "O0"]
    window.ui.form.set_values({"mode": "jit-static"})
    window.run()
    qtbot.waitUntil(lambda: ui.plot_card.isVisible() and not stage.isVisible(), timeout=RUN_TIMEOUT_MS)
    wait_done(qtbot, window)
    assert ui.plot_card.width() >= plot_width * 0.9

