"""A profile laid on the window's other views (issue #14): after a run and a profile started from the Source
map tab, the source explorer has measured columns that add up to the share of the step covered by ops and
sort numerically; the optimized-HLO view tints the profiled instructions' lines; the top 10 lines are one
click away; a timeline bar selects its PyTorch line and jaxpr equations; another step hides the columns."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from conftest import run_and_wait  # noqa: E402
from PySide6.QtCore import QPointF, Qt
from PySide6.QtWidgets import QPushButton

from app.core.units import short_file
from widgets.source.source_explorer import ROLE_EQNS, SHARE_COL, US_COL


def _top_values(tree, col):
    return [tree.topLevelItem(i).data(col, Qt.ItemDataRole.UserRole) or 0.0 for i in range(tree.topLevelItemCount())]


def _profile_from_source_map_tab(qtbot, window):
    tabs = window.ui.ir_tabs
    titles = [tabs.tabs.tabText(i) for i in range(tabs.tabs.count())]
    tabs.tabs.setCurrentIndex(titles.index("Source map"))
    window.inspect.inspector.step.setCurrentText("decode")  # the button profiles the step shown
    window.profile.steps.setValue(2)
    button = window.findChild(QPushButton, "sourceMapProfileButton")
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert window.is_busy() and not button.isEnabled()
    qtbot.waitUntil(lambda: window.profile.last is not None and not window.is_busy(), timeout=240_000)
    assert button.isEnabled()
    status = window.status.text()
    assert status.startswith("Profiled 2 decode steps:") and "ms per step" in status, status
    return window.profile.last.profile


def test_profile_fills_the_explorer_tints_the_hlo_and_links_bars_to_source(qtbot, window):
    run_and_wait(qtbot, window)
    profile = _profile_from_source_map_tab(qtbot, window)
    links, inspector = window.profile.links, window.inspect.inspector
    explorer, tree = inspector.explorer, inspector.explorer.tree
    assert profile.step == "decode" and inspector.step.currentText() == "decode"

    # Measured columns: shown, and the top-level rows (modules + time on no line) add up to the ops' share.
    tabs = window.ui.ir_tabs
    tabs.tabs.setCurrentWidget(window.inspect.page)
    assert explorer.has_measure() and not tree.isColumnHidden(US_COL)
    assert links.status.text().startswith("Measured")
    shares = _top_values(tree, SHARE_COL)
    assert abs(sum(shares) - profile.attributed_share) < 1e-6
    shown = [float(tree.topLevelItem(i).text(SHARE_COL) or 0) for i in range(tree.topLevelItemCount())]
    assert abs(sum(shown) / 100 - profile.attributed_share) <= 0.0005 * len(shown) + 1e-9  # rounding only
    rest = [tree.topLevelItem(i) for i in range(tree.topLevelItemCount())
            if tree.topLevelItem(i).text(0).startswith("(time on no source line)")]
    assert len(rest) == 1

    # Sorting by µs/step is numeric: the largest first, the smallest first in ascending order.
    tree.sortByColumn(US_COL, Qt.SortOrder.AscendingOrder)
    values = _top_values(tree, US_COL)
    assert values == sorted(values)
    tree.sortByColumn(US_COL, Qt.SortOrder.DescendingOrder)
    values = _top_values(tree, US_COL)
    assert values == sorted(values, reverse=True) and values[0] > values[-1]

    # The optimized-HLO view tints the executed instructions' lines, the hottest the strongest.
    hlo = tabs.panels["hlo"]
    assert hlo.text() == profile.hlo_text
    tints = links.tints.tints()
    hottest = max(profile.rows, key=lambda r: r.share)
    assert set(tints) == {r.hlo_line for r in profile.rows if r.hlo_line}
    assert links.tints.alpha(hottest.hlo_line) == max(links.tints.alpha(line) for line in tints)
    assert "µs" in links.tints.label(hottest.hlo_line) and links.legend.isVisibleTo(hlo)

    # Top 10 lines, one click away: the menu lists PyTorch lines; picking one selects it in the explorer.
    menu = links.top_button.menu()
    menu.aboutToShow.emit()
    actions = menu.actions()
    assert 0 < len(actions) <= 10 and all(":" in a.data() and not a.data().startswith("<") for a in actions)
    actions[0].trigger()
    assert tabs.tabs.currentWidget() is window.inspect.page
    file, line = tree.currentItem().data(0, ROLE_EQNS)
    first_line = next(r["key"] for r in window.profile.last.rows["line"] if not r["key"].startswith("<"))
    assert f"{short_file(file)}:{line}" == actions[0].data() == first_line

    # A timeline bar: its HLO line, its PyTorch line in the explorer and its jaxpr equations highlighted.
    tabs.tabs.setCurrentWidget(window.profile.table.parentWidget().parentWidget())
    timeline = window.profile.timeline
    # The longest bar with a PyTorch line (a copy of a KV-cache input, "<input cache[k]>", can be longer on a
    # loaded machine and has no line to select).
    bar = max((b for b in timeline.bars() if b.get("source") and not b["source"].startswith("<")),
              key=lambda b: b["duration_us"])
    x, lane = timeline.bar_centre(bar["name"])
    scene = timeline.plot.getPlotItem().getViewBox().mapViewToScene(QPointF(x, lane))
    with qtbot.waitSignal(timeline.opClicked, timeout=2000):
        qtbot.mouseClick(timeline.plot.viewport(), Qt.MouseButton.LeftButton, pos=timeline.plot.mapFromScene(scene))
    view = hlo.view
    row = next(r for r in profile.rows if r.key == bar["name"])
    assert view.textCursor().blockNumber() + 1 == row.hlo_line
    item = tree.currentItem()
    while item.data(0, ROLE_EQNS) is None or isinstance(item.data(0, ROLE_EQNS), list):
        item = item.parent()
    file, line = item.data(0, ROLE_EQNS)
    assert f"{short_file(file)}:{line}" == bar["source"] == row.source
    assert window.inspect.linker.highlighters["jaxpr"].ranges()

    # Another step: the measured columns go, the status says which step the profile is of.
    inspector.step.setCurrentText("prefill")
    tabs.tabs.setCurrentWidget(window.inspect.page)
    assert not explorer.has_measure() and "decode step" in links.status.text()
    assert links.tints.tints() == {}  # the HLO view shows the prefill module now
