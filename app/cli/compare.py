"""``torchax-playground compare A.session B.session [--run N --run M] [--json] [--report OUT.html]``: two recorded
runs side by side (issue 58) without JAX, torch or a model — the verdict line first, then compile time per stage,
steady speed as a ratio (with its 95 % interval when a race paired the runs in rounds), the structural diffs of
their optimized HLO and StableHLO, the first XLA pass whose output differs, token parity and what differs in
versions, flags and machine (:mod:`app.core.compare`); ``--report`` writes it as one self-contained HTML page
(:mod:`app.core.compare.report`)."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import TextIO

from app.core.compare.report import write_report
from app.core.compare.runs import compare_runs
from app.core.compare.text import format_comparison
from app.core.errors import InvalidSettingsError
from app.core.recording.store import load_all

#: This command needs no model libraries: the parser skips quieting transformers (which imports torch).
NEEDS_LIBRARIES = False


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    cmp = sub.add_parser("compare", help="two recorded runs side by side with a verdict (no JAX or torch needed)")
    cmp.add_argument("paths", nargs="+", metavar="PATH", help=".session files (one holding both runs, or two)")
    cmp.add_argument("--run", dest="runs", action="append", type=int, default=None, metavar="N",
                     help="1-based position of a run over all files in order; give it twice (default: the first "
                          "run of each of two files, else runs 1 and 2)")
    cmp.add_argument("--json", action="store_true", help="every figure as one JSON object")
    cmp.add_argument("--report", metavar="OUT.html", default=None,
                     help="also write a one-page, self-contained HTML report (verdict, plots as inline SVG)")
    return cmp


def _positions(args: argparse.Namespace, counts: list[int]) -> tuple[int, int]:
    total = sum(counts)
    if args.runs:
        if len(args.runs) != 2:
            raise InvalidSettingsError(f"--run is given twice (A and B); got {len(args.runs)}.")
        a, b = args.runs
    elif len(counts) == 2 and all(counts):
        a, b = 1, counts[0] + 1
    else:
        a, b = 1, 2
    if not (1 <= a <= total and 1 <= b <= total):
        raise InvalidSettingsError(f"compare needs two runs (positions 1–{total}); got {a} and {b}.")
    return a, b


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    sessions = load_all(args.paths)
    runs = [(r, s) for s in sessions for r in s.runs]
    a, b = _positions(args, [len(s.runs) for s in sessions])
    (run_a, file_a), (run_b, file_b) = runs[a - 1], runs[b - 1]
    # race numbers are a file's own: only runs of one file can be lanes of one race, paired in its rounds
    doc = compare_runs(run_a, run_b, file_a.verdicts if file_a is file_b else [])
    if args.report:
        generated = f"{time.strftime('%Y-%m-%d %H:%M')} · " + " · ".join(Path(p).name for p in args.paths)
        try:
            path = write_report(doc, args.report, generated)
        except OSError as exc:
            raise InvalidSettingsError(f"Cannot write the report {args.report}: {exc.strerror or exc}.") from None
        print(f"report: {path}", file=err)
    if args.json:
        out.write(json.dumps(doc) + "\n")
    else:
        print(format_comparison(doc), file=out)
    return 0
