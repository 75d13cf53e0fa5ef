"""The crash folder: ``<cache>/crash`` (:func:`app.core.paths.cache_dir`, so ``TORCHAX_PLAYGROUND_CACHE_DIR``
moves it; ``~/.cache/torchax-playground/crash`` on Linux). Nothing in it leaves the machine.

- ``runs/<pid>/``: one folder per running window: ``fault.log`` (``faulthandler`` writes a hard crash's
  stacks there), ``actions.log`` (the last actions, :mod:`app.core.crash.actions`) and ``facts.txt`` (versions
  and backend, written once the window is up). A clean exit removes its folder.
- ``reports/<time>-<kind>-<pid>.txt``: every report, newest last (:data:`KEEP_REPORTS` kept).
- ``offer.txt``: reports of hard crashes that no window has offered yet (one file name a line).

:func:`harvest` turns the folder of a run whose process is gone and whose ``fault.log`` is not empty into a
report (the next start, or ``torchax-playground report``, does it); a gone run with an empty fault file just
ended without cleaning up (killed) and is removed.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from app.core.crash.actions import read_lines
from app.core.crash.report import CrashReport, from_fault
from app.core.paths import cache_dir

#: Reports kept in ``reports/`` (the oldest go first).
KEEP_REPORTS = 50
FAULT, ACTIONS, FACTS = "fault.log", "actions.log", "facts.txt"


def crash_dir() -> Path:
    """``<cache>/crash`` (not created here)."""
    return cache_dir() / "crash"


def run_dir(pid: int | None = None) -> Path:
    """The folder of the run of process ``pid`` (this process by default)."""
    return crash_dir() / "runs" / str(os.getpid() if pid is None else pid)


def reports_dir() -> Path:
    return crash_dir() / "reports"


def save_report(report: CrashReport, pid: int | None = None) -> Path:
    """Write ``report`` to ``reports/`` and return its path (older reports beyond :data:`KEEP_REPORTS` go).
    Raises OSError when the folder cannot be written."""
    folder = reports_dir()
    folder.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.strptime(report.when, "%Y-%m-%d %H:%M:%S"))
    base = f"{stamp}-{report.kind.replace(' ', '-')}-{os.getpid() if pid is None else pid}"
    path = folder / f"{base}.txt"
    n = 1
    while path.exists():
        n += 1
        path = folder / f"{base}-{n}.txt"
    path.write_text(report.text(), encoding="utf-8")
    for old in list_reports()[:-KEEP_REPORTS]:
        old.unlink(missing_ok=True)
    return path


def list_reports() -> list[Path]:
    """Every saved report, oldest first (by modification time, then name)."""
    try:
        found = [p for p in reports_dir().iterdir() if p.suffix == ".txt"]
    except OSError:
        return []
    return sorted(found, key=lambda p: (p.stat().st_mtime, p.name))


def last_report() -> Path | None:
    """The newest report, after :func:`harvest` has turned any dead run's fault file into one."""
    harvest()
    reports = list_reports()
    return reports[-1] if reports else None


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process now holds that id
        return True
    except OSError:
        return False
    return True


def harvest() -> list[Path]:
    """Reports of the runs that died hard (their process gone, their ``fault.log`` not empty), saved and added
    to ``offer.txt``; every gone run's folder is removed. Returns the new reports' paths."""
    try:
        runs = list((crash_dir() / "runs").iterdir())
    except OSError:
        return []
    new: list[Path] = []
    for folder in runs:
        if not folder.name.isdigit() or _alive(int(folder.name)):
            continue
        try:
            dump = (folder / FAULT).read_text(encoding="utf-8", errors="replace")
        except OSError:
            dump = ""
        if dump.strip():
            try:
                when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime((folder / FAULT).stat().st_mtime))
                facts = read_lines(folder / FACTS) or None
                report = from_fault(dump, when=when, actions=read_lines(folder / ACTIONS), facts=facts)
                new.append(save_report(report, int(folder.name)))
            except OSError:
                continue
        shutil.rmtree(folder, ignore_errors=True)
    if new:
        try:
            with (crash_dir() / "offer.txt").open("a", encoding="utf-8") as f:
                f.writelines(f"{p.name}\n" for p in new)
        except OSError:
            pass
    return new


def take_offers() -> list[Path]:
    """The hard-crash reports no window has offered yet (existing files only), and forget them: a window calls
    this once at start to offer the previous run's report."""
    offer = crash_dir() / "offer.txt"
    try:
        names = offer.read_text(encoding="utf-8").split()
        offer.unlink()
    except OSError:
        return []
    return [p for p in (reports_dir() / n for n in names) if p.exists()]
