"""Crash reports in the core (issue 56, part 3): the hooks save a report of an uncaught exception on any thread
and tell the window's handler, naming the user's program when the fault is in it; a dead run's faulthandler
file becomes a report the next start offers once; the last actions survive a hard crash. No Qt."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import types
from pathlib import Path

import pytest

from app.core.crash import hooks, store
from app.core.crash.blame import user_frame_in_fault
from app.core.crash.report import from_exception

ROOT = Path(__file__).resolve().parents[3]
# the hooks under test see the exceptions first (pytest-qt's capture would fail the test on them)
pytestmark = [pytest.mark.qt_no_exception_capture,
              pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning"),
              pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")]


@pytest.fixture
def crash_home(tmp_path, monkeypatch):
    """The crash folder under a scratch cache dir; the hooks installed (faulthandler left to pytest) and removed."""
    monkeypatch.setenv("TORCHAX_PLAYGROUND_CACHE_DIR", str(tmp_path / "cache"))
    hooks.install(fault_file=False)
    yield tmp_path / "cache" / "crash"
    hooks.uninstall()


def _user_program(tmp_path: Path, source: str) -> types.ModuleType:
    """A module run as the Code workspace runs a program (its own file, a ``torchax_playground_program_`` name)."""
    path = tmp_path / "my_prog.py"
    path.write_text(source)
    module = types.ModuleType("torchax_playground_program_test")
    module.__file__ = str(path)
    exec(compile(source, str(path), "exec"), module.__dict__)
    return module


def test_an_exception_on_a_thread_is_saved_and_handed_to_the_window_naming_the_users_line(crash_home, tmp_path):
    prog = _user_program(tmp_path, "def f(x):\n    y = x + 1\n    return y / 0\n")
    seen = []
    hooks.set_handler(lambda report, path: seen.append((report, path)), lambda: "compute thread")
    hooks.record("RunRequest mode=jit-static model=pydoc-llama")
    worker = threading.Thread(target=prog.f, args=(1,), name="helper")
    worker.start()
    worker.join()
    assert len(seen) == 1
    report, path = seen[0]
    assert report.kind == "exception" and report.title == "ZeroDivisionError: division by zero"
    assert report.thread == "thread helper"
    assert report.user is not None and report.user.file == str(tmp_path / "my_prog.py") and report.user.line == 3
    assert report.headline.startswith("Your program raised ZeroDivisionError") and "my_prog.py:3 in f" in report.headline
    text = path.read_text()
    assert path.parent == crash_home / "reports" and text == report.text()
    for needle in ("nothing is uploaded", "jax:", "jaxlib:", "torch:", "torchax:", "transformers:", "PySide6:",
                   "Python:", "backend:", "XLA_FLAGS:", "RunRequest mode=jit-static", "Traceback", "return y / 0"):
        assert needle in text, needle
    assert store.last_report() == path


def test_an_apps_own_exception_is_not_blamed_on_the_user_and_an_unraisable_one_calls_no_handler(crash_home):
    seen = []
    hooks.set_handler(lambda report, path: seen.append(report))
    try:
        {}["missing"]
    except KeyError:
        sys.excepthook(*sys.exc_info())
    assert len(seen) == 1 and seen[0].user is None and seen[0].thread == "main thread"
    assert seen[0].headline == "torchax playground hit an error: KeyError: 'missing'"

    class Breaks:
        def __del__(self):
            raise RuntimeError("in __del__")

    Breaks()
    assert len(seen) == 1  # saved, not shown
    assert "RuntimeError: in __del__" in store.list_reports()[-1].read_text()


def test_the_last_actions_keep_names_only_and_at_most_thirty(crash_home):
    from app.core.crash.actions import describe_request
    from app.core.session.requests import LoadRequest

    assert describe_request(LoadRequest("pydoc-llama", "float32")) == "LoadRequest model=pydoc-llama dtype=float32"
    for i in range(40):
        hooks.record(f"menu: action {i}")
    lines = hooks.ACTIONS.lines()
    assert len(lines) == 30 and lines[-1].endswith("menu: action 39") and lines[0].endswith("menu: action 10")
    assert (store.run_dir() / "actions.log").read_text().splitlines() == lines


CRASHING_WINDOWLESS_RUN = textwrap.dedent("""
    import sys
    from app.core.crash import hooks
    hooks.install()
    hooks.record("ProgramRequest path=crash_me.py")
    hooks.record_facts()
    from app.core.programs.loader import load_program
    load_program(sys.argv[1])
""")


def test_a_segfault_in_the_users_program_becomes_a_report_offered_once_that_names_their_line(tmp_path):
    """A run that dies hard leaves its faulthandler dump; the next start (harvest) makes it a report naming the
    user's file and line, with the last actions and versions of that run, offered once."""
    prog = tmp_path / "crash_me.py"
    prog.write_text("import ctypes\n\n\ndef boom():\n    return ctypes.string_at(0)\n\n\nboom()\n")
    env = {**os.environ, "TORCHAX_PLAYGROUND_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", CRASHING_WINDOWLESS_RUN, str(prog)], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == -signal.SIGSEGV, proc.stderr[-2000:]
    runs = list((tmp_path / "cache" / "crash" / "runs").iterdir())
    assert len(runs) == 1 and "Segmentation fault" in (runs[0] / "fault.log").read_text()
    os.environ["TORCHAX_PLAYGROUND_CACHE_DIR"], saved = str(tmp_path / "cache"), os.environ["TORCHAX_PLAYGROUND_CACHE_DIR"]
    try:
        new = store.harvest()
        assert len(new) == 1 and not (tmp_path / "cache" / "crash" / "runs" / runs[0].name).exists()
        text = new[0].read_text()
        assert f"Your program crashed the app: Segmentation fault at {prog}:5 in boom" in text
        assert "ProgramRequest path=crash_me.py" in text and "transformers:" in text and "hard-crash" in new[0].name
        assert store.take_offers() == new and store.take_offers() == []
        assert store.last_report() == new[0]
    finally:
        os.environ["TORCHAX_PLAYGROUND_CACHE_DIR"] = saved


def test_a_faulthandler_dump_blames_the_current_threads_user_frame_only():
    dump = ('Fatal Python error: Segmentation fault\n\nThread 0x01 (most recent call first):\n'
            '  File "/home/me/other.py", line 9 in idle\n\n'
            'Current thread 0x02 (most recent call first):\n'
            f'  File "{Path(hooks.__file__)}", line 3 in hook\n'
            '  File "/home/me/prog.py", line 12 in step\n  File "/home/me/prog.py", line 30 in <module>\n')
    frame = user_frame_in_fault(dump)
    assert frame is not None and (frame.file, frame.line, frame.function) == ("/home/me/prog.py", 12, "step")
    assert user_frame_in_fault(dump.replace("/home/me/prog.py", f"{sys.prefix}/lib/x.py")) is None


def test_a_clean_exit_removes_its_run_folder_and_a_killed_run_without_a_dump_leaves_no_report(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHAX_PLAYGROUND_CACHE_DIR", str(tmp_path / "cache"))
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    folder = store.run_dir(int(dead.stdout))
    folder.mkdir(parents=True)
    (folder / "fault.log").write_text("")
    assert store.harvest() == [] and not folder.exists() and store.list_reports() == []
    hooks.install(fault_file=False)
    assert store.run_dir().exists()
    hooks.uninstall(clean=True)
    assert not store.run_dir().exists()
    assert from_exception(ValueError, ValueError("x"), None).user is None
