"""The Source map tab in the real window (issue #5): after a run on the built-in model the tab holds both
steps' maps, selecting a node highlights lines in the IR views, clicking an IR line selects a node, the
tab follows the IR step buttons, and a warm run that compiles nothing keeps the maps."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from conftest import run_and_wait  # noqa: E402
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QPlainTextEdit, QTreeWidget, QTreeWidgetItemIterator

from widgets.source.source_explorer import ROLE_KIND


def _items(tree, kind):
    it, out = QTreeWidgetItemIterator(tree), []
    while it.value():
        if it.value().data(0, ROLE_KIND) == kind:
            out.append(it.value())
        it += 1
    return out


def _click_item(qtbot, tree, item):
    tree.scrollToItem(item)
    rect = tree.visualItemRect(item)
    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def _click_line(qtbot, view, line):
    """Scroll ``view`` to 1-based ``line`` and click on it."""
    view.verticalScrollBar().setValue(max(0, line - 3))
    qtbot.wait(20)
    block = view.document().findBlockByNumber(line - 1)
    rect = view.cursorRect(QTextCursor(block))
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def test_source_map_tab_links_both_ways(qtbot, window):
    run_and_wait(qtbot, window)
    wiring, tabs = window.inspect, window.ui.ir_tabs
    assert set(wiring.maps) == {"prefill", "decode"}
    titles = [tabs.tabs.tabText(i) for i in range(tabs.tabs.count())]
    assert titles.index("Source map") > titles.index("optimized HLO")
    tabs.tabs.setCurrentIndex(titles.index("Source map"))
    tree = window.findChild(QTreeWidget, "sourceTree")
    assert tree.isVisible() and tree.topLevelItemCount() > 0
    assert window.inspect.inspector.diff.primitives.rowCount() > 0  # both steps in: the diff is filled
    # Prefill vs decode: double-clicking a source-line row selects that line in the explorer (issue 29 flaw 8)
    from app.core.units import source_label

    diff, explorer = window.inspect.inspector.diff, window.inspect.inspector.explorer
    row = next(r for r in range(diff.lines.rowCount()) if diff.lines.item(r, 0).data(Qt.UserRole) is not None
               and diff._line_rows[diff.lines.item(r, 0).data(Qt.UserRole)].file)
    line_row = diff._line_rows[diff.lines.item(row, 0).data(Qt.UserRole)]
    diff.lines.cellDoubleClicked.emit(row, 0)
    picked = explorer.tree.currentItem()
    assert picked is not None and explorer._location(picked) == source_label(line_row.file, line_row.line)

    # Explorer → IR views: a node with HLO instructions highlights lines in jaxprView and hloView.
    sm = wiring.inspector.explorer.shown_map()
    group = next(
        item for item in _items(tree, "group") if sm.groups[item.data(0, Qt.UserRole + 1)[0]].hlo_lines
    )
    _click_item(qtbot, tree, group)
    assert tree.currentItem() is group
    hl = wiring.linker.highlighters
    assert hl["jaxpr"].ranges() and hl["hlo"].ranges() and hl["stablehlo"].ranges()
    jump = wiring.jump["hlo"]
    assert jump.isVisibleTo(window) and "line" in jump.text()
    first_hlo = hl["hlo"].ranges()[0][0]

    # IR view → explorer: clicking a linked HLO line (after selecting another node) selects a node again.
    other = next(item for item in _items(tree, "group") if item is not group)
    _click_item(qtbot, tree, other)
    assert tree.currentItem() is other
    qtbot.mouseClick(jump, Qt.MouseButton.LeftButton)  # to the HLO tab
    hlo_view = window.findChild(QPlainTextEdit, "hloView")
    assert tabs.tabs.currentWidget() is tabs.panels["hlo"] and hlo_view.isVisible()
    _click_line(qtbot, hlo_view, first_hlo)
    picked = tree.currentItem()
    assert picked is not None and picked is not other
    ranges = wiring.inspector.explorer.lines_for_item(picked)["hlo"]
    assert any(a <= first_hlo <= b for a, b in ranges)
    assert hl["hlo"].is_highlighted(first_hlo)

    # A jaxpr line selects its equation.
    jaxpr_view = window.findChild(QPlainTextEdit, "jaxprView")
    tabs.tabs.setCurrentWidget(tabs.panels["jaxpr"])
    eqn = sm.equations[len(sm.equations) // 2]
    _click_line(qtbot, jaxpr_view, eqn.lines["jaxpr"][0])
    assert tree.currentItem().text(0).startswith(f"#{eqn.index} ")
    assert hl["jaxpr"].is_highlighted(eqn.lines["jaxpr"][0])

    # IR views open at the top or at the selection: the other step's HLO opens at its top, not mid-file
    # where the old selection was.
    tabs.tabs.setCurrentWidget(tabs.panels["hlo"])
    hlo_view.verticalScrollBar().setValue(first_hlo)
    other_step = "decode" if tabs.current_step() == "prefill" else "prefill"
    qtbot.mouseClick(tabs.step_buttons[other_step], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not tabs.pending(), timeout=5000)
    assert tabs.panels["hlo"].info.text().startswith(other_step)
    assert hlo_view.verticalScrollBar().value() == 0 and not hl["hlo"].ranges()


def test_steps_stay_in_sync_and_warm_run_keeps_maps(qtbot, window):
    run_and_wait(qtbot, window)
    wiring, tabs = window.inspect, window.ui.ir_tabs
    step_combo = wiring.inspector.step
    # The explorer tree is built when the Source map tab is first shown, not on the GUI thread mid-run.
    assert wiring.inspector.explorer.shown_map() is None
    titles = [tabs.tabs.tabText(i) for i in range(tabs.tabs.count())]
    tabs.tabs.setCurrentIndex(titles.index("Source map"))
    assert wiring.inspector.explorer.shown_map() is not None
    qtbot.mouseClick(tabs.step_buttons["decode"], Qt.MouseButton.LeftButton)
    assert step_combo.currentText() == "decode"
    assert wiring.inspector.explorer.shown_map() is wiring.maps["decode"]
    step_combo.setCurrentText("prefill")
    assert tabs.current_step() == "prefill" and tabs.step_buttons["prefill"].isChecked()
    # the source-lines toggle adds a gutter: the jaxpr keeps its line numbers and its highlights
    tree = window.findChild(QTreeWidget, "sourceTree")
    tree.setCurrentItem(_items(tree, "eqn")[5])
    plain = wiring.linker.highlighters["jaxpr"].ranges()
    tabs.source_check.setChecked(True)
    qtbot.waitUntil(lambda: not tabs.pending(), timeout=5000)
    with_source = wiring.linker.highlighters["jaxpr"].ranges()
    assert plain and with_source == plain
    assert tabs.panels["jaxpr"].view.notes(), "the gutter holds the source lines"
    tabs.source_check.setChecked(False)

    maps = dict(wiring.maps)
    run_and_wait(qtbot, window)  # same prompt bucket: nothing compiles, nothing new to map
    assert window.ui.stats.text("compiles") == "0"
    assert wiring.maps == maps and all(wiring.maps[s] is maps[s] for s in maps)
    assert tree.topLevelItemCount() > 0
    assert window.inspect.collectives.isHidden()  # one device: no collectives table above hloView


def test_graph_builder_runs_without_jax():
    """The dataflow graph is built on the GUI thread: its modules must not import JAX (or torch)."""
    import subprocess
    import sys
    from pathlib import Path

    script = (
        "import sys\n"
        "from app.gui.panels.inspect import build_graph\n"
        "import app.core.inspect.dataflow, app.core.inspect.source_diff\n"
        "heavy = [m for m in ('jax', 'jaxlib', 'torch', 'torchax', 'transformers') if m in sys.modules]\n"
        "print('heavy', heavy)\n"
    )
    root = Path(__file__).resolve().parents[3]
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=root, capture_output=True, text=True, timeout=120, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("heavy []"), out.stdout


def test_profile_tab_measures_the_step_and_links_rows_to_hlo(qtbot, window):
    run_and_wait(qtbot, window)
    wiring = window.profile
    wiring.steps.setValue(3)
    wiring.button.click()
    assert window.is_busy()
    qtbot.waitUntil(lambda: wiring.last is not None and not window.is_busy(), timeout=240_000)
    profile = wiring.last.profile
    assert 0 < profile.attributed_share <= 1 and profile.step_ms > 0
    assert "ops running" in wiring.summary.text() and wiring.table.rows()
    shares = sum(r["share"] for r in wiring.last.rows["line"])
    assert abs(shares - profile.attributed_share) < 1e-6
    wiring.by.setCurrentIndex(2)  # HLO instruction
    row = next(r for r in wiring.table.rows() if r.get("hlo_line"))
    wiring.on_row(row)
    view = window.ui.ir_tabs.panels["hlo"].view
    line = view.textCursor().blockNumber() + 1
    assert line == row["hlo_line"] and row["key"] in view.document().findBlockByNumber(line - 1).text()
    assert wiring.timeline.bar_count() > 0


def test_profile_after_a_jit_loop_run_measures_the_loop(qtbot, window):
    """Issue 31: Profile in the window measures the mode the user just ran when it is profilable — after a
    jit-loop run, the loop, one step per iteration, rows naming source lines."""
    window.ui.form.set_values({"mode": "jit-loop", "max_new_tokens": 6, "ignore_eos": True})
    run_and_wait(qtbot, window)
    wiring = window.profile
    wiring.steps.setValue(4)
    wiring.button.click()
    qtbot.waitUntil(lambda: wiring.last is not None and not window.is_busy(), timeout=240_000)
    profile = wiring.last.profile
    assert profile.mode == "jit-loop" and profile.step == "decode" and profile.n_steps >= 4
    assert wiring.summary.text().startswith("<b>jit-loop · decode")
    assert any(".py:" in r["key"] for r in wiring.last.rows["line"])


def test_prefill_vs_decode_says_why_it_is_empty(qtbot, window):
    """Issue 37: Prefill vs decode was empty without a word for a recorded run holding one step's map."""
    run_and_wait(qtbot, window)
    wiring, tabs = window.inspect, window.ui.ir_tabs
    decode = wiring.maps["decode"]
    titles = [tabs.tabs.tabText(i) for i in range(tabs.tabs.count())]
    tabs.tabs.setCurrentIndex(titles.index("Source map"))
    wiring.clear()
    summary = wiring.inspector.diff.summary
    assert "No source map yet" in summary.text()
    wiring.on_source_map("decode", decode)  # as a recorded run saved with its decode map only
    assert wiring.inspector.diff.primitives.rowCount() == 0
    assert "Only the decode step's source map" in summary.text(), summary.text()
