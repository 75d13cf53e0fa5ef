"""``torchax-playground show-session PATH [PATH …]``: print recorded runs without JAX, torch or a model —
as text, as the JSON lines ``generate --json`` printed (``--json``; a kept settings race as the lines ``tradeoff
--json`` printed, its table as text), as a table comparing their summaries
by machine (``--compare``), as a diff of two runs' IR (``--diff-ir STEP``), or as a Perfetto trace
(``--perfetto OUT``)."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from app.core.compile_settings.saved import format_race
from app.core.compile_settings.saved import json_lines as race_json_lines
from app.core.errors import InvalidSettingsError
from app.core.inspect.views import HLO, MODEL_STEPS, keys
from app.core.programs.sites import compile_sites, format_site_table
from app.core.recording.compare import format_compare, ir_diff
from app.core.recording.perfetto import write_trace
from app.core.recording.store import load_all
from app.core.recording.text import format_session, json_lines
from app.core.verdict.words import json_lines as verdict_json_lines

#: This command needs no model libraries: the parser skips quieting transformers (which imports torch).
NEEDS_LIBRARIES = False


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    show = sub.add_parser("show-session", help="print runs recorded with --save-session (no JAX or torch needed)")
    show.add_argument("paths", nargs="+", metavar="PATH", help=".session files")
    show.add_argument("--json", action="store_true",
                      help="each run's records as generate --json printed them (one JSON object per line)")
    show.add_argument("--compare", action="store_true", help="a table of the runs' summaries, labelled by machine")
    show.add_argument("--diff-ir", default=None, metavar="STEP",
                      help=f"diff the IR of STEP ({' or '.join(MODEL_STEPS)}) of the first two runs "
                           "(or --runs A B)")
    # the IR texts of the catalog (app/core/inspect/views.py) a diff compares, as the session comparison
    show.add_argument("--ir", default=HLO, choices=keys(diffable=True),
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
    sessions = load_all(args.paths)
    runs = [r for s in sessions for r in s.runs]
    races = [race for s in sessions for race in s.settings_races]  # compiler-settings races (tradeoff)
    if args.perfetto:
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
        for race in races:
            out.write("".join(line + "\n" for line in race_json_lines(race)))
        for doc in (v for s in sessions for v in s.verdicts):  # a mode race's verdicts, as race --json wrote them
            out.write("".join(line + "\n" for line in verdict_json_lines(doc)))
    elif not args.perfetto:
        texts = [format_session(s) for s in sessions]
        texts += [f"== settings race\n{format_race(race)}" for race in races]
        print("\n\n".join(texts), file=out)
        print_compile_sites(runs, out)
    return 0


def print_compile_sites(runs: list[Any], out: TextIO) -> None:
    """Per run that recorded where its compiles came from (a program's calls: :attr:`CallRecord.compile_site`,
    :attr:`CallRecord.inner_compiles`), its compiles per call site, costliest first
    (:func:`app.core.programs.sites.format_site_table`); runs recorded without them print nothing here."""
    for run in runs:
        records = getattr(run, "records", [])
        if not any(r.compile_site or r.inner_compiles for r in records):
            continue
        print(f"\n{getattr(run, 'label', '') or 'run'}\n{format_site_table(compile_sites(records))}", file=out)
