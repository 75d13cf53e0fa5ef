"""The Demo kit's settings checklist is readable in a 1280×720 window (issue 55: one name per line, it showed 3 of
its 22 settings): the names flow side by side, wrapping at the list's width, and the race's progress is written on its
bar rather than on a line of its own — while the latency plot keeps its drawing area (≥ 180 px: the dock is not
made taller)."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")


def whole_names(view) -> list[str]:
    """The names drawn whole inside the list's viewport, without scrolling."""
    rect = view.viewport().rect()
    return [item.text() for i in range(view.count())
            if (item := view.item(i)) is not None and rect.contains(view.visualItemRect(item))]


@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080)])
def test_the_checklist_shows_most_settings_and_the_plot_keeps_its_room(qtbot, make_window, gui_model, size):
    win = make_window(gui_model, autoload=False, size=size)
    demo = win.demo
    demo.demo_dock.raise_()
    demo.results.setCurrentWidget(demo.settings_race.page)
    view = demo.settings_race.controls.list
    qtbot.waitUntil(view.isVisible, timeout=2000)
    qtbot.wait(100)  # laid out
    shown = whole_names(view)
    assert len(shown) >= 9, shown  # three times the 3 of one name per line
    assert shown[:5] == ["default", "O0", "O1", "O2", "O3"]  # in the catalog's order, read left to right
    drawing = win.ui.plot.getPlotItem().getViewBox().sceneBoundingRect().height()
    assert drawing >= 180, drawing
    controls = demo.settings_race.controls
    assert controls.progress.isTextVisible() and not hasattr(controls, "progress_label")  # on the bar: no line of its own
