"""Issue 37: a line linked from the IR views (``CodeEditor.select_line``) scrolled the editor sideways to the end of
a long line (the cursor went to the line's end). The line now comes into view with its start visible: no sideways
jump while its start is on screen, and only as far as its start when it is not."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

LONG = "    return jax.lax.scan(body, x, length=STEPS)[0]  # " + "a long comment after the call " * 8


def _editor(qtbot, lines: int = 40):
    from widgets.code.code_editor import CodeEditor

    editor = CodeEditor()
    qtbot.addWidget(editor)
    editor.resize(420, 300)
    editor.set_code("\n".join(LONG if n % 10 == 5 else f"x{n} = {n}" for n in range(1, lines + 1)))
    editor.show()
    qtbot.waitExposed(editor)
    return editor


def test_a_long_linked_line_keeps_the_editor_at_its_left_edge(qtbot):
    editor = _editor(qtbot)
    bar = editor.horizontalScrollBar()
    assert bar.maximum() > 0 and bar.value() == 0  # the long lines overflow the view
    editor.select_line(25)
    qtbot.wait(20)
    assert editor.current_line() == 25
    assert bar.value() == 0, "the view jumped sideways to the line's end"
    assert editor.textCursor().selectedText().strip() == LONG.strip()  # the line is selected
    top = editor.firstVisibleBlock().blockNumber() + 1
    assert top <= 25 < top + editor.viewport().height() // editor.fontMetrics().lineSpacing()


def test_a_linked_line_off_screen_to_the_left_scrolls_only_to_its_start(qtbot):
    editor = _editor(qtbot)
    bar = editor.horizontalScrollBar()
    bar.setValue(bar.maximum())  # the user scrolled to the far right
    editor.select_line(15)
    qtbot.wait(20)
    start_x = editor.cursorRect().left()  # the cursor sits at the line's first character
    assert 0 <= start_x <= editor.viewport().width() // 4, start_x
    indent = editor.fontMetrics().horizontalAdvance("    ")
    assert bar.value() <= indent + 8  # minimal: the start at the left edge, not the view centred on it


def test_no_sideways_jump_while_the_start_is_visible(qtbot):
    editor = _editor(qtbot)
    bar = editor.horizontalScrollBar()
    bar.setValue(12)  # a little to the right: the code of an indented line still starts on screen
    editor.select_line(35)
    qtbot.wait(20)
    assert bar.value() == 12
