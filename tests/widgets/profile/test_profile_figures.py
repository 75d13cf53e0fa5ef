"""The profile's figures in its widgets (offscreen): the timeline's line shows the profile's own "ops running"
figure, the note on rows above the read bandwidth counts the rows it is given, and a selected profile row is
signalled (a refill is not)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from types import SimpleNamespace  # noqa: E402

from PySide6.QtCore import Qt  # noqa: E402

from app.core.profile.columns import BY_TITLES, PROFILE_COLUMNS, bandwidth_note, profile_summary  # noqa: E402

TIMELINE = {"step_us": 1000.0, "threads": ["XLAEigen 1"],
            "bars": [{"thread": "XLAEigen 1", "start_us": 100.0, "duration_us": 800.0, "name": "dot.1",
                      "kind": "dot", "source": "m.py:1"}],
            "gaps": [[0.0, 100.0], [900.0, 100.0]]}


def _profile(**kw):
    base = dict(step="decode", step_ms=1.7, n_steps=5, attributed_share=0.45, idle_share=0.55, host_share=0.52,
                between_ops_share=0.03, bound_ms=None, bytes_per_step=0.0, bandwidth_gbs=22.6)
    return SimpleNamespace(**{**base, **kw})


def test_one_ops_running_figure_for_the_header_and_the_timeline(qtbot):
    """The header's figure (over all steps) is the timeline's: the drawn median step (80 % busy here) gives
    no second percentage."""
    from app.core.profile.columns import ops_running, timeline_ops_running
    from widgets.profile.timeline import StepTimeline

    p = _profile()
    view = StepTimeline()
    qtbot.addWidget(view)
    view.set_timeline(TIMELINE, timeline_ops_running(p))
    text = view.summary.text()
    assert ops_running(p) == "ops running 45%" and ops_running(p) in profile_summary(p)
    assert text.startswith("ops running 45% of the wall time of the 5 steps"), text
    assert "80%" not in text and "%" not in text.split("steps", 1)[1], text  # no figure of the drawn step in %
    assert "1 op" in text and "1 ops" not in text and "2 gaps" in text


def test_rows_above_the_read_bandwidth_are_counted_over_the_rows_given():
    from app.core.profile.columns import rows_over_bandwidth

    rows = [{"bandwidth_share": 1.2}, {"bandwidth_share": 0.9}, {"bandwidth_share": 2.0}]
    assert rows_over_bandwidth(rows) == [rows[0], rows[2]]
    assert bandwidth_note(rows, 22.6).startswith("2 rows above 100 % of read BW (up to 200%)")


def test_a_selected_profile_row_is_signalled_a_refill_is_not(qtbot):
    from widgets.profile.profile_table import ProfileTable

    table = ProfileTable(PROFILE_COLUMNS, BY_TITLES)
    qtbot.addWidget(table)
    table.resize(900, 300)
    table.show()
    rows = [{"key": f"dot.{i}", "us_per_step": 10.0 - i, "hlo_line": 5 + i} for i in range(4)]
    with qtbot.assertNotEmitted(table.rowSelected):
        table.set_rows(rows, "fusion")
    view = table.table
    with qtbot.waitSignal(table.rowSelected, timeout=2000) as blocker:
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.visualItemRect(view.item(2, 0)).center())
    assert blocker.args[0]["key"] == "dot.2"
    with qtbot.assertNotEmitted(table.rowSelected):
        table.set_top_only(True)
