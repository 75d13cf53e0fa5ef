"""``torchax-playground race``: one prompt through several modes, each from cold, and their summaries
side by side."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any, TextIO

from app.cli.common import (
    add_model_args,
    add_session_args,
    compute_service,
    count_arg,
    device_for,
    device_line,
    load_engine_for,
    phase_printer,
    record_event,
    session_recorder,
    settings_from_args,
    write_session_outputs,
)
from app.cli.hosts import process_fields
from app.cli.race_settings import run_settings
from app.core.compile_settings.catalog import NAMES
from app.core.events import FinishedEvent, LaneEvent, SteadyRoundEvent, VerdictsEvent
from app.core.mode_catalog import MODE_NAMES, modes_on
from app.core.profile.bound import memory_bound
from app.core.race import EAGER_TOKENS, by_lane, format_race_table, summary_rows, with_verdicts
from app.core.session.requests import RaceRequest
from app.core.steady import SteadyPlan
from app.core.units import counted
from app.core.verdict.words import format_verdicts, json_lines

if TYPE_CHECKING:
    from app.core.engine.engine import Engine
    from app.core.events import SteadyRoundEvent, VerdictsEvent


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    race = sub.add_parser("race", help="run one prompt through several modes and compare them")
    add_model_args(race)
    race.add_argument("--modes", nargs="+", choices=MODE_NAMES, default=None,
                      help="modes to race (default: every mode that runs on --device)")
    race.add_argument("--warm", action="store_true", help="keep compiled steps between modes (default: cold)")
    race.add_argument("--eager-tokens", type=int, default=EAGER_TOKENS, metavar="N",
                      help="token cap of the torchax-eager lane (it dispatches every op on its own; "
                           f"default {EAGER_TOKENS})")
    race.add_argument("--json", action="store_true",
                      help="one JSON object per mode summary, then one per pair's verdict and the steady phase's")
    add_steady_args(race)
    add_settings_args(race)
    add_session_args(race)
    return race


def add_steady_args(race: argparse.ArgumentParser) -> None:
    """The steady-state phase's options (:mod:`app.core.steady`): paired, interleaved rounds after the lanes."""
    plan = SteadyPlan()
    group = race.add_argument_group(
        "steady state", "after the cold lanes, rounds of the same short generation once per mode (the baseline "
        "twice: the A/A noise floor), shuffled per round, until every pair's 95 %% interval is within "
        f"±{plan.target_pct:g} %% or the budget ends; then one verdict per pair")
    group.add_argument("--steady-budget", type=float, default=plan.budget_s, metavar="SECONDS",
                       help=f"seconds of rounds (default {plan.budget_s:g}; the minimum rounds always run)")
    group.add_argument("--steady-rounds", type=int, default=plan.min_rounds, metavar="N",
                       help=f"paired rounds kept at least (default {plan.min_rounds}, at least 2)")
    group.add_argument("--steady-tokens", type=int, default=plan.tokens, metavar="N",
                       help=f"tokens per generation in a round (default {plan.tokens}, at most --max-new-tokens)")
    group.add_argument("--no-steady", action="store_true", help="no steady-state phase: the cold lanes only")


def steady_plan(args: argparse.Namespace) -> Any:
    """The :class:`app.core.steady.SteadyPlan` of ``args`` (None with ``--no-steady``)."""
    if args.no_steady:
        return None
    return SteadyPlan(budget_s=args.steady_budget, min_rounds=args.steady_rounds,
                      tokens=args.steady_tokens).validated()


def add_settings_args(race: argparse.ArgumentParser) -> None:
    """The compiler-settings race's options (:mod:`app.cli.race_settings`)."""
    group = race.add_argument_group(
        "compiler settings", "race one step under several compiler settings instead of several modes: "
        "the model's jit-static decode step, or a program's entry point with --program")
    group.add_argument("--settings", action="append", default=None, metavar="NAME[,NAME…]",
                       help=f"settings to race, comma-separated or repeated: {', '.join(NAMES)}; a jax.config pair "
                            "(jax_optimization_level=O3); 'default' (XLA's defaults, the baseline) is added first")
    group.add_argument("--flags", action="append", default=None, metavar="'XLA_FLAGS'",
                       help="one more setting as an XLA_FLAGS string, written with '=' as it starts with --: "
                            "--flags='--xla_cpu_enable_fast_math=true' "
                            "(applied per compile, not through the environment)")
    group.add_argument("--program", default=None, metavar="FILE.py[:ENTRY]",
                       help="race a program's entry point (default: its first) instead of the model's decode step")
    group.add_argument("--calls", type=count_arg(), default=20, metavar="N",
                       help="calls per setting of a --program race (default 20)")
    group.add_argument("--rounds", type=count_arg(what="rounds"), default=1, metavar="N",
                       help="race every setting N times, round-robin, and print medians (a shared machine is noisy)")
    group.add_argument("--list-settings", action="store_true", help="list the settings catalog and exit")


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.settings or args.flags or args.program or args.list_settings:
        return run_settings(args, out, err)
    settings = settings_from_args(args, capture_ir=False)
    plan = steady_plan(args)
    if not args.modes:
        args.modes = list(modes_on(device_for(args).platform))
    engine = load_engine_for(args, err, on_event=phase_printer(err) if not args.json else None)
    finished: dict[str, FinishedEvent] = {}
    verdicts: VerdictsEvent | None = None
    # the window's request through the window's service (its source maps only when a session file is saved)
    request = RaceRequest(args.prompt, tuple(args.modes), settings, args.eager_tokens, cold=not args.warm,
                          source_maps=bool(args.save_session), steady=plan)
    stream = compute_service(engine, args).handle(request, reraise=True)
    recorder = session_recorder(args, engine, settings, err)  # each lane written as it ends
    for mode, event in by_lane(stream):
        record_event(recorder, event, err)
        if isinstance(event, LaneEvent) and not args.json:
            print(f"[race] {event.index + 1}/{event.n_lanes} {mode}…", file=err, flush=True)
        elif isinstance(event, FinishedEvent) and mode is not None:  # every lane starts with its LaneEvent
            finished[mode] = event
            if not args.json:
                print(f"[race] {mode}: {counted(event.summary.n_tokens, 'token')} in {event.summary.total_ms:,.0f} ms "
                      f"on {event.device}",
                      file=err, flush=True)
        elif isinstance(event, SteadyRoundEvent) and not args.json:
            print(round_line(event), file=err, flush=True)
        elif isinstance(event, VerdictsEvent):
            verdicts = event
    print_results(args, engine, finished, verdicts, out)
    write_session_outputs(args, recorder, err)
    return 0


def round_line(event: SteadyRoundEvent) -> str:
    """A steady-state round on stderr: ``[steady] round 3: torch 1.23 · jit-static 0.51 ms/token``."""
    figures = " · ".join(f"{b.label} {b.ms_per_token:.3g}" for b in event.blocks)
    return f"[steady] round {event.index + 1}: {figures} ms/token" + (
        f" (preempted: {event.preempted})" if event.preempted else "")


def print_results(args: argparse.Namespace, engine: Engine, finished: dict[str, Any], verdicts: VerdictsEvent | None,
                  out: TextIO) -> None:
    """The race's summary table (or its JSON lines), then the steady-state phase's verdicts."""
    bound = memory_bound(engine)
    rows = with_verdicts(summary_rows(finished, bound.bound_ms if bound is not None else None),
                         verdicts.to_json() if verdicts is not None else None)
    if args.json:
        for row in rows:
            done = finished[row["mode"]]
            out.write(json.dumps({"event": "race", **row, "device": done.device, "mesh": done.summary.mesh,
                                  **process_fields(),  # a run across hosts: each row names its process (issue 39)
                                  "token_ids": done.token_ids}) + "\n")
        if verdicts is not None:
            out.write("".join(line + "\n" for line in json_lines(verdicts.to_json())))
        return
    print(f"model {engine.label} | prompt {args.prompt!r} | {device_line(engine)}", file=out)
    print(format_race_table(rows), file=out)
    n = min((len(f.token_ids) for f in finished.values()), default=0)  # torchax-eager's lane is capped
    same = len({tuple(f.token_ids[:n]) for f in finished.values()}) == 1
    print(f"identical tokens across modes (first {n}): {'yes' if same else 'no'}", file=out)
    if verdicts is not None:
        print(format_verdicts(verdicts.to_json()), file=out)

