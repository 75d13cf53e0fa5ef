"""The program that drives the app's own entry point (:func:`app.gui.main.main`) into a state and closes its
window the way File ▸ Quit does: ``python -c QUIT_DRIVER MODEL STATE``. It prints ``closing <time.time()>`` just
before the close (and ``children <pid>…`` for the pass recorder's child processes); the caller times the process's
end from outside. States: ``idle``, ``compiling`` (a compile held 30 s on purpose), ``decoding`` (torch, 200
tokens), ``replaying`` and ``passes`` (recording the pass pipeline in a child process). Used by
tests/gui/lifecycle/test_quit_states.py and bench/quit_times.py."""

QUIT_DRIVER = r"""
import os, sys, time
os.environ["QT_QPA_PLATFORM"] = "offscreen"
state_wanted = sys.argv[2]
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
import app.gui.main as gui_main
from app.gui.window import MainWindow

shown = MainWindow.show_first_time
st = {"step": 0, "t0": time.time(), "win": None}

def close(win, note=""):
    print(f"closing {time.time()} {note}", flush=True)
    win.ui.prompt.set_prompt("typed before quitting")
    win.close()

def tick():
    win = st["win"]
    if time.time() - st["t0"] > 150:
        print(f"stuck at step {st['step']}: busy={win.is_busy()} phase={win.ui.busy.phase()!r} "
              f"status={win.status.text()!r}", flush=True)
        os._exit(3)
    idle = win.loaded is not None and not win.is_busy()
    s = st["step"]
    if state_wanted == "idle":
        if idle and win.ui.device_panel.device_count() > 0:
            timer.stop(); close(win)
    elif state_wanted == "compiling":
        if s == 0 and idle:
            os.environ["TORCHAX_PLAYGROUND_TEST_COMPILE_DELAY_S"] = "30"
            win.ui.form.set_values({"mode": "jit-static", "max_new_tokens": 4})
            win.run(); st["step"] = 1
        elif s == 1 and win.ui.busy.phase() == "compiling":
            timer.stop(); close(win)
    elif state_wanted == "decoding":
        if s == 0 and idle:
            win.ui.form.set_values({"mode": "torch", "max_new_tokens": 200, "ignore_eos": True})
            win.run(); st["step"] = 1
        elif s == 1 and win.session.current is not None and len(win.session.current.tokens) >= 5:
            timer.stop(); close(win, f"tokens={len(win.session.current.tokens)}")
    elif state_wanted == "replaying":
        if s == 0 and idle:
            win.ui.form.set_values({"mode": "torch", "max_new_tokens": 40, "ignore_eos": True})
            win.run(); st["step"] = 1
        elif s == 1 and idle and win.session.current.finished is not None:
            win.sessions.replay.start(0.05); st["step"] = 2
        elif s == 2 and win.sessions.replay.running and win.session.current.tokens:
            timer.stop(); close(win)
    elif state_wanted == "passes":
        if s == 0 and idle:
            win.ui.form.set_values({"mode": "jit-static", "max_new_tokens": 2})
            win.run(); st["step"] = 1
        elif s == 1 and idle and win.session.current.finished is not None:
            win.passes.fusion_log.setChecked(True)  # compiled in a child process
            win.passes.record(); st["step"] = 2
        elif s == 2 and win.ui.busy.phase() == "recording passes":
            from app.core import children
            pids = [p.pid for p in children._live]
            if pids:
                print("children " + " ".join(map(str, pids)), flush=True)
                timer.stop(); close(win)

timer = QTimer(interval=50)
timer.timeout.connect(tick)

def show_and_drive(self):
    shown(self)
    st["win"] = self
    timer.start()

MainWindow.show_first_time = show_and_drive
code = gui_main.main(["--model", sys.argv[1]])
print("main returned", flush=True)  # never: the process ends inside main
"""
