"""Stop and Quit never wait for a compiler (issue #20): a compile made long on purpose (the test-only
``TORCHAX_PLAYGROUND_TEST_COMPILE_DELAY_S``, slept inside every compile like an XLA compile that cannot be
interrupted) must not hold the window: Stop frees it at once, a new run waits visibly, and closing ends the
process within 2 s with the user's settings saved."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from conftest import RUN_TIMEOUT_MS, run_and_wait  # noqa: E402
from PySide6.QtWidgets import QPushButton  # noqa: E402

from app.core.runtime.compiled_step import COMPILE_DELAY_ENV  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
COMPILE_DELAY_S = 8.0


def _tokens(window) -> list[int]:
    return list(window.session.current.finished.token_ids)


def test_stop_during_a_compile_frees_the_window_at_once_and_the_next_run_waits_visibly(qtbot, window,
                                                                                        monkeypatch):
    window.ui.form.set_values({"mode": "jit-static", "max_new_tokens": 6, "ignore_eos": True})
    run_and_wait(qtbot, window)  # the reference run (compiles with no delay)
    reference = _tokens(window)
    window.session.cache("clear_memory")  # the next run compiles again
    qtbot.waitUntil(lambda: not window.is_busy(), timeout=RUN_TIMEOUT_MS)
    monkeypatch.setenv(COMPILE_DELAY_ENV, str(COMPILE_DELAY_S))
    run_button = window.findChild(QPushButton, "runButton")
    run_button.click()
    qtbot.waitUntil(lambda: window.ui.busy.phase() == "compiling", timeout=RUN_TIMEOUT_MS)
    t0 = time.perf_counter()
    window.stop()
    qtbot.waitUntil(lambda: not window.is_busy() and run_button.isEnabled(), timeout=2000)
    usable_s = time.perf_counter() - t0
    assert usable_s < 2.0
    assert window.session.current.finished.reason == "stopped"
    assert window.session.background is not None and window.compute.qthread.isRunning()
    monkeypatch.setenv(COMPILE_DELAY_ENV, "0")
    run_button.click()  # queued behind the compiler still running on the compute thread: said so
    qtbot.waitUntil(lambda: "compiler finishing in the background" in window.ui.busy.text(), timeout=2000)
    qtbot.waitUntil(lambda: not window.is_busy(), timeout=RUN_TIMEOUT_MS + int(COMPILE_DELAY_S * 1000))
    assert window.session.background is None
    assert window.session.current.finished.reason != "stopped"
    assert _tokens(window) == reference  # the run after it is whole
    labels = [r.label for r in window.session.runs]
    assert len(labels) == len(set(labels)) == 3  # the abandoned run's late events started no run of their own


CLOSE_SCRIPT = """
import os, sys, time
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QPushButton
from app.gui.main import QUIT_WAIT_MS, end_process
from app.gui.user_settings import UserSettings
from app.gui.window import MainWindow

app = QApplication([])
win = MainWindow(settings=UserSettings(model=sys.argv[1], prompt="The jit function",
                                       generation={"max_new_tokens": 4, "mode": "jit-static"}))
win.quit_wait_ms = QUIT_WAIT_MS
win.show()
state = {"clicked": False, "t0": time.time()}

def tick():
    if time.time() - state["t0"] > 150:  # never hang the suite: say where it stood, then end
        print(f"stuck: loaded={win.loaded is not None} busy={win.is_busy()} clicked={state['clicked']} "
              f"phase={win.ui.busy.phase()!r} status={win.status.text()!r}", flush=True)
        os._exit(3)
    if not state["clicked"] and win.loaded is not None and not win.is_busy():
        os.environ["TORCHAX_PLAYGROUND_TEST_COMPILE_DELAY_S"] = "30"
        win.findChild(QPushButton, "runButton").click()
        state["clicked"] = win.is_busy()  # a click the window did not take is tried again
    elif state["clicked"] and win.ui.busy.phase() == "compiling":
        timer.stop()
        print(f"closing {time.time()}", flush=True)
        win.ui.prompt.set_prompt("typed before quitting")
        win.close()
        app.quit()

timer = QTimer(interval=50)
timer.timeout.connect(tick)
timer.start()
code = app.exec()
end_process(code)
print("the compile ended first", flush=True)
"""


def test_closing_during_a_compile_ends_the_process_within_2_s_and_keeps_the_settings(tmp_path, gui_model):
    env = {**os.environ, "TORCHAX_PLAYGROUND_CONFIG_DIR": str(tmp_path / "config"), "HF_HUB_OFFLINE": "1"}
    env.pop(COMPILE_DELAY_ENV, None)
    proc = subprocess.Popen([sys.executable, "-c", CLOSE_SCRIPT, gui_model], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    closing, lines = None, []
    for line in proc.stdout:  # ends at the latest when the script's watchdog ends it (150 s)
        lines.append(line)
        if line.startswith("closing "):
            closing = float(line.split()[1])
            break
    assert closing is not None, "".join(lines) + proc.stderr.read()[-3000:]
    proc.wait(timeout=60)
    exited_s = time.time() - closing
    rest = proc.stdout.read()
    assert exited_s < 2.0, exited_s
    assert "the compile ended first" not in rest  # it did not wait for the 30 s compile
    assert proc.returncode == 0
    saved = json.loads((tmp_path / "config" / "gui.json").read_text())
    assert saved["prompt"] == "typed before quitting"


def test_first_start_says_it_is_loading_and_stop_is_off_during_a_load(qtbot, config_dir, gui_model):
    """A new user's first seconds: the model box says the model is loading (not "no model loaded"), the busy
    line reads as a sentence, and Stop (which cannot cut a load short) is not offered."""
    from app.gui.user_settings import UserSettings
    from app.gui.window import MainWindow

    win = MainWindow(settings=UserSettings(model=gui_model), autoload=True)
    qtbot.addWidget(win)
    win.show()
    try:
        stop = win.findChild(QPushButton, "stopButton")
        assert win.is_busy() and not stop.isEnabled()
        assert win.ui.model_label.text().startswith("loading") and gui_model in win.ui.model_label.text()
        assert win.ui.busy.text().startswith(f"loading · {gui_model}")
        qtbot.waitUntil(lambda: win.loaded is not None and not win.is_busy(), timeout=RUN_TIMEOUT_MS)
        assert gui_model in win.ui.model_label.text() and not stop.isEnabled()
        win.ui.form.set_values({"max_new_tokens": 3})
        win.run()
        qtbot.waitUntil(lambda: stop.isEnabled() or not win.is_busy(), timeout=RUN_TIMEOUT_MS)
        qtbot.waitUntil(lambda: not win.is_busy(), timeout=RUN_TIMEOUT_MS)
    finally:
        win.close()
