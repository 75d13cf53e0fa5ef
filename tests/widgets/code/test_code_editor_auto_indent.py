"""Issue 55 flaw 7: the Code editor had no auto-indent — Enter started the new line at column 0. Enter now keeps
the line's indentation and adds one level (4 spaces) after a line ending with ``:``."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtGui import QTextCursor  # noqa: E402


def _editor(qtbot, text: str):
    from widgets.code.code_editor import CodeEditor

    editor = CodeEditor()
    qtbot.addWidget(editor)
    editor.set_code(text)
    editor.moveCursor(QTextCursor.MoveOperation.End)
    return editor


def test_enter_after_a_colon_indents_one_level(qtbot):
    editor = _editor(qtbot, "def f(x):")
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    qtbot.keyClicks(editor, "return x")
    assert editor.code() == "def f(x):\n    return x"


def test_enter_keeps_the_lines_indentation(qtbot):
    editor = _editor(qtbot, "def f(x):\n    y = x + 1")
    qtbot.keyClick(editor, Qt.Key.Key_Enter, Qt.KeyboardModifier.KeypadModifier)
    qtbot.keyClicks(editor, "return y")
    assert editor.code() == "def f(x):\n    y = x + 1\n    return y"


def test_a_nested_block_and_a_trailing_comment(qtbot):
    editor = _editor(qtbot, "def f(x):\n    for i in range(3):  # loop")
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    qtbot.keyClicks(editor, "x = x * 2")
    assert editor.code().splitlines()[-1] == "        x = x * 2"


def test_one_undo_takes_the_break_and_its_indentation_back(qtbot):
    editor = _editor(qtbot, "if True:")
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    editor.undo()
    assert editor.code() == "if True:"
