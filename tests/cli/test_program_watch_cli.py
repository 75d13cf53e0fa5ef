"""``program FILE:ENTRY --watch`` (issue 41): every save compiles again and says what changed in the IR, why, and
what it cost; an error keeps the last good IR; Ctrl+C ends it cleanly."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from app.core.programs.loader import load_program
from app.core.programs.watch import IRChange, ir_change, watch_file

PROGRAM = '''import jax.numpy as jnp


def f(x):
    return jnp.tanh(x) * 2.0


def f_args():
    return (jnp.ones((4, 8), jnp.float32),)
'''


def _save(path, text: str, stamp: int) -> None:
    path.write_text(text)
    os.utime(path, ns=(stamp, stamp))  # a new modification time even within the file system's resolution


def test_each_save_compiles_and_counts_the_ir_change(tmp_path):
    path = tmp_path / "prog.py"
    _save(path, PROGRAM, 1_000_000_000)
    steps = watch_file(str(path), lambda text: load_program(str(path), source=text).prepare("f"), poll_s=0.01,
                       max_steps=4)
    first = next(steps)
    assert first.cause == "first compile" and first.error is None and first.jaxpr is None
    assert set(first.phases) == {"trace", "lower", "compile"} and all(v > 0 for v in first.phases.values())
    _save(path, PROGRAM.replace("* 2.0", "* 2.0 + jnp.sin(x)"), 2_000_000_000)
    second = next(steps)
    assert second.cause.startswith("file saved: line 5 edited") and second.error is None
    assert second.jaxpr is not None and second.jaxpr.added == 2 and second.jaxpr.removed == 0
    assert second.hlo is not None and second.hlo.added + second.hlo.changed > 0
    _save(path, PROGRAM.replace("* 2.0", "* (2.0"), 3_000_000_000)
    broken = next(steps)
    assert broken.error is not None and "SyntaxError" in broken.error
    _save(path, PROGRAM, 4_000_000_000)
    back = next(steps)  # compared with the last good compile (the sin version), not the broken text
    assert back.error is None and back.jaxpr is not None and back.jaxpr.removed == 2
    assert "jaxpr equations +0 −2" in "\n".join(back.lines())


def test_ir_change_counts():
    assert ir_change(["a", "b", "c"], ["a", "x", "c", "d"]) == IRChange(added=1, removed=0, changed=1, total=4)


def test_watch_cli_prints_changes_and_ends_on_ctrl_c(tmp_path):
    path = tmp_path / "prog.py"
    _save(path, PROGRAM, 1_000_000_000)
    proc = subprocess.Popen([sys.executable, "-m", "app", "program", f"{path}:f", "--watch"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    lines: list[str] = []
    assert proc.stdout is not None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        lines.append(line)
        if line.startswith("  cost:"):
            if sum(s.startswith("  cost:") for s in lines) == 2:
                lines.append(proc.stdout.readline())  # the IR change follows the cost
                break
            _save(path, PROGRAM.replace("* 2.0", "* 2.0 + jnp.sin(x)"), 2_000_000_000)
    proc.send_signal(signal.SIGINT)
    rest, err = proc.communicate(timeout=30)
    text = "".join(lines) + rest
    assert proc.returncode == 0, err
    assert "[watch] compiled: first compile" in text
    assert "[watch] compiled: file saved: line 5 edited" in text
    assert "jaxpr equations +2 −0 ~0" in text and "HLO instructions" in text
