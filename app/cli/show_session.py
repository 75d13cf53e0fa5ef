"""``torchax-playground show-session PATH [PATH …]``: print recorded runs without JAX, torch or a model —
as text, as the JSON lines ``generate --json`` printed (``--json``), as a table comparing their summaries
by machine (``--compare``), as a diff of two runs' IR (``--diff-ir STEP``), or as a Perfetto trace
(``--perfetto OUT``)."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from app.core.inspect.views import MODEL_STEPS, keys

#: This command needs no model libraries: the parser skips quieting transformers (which imports torch).
NEEDS_LIBRARIES = False


def add_parser(sub: Any) -> argparse.ArgumentParser:
    show = sub.add_parser("show-session", help="print runs recorded with --save-session (no JAX or torch needed)")
    show.add_argument("paths", nargs="+", metavar="PATH", help=".session files")
    show.add_argument("--json", action="store_true",
                      help="each run's records as generate --json printed them (one JSON object per line)")
    show.add_argument("--compare", action="store_true", help="a table of the runs' summaries, labelled by machine")
    show.add_argument("--diff-ir", default=None, metavar="STEP",
                      help=f"diff the IR of STEP ({' or '.join(MODEL_STEPS)}) of the first two runs "
                           "(or --runs A B)")
    # the IR texts of the catalog (app/core/inspect/views.py) a diff compares, as the session comparison
    show.add_argument("--ir", default="hlo", choices=keys(diffable=True),
                      help="which IR text --diff-ir compares (default: hlo)")
    show.add_argument("--align", default="text", choices=("text", "source"),
                      help="--diff-ir pairs lines in text order (default) or by source line (file:line of the "
                           "jaxpr_source comments or the HLO metadata; "
                           f"--ir {' or '.join(keys(diffable=True, source_lines=True))})")
    show.add_argument("--runs", nargs=2, type=int, default=None, metavar=("A", "B"),
                      help="1-based positions of the two runs --diff-ir compares, over all files in order")
    show.add_argument("--perfetto", default=None, metavar="OUT", help="write a Perfetto trace of every run")
    return show


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from app.core.errors import InvalidSettingsError
    from app.core.recording.compare import format_compare, ir_diff
    from app.core.recording.store import load_all
    from app.core.recording.text import format_session, json_lines

    sessions = load_all(args.paths)
    runs = [r for s in sessions for r in s.runs]
    if args.perfetto:
        from app.core.recording.perfetto import write_trace

        n = write_trace(args.perfetto, runs)
        print(f"[perfetto] wrote {args.perfetto} ({n} events; open in ui.perfetto.dev)", file=err)
    if args.diff_ir:
        a, b = (args.runs or (1, 2))
        if len(runs) < 2 or not (1 <= a <= len(runs) and 1 <= b <= len(runs)):
            raise InvalidSettingsError(f"--diff-ir needs two runs (positions 1–{len(runs)}); got {a} and {b}.")
        try:
            print(ir_diff(runs[a - 1], runs[b - 1], args.diff_ir, args.ir, align=args.align), file=out)
        except KeyError as exc:
            raise InvalidSettingsError(str(exc.args[0])) from None
    elif args.compare:
        print(format_compare(runs), file=out)
    elif args.json:
        for r in runs:
            for line in json_lines(r):
                out.write(line + "\n")
    elif not args.perfetto:
        print("\n\n".join(format_session(s) for s in sessions), file=out)
    return 0
