"""Live mode's widgets (issue 41): the error written on its line in the editor, the change marks on an IR view,
and the Live toggle beside Run with its shortcut."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")


def _pixel(widget, x: int, y: int):
    from PySide6.QtGui import QColor

    return QColor(widget.grab().toImage().pixel(x, y))


def test_the_error_is_underlined_and_written_on_its_line(qtbot):
    from widgets.code.code_editor import CodeEditor

    editor = CodeEditor()
    qtbot.addWidget(editor)
    editor.resize(600, 300)
    editor.set_code("def f(x):\n    return x *\n\nprint(1)\n")
    editor.show()
    qtbot.waitExposed(editor)
    editor.mark_error(2, "SyntaxError: invalid syntax\nmore lines are not written")
    assert editor.error_line() == 2 and editor.error_message() == "SyntaxError: invalid syntax"
    underline = [s for s in editor.extraSelections() if s.format.underlineStyle().name == "WaveUnderline"]
    assert len(underline) == 1 and underline[0].cursor.selectedText() == "return x *"
    rect = editor.error_message_rect()
    line_end = editor.cursorRect(underline[0].cursor).right()
    assert rect.left() > line_end and rect.width() > 100  # after the code, never over it
    colour = _pixel(editor.viewport(), rect.left() + 2, rect.center().y())
    assert colour.red() > 240 and colour.green() < 245  # the message's pink box is painted
    editor.mark_error(0, "ignored")
    assert editor.error_message() == "" and editor.error_message_rect().isEmpty()
    assert not [s for s in editor.extraSelections() if s.format.underlineStyle().name == "WaveUnderline"]


def test_change_marks_colour_added_and_changed_lines(qtbot):
    from PySide6.QtWidgets import QPlainTextEdit

    from widgets.code.ir_changes import ChangeMarks

    edit = QPlainTextEdit()
    qtbot.addWidget(edit)
    edit.resize(400, 300)
    edit.setPlainText("\n".join(f"line {n}" for n in range(1, 20)))
    edit.show()
    qtbot.waitExposed(edit)
    marks = ChangeMarks(edit)
    marks.set_changes(added=[2], changed=[4], removed=[6])
    assert marks.marks() == {"added": [2], "changed": [4], "removed": [6]}
    qtbot.wait(20)
    rects = dict(marks.visible_lines())
    x = edit.viewport().width() - 10  # right of the text: the fill only
    added = _pixel(edit.viewport(), x, round(rects[2].center().y()))
    changed = _pixel(edit.viewport(), x, round(rects[4].center().y()))
    plain = _pixel(edit.viewport(), x, round(rects[8].center().y()))
    assert added.green() > added.red() and added != plain  # green
    assert changed.red() > changed.blue() + 40 and changed != plain  # amber
    bar = _pixel(edit.viewport(), x, round(rects[6].top()))
    assert bar.red() > 180 and bar.green() < 120  # the red bar where lines were removed
    marks.clear()
    qtbot.wait(20)
    assert _pixel(edit.viewport(), x, round(rects[2].center().y())) == plain


def test_live_is_on_by_default_beside_run_and_toggled_by_its_shortcut(qtbot):
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    from widgets.code.program_panel import LIVE_SHORTCUT, ProgramPanel

    panel = ProgramPanel()
    qtbot.addWidget(panel)
    panel.resize(600, 500)
    panel.show()
    qtbot.waitExposed(panel)
    assert panel.live.isChecked() and panel.values()["live"] is True
    live, run = panel.live.geometry(), panel.run_button.geometry()
    assert abs(live.center().y() - run.center().y()) <= 4 and 0 <= run.left() - live.right() <= 20  # beside Run
    assert LIVE_SHORTCUT == "Ctrl+Shift+L"
    panel.activateWindow()
    qtbot.waitActive(panel)  # a shortcut reaches an active window only
    panel.editor.setFocus()
    qtbot.waitUntil(panel.editor.hasFocus)
    QTest.keyClick(panel.editor, Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert not panel.live.isChecked()
    panel.set_values({"live": True})
    assert panel.live.isChecked()
