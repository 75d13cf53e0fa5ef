"""The crash dialog (issue 56, part 3): an exception raised in a panel's slot on the GUI thread, or on the
compute thread, shows the dialog with the traceback and Copy report, and the window keeps working; the next
start offers the report of a previous run that crashed hard."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from PySide6.QtWidgets import QApplication

from app.core.crash import hooks, store

# the app's hooks see the exceptions (pytest-qt's capture would take them first and fail the test)
pytestmark = pytest.mark.qt_no_exception_capture


@pytest.fixture
def crash_hooks(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHAX_PLAYGROUND_CACHE_DIR", str(tmp_path / "cache"))
    hooks.install(fault_file=False)  # pytest keeps its own faulthandler
    yield tmp_path / "cache" / "crash"
    hooks.uninstall()


@pytest.fixture
def win(make_window, gui_model, crash_hooks):
    from app.gui.lifecycle.crash_reporter import CrashReporter

    window = make_window(gui_model, autoload=False)  # no model: nothing here needs JAX
    window.crash_reporter = CrashReporter(window)
    yield window
    window.close()


def test_an_exception_in_a_panels_slot_shows_the_dialog_and_the_window_keeps_working(qtbot, win, monkeypatch):
    import app.gui.panels.help as help_panel

    original = help_panel.HelpDialog

    def broken(*_args, **_kwargs):
        raise ValueError("the help panel broke")

    monkeypatch.setattr(help_panel, "HelpDialog", broken)
    win.menus.help_action.trigger()  # Help ▸ Help: WindowMenus.show_help raises inside Qt's slot call
    reporter = win.crash_reporter
    qtbot.waitUntil(lambda: reporter.dialog is not None and reporter.dialog.isVisible(), timeout=5000)
    dialog = reporter.dialog
    assert dialog.headline.text() == "torchax playground hit an error: ValueError: the help panel broke"
    text = dialog.text.toPlainText()
    assert "thread: GUI thread" in text and "in show_help" in text, text
    assert hooks.ACTIONS.lines()[-1].endswith("menu: Help")  # recorded once its slots ran
    assert "transformers:" in text and "XLA_FLAGS:" in text and "nothing is uploaded" in dialog.note.text()
    dialog.copy_button.click()
    assert QApplication.clipboard().text() == dialog.report_text() == text
    saved = store.list_reports()
    assert len(saved) == 1 and str(saved[0]) in dialog.note.text() and saved[0].read_text() == text
    # the window goes on: the same action works once the panel does, and Ctrl+1 still switches workspaces
    monkeypatch.setattr(help_panel, "HelpDialog", original)
    win.menus.help_action.trigger()
    assert win.menus.dialog is not None and win.menus.dialog.isVisible()
    win.workspaces.show("Inspect")
    assert win.workspaces.current() == "Inspect" and win.isVisible()


def test_an_exception_on_the_compute_thread_shows_the_dialog_and_the_thread_goes_on(qtbot, win, monkeypatch):
    handled = []

    def handle(request, should_stop, live):
        if request == "boom":
            raise RuntimeError("compute boom")
        handled.append(request)
        return iter(())

    monkeypatch.setattr(win.compute.worker.service, "handle", handle)
    win.compute.submit("boom")  # an exception escapes the worker's slot on the compute QThread
    win.compute.submit("after")
    reporter = win.crash_reporter
    qtbot.waitUntil(lambda: reporter.dialog is not None and reporter.dialog.isVisible(), timeout=10_000)
    assert "RuntimeError: compute boom" in reporter.dialog.headline.text()
    assert "thread: compute thread" in reporter.dialog.text.toPlainText()
    qtbot.waitUntil(lambda: handled == ["after"], timeout=10_000)  # the compute thread still takes requests
    win.compute.submit("boom")  # a second error joins the open dialog
    qtbot.waitUntil(lambda: len(reporter.dialog.reports) == 2, timeout=10_000)
    assert "(and 1 more error since)" in reporter.dialog.headline.text()


def test_the_next_start_offers_the_report_of_a_run_that_crashed_hard(qtbot, make_window, gui_model, crash_hooks):
    from app.gui.lifecycle.crash_reporter import CrashReporter

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    folder = store.run_dir(int(dead.stdout))
    folder.mkdir(parents=True)
    (folder / "fault.log").write_text("Fatal Python error: Aborted\n\nCurrent thread 0x1 (most recent call first):\n"
                                      f'  File "{os.sep}home{os.sep}me{os.sep}prog.py", line 7 in step\n')
    (folder / "actions.log").write_text("10:00:00 ProgramRequest path=prog.py\n")
    assert len(store.harvest()) == 1
    window = make_window(gui_model, autoload=False)
    reporter = CrashReporter(window)
    offered = reporter.offer_previous()
    assert len(offered) == 1
    qtbot.waitUntil(lambda: reporter.dialog is not None and reporter.dialog.isVisible(), timeout=5000)
    dialog = reporter.dialog
    assert dialog.headline.text().startswith("The previous run crashed (")
    assert "Your program crashed the app: Aborted at /home/me/prog.py:7 in step" in dialog.headline.text()
    assert "The fault is in your own program" in dialog.note.text()
    assert "ProgramRequest path=prog.py" in dialog.text.toPlainText()
    assert CrashReporter(window).offer_previous() == []  # offered once
    window.close()
