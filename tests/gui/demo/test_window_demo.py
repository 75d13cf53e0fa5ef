"""Demo kit in the window (issue #6): mode race, compile log, caches and Replay cold start, presentation
mode, exports. Real engine on the built-in model (a tiny saved Llama if its files are missing)."""

from __future__ import annotations

import csv
import json
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from conftest import RUN_TIMEOUT_MS  # noqa: E402
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QFileDialog, QPushButton
from qt_helpers import synthetic_run  # noqa: E402

from app.core.units import ms  # noqa: E402

WINDOW_TOKENS = 4  # jit-dynamic compiles every step: each token more is one more compile of the race






def wait_idle(qtbot, win) -> None:
    qtbot.waitUntil(lambda: win.is_busy(), timeout=5000)
    qtbot.waitUntil(lambda: not win.is_busy(), timeout=RUN_TIMEOUT_MS)


def race(qtbot, win, modes) -> None:
    win.demo.controls.set_modes(modes)
    win.demo.controls.set_steady(False)  # the cold lanes only (the steady phase: test_steady_verdicts_window.py)
    qtbot.mouseClick(win.findChild(QPushButton, "raceButton"), Qt.MouseButton.LeftButton)
    wait_idle(qtbot, win)


def test_race_gives_same_tokens_one_curve_per_mode_and_the_compile_story(qtbot, window):
    modes = ["torch", "jit-dynamic", "jit-static"]
    race(qtbot, window, modes)
    demo = window.demo
    assert [run.mode for run in demo.runs] == modes
    assert all(run.finished is not None for run in demo.runs)
    assert len({tuple(run.finished.token_ids) for run in demo.runs}) == 1  # identical greedy tokens
    plot = window.ui.plot
    assert plot.run_count() == 3 and len(set(plot.run_colours())) == 3
    assert [label.split(" · ")[0] for label in plot.run_labels()] == modes
    model = window.session.loaded.label
    assert all(f" · {model}" in label for label in plot.run_labels()), plot.run_labels()  # issue 29 flaw 14
    assert [len(plot.points(i)) for i in range(3)] == [len(run.records) for run in demo.runs]
    rows = demo.log.rows()
    by_run = {mode: [r for r in rows if r["run"].endswith(mode)] for mode in modes}
    assert not by_run["torch"]
    assert len(by_run["jit-dynamic"]) == len(demo.runs[1].records)  # a recompile at every step
    assert len(by_run["jit-static"]) == 2  # prefill + decode, then every step reuses them
    # the first compile of this window's engine: a first call (the race's clearing dropped nothing of it)
    assert by_run["jit-static"][0]["why it compiled"] == "first call"
    assert any("new input shape" in r["why it compiled"] for r in by_run["jit-dynamic"])
    assert all(r["why it compiled"] != "–" for r in rows)
    assert demo.table.modes() == modes
    assert demo.table.text("n_compiles", "jit-static") == "2"
    steady = {run.mode: run.finished.summary.steady_decode_ms for run in demo.runs}
    assert demo.table.text("speedup_vs_torch", "jit-static") == f"{steady['torch'] / steady['jit-static']:.2f}×"
    assert demo.table.text("ttft_ms", "jit-static") == ms(demo.runs[-1].finished.summary.ttft_ms)  # with its unit
    assert 0 < demo.phases.bar_count() <= 6
    assert window.status.text().startswith("Race done")
    assert window.findChild(QPushButton, "raceButton").isEnabled()


def test_stop_ends_the_race_within_a_mode(qtbot, window, monkeypatch):
    window.ui.form.set_values({"max_new_tokens": 200})
    monkeypatch.setattr(window.compute.worker.engine, "eos_ids", [])
    window.demo.controls.set_modes(["torch", "jit-static"])
    window.demo.controls.set_steady(False)
    window.findChild(QPushButton, "raceButton").click()
    qtbot.waitUntil(lambda: len(window.ui.tokens.tokens()) >= 3, timeout=RUN_TIMEOUT_MS)
    window.stop()
    qtbot.waitUntil(lambda: not window.is_busy(), timeout=10_000)
    assert [run.mode for run in window.demo.runs] == ["torch"]  # the next lane never started
    assert window.demo.runs[0].finished.reason == "stopped"


def test_persistent_cache_replay_cold_start_is_served_from_disk(qtbot, window, tmp_path):
    from app.core.compile_cache.xla import set_persistent_cache

    demo, cache_dir = window.demo, tmp_path / "jax-cache"
    seen = []
    window.session.events.cache.connect(seen.append)
    try:
        demo.cache.set_directory(str(cache_dir))
        demo.cache.toggle.setChecked(True)
        qtbot.waitUntil(lambda: bool(seen) and seen[-1].enabled, timeout=10_000)
        window.ui.form.set_values({"mode": "jit-static", "max_new_tokens": 4})
        window.findChild(QPushButton, "runButton").click()
        wait_idle(qtbot, window)
        first = [r for r in demo.runs[-1].records if r.compiled]
        assert not any(r.persistent_cache_hit for r in first)  # this process compiled it first: misses
        qtbot.waitUntil(lambda: not demo.cache.size_label.text().startswith(("0 ", "–")), timeout=10_000)

        demo.controls.replay_button.click()  # clear in-memory caches, rerun: compiles again, from disk
        wait_idle(qtbot, window)
        replay = [r for r in demo.runs[-1].records if r.compiled]
        assert len(replay) == 2 and all(r.persistent_cache_hit for r in replay)
        assert replay[0].compile_reason == "first call after caches were cleared"
        assert [r["disk cache"] for r in demo.log.rows()[-2:]] == ["◆ hit", "◆ hit"]
        disk_points = [p for p in window.ui.plot.points() if p.compiled and p.record.persistent_cache_hit]
        assert len(disk_points) == 2
        assert all(call.disk_hit for call in demo.phases.calls())

        demo.cache.clear_disk.click()
        qtbot.waitUntil(lambda: "freed" in demo.last_cache_message, timeout=10_000)
        assert "0 B freed" not in demo.last_cache_message and "freed" in window.status.text()
        assert demo.cache.size_label.text().startswith("0 entries")
        demo.cache.toggle.setChecked(False)
        qtbot.waitUntil(lambda: not seen[-1].enabled, timeout=10_000)
    finally:
        window.close()
        set_persistent_cache(None)  # the compute thread is gone: make sure it is off for other tests


def test_a_window_opened_with_the_cache_off_turns_both_compilers_caches_off(qtbot, window):
    """Off means off for Inductor too: without the request Inductor would use its default disk cache. (The
    service applies it on the compute thread, where torch's compiler config lives: it is thread-local.)"""
    assert not window.demo.cache.is_enabled()
    with qtbot.waitSignal(window.session.events.cache, timeout=10_000) as blocker:
        window.demo.restore({})  # what a window does at start-up with the toggle off
    info = blocker.args[0]
    assert info.enabled is False and info.message.startswith("Persistent caches off")


def test_exports_write_plot_records_and_report(qtbot, window, tmp_path, monkeypatch):
    race(qtbot, window, ["torch", "jit-static"])
    targets = {
        "Plot as PNG…": tmp_path / "plot.png",
        "Plot as SVG…": tmp_path / "plot.svg",
        "Call records as CSV…": tmp_path / "calls.csv",
        "Call records as JSON…": tmp_path / "calls.json",
        "Run report (Markdown)…": tmp_path / "report.md",
    }
    for text, path in targets.items():
        monkeypatch.setattr(
            QFileDialog, "getSaveFileName", staticmethod(lambda *a, p=path, **k: (str(p), ""))
        )
        window.demo.export_actions[text].trigger()
        assert path.is_file() and path.stat().st_size > 0, text
    assert targets["Plot as PNG…"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<svg" in targets["Plot as SVG…"].read_text()
    with open(targets["Call records as CSV…"], newline="") as f:
        rows = list(csv.DictReader(f))
    assert {r["mode"] for r in rows} == {"torch", "jit-static"}
    assert sum(r["compiled"] == "True" for r in rows) == 2
    data = json.loads(targets["Call records as JSON…"].read_text())
    runs, meta = data["runs"], data["metadata"]
    assert len(runs) == 2 and sum(len(v) for v in runs.values()) == len(rows)
    assert [r["mode"] for r in meta["runs"]] == ["torch", "jit-static"] and meta["mesh"] == "1 device"
    assert window.session.loaded.label in meta["model"] and meta["dtype"] == "float32"
    assert meta["machine"]["cpu_count"] == os.cpu_count() and meta["machine"]["packages"]["jax"]
    report = targets["Run report (Markdown)…"].read_text()
    assert "| torch |" in report and "| jit-static |" in report and "![report](report.png)" in report
    assert "| first call |" in report  # the window's first compile
    assert (tmp_path / "report.png").stat().st_size > 0
    assert "Exported" in window.status.text()


def test_presentation_mode_scales_fonts_hides_panels_and_restores(
    qtbot,
    make_window,
    gui_model,
):
    win = make_window(gui_model, autoload=False)
    try:
        ui, app = win.ui, QApplication.instance()
        for r in synthetic_run(12):
            ui.plot.add_record(r)
        ui.plot.redraw()
        secondary = [
            ui.form.parentWidget(),
            ui.model_picker.parentWidget(),
            ui.ir_tabs.parentWidget(),
            win.demo.demo_dock,
            win.demo.why_dock,
        ]
        kept = [ui.prompt, ui.tokens, ui.plot]
        assert all(w.isVisible() for w in secondary + kept)
        base_app, base_tokens = app.font().pointSizeF(), ui.tokens.font().pointSizeF()

        win.activateWindow()
        qtbot.keyClick(
            win, Qt.Key.Key_P, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
        )
        if not win.demo.presentation.is_on():  # offscreen platforms may not route shortcuts
            win.demo.presentation_action.trigger()
        assert win.demo.presentation.is_on() and win.demo.presentation_action.isChecked()
        assert app.font().pointSizeF() >= 1.6 * base_app
        assert ui.tokens.font().pointSizeF() >= 1.6 * base_tokens
        assert ui.prompt.edit.font().pointSizeF() >= 1.6 * base_app
        tick = ui.plot.getPlotItem().getAxis("left").style["tickFont"]
        assert tick is not None and tick.pointSizeF() >= 1.6 * base_app
        assert ui.plot.font_scale() >= 1.6
        assert not any(w.isVisible() for w in secondary)
        assert all(w.isVisible() for w in kept)

        win.demo.presentation_action.trigger()  # off again: everything back
        assert not win.demo.presentation.is_on()
        assert app.font().pointSizeF() == base_app and ui.tokens.font().pointSizeF() == base_tokens
        assert ui.plot.font_scale() == 1.0
        assert all(w.isVisible() for w in secondary + kept)
    finally:
        win.close()


def test_demo_widgets_take_plain_data(qtbot):
    from app.core.report.columns import COMPILE_COLUMNS, RACE_COLUMNS, compile_row
    from widgets.demo.compile_log import CompileLog
    from widgets.demo.phase_bars import PhaseBars, PhaseCall
    from widgets.demo.race_table import RaceTable
    from widgets.plot.latency_plot import describe

    records = synthetic_run(5)
    log = CompileLog(COMPILE_COLUMNS)
    qtbot.addWidget(log)
    for r in records:
        if r.compiled:
            log.add_row(compile_row("1 jit-static", r))
    assert log.rowCount() == 2 and log.rows()[1]["call"] == "1"
    assert log.rows()[0]["why it compiled"] == "first call" and log.rows()[0]["disk cache"] == "miss"
    tip = describe(records[0], "run 1 · jit-static")
    assert "why it compiled:</b> first call" in tip and "run 1 · jit-static" in tip
    bars = PhaseBars()
    qtbot.addWidget(bars)
    bars.set_calls([PhaseCall(f"call {i}", 200, 40, 700, 5, i == 1) for i in range(30)])
    assert bars.bar_count() == 12 and "compile" in bars.legend_text()
    table = RaceTable(RACE_COLUMNS[1:])
    qtbot.addWidget(table)
    row = {
        "mode": "jit-static",
        "ttft_ms": 900.0,
        "compile_ms": 1500.0,
        "steady_ms_per_token": 1.0,
        "decode_tokens_per_s": 1000.0,
        "total_ms": 2000.0,
        "n_compiles": 2,
        "n_tokens": 16,
        "reason": "max_new_tokens",
        "speedup_vs_torch": None,
    }
    table.set_rows([row, {**row, "mode": "torch", "steady_ms_per_token": 2.0, "n_compiles": 0}])
    assert (
        table.text("steady_ms_per_token", "jit-static") == "1.00 ms/token"
        and table.text("speedup_vs_torch", "torch") == "–"
    )
