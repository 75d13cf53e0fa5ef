"""A window race ends with its steady-state phase (issue 54): paired rounds after the cold lanes, their verdicts in
the race summary and on the latency plot (presentation mode included), in a saved session that shows them again
when reopened, and Stop between blocks ends the phase at once. Real engine on the small built-in model."""

from __future__ import annotations

import json
import os
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from conftest import RUN_TIMEOUT_MS  # noqa: E402

from app.core.recording import load_all  # noqa: E402
from app.core.verdict.words import short_verdict  # noqa: E402

WINDOW_TOKENS = 4
MODES = ["torch", "jit-static"]


def start_race(qtbot, win, budget_s: float) -> None:
    win.demo.controls.set_modes(MODES)
    win.demo.controls.set_steady(True, budget_s)
    win.demo.race_checked()
    qtbot.waitUntil(lambda: win.is_busy(), timeout=5000)


def test_a_window_race_states_its_verdict_in_the_summary_on_the_plot_and_in_a_saved_session(
        qtbot, window, make_window, gui_model, tmp_path):
    steady_blocks: list = []
    window.session.events.steadyProgress.connect(steady_blocks.append)
    start_race(qtbot, window, budget_s=2.0)
    qtbot.waitUntil(lambda: not window.is_busy(), timeout=RUN_TIMEOUT_MS)

    doc = window.session.shown_verdicts()
    assert doc is not None and doc["rounds"] >= 2, doc
    assert doc["baseline"] == "torch" and [(p["mode"], p["against"]) for p in doc["pairs"]] == [("jit-static", "torch")]
    assert {b.label for b in steady_blocks} >= {"torch", "jit-static", "torch (A/A)"}  # progress named each mode
    sentence = doc["pairs"][0]["text"]
    summary = window.demo.verdicts.view
    said = short_verdict(doc["pairs"][0])  # "jit-static 2.41× faster than torch (95 % CI 2.30–2.52)"
    assert summary.isVisibleTo(window) and said in summary.plain_text() and sentence in summary.toolTip()
    assert "paired rounds" in summary.plain_text().splitlines()[-1]  # the rounds, A/A and dropped: once, below
    plot_line = window.ui.plot.verdict_text()
    assert "jit-static" in plot_line and "torch" in plot_line
    assert ("faster than" in plot_line) or ("no clear difference" in plot_line) or ("faster (" in plot_line)
    assert "steady state:" in window.status.text()
    assert window.demo.state()["steady_budget_s"] == 2.0  # the setting is remembered

    window.demo.presentation_action.setChecked(True)  # on stage, the plot still says it
    qtbot.wait(50)
    assert window.ui.plot.verdict_text() and window.ui.plot.isVisible()
    window.demo.presentation_action.setChecked(False)

    csv_path = tmp_path / "calls.csv"
    assert "verdicts: calls-verdicts.csv" in window.demo.export_records(csv_path)
    assert sentence in (tmp_path / "calls-verdicts.csv").read_text(encoding="utf-8")
    window.demo.export_records(tmp_path / "calls.json")
    meta = json.loads((tmp_path / "calls.json").read_text(encoding="utf-8"))["metadata"]
    assert meta["verdicts"][0]["pairs"][0]["text"] == sentence
    window.demo.export_report(tmp_path / "report.md")
    assert sentence in (tmp_path / "report.md").read_text(encoding="utf-8")

    path = tmp_path / "race.session"
    assert window.sessions.save(path) > 0
    (saved,) = load_all([path])
    assert [v["pairs"][0]["text"] for v in saved.verdicts] == [sentence]
    assert saved.verdicts[0]["environment"] and saved.verdicts[0]["race"] == window.session.runs[-1].race

    other = make_window(gui_model, autoload=False)
    try:
        assert other.sessions.open_paths([path])
        assert said in other.demo.verdicts.view.plain_text()
        assert other.ui.plot.verdict_text() == plot_line or "jit-static" in other.ui.plot.verdict_text()
        again = tmp_path / "again.session"
        assert other.sessions.save(again) > 0  # saved again from the reopened runs, it keeps them
        assert [v["pairs"][0]["text"] for v in load_all([again])[0].verdicts] == [sentence]
    finally:
        other.close()


def test_stop_during_the_steady_phase_ends_it_between_blocks(qtbot, window):
    start_race(qtbot, window, budget_s=120.0)
    qtbot.waitUntil(lambda: (p := window.session.steady_progress) is not None and p.round >= 1,
                    timeout=RUN_TIMEOUT_MS)
    assert "steady-state round" in window.ui.busy.text()
    assert "steady state · round" in window.demo.verdicts.view.plain_text()
    t0 = time.perf_counter()
    window.stop()
    qtbot.waitUntil(lambda: not window.is_busy(), timeout=20_000)
    assert time.perf_counter() - t0 < 5.0  # a block is ~0.1 s; the source maps after the race ~1 s
    doc = window.session.shown_verdicts()
    assert doc is not None and doc["stopped_by"] == "stopped"
    assert doc["rounds"] + doc["dropped"] >= 1  # the round that ended before Stop (kept, or dropped as preempted)
    assert window.demo.verdicts.view.isVisibleTo(window)


def _doc(noisy: bool = False) -> dict:
    pairs = [{"mode": "jit-static", "against": "torch", "ratio": 2.41, "ci_low": 2.30, "ci_high": 2.52},
             {"mode": "jit-loop", "against": "torch", "ratio": 2.47, "ci_low": 2.35, "ci_high": 2.60},
             {"mode": "jit-loop", "against": "jit-static", "ratio": 1.02, "ci_low": 0.98, "ci_high": 1.06}]
    return {"pairs": pairs, "baseline": "torch", "rounds": 12, "aa_noise": 4.2 if noisy else 1.8, "noisy": noisy}


def test_the_plot_draws_the_longest_verdict_wording_that_fits_and_says_noisy_machine(qtbot):
    from app.core.verdict.words import headline
    from widgets.plot.latency_plot import LatencyPlot

    wordings = headline(_doc())
    assert wordings[0].startswith("jit-static 2.41× faster than torch (95 % CI 2.30–2.52) · ")
    assert "jit-loop vs jit-static: no clear difference (0.98–1.06)" in wordings[0]
    assert wordings[-2:] == ["jit-loop 2.47× faster than torch (95 % CI 2.35–2.60)",  # the fastest, alone
                             "jit-loop 2.47× faster than torch (2.35–2.60)"]  # and without "95 % CI"
    noisy = headline(_doc(noisy=True))
    assert all(w.endswith(" · noisy machine (A/A ±4.2 %)") for w in noisy[:-1]) and noisy[-1].endswith(" · noisy machine")
    plot = LatencyPlot()
    qtbot.addWidget(plot)
    plot.resize(1800, 500)
    plot.show()
    plot.set_verdict(wordings)
    qtbot.wait(20)
    assert plot.verdict_text() == wordings[0]  # wide: every pair
    plot.resize(420, 400)
    qtbot.waitUntil(lambda: plot.verdict_text() != wordings[0], timeout=2000)
    shown = plot.verdict_text()  # a shorter wording, on one line or packed at its " · " onto two
    assert any(shown == w.replace(" · ", " ") or shown == w for w in wordings[1:]) or shown.startswith("vs torch"), shown
    plot.set_verdict([])
    assert plot.verdict_text() == ""
