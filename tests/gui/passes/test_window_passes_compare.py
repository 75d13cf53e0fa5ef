"""The Passes tab, continued (issue 22): the compile spike taken apart in the compile log and the compile bar
(trace · lower · HLO passes · backend · other), XLA flags refused by name, and Compare… over the last two
recordings."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from conftest import run_and_wait  # noqa: E402
from PySide6.QtCore import Qt


def _record(qtbot, window, step="decode", flags=""):
    passes = window.passes
    passes.step.setCurrentText(step)
    passes.flags.setText(flags)
    qtbot.mouseClick(passes.button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.is_busy(), timeout=120_000)
    return passes.last


def test_split_in_compile_log_and_bar_flags_and_compare(qtbot, window):
    run_and_wait(qtbot, window)
    passes = window.passes
    window.ui.ir_tabs.tabs.setCurrentWidget(passes.page)
    ready = _record(qtbot, window)
    assert ready is not None and ready.step == "decode"

    # The compile bar: trace and lower of the step's first call before XLA's parts.
    groups = [p["group"] for p in passes.compile_bar.parts()]
    assert groups[:2] == ["trace", "lower"] and {"HLO passes", "backend", "other"} <= set(groups)
    caption = passes.compile_bar.caption()
    assert caption.startswith("first call's compile") and "trace" in caption and "HLO passes" in caption

    # The compile log: the decode step's compiling call shows the recorded split.
    log = window.demo.log
    rows = [r for r in log.rows() if r["step"] == "decode"]
    assert rows and "XLA: HLO passes" in rows[-1]["phases"], log.rows()
    row = max(r for r in range(log.rowCount()) if log.item(r, 2).text() == "decode")
    assert "Recorded compile" in log.item(row, 0).toolTip()
    assert not passes.compare.isEnabled()
    # … and so does the note beside the decode compile spike on the plot
    assert any("‖ XLA: HLO passes" in n.toPlainText() for n in window.ui.plot.notes())

    # An unknown XLA flag is refused by name; the tab stays usable.
    _record(qtbot, window, flags="--xla_not_a_real_flag=1")
    assert "xla_not_a_real_flag" in passes.status.text() and passes.button.isEnabled()
    assert passes.last is ready

    # The same step with a flag, then Compare…: counts side by side and the final modules' diff.
    second = _record(qtbot, window, flags="--xla_disable_hlo_passes=fusion")
    assert second is not ready and second.pipeline.compiler_options == {"xla_disable_hlo_passes": "fusion"}
    # labelled with its flags, and its split is its own compile's: no trace/lower of the unflagged first call
    # (issue 29, flaw 7)
    assert "--xla_disable_hlo_passes=fusion" in passes.status.text()
    assert not {"trace", "lower"} & {p["group"] for p in passes.compile_bar.parts()}
    assert passes.compare.isEnabled()
    dlg = passes.show_compare()
    try:
        table = dlg.counts_table
        assert table.rowCount() >= 8 and "xla_disable_hlo_passes" in table.horizontalHeaderItem(2).text()
        fusions = next(r for r in range(table.rowCount()) if table.item(r, 0).text() == "fusions (final)")
        assert table.item(fusions, 1).text() != table.item(fusions, 2).text()
        assert dlg.diff_view.changed_rows()
        measured = next(r for r in range(table.rowCount()) if table.item(r, 0).text().startswith("measured ms"))
        assert float(table.item(measured, 1).text().replace(",", "")) > 0  # the run's steady decode calls
        assert table.item(measured, 2).text() == "–"  # nothing ran with the flags
    finally:
        dlg.close()
        dlg.deleteLater()
