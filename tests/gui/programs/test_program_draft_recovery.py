"""The Code workspace's editor text survives any exit (issue 34, no work lost): it is autosaved as it is typed,
so a window killed with SIGKILL comes back with it, and the restored edits can be discarded from the status
line (no dialog), putting back the file, the example or a new program."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402

from app.gui.panels.programs.wiring import DRAFT_FILE, NEW_PROGRAM, STATE_FILE  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
PROGRAM = '''import jax.numpy as jnp


def f(x):
    return jnp.tanh(x) * 2.0


def f_args():
    return (jnp.ones((4, 8)),)
'''
TYPED = "y = f(*f_args())  # typed, then the process was killed"

# A window typing into its Code editor, then left running (no close, no explicit save) until the test kills it.
TYPE_SCRIPT = """
import os, sys
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QTextCursor
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from app.gui.user_settings import UserSettings
from app.gui.window import MainWindow

app = QApplication([])
win = MainWindow(settings=UserSettings(model=sys.argv[1]), autoload=False)
win.show()
assert win.programs.open_file(sys.argv[2], ask=False)
editor = win.programs.editor
editor.setFocus()
editor.moveCursor(QTextCursor.MoveOperation.End)
QTest.keyClick(editor, Qt.Key.Key_Return)
QTest.keyClicks(editor, sys.argv[3])
assert editor.document().isModified()
print("typed", flush=True)
QTimer.singleShot(120_000, lambda: os._exit(3))  # never outlive a test that failed to kill it
app.exec()
"""


def _state(config: Path) -> dict:
    try:
        return json.loads((config / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def test_editor_text_is_back_after_a_killed_process_and_discard_puts_the_file_back(qtbot, config_dir, make_window,
                                                                                    gui_model, tmp_path):
    prog = tmp_path / "prog.py"
    prog.write_text(PROGRAM, encoding="utf-8")
    typed_text = PROGRAM + "\n" + TYPED
    env = {**os.environ, "TORCHAX_PLAYGROUND_CONFIG_DIR": str(config_dir), "HF_HUB_OFFLINE": "1",
           "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.Popen([sys.executable, "-c", TYPE_SCRIPT, gui_model, str(prog), TYPED], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.strip() == "typed", line + proc.stderr.read()[-3000:] if proc.poll() is not None else line
        t0 = time.monotonic()
        while _state(config_dir).get("text") != typed_text and time.monotonic() - t0 < 20:
            assert proc.poll() is None, proc.stderr.read()[-3000:]
            time.sleep(0.05)
        saved_s = time.monotonic() - t0
        assert _state(config_dir).get("text") == typed_text, "the typed text was never autosaved"
        assert saved_s < 1.8, saved_s  # written half a second after typing paused (measured: 0.50-0.56 s)
        assert proc.poll() is None  # still running: nothing but the autosave wrote the draft
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert (config_dir / DRAFT_FILE).read_text(encoding="utf-8") == typed_text
    assert not list(config_dir.glob("*.tmp"))

    win = make_window(gui_model, autoload=False)
    programs, panel = win.programs, win.programs.panel
    assert programs.editor.code() == typed_text
    assert programs.path == str(prog) and programs.editor.document().isModified()
    # a blank line, then the typed one
    assert "restored from the last session" in panel.status.text() and "+2 −0 lines" in panel.status.text()
    assert "Unsaved edits of prog.py were restored" in win.status.text()  # said whichever workspace is shown
    win.workspaces.show("Code")
    assert panel.discard_offered() and panel.discard_button.isVisible()
    # the keyboard reaches the button: Tab focus, Space presses it
    assert panel.discard_button.focusPolicy() & Qt.FocusPolicy.TabFocus
    panel.discard_button.setFocus()
    QTest.keyClick(panel.discard_button, Qt.Key.Key_Space)
    assert programs.editor.code() == PROGRAM and not programs.editor.document().isModified()
    assert not panel.discard_offered()
    assert "Discarded the restored edits to prog.py (+2 −0 lines)" in panel.status.text()
    assert prog.read_text(encoding="utf-8") == PROGRAM  # the file itself was never touched
    win.close()

    again = make_window(gui_model, autoload=False)  # the discard is kept: the file, unmodified, nothing offered
    try:
        assert again.programs.editor.code() == PROGRAM and not again.programs.editor.document().isModified()
        assert not again.programs.panel.discard_offered()
    finally:
        again.close()


def test_discard_puts_back_the_example_or_a_new_program_and_undo_brings_the_edits_back(qtbot, make_window,
                                                                                       gui_model):
    from app.core.programs.gallery import list_examples

    example = list_examples()[0].path
    win = make_window(gui_model, autoload=False)
    win.programs.open_example(example)
    win.programs.editor.appendPlainText("# my unsaved edit")
    edited = win.programs.editor.code()
    win.close()

    again = make_window(gui_model, autoload=False)
    programs, panel = again.programs, again.programs.panel
    try:
        assert programs.editor.code() == edited and programs.example and panel.discard_offered()
        assert "against the example" in panel.status.text()
        assert programs.discard_restored()
        assert programs.editor.code() == Path(example).read_text(encoding="utf-8")
        assert not programs.editor.document().isModified() and programs.example and programs.path == example
        assert "as the example comes" in panel.status.text() and not panel.discard_offered()
        programs.editor.undo()  # the discarded edits are one undo away
        assert programs.editor.code() == edited and programs.editor.document().isModified()

        programs.editor.redo()  # and discarded again: the example as it comes, nothing to ask about
        assert not programs.editor.document().isModified()
        assert programs.new_program()  # an untitled draft: Discard gives a new program
        assert not panel.discard_offered()
        programs.editor.appendPlainText("z = 1")
        untitled = programs.editor.code()
    finally:
        again.close()

    third = make_window(gui_model, autoload=False)
    programs, panel = third.programs, third.programs.panel
    try:
        assert programs.editor.code() == untitled and programs.path == "" and panel.discard_offered()
        panel.discard_button.click()
        assert programs.editor.code() == NEW_PROGRAM and not programs.editor.document().isModified()
        assert "a new program again" in panel.status.text()
    finally:
        third.close()


def test_nothing_to_discard_when_the_restored_text_is_the_file_or_the_file_is_gone(qtbot, make_window, gui_model,
                                                                                   tmp_path):
    prog = tmp_path / "same.py"
    prog.write_text(PROGRAM, encoding="utf-8")
    win = make_window(gui_model, autoload=False)
    assert win.programs.open_file(str(prog), ask=False)
    win.programs.editor.appendPlainText("# edit")
    win.programs.editor.undo()  # back to the file's text, yet the document was edited
    win.programs.editor.document().setModified(True)
    win.close()
    again = make_window(gui_model, autoload=False)
    try:
        assert again.programs.editor.code() == PROGRAM
        assert not again.programs.editor.document().isModified() and not again.programs.panel.discard_offered()
        again.programs.editor.appendPlainText("# kept")
        kept = again.programs.editor.code()
    finally:
        again.close()
    prog.unlink()  # the file is gone: the edits come back, with nothing to put back in their place
    third = make_window(gui_model, autoload=False)
    try:
        assert third.programs.editor.code() == kept and third.programs.editor.document().isModified()
        assert not third.programs.panel.discard_offered()
        assert "cannot be read any more" in third.programs.panel.status.text()
    finally:
        third.close()


def test_typing_without_a_pause_is_still_kept_every_few_seconds(qtbot, config_dir, make_window, gui_model):
    from app.gui.panels.programs.wiring import DRAFT_MAX_DELAY_MS

    win = make_window(gui_model, autoload=False)
    try:
        win.workspaces.show("Code")
        editor = win.programs.editor
        editor.setFocus()
        before = editor.code().count("Q")
        t0 = time.monotonic()
        while time.monotonic() - t0 < DRAFT_MAX_DELAY_MS / 1000 + 1.0:  # a key every 0.2 s: never a pause
            QTest.keyClicks(editor, "Q")
            qtbot.wait(200)
        typed = editor.code().count("Q") - before
        kept = _state(config_dir).get("text", "").count("Q") - before  # read before typing pauses
        assert kept > 0, "nothing kept while the typing went on"
        assert typed - kept <= DRAFT_MAX_DELAY_MS / 200 + 2, (typed, kept)  # at most a few seconds behind
    finally:
        win.close()
