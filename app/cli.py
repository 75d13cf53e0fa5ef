"""Command line: ``torchax-playground generate|inspect …``; no subcommand launches the GUI.

Errors exit with status 2 and one clear line on stderr (a traceback only with ``--debug``).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from typing import Any, TextIO

from app.cli_profile import add_profile_parser, cmd_profile
from app.core.errors import PlaygroundError
from app.core.models.sources import DEFAULT_MODEL
from app.core.settings import DTYPES, MODES, GenerationSettings

WHAT = ("jaxpr", "jaxpr-source", "stablehlo", "hlo", "cost", "memory", "collectives")


def _add_model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", default=DEFAULT_MODEL,
                   help="built-in name, hub id, folder, or random:<preset|config.json|hub id> "
                        f"(default: {DEFAULT_MODEL})")
    p.add_argument("--dtype", choices=DTYPES, default="float32",
                   help="weights dtype (bfloat16 is ~10x slower on XLA:CPU)")
    p.add_argument("--mode", choices=MODES, default="jit-static")
    p.add_argument("--prompt", default="What is the capital of France?",
                   help="the user's text (inside the chat template for instruct models)")
    p.add_argument("--max-new-tokens", type=int, default=64)
    p.add_argument("--temperature", type=float, default=0.0, help="0 = greedy")
    p.add_argument("--top-k", type=int, default=0, help="0 disables")
    p.add_argument("--top-p", type=float, default=1.0, help="1.0 disables")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-cache-len", type=int, default=None,
                   help="static KV-cache positions (default: prompt bucket + max new tokens, rounded to 64)")
    p.add_argument("--ignore-eos", action="store_true", help="generate max-new-tokens even past the end token")
    p.add_argument("--chat", action=argparse.BooleanOptionalAction, default=None,
                   help="format the prompt with the model's chat template (default: on for instruct models)")
    p.add_argument("--system", default="", metavar="TEXT", help="system prompt of a chat (default: none)")
    p.add_argument("--repetition-penalty", type=float, default=1.0, metavar="P",
                   help="transformers' repetition penalty, applied inside the jitted step (1.0 = off)")
    p.add_argument("--mesh", default=None, metavar="AXES",
                   help="device mesh for tensor parallelism, e.g. tp=4 (needs that many devices)")
    add_devices_arg(p)
    p.add_argument("--distributed", action="store_true",
                   help="multi-host: call jax.distributed.initialize() first (auto-detected on TPU, Slurm, "
                        "Open MPI; else give --coordinator, --num-processes and --process-id)")
    p.add_argument("--coordinator", default=None, metavar="HOST:PORT", help="address of process 0")
    p.add_argument("--num-processes", type=int, default=None)
    p.add_argument("--process-id", type=int, default=None)
    p.add_argument("--persistent-cache", nargs="?", const="default", default=None, metavar="DIR",
                   help="use JAX's persistent compilation cache and Inductor's disk caches beside it "
                        "(default dir: the platform cache dir)")


def add_devices_arg(p: argparse.ArgumentParser) -> None:
    """``--devices N`` (the CLI's and the window's). SUPPRESS: a subcommand's missing ``--devices`` must not
    erase one given before it (``torchax-playground --devices 4 gui``); read it with :func:`apply_devices`."""
    p.add_argument("--devices", type=int, default=argparse.SUPPRESS, metavar="N",
                   help="simulate N CPU devices (XLA_FLAGS=--xla_force_host_platform_device_count=N)")


def apply_devices(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int | None:
    """Ask XLA:CPU for ``args.devices`` devices now, before JAX starts (no effect once it has). Exits with
    a usage error below 1. Returns the number, or None when not given."""
    devices = getattr(args, "devices", None)
    if devices is not None and devices < 1:
        parser.error("--devices must be at least 1")
    if devices:
        from app.core.parallel.mesh import simulate_cpu_devices

        simulate_cpu_devices(devices)  # every jax import is lazy, so JAX has not started yet
    return devices


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="torchax-playground",
        description="Run a Hugging Face causal LM on JAX through torchax. No subcommand opens the window.",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    add_devices_arg(parser)  # for the window: ``torchax-playground --devices 4``
    sub = parser.add_subparsers(dest="command")
    gen = sub.add_parser("generate", help="stream text to stdout, then a timing table")
    _add_model_args(gen)
    gen.add_argument("--json", action="store_true",
                     help="one JSON object per line: tokens, call records, then a summary")
    gen.add_argument("--no-ir", action="store_true", help="skip IR capture (faster first calls)")
    ins = sub.add_parser("inspect", help="print the jaxpr / StableHLO / HLO / cost / memory of a step")
    _add_model_args(ins)
    ins.add_argument("--step", choices=("prefill", "decode"), default="decode")
    ins.add_argument("--what", choices=WHAT, default="jaxpr")
    ins.add_argument("-o", "--output", help="write to this file instead of stdout")
    ins.add_argument("--source-map", action="store_true",
                     help="print the source map instead (source line / ATen op → jaxpr equations, StableHLO "
                          "ops, HLO instructions, flops) as CSV, or JSON with -o file.json or --json")
    ins.add_argument("--json", action="store_true", help="with --source-map: JSON instead of CSV")
    ins.add_argument("--fold-layers", action="store_true",
                     help="with --source-map: merge repeated layers (model.layers.*.mlp)")
    race = sub.add_parser("race", help="run one prompt through several modes and compare them")
    _add_model_args(race)
    race.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    race.add_argument("--warm", action="store_true", help="keep compiled steps between modes (default: cold)")
    race.add_argument("--eager-tokens", type=int, default=8, metavar="N",
                      help="token cap of the torchax-eager lane (it dispatches every op on its own; default 8)")
    race.add_argument("--json", action="store_true", help="one JSON object per mode summary")
    add_profile_parser(sub, _add_model_args)
    gui = sub.add_parser("gui", help="open the window (the default)")
    gui.add_argument("--model", default=None)
    add_devices_arg(gui)
    return parser


def _settings(args: argparse.Namespace, **overrides: Any) -> GenerationSettings:
    values = dict(
        mode=args.mode, max_new_tokens=args.max_new_tokens, temperature=args.temperature, top_k=args.top_k,
        top_p=args.top_p, seed=args.seed, max_cache_len=args.max_cache_len, stop_at_eos=not args.ignore_eos,
        chat=args.chat, system_prompt=args.system, repetition_penalty=args.repetition_penalty,
    )
    values.update(overrides)
    return GenerationSettings(**values).validated()


def _quiet_libraries() -> None:
    import warnings

    import transformers

    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    import logging

    logging.getLogger("huggingface_hub").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", category=FutureWarning)


def _load(args: argparse.Namespace, err: TextIO, on_event=None):
    """Load the engine and place it on ``--mesh``; print its warnings and, for a mesh, bytes per device."""
    from app.core.engine.engine import load_engine
    from app.core.parallel.mesh import parse_mesh

    mesh = parse_mesh(args.mesh)  # bad text fails before the slow load
    engine = load_engine(args.model, args.dtype, on_event=on_event)
    for warning in engine.warnings:
        print(f"warning: {warning}", file=err)
    if mesh.n_devices > 1:
        engine.set_mesh(mesh)
        per_device = engine.device_bytes()["weights"]
        sizes = ", ".join(f"{d} {b / 2**20:.1f} MiB" for d, b in per_device.items())
        print(f"[mesh] {mesh}: weights per device: {sizes}", file=err)
    return engine


def _phase_printer(err: TextIO):
    def on_event(event) -> None:
        if event.started:
            print(f"[{event.phase}] {event.detail}…", file=err, flush=True)
        elif event.elapsed_ms is not None:
            print(f"[{event.phase}] {event.detail}: {event.elapsed_ms:,.0f} ms", file=err, flush=True)

    return on_event


def cmd_generate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from app.core.events import CallRecord, FinishedEvent, PhaseEvent, PromptEvent, TokenEvent
    from app.core.report.text import format_call_table, format_summary

    settings = _settings(args, capture_ir=not args.no_ir)
    on_phase = _phase_printer(err) if not args.json else None
    engine = _load(args, err, on_event=on_phase)
    stop = threading.Event()
    previous = signal.signal(signal.SIGINT, lambda *_: stop.set()) if _main_thread() else None
    records: list[CallRecord] = []
    try:
        for event in engine.generate(args.prompt, settings, should_stop=stop.is_set, on_live_phase=on_phase):
            if args.json:
                _write_json_event(out, event, engine.label)
            elif isinstance(event, PromptEvent):
                print(event.text, end="", file=out, flush=True)  # what the model reads (chat template applied)
            elif isinstance(event, TokenEvent):
                print(event.text, end="", file=out, flush=True)
            elif isinstance(event, CallRecord):
                records.append(event)
            elif isinstance(event, PhaseEvent) and on_phase and event.phase != "running":
                on_phase(event)
            elif isinstance(event, FinishedEvent):
                print("\n", file=out)
                print(format_call_table(records), file=out)
                print(format_summary(engine.label, event), file=out)
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    return 0


def _write_json_event(out: TextIO, event: Any, model: str) -> None:
    """One JSON line per token, call record and the final summary, and the formatted prompt of a chat
    (other events are not printed)."""
    from app.core.events import CallRecord, FinishedEvent, PromptEvent, TokenEvent

    if isinstance(event, (TokenEvent, CallRecord)) or (isinstance(event, PromptEvent) and event.chat):
        out.write(json.dumps(event.to_json()) + "\n")
    elif isinstance(event, FinishedEvent):
        out.write(json.dumps({"event": "summary", "reason": event.reason, "model": model,
                              **vars(event.summary), "token_ids": event.token_ids, "text": event.text}) + "\n")
    out.flush()


def _use_persistent_cache(args: argparse.Namespace, err: TextIO) -> None:
    from app.core.compile_cache.xla import default_cache_dir, set_persistent_cache

    if getattr(args, "persistent_cache", None):
        from app.core.compile_cache.inductor import set_inductor_cache
        from app.core.session.service import inductor_dir_for

        path = default_cache_dir() if args.persistent_cache == "default" else args.persistent_cache
        used = set_persistent_cache(path)
        print(f"[cache] persistent compilation caches: JAX {used}, Inductor {set_inductor_cache(inductor_dir_for(used))}",
              file=err)


def cmd_race(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from app.core.events import FinishedEvent, LaneEvent
    from app.core.race import by_lane, format_race_table, race, summary_rows

    settings = _settings(args, capture_ir=False)
    engine = _load(args, err, on_event=_phase_printer(err) if not args.json else None)
    finished: dict[str, FinishedEvent] = {}
    stream = race(engine, args.prompt, args.modes, settings, cold=not args.warm, eager_tokens=args.eager_tokens)
    for mode, event in by_lane(stream):
        if isinstance(event, LaneEvent) and not args.json:
            print(f"[race] {event.index + 1}/{event.n_lanes} {mode}…", file=err, flush=True)
        elif isinstance(event, FinishedEvent):
            finished[mode] = event
            if not args.json:
                print(f"[race] {mode}: {event.summary.n_tokens} tokens in {event.summary.total_ms:,.0f} ms",
                      file=err, flush=True)
    rows = summary_rows(finished)
    if args.json:
        for row in rows:
            out.write(json.dumps({"event": "race", **row, "token_ids": finished[row["mode"]].token_ids}) + "\n")
    else:
        print(f"model {engine.label} | prompt {args.prompt!r}", file=out)
        print(format_race_table(rows), file=out)
        n = min((len(f.token_ids) for f in finished.values()), default=0)  # torchax-eager's lane is capped
        same = len({tuple(f.token_ids[:n]) for f in finished.values()}) == 1
        print(f"identical tokens across modes (first {n}): {'yes' if same else 'no'}", file=out)
    return 0


def cmd_inspect(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from app.core.errors import InvalidSettingsError

    if not args.mode.startswith("jit-"):
        raise InvalidSettingsError(f"Mode {args.mode!r} compiles nothing to inspect: use jit-static or jit-dynamic.")
    max_new = 2 if args.step == "decode" else 1  # a decode step compiles at the second token
    settings = _settings(args, max_new_tokens=max_new, stop_at_eos=False)
    engine = _load(args, err, on_event=_phase_printer(err))
    engine.clear_compiled()
    for _ in engine.generate(args.prompt, settings):
        pass
    step_ir = engine.ir.get((args.mode, args.step))
    if step_ir is None:
        raise InvalidSettingsError(f"No {args.step} step was compiled (did generation stop at the prompt?).")
    if args.source_map:
        text = _source_map_text(engine, step_ir, args)
    else:
        text = _inspect_text(step_ir, args.what)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote {len(text):,} characters to {args.output}", file=err)
    else:
        out.write(text if text.endswith("\n") else text + "\n")
    return 0


def _source_map_text(engine: Any, step_ir: Any, args: argparse.Namespace) -> str:
    from app.core.inspect import source_map_io
    from app.core.inspect.source_map import build_source_map

    sm = build_source_map(step_ir, args.step, getattr(getattr(engine, "loaded", None), "model", None))
    if args.fold_layers:
        sm = sm.fold_layers()
    as_json = args.json or (args.output or "").lower().endswith(".json")
    return source_map_io.to_json(sm, indent=1) if as_json else source_map_io.to_csv(sm)


def _inspect_text(step_ir: Any, what: str) -> str:
    from app.core.inspect.ir import NOT_AVAILABLE

    if what == "collectives":
        from app.core.parallel.mesh import collectives

        found = collectives(step_ir.hlo)
        lines = [f"{c.kind:<18} {c.shape:<16} line {c.line:<6} {c.source}" for c in found]
        return "\n".join([f"{len(found)} collectives", *lines])
    if what in ("cost", "memory"):
        data = step_ir.cost if what == "cost" else step_ir.memory
        return json.dumps(data, indent=2) if data is not None else NOT_AVAILABLE
    text = step_ir.text(what.replace("-", "_"))
    return text if text is not None else NOT_AVAILABLE


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def main(argv: list[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Entry point of ``torchax-playground`` and ``python -m app``. Returns the exit status."""
    out, err = out or sys.stdout, err or sys.stderr
    parser = build_parser()
    args = parser.parse_args(argv)
    devices = apply_devices(parser, args)
    if getattr(args, "distributed", False) or getattr(args, "coordinator", None):
        import jax

        jax.distributed.initialize(args.coordinator, args.num_processes, args.process_id)
    if args.command in (None, "gui"):
        from app.gui.main import main as gui_main

        gui_args = [] if getattr(args, "model", None) is None else ["--model", args.model]
        return gui_main(gui_args + ([] if devices is None else ["--devices", str(devices)]))
    try:
        _quiet_libraries()
        _use_persistent_cache(args, err)
        command = {"generate": cmd_generate, "race": cmd_race, "inspect": cmd_inspect,
                   "profile": cmd_profile}[args.command]
        return command(args, out, err)
    except PlaygroundError as exc:
        if args.debug:
            raise
        print(f"error: {exc}", file=err)
        return 2
    except Exception as exc:  # an unexpected failure still exits with one line
        if args.debug:
            raise
        print(f"error: {type(exc).__name__}: {exc} (run with --debug for the traceback)", file=err)
        return 1
