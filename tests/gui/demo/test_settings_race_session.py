"""A settings race travels in session files in the window too (issue 40): File ▸ Save session keeps the newest
race beside the runs, opening the file shows its trade-off on the Demo kit (Compare passes… offers nothing for a
reopened race: its compiled step is not there), and a file `tradeoff --save-session` wrote (a race, no run) opens
instead of being refused as holding no runs. Real engine on the built-in pydoc-llama."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from conftest import LOAD_TIMEOUT_MS  # noqa: E402
from test_settings_race_window import race_settings, wait_done  # noqa: E402

from app.core.compile_settings.figures import SettingLane  # noqa: E402
from app.core.compile_settings.paired import attach, pair_fields  # noqa: E402
from app.core.compile_settings.saved import race_document  # noqa: E402
from app.core.recording import SessionFile  # noqa: E402
from app.core.verdict import RatioInterval  # noqa: E402
from app.core.verdict.words import pair_verdict  # noqa: E402

WINDOW_TOKENS = 6


def _opened(qtbot, win, path) -> None:
    assert win.sessions.open_paths([str(path)], background=True)
    qtbot.waitUntil(lambda: not win.is_busy() and bool(win.demo.settings_race.plot.points), timeout=LOAD_TIMEOUT_MS)


def test_a_saved_session_keeps_the_race_and_reopens_its_trade_off(qtbot, window, make_window, gui_model, tmp_path):
    race_settings(qtbot, window, ["default", "O0"])
    wait_done(qtbot, window)
    window.ui.model_picker.set_current_model("no-such/model")  # picked after the race (issue 55): not what ran
    path = tmp_path / "race.session"
    assert window.sessions.save(path) > 0
    saved = SessionFile.load(path)
    assert len(saved.runs) == 2 and len(saved.settings_races) == 1
    race = saved.settings_races[0]
    assert [lane["name"] for lane in race["lanes"]] == ["default", "O0"] and race["step"] == "decode"
    assert "pydoc-llama" in race["title"] and "no-such" not in race["title"]  # titled by the model that ran

    other = make_window(gui_model, autoload=False)
    _opened(qtbot, other, path)
    sr = other.demo.settings_race
    assert [p.name for p in sr.plot.points] == ["default", "O0"] and sr.plot.points[0].baseline
    assert [r.label for r in other.session.runs] == ["run 1 · default", "run 2 · O0"]  # lanes keep their settings
    assert sr.picker.names() == [] and "reopened from race.session" in sr.picker.message_text()
    assert "RACE.SESSION" in sr.stage_title.text()
    assert sr.shown.text().startswith("points: model ") and sr.shown.text().endswith("reopened from race.session")
    assert other.demo.results.currentIndex() == 1  # the Demo kit shows the reopened trade-off
    assert sr.verdict_line.text().startswith("vs baseline: one pass per lane, no 95 % CI")  # raced without rounds
    other.close()


def test_a_race_only_file_opens(qtbot, make_window, gui_model, tmp_path):
    lanes = [SettingLane("default", "nothing", 200.0, 30.0, 500.0, 1.2, 5),
             SettingLane("O3", "optimization_level=O3", 200.0, 30.0, 900.0, 1.0, 5)]
    verdict = pair_verdict("O3", "default", RatioInterval(1.18, 1.12, 1.24, 12), 1.5, 1)
    attach(lanes, {"baseline": "default", "pairs": {"O3": pair_fields(verdict)}, "rounds": 12, "dropped": 1,
                   "aa_noise": 1.5, "noisy": False, "stopped_by": "precise", "elapsed_s": 4.0})
    path = tmp_path / "tradeoff.session"
    SessionFile(settings_races=[race_document("model pydoc-llama | decode", "decode", lanes)]).save(path)
    win = make_window(gui_model, autoload=False)
    _opened(qtbot, win, path)
    assert [p.name for p in win.demo.settings_race.plot.points] == ["default", "O3"]
    assert win.demo.results.currentIndex() == 1 and win.demo.settings_race.plot_area()  # shown where the eye is
    assert "settings race of 2 settings" in win.status.text() and "holds no runs" not in win.status.text()
    sr = win.demo.settings_race  # its paired verdicts came back with it: under the plot and under O3's name
    assert sr.verdict_line.text() == ("vs default, 12 paired rounds (1 dropped), A/A ±1.5 %: "
                                      "O3 1.18× faster than default (95 % CI 1.12–1.24)")
    assert "O3 is 1.18× faster than default (95 % CI 1.12–1.24; 12 paired rounds" in sr.verdict_line.toolTip()
    assert sr.stage_plot.caption.text() == "vs default, 12 paired rounds (1 dropped), A/A ±1.5 %"  # under it all
    base_label, o3_label = sr.stage_plot.label_texts()
    assert base_label == "default (baseline)\nA/A ±1.5 %"
    assert o3_label.startswith("O3\n1.18× faster than default (95 % CI 1.12–1.24)\nO3 pays for its extra 400 ms")
    win.close()
