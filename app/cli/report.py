"""``torchax-playground report [--last | --list | --path]``: the crash reports the app kept on this machine
(``<cache>/crash/reports``; :mod:`app.core.crash.store`). Nothing is uploaded: paste one into an issue
yourself. A window that died hard since the last start becomes a report first (its ``faulthandler`` file)."""

from __future__ import annotations

import argparse
from typing import TextIO

from app.core.crash.store import last_report, list_reports, reports_dir

#: Reads files only: the parser skips quieting the model libraries (which imports torch).
NEEDS_LIBRARIES = False


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    report = sub.add_parser("report", help="print the crash reports kept on this machine (nothing is uploaded)")
    what = report.add_mutually_exclusive_group()
    what.add_argument("--last", action="store_true", help="print the newest report (the default)")
    what.add_argument("--list", action="store_true", help="list every kept report, newest last")
    what.add_argument("--path", action="store_true", help="print the folder the reports are kept in")
    return report


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Exit 0 with the report (or list, or folder); 1 with one line on ``err`` when there is no report."""
    if args.path:
        print(reports_dir(), file=out)
        return 0
    last = last_report()  # harvests dead runs first
    if last is None:
        print(f"no crash reports in {reports_dir()}: nothing has crashed (or the folder was emptied)", file=err)
        return 1
    if args.list:
        for path in list_reports():
            first = next((x for x in path.read_text(encoding="utf-8", errors="replace").splitlines()
                          if x.startswith("what: ")), "what: ?")
            print(f"{path}  {first.removeprefix('what: ')}", file=out)
        return 0
    print(f"# {last}", file=err)
    out.write(last.read_text(encoding="utf-8", errors="replace"))
    return 0
