"""``torchax-playground race --settings O0,O3 [--flags '--xla_…'] [--program FILE.py[:ENTRY]]``: one step compiled and
run under several compiler settings (:mod:`app.core.compile_settings`), printed as a table — setting, compile ms
(trace/lower/compile), steady ms per call, × baseline, equal outputs, peak memory, break-even calls — or, with
``--json``, one ``setting`` line per lane and one ``settings-summary`` line (Pareto set, break-even calls)."""

from __future__ import annotations

import argparse
import json
from typing import Any, TextIO

from app.cli.common import device_line, load_engine_for, phase_printer, settings_from_args


def setting_names(args: argparse.Namespace) -> list[str]:
    """``--settings`` (comma-separated, repeatable) then each ``--flags`` string, in order."""
    names = [n.strip() for group in args.settings or [] for n in group.split(",") if n.strip()]
    return names + [f.strip() for f in args.flags or [] if f.strip()]


def catalog_text() -> str:
    """The catalog as ``--list-settings`` prints it: name, compiler, backend, what it sets, how it is applied."""
    from app.core.compile_settings.catalog import CATALOG

    width = max(len(s.name) for s in CATALOG)
    lines = [f"{s.name:<{width}}  {s.compiler:<8} {s.backend:<4} {s.path:<16} {s.sets}"
             + (f"  ({s.note})" if s.note else "") for s in CATALOG]
    return "\n".join(lines)


def run_settings(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from app.core.compile_settings.figures import SettingLane
    from app.core.errors import InvalidSettingsError

    if args.list_settings:
        print(catalog_text(), file=out)
        return 0
    if getattr(args, "save_session", None):
        raise InvalidSettingsError("--save-session does not keep a settings race yet: leave it out (--json keeps the "
                                   "figures).")
    names = setting_names(args)
    if args.program:
        stream, title = _program_stream(args, names, err)
    else:
        stream, title = _model_stream(args, names, err)
    lanes: list[SettingLane] = []
    for item in stream:
        if isinstance(item, SettingLane):
            lanes.append(item)
            if not args.json:
                print(f"[settings] {item.name}: compile {_ms(item.compile_total_ms)}, steady "
                      f"{_ms(item.steady_ms, 3)}/{item.unit}", file=err, flush=True)
        elif getattr(item, "kind", None) == "lane" and not args.json:
            print(f"[settings] {item.index + 1}/{item.n_lanes} {item.mode}…", file=err, flush=True)
    from app.core.compile_settings.figures import merge_rounds

    _print(merge_rounds(lanes), title + (f" | median of {args.rounds} rounds" if args.rounds > 1 else ""), args.json, out)
    return 0


def _ms(value: float | None, digits: int = 0) -> str:
    return "—" if value is None else f"{value:,.{digits}f} ms"


def _model_stream(args: argparse.Namespace, names: list[str], err: TextIO) -> tuple[Any, str]:
    from app.core.compile_settings.race import RACE_MODE, resolve, settings_race

    args.modes, args.mode = [RACE_MODE], RACE_MODE
    from app.cli.common import device_for

    resolve(names, device_for(args).platform)  # refuse a bad setting before the slow load
    engine = load_engine_for(args, err, on_event=phase_printer(err) if not args.json else None)
    settings = settings_from_args(args, capture_ir=False)
    title = f"model {engine.label} | {RACE_MODE} decode step | prompt {args.prompt!r} | {device_line(engine)}"
    return settings_race(engine, args.prompt, names, settings, rounds=args.rounds), title


def _program_stream(args: argparse.Namespace, names: list[str], err: TextIO) -> tuple[Any, str]:
    import jax

    from app.core.compile_settings.program_race import program_settings_race
    from app.core.compile_settings.race import resolve
    from app.core.programs.loader import load_program

    platform = jax.default_backend()
    resolve(names, platform)
    path, sep, entry = args.program.rpartition(":")
    if not (sep and entry.isidentifier() and path):
        path, entry = args.program, None
    prepared = load_program(path).prepare(entry)
    title = f"program {prepared.entry.name} of {path} | {args.calls} calls per setting | {platform}"
    return program_settings_race(prepared, names, platform, args.calls, rounds=args.rounds), title


def _print(lanes: list[Any], title: str, as_json: bool, out: TextIO) -> None:
    from app.core.compile_settings.figures import break_even_calls, format_table, summary

    if as_json:
        for lane in lanes:
            out.write(json.dumps({"event": "setting", **lane.to_json(),
                                  "break_even_calls": break_even_calls(lanes[0], lane)}) + "\n")
        out.write(json.dumps({"event": "settings-summary", **summary(lanes)}) + "\n")
        return
    print(title, file=out)
    print(format_table(lanes), file=out)
    print("* on the Pareto front (no other setting compiles faster and runs faster); compile ms is the raced "
          "step's own (trace/lower/compile)", file=out)
