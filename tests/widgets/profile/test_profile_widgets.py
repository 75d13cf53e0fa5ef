"""The profile views on plain data: the step timeline (bars per thread, gaps summed, colour toggle, click →
instruction name, PNG/SVG export) and the profile table (sorting by µs, top-10 filter, activation, export)."""

from __future__ import annotations

import csv
import io
import json

import pytest
from PySide6.QtCore import QPointF, Qt

from app.core.profile.columns import BY_TITLES, PROFILE_COLUMNS
from widgets.profile.profile_table import TOP_N, ProfileTable
from widgets.profile.timeline import GAP_LANE, StepTimeline

LINE_A = "transformers/models/llama/modeling_llama.py:164"
LINE_B = "transformers/models/llama/modeling_llama.py:243"
TIMELINE = {
    "step_us": 1000.0,
    "threads": ["XLAPjRtCpuClient 1", "XLAEigen 1"],
    "bars": [
        {"thread": "XLAPjRtCpuClient 1", "start_us": 100.0, "duration_us": 50.0, "name": "copy.12",
         "kind": "copy", "source": "<input cache[0]>", "module": ""},
        {"thread": "XLAEigen 1", "start_us": 200.0, "duration_us": 300.0, "name": "dot.19", "kind": "dot",
         "source": LINE_A, "module": "model.layers.0.mlp.gate_proj"},
        {"thread": "XLAEigen 1", "start_us": 520.0, "duration_us": 80.0, "name": "ynn_fusion.3",
         "kind": "__ynn_fusion", "source": LINE_B, "module": "model.layers.0.self_attn"},
    ],
    "gaps": [[0.0, 100.0], [150.0, 50.0], [500.0, 20.0], [600.0, 400.0]],
}


def _row(key: str, us: float, **extra) -> dict:
    return {"key": key, "us_per_step": us, "wall_us_per_step": us, "share": us / 1000.0, "gbs": us / 10,
            "bandwidth_share": us / 500, "gflops": 1.0, "calls_per_step": 2.0, "kind": "dot",
            "source": key, "module": "model", **extra}


@pytest.fixture
def timeline(qtbot):
    view = StepTimeline()
    qtbot.addWidget(view)
    view.resize(900, 300)
    view.show()
    view.set_timeline(TIMELINE)
    qtbot.waitExposed(view)
    return view


def _viewport_point(view: StepTimeline, x_us: float, lane: int):
    box = view.plot.getPlotItem().getViewBox()
    scene = box.mapViewToScene(QPointF(x_us, lane))
    return view.plot.mapFromScene(scene)


def test_timeline_draws_bars_per_thread_and_sums_the_gaps(timeline):
    assert timeline.bar_count() == 3
    assert timeline.lanes() == ["XLAPjRtCpuClient 1", "XLAEigen 1", GAP_LANE]
    assert timeline.gap_total_us() == pytest.approx(570.0)
    text = timeline.summary.text()
    assert "0.57 ms (57%)" in text and "0.43 ms (43%)" in text and "4 gaps" in text and text.startswith("median step 1.00 ms")
    assert timeline.bar_at(350.0, 1)["name"] == "dot.19"
    assert timeline.bar_at(350.0, 0) is None  # nothing on the client thread then
    assert timeline.bar_at(120.0, 0)["name"] == "copy.12"


def test_timeline_colours_by_kind_or_by_source_line(timeline):
    assert {label for label, _ in timeline.legend_entries} == {"copy", "dot", "__ynn_fusion"}
    timeline.set_colour_by("source")
    labels = [label for label, _ in timeline.legend_entries]
    assert set(labels) == {LINE_A, LINE_B, "<input cache[0]>"}
    assert labels[0] == LINE_A  # the line with the most time gets the first colour
    with pytest.raises(ValueError):
        timeline.set_colour_by("thread")


def test_clicking_a_bar_emits_its_instruction_name(qtbot, timeline):
    x, lane = timeline.bar_centre("dot.19")
    pos = _viewport_point(timeline, x, lane)
    with qtbot.waitSignal(timeline.opClicked, timeout=2000) as blocker:
        qtbot.mouseClick(timeline.plot.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert blocker.args == ["dot.19"]
    x, lane = timeline.bar_centre("copy.12")
    with qtbot.waitSignal(timeline.opClicked, timeout=2000) as blocker:
        qtbot.mouseClick(timeline.plot.viewport(), Qt.MouseButton.LeftButton, pos=_viewport_point(timeline, x, lane))
    assert blocker.args == ["copy.12"]


def test_hovering_a_bar_describes_the_op(qtbot, timeline):
    x, lane = timeline.bar_centre("ynn_fusion.3")
    timeline.hover_at(timeline.plot.getPlotItem().getViewBox().mapViewToScene(QPointF(x, lane)))
    assert "ynn_fusion.3" in timeline.hover.text() and LINE_B in timeline.hover.text()
    timeline.hover_at(timeline.plot.getPlotItem().getViewBox().mapViewToScene(QPointF(700.0, 1)))
    assert timeline.hover.text() == ""


def test_timeline_exports_png_and_svg(timeline, tmp_path):
    png = timeline.export(tmp_path / "step.png")
    svg = timeline.export(tmp_path / "step.svg")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in svg.read_bytes()[:2000]


@pytest.fixture
def table(qtbot):
    view = ProfileTable(PROFILE_COLUMNS, BY_TITLES)
    qtbot.addWidget(view)
    rows = [_row(f"file.py:{i}", us) for i, us in enumerate([5.0, 120.0, 30.0, 7.5, 60.0, 1.0, 300.0, 2.0,
                                                                  45.0, 9.0, 11.0, 80.0])]
    rows[3]["gbs"] = None  # a row without a rate sorts below every number
    view.set_rows(rows, by="line")
    return view


def test_table_sorts_by_microseconds(table):
    shown = [r["us_per_step"] for r in table.rows()]
    assert shown == sorted(shown, reverse=True) and shown[0] == 300.0
    assert table.table.item(0, 1).text() == "300.0"
    table.sort_by("us_per_step", descending=False)
    assert [r["us_per_step"] for r in table.rows()][:3] == [1.0, 2.0, 5.0]
    table.sort_by("gbs", descending=False)
    assert table.rows()[0]["gbs"] is None
    assert table.table.horizontalHeaderItem(0).text() == "source line"


def test_top_ten_filter_keeps_the_rows_with_most_time(table):
    assert table.table.rowCount() == 12
    table.set_top_only(True)
    shown = sorted(r["us_per_step"] for r in table.rows())
    assert len(shown) == TOP_N and shown[0] == 5.0  # 1.0 and 2.0 are gone
    assert table.count.text() == "10 of 12 rows"
    table.set_top_only(False)
    assert table.table.rowCount() == 12


def test_activating_a_row_emits_its_dict(qtbot, table):
    with qtbot.waitSignal(table.rowActivated, timeout=2000) as blocker:
        table.activate_row(1)
    assert blocker.args[0]["key"] == table.rows()[1]["key"]
    assert blocker.args[0]["us_per_step"] == 120.0


def test_table_export_helpers(table, tmp_path):
    parsed = list(csv.DictReader(io.StringIO(table.csv_text())))
    assert len(parsed) == 12 and float(parsed[0]["us_per_step"]) == 5.0 and parsed[3]["gbs"] == ""
    table.set_top_only(True)
    assert len(json.loads(table.json_text(shown_only=True))) == TOP_N
    path = table.export(tmp_path / "rows.json")
    assert json.loads(path.read_text())[6]["us_per_step"] == 300.0


def test_rows_above_the_read_bandwidth_are_explained():
    """A row over 100 % of the read bandwidth gets a note (cache hits), and the column's header says why."""
    from app.core.profile.columns import PROFILE_COLUMNS, bandwidth_note

    rows = [{"bandwidth_share": 1.085}, {"bandwidth_share": 0.4}, {"bandwidth_share": None}]
    note = bandwidth_note(rows, 33.6)
    assert note.startswith("1 row above 100 % of read BW (up to 108%)") and "CPU caches" in note
    assert bandwidth_note(rows[1:], 33.6) == ""
    assert "caches" in next(c.help for c in PROFILE_COLUMNS if c.key == "bandwidth_share")


def test_profile_table_headers_carry_each_columns_meaning(qtbot):
    from app.core.profile.columns import BY_TITLES, PROFILE_COLUMNS

    table = ProfileTable(PROFILE_COLUMNS, BY_TITLES)
    qtbot.addWidget(table)
    col = [c.key for c in PROFILE_COLUMNS].index("bandwidth_share")
    assert "caches" in table.table.horizontalHeaderItem(col).toolTip()
