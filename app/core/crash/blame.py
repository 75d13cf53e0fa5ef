"""Whose code failed: the user's own program (a Code-workspace file, or any Python file that is neither part
of Python, of an installed package nor of this app) or not, and where (file, line, function).

Programs loaded by :mod:`app.core.programs.loader` run as modules named ``torchax_playground_program_N``;
their frames are the user's whatever the file's folder. A ``faulthandler`` dump names files only, so there the
file's location decides."""

from __future__ import annotations

import re
import sys
import sysconfig
import traceback
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from app.core.paths import DIST_PACKAGE, installed, package_root

#: The module names :func:`app.core.programs.loader.load_program` gives programs.
PROGRAM_MODULE_PREFIX = "torchax_playground_program_"
#: This app's folders: installed from a wheel, the whole ``torchax_playground`` package (``app/``, ``widgets/``,
#: ``assets/``: app.core.paths), wherever it is (``pip install --target`` folders are not ``site-packages``); in
#: a checkout ``app/``, ``widgets/``, ``torchax_playground/`` and its ``tests/``, ``bench/``, ``tools/``. A
#: program of the Code workspace's gallery (``app/examples``) is still the user's in a traceback (its module
#: name says so), not in a ``faulthandler`` dump.
APP_ROOTS = (package_root(),) if installed() else tuple(
    package_root() / name for name in ("app", "widgets", DIST_PACKAGE, "tests", "bench", "tools"))
_FAULT_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+) in (?P<name>\S+)')


@dataclass(frozen=True)
class UserFrame:
    """The innermost frame in the user's code: ``file`` (absolute path), ``line`` (1-based), ``function``."""

    file: str
    line: int
    function: str

    def where(self) -> str:
        return f"{self.file}:{self.line} in {self.function}"


def _library_roots() -> list[Path]:
    roots = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix)}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        try:
            roots.add(Path(sysconfig.get_path(key)))
        except KeyError:
            continue
    return sorted(roots)


def is_user_file(filename: str) -> bool:
    """True for a real Python file outside Python, its installed packages and this app (``<string>`` and
    ``<frozen …>`` are not files)."""
    if not filename or filename.startswith("<"):
        return False
    path = Path(filename)
    if not path.is_absolute():
        return False
    if "site-packages" in path.parts or "dist-packages" in path.parts:
        return False
    return not any(path.is_relative_to(root) for root in (*APP_ROOTS, *_library_roots()))


def user_frame(tb: TracebackType | None) -> UserFrame | None:
    """The innermost frame of ``tb`` in the user's program (a program module, or :func:`is_user_file`)."""
    found = None
    for frame, line in traceback.walk_tb(tb):
        name = str(frame.f_globals.get("__name__", ""))
        file = frame.f_code.co_filename
        if name.startswith(PROGRAM_MODULE_PREFIX) or is_user_file(file):
            found = UserFrame(file, line, frame.f_code.co_name)
    return found


def user_frame_in_fault(text: str) -> UserFrame | None:
    """The most recent frame in the user's code of the crashing thread of a ``faulthandler`` dump (its
    ``Current thread`` block, most recent call first; the first block when none is marked current)."""
    blocks = re.split(r"\n(?=(?:Current thread|Thread) 0x)", text)
    current = next((b for b in blocks if "Current thread" in b.splitlines()[0]), None) if blocks else None
    for block in [current] if current else blocks:
        for raw in block.splitlines():
            m = _FAULT_FRAME.match(raw)
            if m and is_user_file(m["file"]):
                return UserFrame(m["file"], int(m["line"]), m["name"])
    return None
