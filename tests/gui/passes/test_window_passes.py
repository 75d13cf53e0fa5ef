"""The Passes tab (issue 22) on the tiny Llama: run, record the decode step's passes (Record button), then
the pass list, the counts chart, a diff with changed lines, search across snapshots and the compile split."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from conftest import run_and_wait  # noqa: E402
from PySide6.QtCore import Qt


def _record(qtbot, window, fusion_log=False):
    passes = window.passes
    tabs = window.ui.ir_tabs.tabs
    tabs.setCurrentWidget(passes.page)
    passes.step.setCurrentText("decode")
    passes.fusion_log.setChecked(fusion_log)
    qtbot.mouseClick(passes.button, Qt.MouseButton.LeftButton)
    assert window.is_busy() and passes.button.text() == "Stop"
    qtbot.waitUntil(lambda: not window.is_busy(), timeout=120_000)
    assert passes.button.text() == "Record" and passes.button.isEnabled()
    return passes.last


def test_record_decode_passes_list_diff_search_and_breakdown(qtbot, window):
    run_and_wait(qtbot, window)
    passes = window.passes

    # Stop during a recording with the fusion log: the child process is ended, nothing recorded, usable.
    passes.fusion_log.setChecked(True)
    passes.record_shortcut()
    assert window.is_busy() and passes.button.text() == "Stop"
    qtbot.mouseClick(passes.button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.is_busy(), timeout=60_000)
    assert passes.last is None and passes.button.text() == "Record"
    assert "stopped" in passes.status.text().lower(), passes.status.text()

    ready = _record(qtbot, window, fusion_log=True)
    assert ready is not None and ready.step == "decode", window.ui.status_label.text()
    assert window.ui.status_label.text().startswith("Recorded "), window.ui.status_label.text()
    assert window.ui.ir_tabs.tabs.currentWidget() is passes.page

    # The pass list: every pass, with times; hiding the unchanged ones leaves those that wrote snapshots.
    rows = passes.pass_list.rows()
    assert len(rows) == len(ready.rows) >= 20 and all(r["ms"] is not None for r in rows)
    passes.pass_list.hide_unchanged.setChecked(True)
    changed = passes.pass_list.rows()
    assert 5 <= len(changed) < len(rows) and all(r["changed"] for r in changed)

    # The chart: one point per snapshot.
    instr, fusions = passes.chart.series()
    assert len(instr) == len(ready.snapshots) and max(fusions) > 0

    # The diff of the fusion pass against the snapshot before it has changed lines; unchanged regions folded.
    fusion_row = next(r for r in changed if r["pass"] == "fusion")
    passes.pass_list.select_pass(fusion_row["pipeline"], "fusion")
    passes.on_pass(fusion_row)
    diff = passes.diff
    assert diff.changed_rows() and any(r[0] == "+" for r in diff.changed_rows())
    assert any(r[0] == "~" for r in diff.rows())
    assert passes.chart.marked() == fusion_row["index"]

    # Search: where does a fusion of the final module first appear? Its pass and line are selected.
    name = next(f["name"] for f in ready.fusions if f["created_by"] and "fusion" in f["name"])
    passes.find.setText(name)
    qtbot.keyClick(passes.find, Qt.Key.Key_Return)
    hit_line = diff.hit_line()
    assert hit_line is not None and name in passes.found.text()
    snap = ready.pipeline.snapshot(passes.snapshot.currentData())
    assert f"{name} = " in snap.text.splitlines()[hit_line - 1]
    assert passes.pass_list.current_row() is not None
    assert passes.pass_list.current_row()["pass"] == snap.pass_name

    # The fusion table: every fusion of the final module; the log's decisions for one that has any.
    assert passes.fusions.names() == [f["name"] for f in ready.fusions]
    with_log = next(f for f in ready.fusions if f["decisions"])
    passes.fusions.select(with_log["name"])
    assert passes.fusions.decision_rows() and passes.fusions.absorbed_rows()

    # A model step's kernels are recorded without their LLVM IR since jax 0.12 (XLA:CPU aborted while dumping
    # them; a program's IR is checked in test_window_programs_views): the button says why it is off.
    kernel = ready.fusions[0]["name"]
    passes.fusions.select(kernel)
    assert not passes.fusions.llvm_button.isEnabled()
    assert "not dumped" in passes.fusions.llvm_button.toolTip().lower()
    # After a profile of the step, each fusion's measured µs per step.
    window.profile.steps.setValue(2)
    window.profile.step.setCurrentText("decode")
    window.profile.request()
    qtbot.waitUntil(lambda: window.profile.last is not None and not window.is_busy(), timeout=120_000)
    col = passes.fusions.table.columnCount() - 1
    texts = [passes.fusions.table.item(i, col).text() for i in range(passes.fusions.table.rowCount())]
    assert any(t for t in texts)  # the profiled executable's instructions are the recording's fusions

    # The compile split: parts add up to the total.
    b = ready.breakdown
    assert abs(sum(p["ms"] for p in b["parts"]) - b["total_ms"]) <= 0.1 * b["total_ms"]
    assert passes.compile_bar.caption().startswith("first call's compile ") and passes.compile_bar.labels()


def test_record_before_any_run_says_what_to_do(qtbot, window):
    qtbot.waitUntil(lambda: window.session.loaded is not None and not window.is_busy(), timeout=60_000)
    window.passes.record_shortcut()
    qtbot.waitUntil(lambda: not window.is_busy(), timeout=30_000)
    assert window.passes.last is None
    assert "run the prompt" in window.passes.status.text().lower()
    assert window.passes.button.text() == "Record"


def test_a_snapshot_line_leads_to_its_source(qtbot, window):
    """Double-click an instruction in any snapshot: its source line (metadata) is selected in the Source map."""
    run_and_wait(qtbot, window)
    qtbot.waitUntil(lambda: bool(window.inspect.maps), timeout=60_000)
    ready = _record(qtbot, window)
    passes = window.passes
    fusion_row = next(r for r in passes.pass_list.rows() if r["pass"] == "fusion" and r["changed"])
    passes.show_snapshot(fusion_row["index"])
    text = ready.pipeline.snapshot(fusion_row["index"]).text
    line = next(ln for ln in text.splitlines() if " fusion(" in ln and "=" in ln)
    location = passes.show_source_of(line)
    assert location and ":" in location, passes.status.text()
    assert passes.status.text().endswith(location)


def test_after_a_run_the_passes_tab_and_code_views_say_what_to_do_next(qtbot, window):
    """Issue 29, flaw 22: after a run the Passes tab no longer says "Run the prompt, then Record", and in the Code
    workspace an empty IR view speaks of the program, not of "the model in a jax.jit mode"."""
    run_and_wait(qtbot, window)
    assert "Record (Ctrl+Shift+X)" in window.passes.status.text()
    window.workspaces.show("Code")
    hint = window.ui.ir_tabs.panels["jaxpr"].view.placeholderText()
    assert hint.startswith("Run the program (Ctrl+Enter)")
    window.workspaces.show("Run")
    assert "jax.jit mode" in window.ui.ir_tabs.panels["jaxpr"].view.placeholderText()
