"""The per-call-site table is in sight wherever a program is inspected (issue 55: it was only in the Run workspace,
behind the compile log's tab; Inspect and Code hide every dock): a tab of the IR card in Inspect, a drawer under
the editor in Code (its header counting the sites and compiles; the IR card beside the editor has no width for
another tab title at 1280×720), back beside "Why it compiled" in Run — one table, its rows kept. No compile: the
records are a program run's, as the compute thread sends them."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QTabWidget

from app.core.events import CallRecord
from app.gui.panels.programs.sites import IR_TAB_TITLE, TAB_TITLE

pytest.importorskip("pytestqt")


def _records() -> list[CallRecord]:
    """Two calls of an entry run op by op, each compiling ``power`` inside it (a static argument changed)."""
    inner = {"compile_site": "prog.py:12 (main)", "function": "power", "trace_ms": 10.0, "lower_ms": 2.0,
             "compile_ms": 30.0}
    return [CallRecord(index=i, step="main", mode="no-jit", input_shapes={}, wall_ms=50.0, execute_ms=50.0,
                       inner_compiles=[{**inner, "compile_reason": cause}])
            for i, cause in enumerate(["first call", "static argument n changed: 1 → 2"])]


def test_the_call_site_table_is_in_sight_in_every_workspace(qtbot, make_window, gui_model):
    win = make_window(gui_model, autoload=False, size=(1280, 720))
    drawer = win.programs.sites.drawer
    table, why, ir = win.programs.sites.table, win.findChild(QTabWidget, "whyTabs"), win.ui.ir_tabs.tabs
    win.programs.sites.show_records(_records())  # as the session announces a program run's records
    assert table.rowCount() == 1 and table.cell_text(0, 1) == "power" and table.cell_text(0, 2) == "2"
    assert why.indexOf(table) >= 0 and why.tabText(why.indexOf(table)) == TAB_TITLE and ir.indexOf(table) < 0
    for _visit in range(2):
        win.workspaces.show("Code")  # under the editor: its header says what it holds, a click opens it
        qtbot.waitUntil(drawer.isVisible, timeout=2000)
        assert drawer.table is table and why.indexOf(table) < 0 and ir.indexOf(table) < 0
        assert drawer.toggle.text() == "Compiles per call site: 1 call site · 2 compiles"
        editor_height = win.programs.editor.height()
        drawer.toggle.click()
        qtbot.waitUntil(table.isVisible, timeout=2000)
        assert table.height() >= 4 * table.verticalHeader().defaultSectionSize()
        assert win.programs.editor.height() >= 0.6 * editor_height  # the editor keeps most of its room
        drawer.toggle.click()
        win.workspaces.show("Inspect")  # the full window's IR card: a tab of its own
        qtbot.wait(50)
        assert ir.indexOf(table) >= 0 and ir.tabText(ir.indexOf(table)) == IR_TAB_TITLE and drawer.table is None
        ir.setCurrentWidget(table)
        qtbot.waitUntil(table.isVisible, timeout=2000)
    win.workspaces.show("Run")
    qtbot.wait(50)
    assert why.indexOf(table) >= 0 and ir.indexOf(table) < 0 and why.currentWidget() is table
    assert table.rowCount() == 1 and table.maximumHeight() > 10_000  # the same table, its rows kept, its height free
