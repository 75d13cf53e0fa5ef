"""The journeys' shared fixture: a real X11 screen (Xvfb, Debian's ``xvfb``, installed by ``.ci/run``)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest


def _free_display() -> int:
    for n in range(91, 140):
        if not Path(f"/tmp/.X11-unix/X{n}").exists() and not Path(f"/tmp/.X{n}-lock").exists():
            return n
    raise RuntimeError("no free X display number")


@pytest.fixture
def x_display(request):
    """An Xvfb screen of ``request.param`` (width, height); yields its DISPLAY string."""
    width, height = request.param
    n = _free_display()
    server = subprocess.Popen(["Xvfb", f":{n}", "-screen", "0", f"{width}x{height}x24", "-nolisten", "tcp"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while not Path(f"/tmp/.X11-unix/X{n}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    yield f":{n}"
    server.terminate()
    server.wait(timeout=10)
