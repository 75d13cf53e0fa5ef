"""Issue 37 (issue 29's flaw 7): Passes ▸ Compare… at 1280×720 showed one column at a time — a recording's column
as wide as its long label (the XLA flags it was recorded with) — and scrolled the row names away. Both recordings'
figures now sit side by side beside their row names, the labels whole above the table and in the tool tips."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QLabel

pytest.importorskip("pytestqt")

LABELS = ("1: decode · jit-static · SmolLM2-135M-Instruct · CPU × 1 · recorded in 5.0 s",
          "2: decode · jit-static · SmolLM2-135M-Instruct · --xla_disable_hlo_passes=fusion --xla_cpu_use_thunk_runtime=false")
COUNTS = [("passes run", 1208, 1141), ("passes that changed the module", 212, 190), ("fusions (final)", 30, 0),
          ("instructions (final)", 1_513, 4_210), ("compile ms", 2_811.5, 1_904.2),
          ("measured ms per call (latest run)", 12.3, None)]


def test_both_recordings_side_by_side_beside_their_row_names(qtbot):
    from widgets.passes.dialogs import CompareDialog

    dlg = CompareDialog(None, LABELS, COUNTS, None, "", "A recording has no final module: no diff.")
    qtbot.addWidget(dlg)
    dlg.show()  # its own size, 1100×650: within a 1280×720 screen
    qtbot.waitExposed(dlg)
    qtbot.wait(20)
    assert dlg.width() <= 1280 and dlg.height() <= 720
    table = dlg.counts_table
    head, view = table.horizontalHeader(), table.viewport()
    assert head.length() <= view.width(), "a column behind the sideways scroll bar"
    assert table.columnViewportPosition(0) == 0 and table.columnWidth(0) >= table.sizeHintForColumn(0)  # row names
    for col in (1, 2):
        assert table.columnWidth(col) >= table.sizeHintForColumn(col), col  # every figure whole
        assert table.horizontalHeaderItem(col).toolTip() == LABELS[col - 1]
    legend = dlg.findChild(QLabel, "passesCompareLabels")
    assert legend is not None and all(label in legend.text() for label in LABELS)
