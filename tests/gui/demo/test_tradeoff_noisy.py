"""A noisy machine is said once on the trade-off plot (issue 55: "· noisy machine" ended every point's label): in
the exported slide's title and the stage's caption, never under a point's name; a quiet race says it nowhere."""

from __future__ import annotations

import pytest

from app.core.compile_settings.figures import SettingLane
from app.core.compile_settings.paired import attach, pair_fields
from app.core.verdict import RatioInterval
from app.core.verdict.words import pair_verdict
from app.gui.panels.demo.settings_summary import points_of, show_summary, summary_label
from widgets.demo.tradeoff_plot import NOISY, TITLE, TradeoffPlot


def _lanes(aa: float) -> list[SettingLane]:
    lanes = [SettingLane("default", "nothing", 200.0, 30.0, 500.0, 1.2, 5),
             SettingLane("O3", "optimization_level=O3", 200.0, 30.0, 900.0, 1.0, 5),
             SettingLane("O0", "optimization_level=O0", 200.0, 30.0, 300.0, 1.25, 5)]
    o3 = pair_verdict("O3", "default", RatioInterval(1.18, 1.12, 1.24, 12), aa, 0)
    o0 = pair_verdict("O0", "default", RatioInterval(0.96, 0.93, 0.99, 12), aa, 0)
    attach(lanes, {"baseline": "default", "pairs": {"O3": pair_fields(o3), "O0": pair_fields(o0)}, "rounds": 12,
                   "dropped": 0, "aa_noise": aa, "noisy": o3.noisy, "stopped_by": "budget", "elapsed_s": 4.0})
    return lanes


@pytest.mark.parametrize("aa", [4.2, 1.5])
def test_noisy_machine_is_said_once_not_under_every_point(qtbot, aa):
    lanes = _lanes(aa)
    noisy = aa > 3
    slide = TradeoffPlot(title=True)  # as the exports draw it
    stage = TradeoffPlot(title=False)  # presentation: the card's title above, the caption under it
    for plot in (slide, stage):
        qtbot.addWidget(plot)
        plot.set_points(points_of(lanes))
    labels = slide.label_texts()
    assert len(labels) == 3 and labels[0] == f"default (baseline)\nA/A ±{aa:.1f} %"
    assert labels[1].startswith("O3\n1.18× faster than default (95 % CI 1.12–1.24)")
    assert not any("noisy" in text for text in labels + stage.label_texts())  # no point repeats it
    assert slide.title_text() == TITLE + (NOISY if noisy else "")
    assert stage.title_text() == ""
    line = summary_label()
    qtbot.addWidget(line)
    show_summary(line, stage, lanes)
    assert stage.caption.text().count("noisy machine") == int(noisy)  # said once, under the stage's plot
