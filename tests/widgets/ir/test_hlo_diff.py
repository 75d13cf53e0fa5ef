"""The HLO diff between two pass snapshots, on synthetic plain data: changed lines, folds, the whole snapshot
and showing a line."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from widgets.ir.hlo_diff import HloDiff  # noqa: E402


def test_hlo_diff_folds_highlights_and_finds_lines(qtbot):
    w = HloDiff()
    qtbot.addWidget(w)
    new_text = "\n".join(f"  %x.{i} = f32[] add(%a, %b)" for i in range(1, 31)) + "\n  %fusion.1 = f32[] fusion()\n"
    rows = [("~", None, None, "⋯ 20 unchanged lines"),
            (" ", 21, 21, "  %x.21 = f32[] add(%a, %b)"),
            ("-", 22, None, "  %y = f32[] multiply(%a, %b)"),
            ("+", None, 31, "  %fusion.1 = f32[] fusion()")]
    w.set_diff("0003 simplification / algsimp", "0005 fusion / fusion", rows, new_text)
    assert "+1" in w.title.text() and "−1" in w.title.text()
    assert [r[0] for r in w.changed_rows()] == ["-", "+"]
    assert len(w.view.extraSelections()) == 3  # fold, removed, added
    assert w.view.toPlainText().splitlines()[3] == "  %fusion.1 = f32[] fusion()"
    assert w.show_line(31) and w.hit_line() == 31 and not w.whole.isChecked()
    assert w.view.textCursor().blockNumber() == 3
    # A line outside the diff's hunks: the whole snapshot is shown and the line marked.
    assert w.show_line(5) and w.whole.isChecked()
    assert w.view.textCursor().blockNumber() == 4 and len(w.rows()) == 31
    assert not w.show_line(500)
    w.set_text("before", "HloModule m\n")
    assert w.rows() == [(" ", 1, 1, "HloModule m")]
