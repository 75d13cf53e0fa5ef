"""The window's "Per call site" table (issue 41; under the Code workspace's editor, beside the compile log in Run): a gallery program run op by op, whose entry
calls two jitted functions of its own (one with a static argument that changes three times), lists per call site
its compiles, causes with old → new values, and compile ms."""

from __future__ import annotations

import pytest
from programs_helpers import code_window_fixture  # noqa: F401 (the code_window fixture)
from PySide6.QtWidgets import QTabWidget

from app.core.programs.gallery import example
from tests.conftest import RUN_TIMEOUT_MS

pytest.importorskip("pytestqt")


CODE_WINDOW_WORKSPACE = "Code"  # programs_helpers.code_window shows it first


def test_per_call_site_tab_follows_a_no_jit_run(qtbot, code_window):
    win = code_window
    table = win.programs.sites.table
    assert win.programs.sites.drawer.table is table  # the Code workspace: under the editor (issue 55)
    win.programs.panel.set_values({"live": False})  # Run alone compiles (no live compile in between)
    win.programs.open_example(example("compile_sites").path)
    win.programs.panel.set_values({"mode": "no-jit", "n_calls": 2})
    assert win.programs.run()
    qtbot.waitUntil(lambda: not win.is_busy() and table.rowCount() == 2, timeout=RUN_TIMEOUT_MS)
    rows = {table.cell_text(r, 1): [table.cell_text(r, c) for c in range(6)] for r in range(2)}
    power = rows["power"]
    assert power[0] == "10_compile_sites.py:27 (main)" and power[2] == "4" and float(power[3]) > 0
    assert power[5] == ("first call; static argument n changed: 1 → 2; static argument n changed: 2 → 3; "
                        "static argument n changed: 3 → 4")
    assert rows["normalize"][2] == "1" and rows["normalize"][5] == "first call"
    assert win.programs.sites.drawer.toggle.text() == "Compiles per call site: 2 call sites · 5 compiles"
    win.workspaces.show("Run")  # beside the compile log's "Why it compiled"
    tabs = win.findChild(QTabWidget, "whyTabs")
    assert tabs is not None and tabs.tabText(tabs.count() - 1) == "Per call site" and tabs.widget(tabs.count() - 1) is table


def test_a_no_jit_calls_inner_compiles_are_on_the_plot_and_in_the_compile_log(qtbot, code_window):
    """A call that compiled inside it (the entry run as written) is a compiling call on the plot (a star, its tool
    tip naming the function and the cause) and in the compile log (one row per inner compile)."""
    from widgets.plot.call_tooltip import describe

    win = code_window
    win.programs.panel.set_values({"live": False})
    win.programs.open_example(example("compile_sites").path)
    win.programs.panel.set_values({"mode": "no-jit", "n_calls": 2})
    assert win.programs.run()
    qtbot.waitUntil(lambda: not win.is_busy(), timeout=RUN_TIMEOUT_MS)
    points = win.ui.plot.points()
    assert points and points[0].compiled  # call 0 compiled power and normalize inside it
    tip = describe(points[0].record)
    assert "compiled inside: power" in tip and "first call" in tip
    reasons = [row["why it compiled"] for row in win.demo.log.rows()]
    assert any(r.startswith("power (") and "static argument n changed: 1 → 2" in r for r in reasons), reasons
    assert any(r.startswith("normalize (") for r in reasons), reasons
