"""The per-call-site table beside the compile log (issue 41): one row per site in the order given, causes shown."""

from __future__ import annotations

from app.core.programs.sites import cause_summary
from widgets.code.compile_sites import COLUMNS, CompileSitesTable


def test_rows_show_each_site_and_its_causes(qtbot):
    table = CompileSitesTable()
    qtbot.addWidget(table)
    table.show_sites([
        dict(site="mine.py:28 (main)", function="normalize", n_compiles=1, compile_ms=52.0, trace_ms=1.0,
             lower_ms=1.0, backend_ms=50.0, causes=["first call"]),
        dict(site="mine.py:27 (main)", function="power", n_compiles=2, compile_ms=24.0, trace_ms=2.0,
             lower_ms=2.0, backend_ms=20.0, causes=["first call", "static argument n changed: 1 → 2"],
             cause_text="first call; static argument n changed: 1 → 2"),
    ])
    assert table.columnCount() == len(COLUMNS) and table.rowCount() == 2
    assert [table.cell_text(r, 1) for r in range(2)] == ["normalize", "power"]
    assert table.cell_text(1, 0) == "mine.py:27 (main)" and table.cell_text(1, 2) == "2"
    assert table.cell_text(1, 3) == "24.0" and table.cell_text(1, 4) == "2.0 / 2.0 / 20.0"
    assert table.cell_text(1, 5) == "first call; static argument n changed: 1 → 2"
    assert "2. static argument n changed: 1 → 2" in table.item(1, 5).toolTip()
    table.show_sites([])
    assert table.rowCount() == 0


def test_repeated_causes_are_counted():
    assert cause_summary(["first call", "new input shape: x f32[4] → f32[5]"] * 2) == (
        "first call ×2; new input shape: x f32[4] → f32[5] ×2")
