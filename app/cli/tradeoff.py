"""``torchax-playground tradeoff (--model M [--step decode|prefill|loop] | --program FILE[:ENTRY]) --setting NAME …
[--flags 'XLA_FLAGS'] [--json] [--save-session F]``: the compile-versus-run trade-off of one step under several
compiler settings — per setting its compile split, steady ms per call, equal outputs and peak memory; the Pareto set
and break-even calls; and the first XLA pass whose output HLO differs from the baseline's. The race is
``race --settings``' own (:func:`app.cli.race_settings.run_settings`); this command adds ``--step`` and the
partings (on unless ``--no-parting``)."""

from __future__ import annotations

import argparse
from typing import TextIO

from app.cli.common import add_model_args, count_arg
from app.cli.race import add_steady_args
from app.cli.race_settings import run_settings, setting_names
from app.core.compile_settings.catalog import NAMES
from app.core.compile_settings.race import STEPS
from app.core.errors import InvalidSettingsError


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    p = sub.add_parser("tradeoff", help="one step under several compiler settings: compile time against run time, "
                                        "break-even calls, and the pass where two settings part")
    add_model_args(p)
    p.add_argument("--step", choices=tuple(STEPS), default=None,
                   help="the model step to race: decode (jit-static's decode step, the default), prefill "
                        "(jit-static's prefill, --calls calls) or loop (jit-loop's whole compiled decode loop)")
    p.add_argument("--program", default=None, metavar="FILE.py[:ENTRY]",
                   help="race a program's entry point (default: its first) instead of a model step")
    p.add_argument("--setting", dest="settings", action="append", default=None, metavar="NAME",
                   help=f"a setting to race, repeatable (or comma-separated): {', '.join(NAMES)}, or a jax.config "
                        "pair (jax_optimization_level=O3); 'default' (XLA's defaults, the baseline) is added first")
    p.add_argument("--flags", action="append", default=None, metavar="'XLA_FLAGS'",
                   help="one more setting as an XLA_FLAGS string, written with '=': "
                        "--flags='--xla_cpu_enable_fast_math=true' (applied per compile)")
    p.add_argument("--calls", type=count_arg(), default=20, metavar="N",
                   help="calls per setting of a --program race or of --step prefill (default 20)")
    p.add_argument("--rounds", type=count_arg(what="rounds"), default=1, metavar="N",
                   help="race every setting N times, round-robin, and print medians (a shared machine is noisy)")
    p.add_argument("--no-parting", dest="parting", action="store_false",
                   help="skip recording XLA's pass pipelines (each setting's step compiled once more with pass "
                        "dumps) to name the first pass whose output differs from the baseline's")
    p.add_argument("--list-settings", action="store_true", help="list the settings catalog and exit")
    add_steady_args(p)  # the paired rounds of each "vs baseline" ratio
    p.add_argument("--json", action="store_true",
                   help="one JSON line per setting and a settings-summary line (Pareto set, break-even calls, "
                        "first differing pass per setting)")
    p.add_argument("--save-session", default=None, metavar="PATH",
                   help="keep the race in a session file (show-session prints it, without JAX)")
    return p


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if not args.list_settings and not setting_names(args):
        raise InvalidSettingsError("Name at least one setting to race against the baseline: --setting O3 "
                                   "(--list-settings lists them).")
    return run_settings(args, out, err)
