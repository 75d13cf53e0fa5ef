"""The settings race of ``torchax-playground race --settings O0,O3`` and ``torchax-playground tradeoff --setting O0
--setting O3`` (:mod:`app.cli.tradeoff`), one path for both: one step compiled and run under several compiler
settings (:mod:`app.core.compile_settings`), printed as a table — setting, compile ms (trace/lower/compile), steady
ms per call, the paired verdict against the baseline, equal outputs, peak memory, break-even calls — or, with
``--json``, one ``setting`` line per lane and one ``settings-summary`` line (Pareto set, break-even calls, the paired
phase, and with ``tradeoff`` the first pass whose output HLO differs from the baseline's, per setting);
``--save-session`` keeps the race (:mod:`app.core.compile_settings.saved`). The "vs baseline" ratios come from paired,
interleaved rounds after the lanes (:mod:`app.core.compile_settings.paired`; the ``--steady-*`` options,
``--no-steady`` for the lanes alone)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TextIO

from app.cli.common import device_for, device_line, load_engine_for, phase_printer, settings_from_args
from app.core.compile_settings.catalog import CATALOG
from app.core.compile_settings.figures import SettingLane, merge_rounds
from app.core.compile_settings.paired import SettingsVerdicts
from app.core.compile_settings.parting import settings_partings
from app.core.compile_settings.race import resolve, settings_race, step_target
from app.core.compile_settings.saved import format_race, json_lines, race_document
from app.core.errors import InvalidSettingsError
from app.core.events import LaneEvent, SteadyBlockEvent
from app.core.passes.lowered import lowered_for
from app.core.programs.compute.race import program_settings_race
from app.core.programs.loader import load_program
from app.core.programs.runner import ProgramRunner
from app.core.recording.store import SessionFile
from app.core.steady import SteadyPlan
from app.core.steps import DECODE, PREFILL
from app.core.verdict.words import progress_line

if TYPE_CHECKING:
    import jax


def setting_names(args: argparse.Namespace) -> list[str]:
    """``--settings`` (comma-separated, repeatable) then each ``--flags`` string, in order."""
    names = [n.strip() for group in args.settings or [] for n in group.split(",") if n.strip()]
    return names + [f.strip() for f in args.flags or [] if f.strip()]


def catalog_text() -> str:
    """The catalog as ``--list-settings`` prints it: name, compiler, backend, what it sets, how it is applied."""
    width = max(len(s.name) for s in CATALOG)
    lines = [f"{s.name:<{width}}  {s.compiler:<8} {s.backend:<4} {s.path:<16} {s.sets}"
             + (f"  ({s.note})" if s.note else "") for s in CATALOG]
    return "\n".join(lines)


def run_settings(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """The settings race of ``race --settings`` and ``tradeoff`` (one path): resolve the settings (refused by name
    before anything loads), race the step, merge the rounds, find where each setting parts from the baseline
    (``args.parting``, ``tradeoff``'s default), print the table or the JSON lines and write ``--save-session``."""
    if args.list_settings:
        print(catalog_text(), file=out)
        return 0
    if getattr(args, "perfetto", None):
        raise InvalidSettingsError("--perfetto does not apply to a settings race (its lanes are kept as figures, "
                                   "not runs): use --save-session or --json.")
    names = setting_names(args)
    step = getattr(args, "step", None)
    if args.program and step:
        raise InvalidSettingsError(f"--step {step} is a model's step: a --program race times its entry point.")
    parting = bool(getattr(args, "parting", False))
    if args.program:
        stream, title, lowered, platform = _program_stream(args, names, err)
    else:
        stream, title, lowered, platform = _model_stream(args, names, step or DECODE, parting, err)
    if getattr(args, "save_session", None):  # an unwritable path fails now, not after the race
        SessionFile().save(args.save_session)
    lanes, paired = _collect(stream, args.json, err)
    lanes = merge_rounds(lanes)
    partings = _partings(lowered(), names, platform, args.json, err) if parting and len(lanes) > 1 else {}
    title += f" | median of {args.rounds} rounds" if args.rounds > 1 else ""
    title += f" | vs baseline from {paired['rounds']} paired rounds" if paired else ""
    document = race_document(title, "program" if args.program else step or DECODE, lanes, partings)
    if args.json:
        out.write("".join(line + "\n" for line in json_lines(document)))
    else:
        print(format_race(document), file=out)
    if getattr(args, "save_session", None):
        size = SessionFile(settings_races=[document]).save(args.save_session)
        print(f"[session] wrote {args.save_session} (a settings race of {len(lanes)} settings, "
              f"{size / 1e3:,.1f} kB)", file=err)
    return 0


def _collect(stream: Iterable[object], quiet: bool, err: TextIO) -> tuple[list[Any], dict[str, Any] | None]:
    """The race's lanes (every round's) and its paired phase (None when none ran), progress on ``err`` unless
    ``quiet``: each lane, then each paired round as it starts."""
    lanes: list[SettingLane] = []
    paired, said = None, None
    for item in stream:
        if isinstance(item, SettingsVerdicts):
            paired = item.doc
        elif isinstance(item, SteadyBlockEvent):
            if not quiet and item.round != said:  # one line per round (and per warm-up)
                said = None if item.round < 0 else item.round
                line = progress_line(item.round, item.label, item.elapsed_s, item.budget_s, item.min_rounds)
                print(f"[paired] {line.replace('steady state', 'paired rounds')}", file=err, flush=True)
        elif isinstance(item, SettingLane):
            lanes.append(item)
            if not quiet:
                print(f"[settings] {item.name}: compile {_ms(item.compile_total_ms)}, steady "
                      f"{_ms(item.steady_ms, 3)}/{item.unit}", file=err, flush=True)
        elif isinstance(item, LaneEvent) and not quiet:  # the one event of kind "lane"
            print(f"[settings] {item.index + 1}/{item.n_lanes} {item.mode}…", file=err, flush=True)
    return lanes, paired


def _partings(lowered: jax.stages.Lowered, names: list[str], platform: str, quiet: bool, err: TextIO) -> dict[str, dict[str, Any]]:
    """Setting name → where it parts from the baseline on ``lowered`` (``Parting.to_json()``)."""
    settings = [s for s in resolve(names, platform) if s.compiler == "XLA"]  # Inductor has no XLA passes
    if not quiet:
        print(f"[parting] recording XLA's pass pipeline under {len(settings)} settings…", file=err, flush=True)
    found = {}
    for parting in settings_partings(lowered, settings):
        found[parting.labels[1]] = parting.to_json()
        if not quiet:
            print(f"[parting] {parting.sentence()}", file=err, flush=True)
    return found


def paired_plan(args: argparse.Namespace) -> Any:
    """The paired rounds that state each setting's "vs baseline" ratio: the mode race's steady-state options
    (``--steady-budget``, default 30 s; ``--steady-rounds``; ``--steady-tokens``: :func:`app.cli.race.add_steady_args`),
    None with ``--no-steady``. Raises :class:`app.core.errors.InvalidSettingsError` for a value out of range."""
    if args.no_steady:
        return None
    return SteadyPlan(budget_s=args.steady_budget, min_rounds=args.steady_rounds, tokens=args.steady_tokens).validated()


def _ms(value: float | None, digits: int = 0) -> str:
    return "—" if value is None else f"{value:,.{digits}f} ms"


#: What a title calls each raced model step.
_STEP_TITLES = {DECODE: "decode step", PREFILL: "prefill step", "loop": "decode loop"}


def _model_stream(args: argparse.Namespace, names: list[str], step: str, parting: bool,
                  err: TextIO) -> tuple[Any, str, Callable[[], Any], str]:
    """``(stream, title, the raced step's Lowered when called, platform)`` of a model's race."""
    mode, kind = step_target(step)
    args.modes, args.mode = [mode], mode
    platform = device_for(args).platform
    resolve(names, platform, step)  # refuse a bad setting before the slow load
    plan = paired_plan(args)
    engine = load_engine_for(args, err, on_event=phase_printer(err) if not args.json else None)
    settings = settings_from_args(args, capture_ir=parting)  # the first lane's IR: the Lowered partings compile
    calls = f" ({max(2, args.calls)} calls)" if step == PREFILL else ""
    title = (f"model {engine.label} | {mode} {_STEP_TITLES[step]}{calls} | prompt {args.prompt!r} | "
             f"{device_line(engine)}")

    def lowered() -> Any:
        return lowered_for(engine, kind, mode)[1]

    return (settings_race(engine, args.prompt, names, settings, rounds=args.rounds, step=step, calls=args.calls,
                          first_lane_ir=True, paired=plan),
            title, lowered, platform)


def _program_stream(args: argparse.Namespace, names: list[str],
                    err: TextIO) -> tuple[Any, str, Callable[[], Any], str]:
    """``(stream, title, the entry point's Lowered when called, platform)`` of a program's race."""
    import jax

    platform = jax.default_backend()
    resolve(names, platform, "program")
    plan = paired_plan(args)
    path, sep, entry = args.program.rpartition(":")
    if not (sep and entry.isidentifier() and path):
        path, entry = args.program, None
    prepared = load_program(path).prepare(entry)
    title = f"program {prepared.entry.name} of {path} | {args.calls} calls per setting | {platform}"

    def lowered() -> Any:
        return lowered_for(ProgramRunner(prepared))[1]

    stream = program_settings_race(prepared, names, platform, args.calls, rounds=args.rounds, paired=plan)
    return stream, title, lowered, platform
