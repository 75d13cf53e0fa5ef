"""The window's layout at 1280×720 and 1920×1080, normal and presentation mode (issue #11): nothing below its
minimum size, the plot on at least half the window when presenting, legends clear of the data, presentation
off restores every font and panel, Reset layout, the arrangement remembered."""

from __future__ import annotations

import math
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from conftest import RUN_TIMEOUT_MS  # noqa: E402
from PySide6.QtCore import QPointF  # noqa: E402
from PySide6.QtWidgets import (  # noqa: E402
    QAbstractSpinBox,
    QApplication,
    QDockWidget,
    QHeaderView,
    QPushButton,
    QSplitter,
    QTabBar,
    QWidget,
)
from qt_helpers import call_record, synthetic_run  # noqa: E402

SIZES = [(1280, 720), (1920, 1080)]
LANES = {  # mode -> wall ms of its calls (a race drawn without running it)
    "torch": lambda i: 30.0 if i == 0 else 4.0 + i % 3,
    "torchax-eager": lambda i: 700.0 + 3 * i,
    "jit-dynamic": lambda i: 900.0 + 5 * i,
    "jit-static": lambda i: 1000.0 if i < 2 else 9.5,
}


def settle(qtbot) -> None:
    for _ in range(3):
        QApplication.processEvents()
    qtbot.wait(10)


def draw_race(win) -> None:
    """Four lanes on the plot (as a mode race draws them): overlapping lines, one marker per mode."""
    from app.gui.menus import MODE_COLOURS, MODE_SYMBOLS

    plot = win.ui.plot
    for mode, wall in LANES.items():
        plot.start_run(f"{mode} · 1 device", colour=MODE_COLOURS[mode], fade=False, symbol=MODE_SYMBOLS[mode])
        for i in range(9):
            compiled = mode == "jit-dynamic" or (mode == "jit-static" and i < 2)
            plot.add_record(call_record(i, "prefill" if i == 0 else "decode", wall(i), compiled))
        plot.redraw()
    plot.redraw()


def smart_minimum(w: QWidget):
    """The size a layout never goes below: the minimum size hint bounded by the maximum size, unless the
    widget sets an explicit minimum (Qt's ``qSmartMinSize``)."""
    hint = w.minimumSizeHint()
    return hint.expandedTo(w.minimumSize()).boundedTo(w.maximumSize())


def squashed(win) -> list[str]:
    """Every visible widget drawn smaller than its minimum size (Qt-internal parts of spin boxes, tab bars'
    scroll buttons and header views excepted)."""
    bad = []
    for w in win.findChildren(QWidget):
        if not w.isVisible() or w.isWindow() or isinstance(w, QHeaderView):
            continue
        if isinstance(w.parentWidget(), (QAbstractSpinBox, QTabBar)):
            continue
        hint = smart_minimum(w)
        if not hint.isValid():
            continue
        if w.width() < hint.width() or w.height() < hint.height():
            bad.append(f"{type(w).__name__}#{w.objectName()} {w.size().toTuple()} < {hint.toTuple()}")
    return bad


def legend_hits(plot) -> list[tuple[int, float]]:
    """Points (call index, ms) whose marker touches the run legend (scene coordinates, marker radius 10 px)."""
    vb = plot.getPlotItem().getViewBox()
    box = plot.legend.sceneBoundingRect().adjusted(-10, -10, 10, 10)
    hits = []
    for i in range(plot.run_count()):
        for p in plot.points(i):
            if box.contains(vb.mapViewToScene(QPointF(p.x, math.log10(p.wall_ms)))):
                hits.append((p.x, p.wall_ms))
    return hits


def shown(w: QWidget) -> bool:
    """Visible and on screen (Qt keeps a dock tabbed away "visible" but moves it out of the window)."""
    return w.isVisible() and not w.visibleRegion().isEmpty()


def in_dock_tab_bar(win, w: QWidget) -> bool:
    while w is not None and w is not win:
        if isinstance(w, QTabBar) and w.parentWidget() is win:
            return True
        w = w.parentWidget()
    return False


def snapshot(win) -> dict:
    """Every widget's font and visibility, and where each visible widget is (a dock tabbed away keeps a
    stale geometry Qt never shows, so only what is visible counts); splitter sizes; the plot's scale."""
    return {
        "app_font": QApplication.instance().font().toString(),
        "widgets": {
            w: (w.font().toString(), w.isVisible(), w.geometry().getRect() if shown(w) else None)
            for w in win.findChildren(QWidget)
            if not in_dock_tab_bar(win, w)  # Qt recreates the docks' tab bars
        },
        "dock_tabs": sorted(
            (tuple(bar.tabText(i) for i in range(bar.count())), bar.currentIndex(), bar.geometry().getRect())
            for bar in win.findChildren(QTabBar)
            if bar.parentWidget() is win and bar.isVisible()
        ),
        "splitters": {sp: sp.sizes() for sp in win.findChildren(QSplitter) if shown(sp)},
        "docks": {d: (d.isVisible(), d.isFloating()) for d in win.findChildren(QDockWidget)},
        "plot_scale": win.ui.plot.font_scale(),
        "style": win.styleSheet(),
    }


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_layout_fits_normal_and_presentation(qtbot, app_look, make_window, gui_model, size):
    win = make_window(gui_model, autoload=False, size=size)
    try:
        draw_race(win)
        settle(qtbot)
        assert win.size().toTuple() == size  # no minimum size forced the window larger
        assert squashed(win) == []
        ui = win.ui
        assert ui.plot.isVisible() and ui.tokens.isVisible() and ui.prompt.isVisible()
        assert ui.controls_dock.isVisible() and not ui.ir_dock.isFloating()
        # one bottom view at a time: What JAX sees, tabbed with the demo kit's docks
        assert set(win.tabifiedDockWidgets(ui.ir_dock)) == {win.demo.demo_dock, win.demo.why_dock}
        assert legend_hits(ui.plot) == []

        win.demo.presentation_action.trigger()
        settle(qtbot)
        assert win.size().toTuple() == size
        assert not any(d.isVisible() for d in win.findChildren(QDockWidget))
        plot_share = ui.plot.width() * ui.plot.height() / (size[0] * size[1])
        assert plot_share >= 0.5, plot_share
        assert squashed(win) == []
        assert legend_hits(ui.plot) == []
        # the x axis fits the 9 calls drawn, not a fixed 0–30
        (x0, x1), _ = ui.plot.getPlotItem().getViewBox().viewRange()
        assert -1 <= x0 < 0 and 8 < x1 < 9.5
    finally:
        win.close()


def test_presentation_off_restores_every_font_and_panel(qtbot, app_look, make_window, gui_model):
    win = make_window(gui_model, autoload=False, size=(1280, 720))
    try:
        for r in synthetic_run(12):
            win.ui.plot.add_record(r)
        win.ui.plot.redraw()
        win.tabifiedDockWidgets(win.ui.ir_dock)[0].raise_()  # the Demo kit tab in front
        settle(qtbot)
        before = snapshot(win)
        win.demo.presentation_action.trigger()
        settle(qtbot)
        during = snapshot(win)
        assert during["app_font"] != before["app_font"] and during["docks"] != before["docks"]
        win.demo.presentation_action.trigger()
        settle(qtbot)
        after = snapshot(win)
        changed = [
            f"{type(w).__name__}#{w.objectName()}: {before['widgets'][w]} -> {state}"
            for w, state in after["widgets"].items()
            if before["widgets"].get(w) != state
        ]
        assert changed == []
        assert after == before
    finally:
        win.close()


def test_presentation_shows_race_summary_and_disabled_run_looks_disabled(qtbot, app_look, make_window, gui_model):
    win = make_window(gui_model, tokens=4, size=(1280, 720))
    try:
        demo, ui = win.demo, win.ui
        demo.presentation_action.trigger()
        settle(qtbot)
        assert not demo.stage_card.isVisible()  # no race yet: nothing to summarise
        demo.controls.set_modes(["torch", "jit-static"])
        demo.controls.set_steady(False)  # the cold lanes are what this test looks at
        demo.race_checked()
        qtbot.waitUntil(lambda: win.is_busy(), timeout=5000)
        run = win.findChild(QPushButton, "runButton")
        assert not run.isEnabled()
        disabled = run.grab().toImage().pixelColor(run.width() // 2, 3)
        qtbot.waitUntil(lambda: not win.is_busy(), timeout=RUN_TIMEOUT_MS)
        settle(qtbot)
        enabled = run.grab().toImage().pixelColor(run.width() // 2, 3)
        assert run.isEnabled() and disabled != enabled  # a disabled Run is drawn differently
        assert demo.stage_card.isVisible() and demo.stage_table.modes() == ["torch", "jit-static"]
        assert ui.plot.width() * ui.plot.height() >= 0.5 * win.width() * win.height()
        assert squashed(win) == [] and legend_hits(ui.plot) == []
        demo.presentation_action.trigger()
        assert not demo.stage_card.isVisible() and demo.table.modes() == ["torch", "jit-static"]
    finally:
        win.close()


def test_reset_layout_and_remembered_arrangement(qtbot, make_window, gui_model, config_dir):
    from app.gui.user_settings import UserSettings
    from app.gui.window import MainWindow

    win = make_window(gui_model, autoload=False, size=(1280, 720))
    ui = win.ui
    try:
        ui.controls_dock.close()
        win.demo.why_dock.setFloating(True)
        settle(qtbot)
        assert not ui.controls_dock.isVisible()
        win.save_settings()
        again = MainWindow(settings=UserSettings.load(), autoload=False)
        qtbot.addWidget(again)
        again.show()
        settle(qtbot)
        assert not again.ui.controls_dock.isVisible() and again.demo.why_dock.isFloating()
        again.close()

        actions = [a.text() for a in win.menus.reset_layout_action.parent().actions()]
        assert "Reset &layout" in actions
        win.menus.reset_layout_action.trigger()
        settle(qtbot)
        assert ui.controls_dock.isVisible() and not win.demo.why_dock.isFloating()
        assert set(win.tabifiedDockWidgets(ui.ir_dock)) == {win.demo.demo_dock, win.demo.why_dock}
        assert win.size().toTuple() == (1280, 720)
    finally:
        win.close()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_inspect_workspace_fills_the_window_and_run_comes_back_as_it_was(qtbot, app_look, make_window, gui_model, size):
    """Ctrl+2: every IR view in the full window (30+ jaxpr lines at 1280×720, the Source map's tree and graph
    side by side with the graph's buttons shown), no dock, no outer scroll bar; Ctrl+1 puts Run back exactly."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QKeySequence

    from app.core.inspect.ir import StepIR

    win = make_window(gui_model, autoload=False, size=size)
    try:
        ui = win.ui
        jaxpr = "{ lambda ; a:f32[8]. let\n" + "".join(f"    b{i}:f32[8] = sin a\n" for i in range(120)) + "  in (b0,) }"
        ui.ir_tabs.set_ir("decode", StepIR(jaxpr=jaxpr, hlo="HloModule m"), "run 1 · jit-static")
        settle(qtbot)
        before = snapshot(win)
        assert win.workspaces.current() == "Run"
        assert win.workspaces.actions["Inspect"].shortcut() == QKeySequence("Ctrl+2")
        win.workspaces.actions["Inspect"].trigger()
        settle(qtbot)
        assert win.workspaces.current() == "Inspect"
        assert not any(d.isVisible() for d in win.findChildren(QDockWidget))
        assert ui.ir_card.isVisible() and win.workspaces.inspect_page.isAncestorOf(ui.ir_card)
        assert ui.ir_card.width() >= size[0] - 40 and ui.ir_card.height() >= size[1] * 0.7
        parent = ui.ir_card.parentWidget()
        while parent is not None:  # no outer scroll bar: nothing around the views scrolls
            assert type(parent).__name__ != "QScrollArea", parent.objectName()
            parent = parent.parentWidget()
        view = ui.ir_tabs.panels["jaxpr"].view
        ui.ir_tabs.tabs.setCurrentWidget(ui.ir_tabs.panels["jaxpr"])
        settle(qtbot)
        lines = view.viewport().height() // view.fontMetrics().lineSpacing()
        assert lines >= 30, lines
        assert ui.ir_tabs.origin_text() == "run 1 · jit-static · decode" and ui.ir_tabs.origin.isVisible()
        ui.ir_tabs.tabs.setCurrentWidget(win.inspect.page)
        settle(qtbot)
        inspector = win.inspect.inspector
        left, graph = inspector.split.widget(0), inspector.split.widget(1)
        assert inspector.split.orientation() == Qt.Orientation.Horizontal
        assert left.width() >= 300 and graph.width() >= 400 and left.height() >= size[1] * 0.6
        buttons = [b for b in graph.findChildren(QPushButton) if b.isVisible()]
        assert buttons and all(graph.rect().contains(b.geometry().translated(b.parentWidget().mapTo(graph, b.pos()) - b.pos()))
                               for b in buttons)
        assert squashed(win) == []
        ui.ir_tabs.tabs.setCurrentWidget(ui.ir_tabs.panels["jaxpr"])  # the tab shown before
        win.workspaces.actions["Run"].trigger()
        settle(qtbot)
        assert win.workspaces.current() == "Run" and ui.ir_dock.isAncestorOf(ui.ir_card)
        after = snapshot(win)
        assert after["docks"] == before["docks"] and after["splitters"] == before["splitters"]
        assert [name for name in ("irDockScroll",) if win.findChild(QWidget, name).widget() is not ui.ir_card] == []
    finally:
        win.close()



def clipped_by(w: QWidget, top: QWidget) -> str:
    """The first parent (below ``top``) whose rectangle does not hold ``w`` whole, or ``""``."""
    from PySide6.QtCore import QPoint, QRect

    rect = QRect(w.mapTo(top, QPoint(0, 0)), w.size())
    parent = w.parentWidget()
    while parent is not None and parent is not top:
        if not QRect(parent.mapTo(top, QPoint(0, 0)), parent.size()).contains(rect):
            return f"{type(parent).__name__}#{parent.objectName()}"
        parent = parent.parentWidget()
    return ""


@pytest.mark.parametrize("size", [(857, 482), (1024, 600), (1280, 720)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_race_button_stays_in_sight_in_a_short_demo_dock(qtbot, app_look, make_window, gui_model, size):
    """A window made small (a walk's resize to 0.67 of 1280×720) squeezes the Demo kit dock to a strip: the mode
    checkboxes scroll, the Race and Replay buttons stay pinned in sight above them; on the Settings race tab its Stop and
Race sit under the "races:" row, above the settings list."""
    win = make_window(gui_model, autoload=False, size=size)
    try:
        demo = win.demo
        demo.demo_dock.show()
        demo.demo_dock.raise_()
        settle(qtbot)
        for button in (demo.controls.race_button, demo.controls.replay_button):
            assert shown(button), button.text()
            assert clipped_by(button, win) == "", button.text()
        check = next(iter(demo.controls.checks.values()))
        assert check.isVisible()  # the checkboxes are still there, above the fold or scrolled
        demo.results.setCurrentWidget(demo.settings_race.page)  # the Settings race tab: Race under "races:"
        settle(qtbot)
        tab_bar = demo.results.tabBar()  # a dock narrower than the panel scrolls sideways to the tab chosen
        assert shown(tab_bar) and clipped_by(tab_bar, win) == ""
        assert shown(demo.settings_race.target.row)  # "races:" under it
        assert clipped_by(demo.controls.race_button, win) == ""  # and the mode race's Race stays in sight
        if size[1] >= 600:  # at 482 px the dock is an 84 px strip: the tab bar and half of "races:" fill it
            for w in (demo.settings_race.target.row, demo.settings_race.controls.race_button,
                      demo.settings_race.controls.stop_button):
                assert shown(w) and clipped_by(w, win) == "", w.objectName()
    finally:
        win.close()
