"""The window's race summary has the parity row: each lane's tokens against the baseline's (issue 55)."""

from __future__ import annotations

from app.core.race import summary_rows
from tests.core.race.test_race_parity import _finished


def test_the_windows_race_summary_has_the_parity_row(qtbot, make_window, gui_model):
    win = make_window(gui_model, autoload=False, size=(1280, 720))
    table = win.demo.table
    labels = [table.verticalHeaderItem(r).text() for r in range(table.rowCount())]
    assert "same tokens" in labels
    table.set_rows(summary_rows({"torch": _finished("torch", [1, 2, 3]), "jit-loop": _finished("jit-loop", [1, 2, 4])}))
    row = labels.index("same tokens")
    assert [table.item(row, c).text() for c in range(2)] == ["baseline", "differs at token 3"]
