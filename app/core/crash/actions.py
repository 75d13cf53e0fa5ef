"""The last user actions (what a crash report lists under "Last actions"): a thread-safe ring buffer of
timestamped one-line descriptions, written to a file as they happen so a hard crash keeps them.

Only names go in (a request's kind, a model name, a menu item, a program's file), never a prompt's text."""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from pathlib import Path

#: How many actions a report lists (the newest).
KEEP = 30


class ActionLog:
    """``record(text)`` from any thread; ``lines()`` oldest first as ``"HH:MM:SS text"``. With ``path`` each
    record rewrites that file (a few hundred bytes; an action is a user's click, not a token)."""

    def __init__(self, path: Path | None = None, keep: int = KEEP) -> None:
        self.path = path
        self._lines: deque[str] = deque(maxlen=keep)
        self._lock = threading.Lock()

    def record(self, text: str) -> None:
        line = f"{time.strftime('%H:%M:%S')} {' '.join(str(text).split())[:200]}"
        with self._lock:
            self._lines.append(line)
            if self.path is not None:
                try:
                    tmp = self.path.with_name(self.path.name + ".tmp")
                    tmp.write_text("\n".join(self._lines) + "\n", encoding="utf-8")
                    os.replace(tmp, self.path)
                except OSError:
                    pass  # a full or read-only disk must not turn an action into an error

    def lines(self) -> list[str]:
        with self._lock:
            return list(self._lines)


def read_lines(path: Path) -> list[str]:
    """The actions a (dead) run wrote to ``path``, oldest first; ``[]`` when there is no such file."""
    try:
        return [x for x in path.read_text(encoding="utf-8", errors="replace").splitlines() if x.strip()]
    except OSError:
        return []


def describe_request(request: object) -> str:
    """A compute request as an action line: its kind and the names it carries (``RunRequest mode=jit-static
    model=pydoc-llama``), never its prompt text."""
    parts = [type(request).__name__]
    for name in ("model", "mode", "modes", "dtype", "path", "entry", "paths"):
        value = getattr(request, name, None)
        if value in (None, "", (), []):
            continue
        if isinstance(value, list | tuple):
            value = ",".join(os.path.basename(str(v)) if name == "paths" else str(v) for v in value)
        parts.append(f"{name}={value}")
    return " ".join(parts)
