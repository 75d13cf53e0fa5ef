"""The Profile tab in the window: the Profile tab's figures agree with each other (the note on rows
above 100 % of the read bandwidth counts the rows the table shows; one "ops running" figure in the header and
the timeline's line), a clicked row moves the optimized-HLO view to its instruction's line, and the Source map
tab has one status label."""

from __future__ import annotations

import os
import re

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from conftest import run_and_wait  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QLabel  # noqa: E402

from app.core.profile.columns import ops_running, rows_over_bandwidth, timeline_ops_running  # noqa: E402


def _click_row(qtbot, table, index):
    view = table.table
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.visualItemRect(view.item(index, 0)).center())


def _over_count(summary: str) -> int:
    m = re.search(r"(\d+) rows? above 100 % of read BW", summary)
    return int(m.group(1)) if m else 0


def test_profile_figures_agree_and_a_clicked_row_moves_the_hlo_view(qtbot, window):
    run_and_wait(qtbot, window)
    wiring = window.profile
    tabs = window.ui.ir_tabs.tabs
    wiring.steps.setValue(3)
    wiring.request()
    qtbot.waitUntil(lambda: wiring.last is not None and not window.is_busy(), timeout=240_000)
    profile = wiring.last.profile

    # "N rows above 100 % of read BW" counts the rows the table shows, whatever the aggregation and filter.
    for by in ("line", "fusion", "op", "module"):
        wiring.by.setCurrentIndex(wiring.by.findData(by))
        shown = wiring.table.rows()
        assert _over_count(wiring.summary.text()) == len(rows_over_bandwidth(shown)) <= len(shown), by
    wiring.table.set_top_only(True)
    assert _over_count(wiring.summary.text()) == len(rows_over_bandwidth(wiring.table.rows())) <= 10
    wiring.table.set_top_only(False)

    # One "ops running" figure: the header's is the timeline's, with its denominator.
    assert ops_running(profile) in wiring.summary.text()
    assert wiring.timeline.summary.text().startswith(timeline_ops_running(profile))
    assert wiring.timeline.summary.text().count("%") == 1

    # A clicked row moves the optimized-HLO view to its instruction's line; the Profile tab stays in front.
    hlo = window.ui.ir_tabs.panels["hlo"].view
    profile_page = tabs.currentWidget()
    wiring.by.setCurrentIndex(wiring.by.findData("fusion"))
    index = next(i for i, r in enumerate(wiring.table.rows()) if r.get("hlo_line") and i > 0)
    row = wiring.table.rows()[index]
    _click_row(qtbot, wiring.table, index)
    assert hlo.textCursor().blockNumber() + 1 == row["hlo_line"]
    assert row["key"] in hlo.textCursor().block().text()
    assert tabs.currentWidget() is profile_page
    assert f"line {row['hlo_line']:,} of the optimized HLO" in window.status.text()
    # a source line's row: the line of its largest instruction
    wiring.by.setCurrentIndex(wiring.by.findData("line"))
    fusion_lines = {r["key"]: r["hlo_line"] for r in wiring.last.rows["fusion"]}
    index = next(i for i, r in enumerate(wiring.table.rows())
                 if fusion_lines.get(next(iter(r.get("instructions") or []), "")))
    row = wiring.table.rows()[index]
    _click_row(qtbot, wiring.table, index)
    assert hlo.textCursor().blockNumber() + 1 == fusion_lines[row["instructions"][0]]
    # double-click (Enter) on an instruction's row shows the HLO tab at its line
    wiring.by.setCurrentIndex(wiring.by.findData("fusion"))
    wiring.table.activate_row(0)
    first = wiring.table.rows()[0]
    assert tabs.currentWidget() is window.ui.ir_tabs.panels["hlo"]
    assert hlo.textCursor().blockNumber() + 1 == first["hlo_line"]

    # The Source map tab: one status label, the profile's status and the links in one text.
    tabs.setCurrentWidget(window.inspect.page)
    bar = window.inspect.bar
    labels = [bar.itemAt(i).widget() for i in range(bar.count()) if isinstance(bar.itemAt(i).widget(), QLabel)]
    assert labels == [window.inspect.link_label]
    assert window.inspect.status_text().startswith(window.profile.links.status.text())
    assert window.profile.links.status.text().startswith(("Measured", "Measured columns"))
