"""Issue 37 (issue 29's flaw 7): File ▸ Compare recorded runs… at 1280×720 showed the runs' figures a few columns
at a time (the last ones behind a sideways scroll bar). Every column of every run is in view at once: the figures
whole, the run and machine texts elided when the window is narrow, whole in their tool tips."""

from __future__ import annotations

import dataclasses
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtWidgets import QMainWindow  # noqa: E402
from test_window_sessions import synthetic_recorded  # noqa: E402

from app.core.recording import RecordedRun  # noqa: E402

MACHINES = (("cpu", 1), ("TPU v6e", 8), ("NVIDIA H200", 1), ("cpu", 4))


def recorded(n: int, machine: str, count: int) -> RecordedRun:
    """:func:`test_window_sessions.synthetic_recorded` (10 calls) as SmolLM2's run ``n`` on ``machine × count``,
    without IR."""
    run = synthetic_recorded(10, machine, count)
    env = {**run.environment, "platform": machine.split()[0].lower()}
    return dataclasses.replace(run, label=f"run {n} · SmolLM2-135M-Instruct · jit-static · cache 128",
                               model="SmolLM2-135M-Instruct", environment=env, ir={})


def _fits(table, column: int) -> bool:
    """The column is as wide as its widest cell needs (Qt elides a narrower one)."""
    return table.columnWidth(column) >= table.sizeHintForColumn(column)


@pytest.mark.parametrize("width", [1280, 1000])
def test_every_column_of_every_run_in_view_at_once(qtbot, width):
    from app.gui.panels.sessions.compare import CompareDialog

    host = QMainWindow()
    qtbot.addWidget(host)
    host.resize(width, 720)
    host.show()
    runs = [recorded(n, m, c) for n, (m, c) in enumerate(MACHINES, start=4)]
    dialog = CompareDialog(runs, host)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    qtbot.wait(20)  # the layout settles
    table = dialog.table
    assert dialog.width() <= width
    assert table.horizontalHeader().length() <= table.viewport().width(), "columns behind a sideways scroll"
    assert table.rowCount() == 4 and all(table.visualRect(table.model().index(r, 0)).bottom()
                                         < table.viewport().height() for r in range(4))
    for j, column in enumerate(dialog.columns):
        for i in range(table.rowCount()):
            item = table.item(i, j)
            if column.key in ("run", "machine"):  # elided when need be, whole in the tool tip
                assert item.toolTip().startswith(item.text())
            else:
                assert _fits(table, j), (column.key, item.text(), table.columnWidth(j))
    if width == 1280:  # a 1280-px window has the room for every text whole
        assert _fits(table, 0) and _fits(table, 1)
    assert "TPU v6e × 8" in dialog.cell(1, "machine")

