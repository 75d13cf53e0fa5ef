"""``torchax-playground passes``: XLA's pass pipeline for a model's compiled step, step by step — the passes
that changed the module with their compile times, a diff of one pass's snapshot against the one before,
search across snapshots, the fusion log's decisions, and the compile time taken apart.

The step is compiled as ``inspect`` does (a short generation), then compiled once more with XLA's pass dumps
under a profiler session (:func:`app.core.passes.record.record_pipeline`). With ``--dumps DIR`` nothing is
compiled: a folder of XLA dump files recorded elsewhere (a GPU or TPU VM), with or without a profiler capture of
that compile, is read (:func:`app.core.passes.dumps.open_dumps`); its backend is told from the file names."""

from __future__ import annotations

import argparse
import json
import time
from typing import TYPE_CHECKING, Any, TextIO

from app.cli.common import add_model_args, load_engine_for, phase_printer, program_target, settings_from_args
from app.cli.passes_report import report_args as report_args
from app.cli.passes_report import write_report
from app.core.errors import InvalidSettingsError, PlaygroundError
from app.core.inspect.views import DEFAULT_STEP, STEP_CHOICES, is_model_step
from app.core.mode_catalog import CATALOG, mode_info
from app.core.passes.compare import compare_pipelines, flags_text, parse_xla_flags, validate_xla_flags
from app.core.passes.dumps import open_dumps
from app.core.passes.lowered import lowered_for
from app.core.passes.model import PassPipeline, kernel_ir_line
from app.core.passes.record import record_pipeline
from app.core.programs.loader import load_program
from app.core.programs.runner import ProgramRunner
from app.core.steps import DECODE

if TYPE_CHECKING:
    from app.core.engine.engine import Engine


#: The command's name (it equals the pass-pipeline view's key; the command, not the view, owns it here).
COMMAND = "passes"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    p = sub.add_parser(COMMAND, help="XLA's pass pipeline of a step: per-pass snapshots, diffs, times, fusions")
    p.set_defaults(records_passes=True)  # refused across processes (app.cli.hosts.check_across_processes)
    add_model_args(p)
    p.add_argument("--step", choices=STEP_CHOICES, default=DEFAULT_STEP)
    p.add_argument("--list", action="store_true",
                   help="every pass run (also those that changed nothing) with its ms and the module's counts")
    p.add_argument("--diff", metavar="N", default=None,
                   help="diff snapshot N (dump index or pass name, e.g. fusion) against the snapshot before it")
    p.add_argument("--context", type=int, default=3, help="with --diff: unchanged lines around each change")
    p.add_argument("--search", metavar="TEXT", default=None,
                   help="first line containing TEXT in every snapshot (e.g. fusion.12)")
    p.add_argument("--history", metavar="NAME", default=None, help="one instruction's path through the passes")
    p.add_argument("--pass-hlo", metavar="N", default=None, help="print snapshot N's HLO (dump index or pass name)")
    p.add_argument("--fusions", action="store_true",
                   help="every fusion of the final module: kind, the pass that created it, what it absorbed")
    p.add_argument("--fusion-log", action="store_true",
                   help="compile in a child process with XLA's fusion log and print its decisions")
    p.add_argument("--kernel-ir", action=argparse.BooleanOptionalAction, default=None,
                   help="also dump each fusion kernel's LLVM IR (default: on with --program, off for a model's "
                        "step: jax 0.12's XLA:CPU can abort while dumping a large module's kernels)")
    p.add_argument("--json", action="store_true", help="JSON lines instead of text")
    p.add_argument("--program", metavar="FILE.py[:ENTRY]",
                   help="record your own program's entry point instead of a model's step")
    p.add_argument("--args", dest="spec", metavar="SPEC", help="with --program: argument spec, e.g. 'f32[8,128]'")
    p.add_argument("--compare", metavar="A,B",
                   help="compare two recordings: prefill,decode (or STEP,flags: --step without and with "
                        "--xla-flags): counts side by side and the final modules' diff")
    p.add_argument("--dumps", metavar="DIR", default=None,
                   help="read XLA dump files recorded elsewhere (DIR or DIR/dump) and the profiler capture of that "
                        "compile (DIR/profile/**.xplane.pb, optional) instead of compiling: no model is loaded")
    p.add_argument("--thunks", action="store_true",
                   help="XLA:GPU: the thunk sequence (kernels, command buffers) after the thunk passes")
    p.add_argument("--autotune", action="store_true",
                   help="XLA:GPU: the autotuning phase: what was tuned, the chosen config, candidates, time")
    p.add_argument("--xla-flags", metavar="FLAGS", default=None,
                   help="record the step compiled with these XLA options, e.g. --xla-flags="
                        "'--xla_cpu_enable_fast_math=true' (with '=': the value starts with --; the dashes may "
                        "be left out; unknown flags are refused by name)")
    return p


def _flags(args: argparse.Namespace) -> dict:
    options = parse_xla_flags(args.xla_flags or "")
    validate_xla_flags(options)
    return options


def _compare_sides(args: argparse.Namespace) -> list[tuple[str, str, dict]] | None:
    """``--compare A,B`` → ``[(label, step, options), …]`` (None without --compare)."""
    if not args.compare:
        return None
    names = [n.strip() for n in args.compare.split(",") if n.strip()]
    if len(names) != 2:
        raise InvalidSettingsError(f"--compare takes two names, e.g. prefill,decode (got {args.compare!r}).")
    if "flags" in names:
        step = next((n for n in names if n != "flags"), args.step)
        if not is_model_step(step) or not args.xla_flags:
            raise InvalidSettingsError("--compare STEP,flags compares a step without and with --xla-flags: "
                                       "give --xla-flags too.")
        return [(step, step, {}), (f"{step} + flags", step, _flags(args))]
    bad = [n for n in names if not is_model_step(n)]
    if bad:
        raise InvalidSettingsError(f"Cannot compare {bad[0]!r}: the names are prefill, decode or flags.")
    options = _flags(args)
    return [(n, n, options) for n in names]


def _program_lowered(args: argparse.Namespace, err: TextIO) -> tuple[str, Any]:
    target = argparse.Namespace(example=None, target=args.program)
    path, entry = program_target(target)
    prepared = load_program(path).prepare(entry, args.spec)
    label = f"{prepared.program.display_name}:{prepared.entry.name}"
    print(f"[passes] {label} ({prepared.backend}) args: {prepared.describe_args()}", file=err)
    return label, lowered_for(ProgramRunner(prepared))[1]


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.dumps:
        return _run_dumps(args, out, err)
    if args.program:
        if args.compare:
            raise InvalidSettingsError("--compare works on a model's steps, not with --program.")
        options = _flags(args)
        label, lowered = _program_lowered(args, err)
        print(f"[passes] recording {label}…", file=err, flush=True)
        t0 = time.perf_counter()
        pipeline = record_pipeline(lowered, fusion_log=args.fusion_log, compiler_options=options,
                                   kernel_ir=args.kernel_ir is not False)
        _recorded(pipeline, time.perf_counter() - t0, err)
        write_report(pipeline, args, out)
        return 0
    sides = _compare_sides(args)
    options = _flags(args) if sides is None else {}
    info = mode_info(args.mode)
    if info.compiler != "xla":
        modes = ", ".join(i.name for i in CATALOG if i.inspectable and i.compiler == "xla")
        raise InvalidSettingsError(f"Mode {args.mode!r} is not compiled by XLA: use one of {modes}.")
    steps = {s for _, s, _ in sides} if sides else {args.step}
    max_new = 2 if DECODE in steps else 1
    settings = settings_from_args(args, max_new_tokens=max_new, stop_at_eos=False)
    engine = load_engine_for(args, err, on_event=phase_printer(err))
    engine.clear_compiled()
    for _ in engine.generate(args.prompt, settings):
        pass
    if sides:
        return _compare(engine, args, sides, out, err)
    lowered = _step_lowered(engine, args.mode, args.step)
    print(f"[passes] recording {args.step} step{' with the fusion log (child process)' if args.fusion_log else ''}…",
          file=err, flush=True)
    t0 = time.perf_counter()
    pipeline = record_pipeline(lowered, fusion_log=args.fusion_log, compiler_options=options,
                               kernel_ir=bool(args.kernel_ir))
    _recorded(pipeline, time.perf_counter() - t0, err)
    write_report(pipeline, args, out)
    return 0


def _run_dumps(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    refused = [flag for flag, on in (("--program", args.program), ("--compare", args.compare),
                                     ("--xla-flags", args.xla_flags), ("--fusion-log", args.fusion_log)) if on]
    if refused:
        raise InvalidSettingsError(f"--dumps reads a compile recorded elsewhere: {', '.join(refused)} needs a compile "
                                   "here.")
    t0 = time.perf_counter()
    pipeline = open_dumps(args.dumps)
    print(f"[passes] {args.dumps}: XLA:{pipeline.platform.upper()} module {pipeline.module}, "
          f"{'with' if pipeline.has_capture else 'without'} a capture of the compile", file=err)
    _recorded(pipeline, time.perf_counter() - t0, err, "read")
    write_report(pipeline, args, out)
    return 0


def _recorded(pipeline: PassPipeline, seconds: float, err: TextIO, verb: str = "recorded") -> None:
    kept = sum(len(s.compressed) for s in pipeline.all_snapshots())
    print(f"[passes] {len(pipeline.snapshots)} snapshots, {len(pipeline.pass_times)} pass names, "
          f"{pipeline.dump_bytes / 1e6:.1f} MB of dumps → {kept / 1e6:.1f} MB compressed, {verb} in "
          f"{seconds:.1f} s", file=err)
    print_kernel_ir(pipeline, err)


def print_kernel_ir(pipeline: PassPipeline, err: TextIO) -> None:
    """One ``[passes] kernel IR: …`` line: whether the kernels' IR is in the recording, or the note saying why it
    was lost (nothing for a recording that does not say, e.g. one read with ``--dumps``)."""
    line = kernel_ir_line(pipeline)
    if line == "kernel IR: not requested":
        line += " (--kernel-ir dumps each fusion kernel's LLVM IR)"
    if line:
        print(f"[passes] {line}", file=err, flush=True)


def _step_lowered(engine: Engine, mode: str, step: str) -> Any:
    """The ``Lowered`` of the engine's ``step`` compiled in ``mode`` (:func:`app.core.passes.lowered.lowered_for`);
    raises :class:`InvalidSettingsError` when generation compiled no such step."""
    try:
        found, lowered = lowered_for(engine, step, mode)
    except PlaygroundError:
        found, lowered = "", None
    if found != mode or lowered is None:
        raise InvalidSettingsError(f"No {step} step was compiled (did generation stop at the prompt?).")
    return lowered


def _compare(engine: Engine, args: argparse.Namespace, sides: list[tuple[str, str, dict]], out: TextIO,
             err: TextIO) -> int:
    recorded = []
    for label, step, options in sides:
        lowered = _step_lowered(engine, args.mode, step)
        print(f"[passes] recording {label}{' with ' + flags_text(options) if options else ''}…", file=err, flush=True)
        recorded.append(record_pipeline(lowered, compiler_options=options))
    c = compare_pipelines(recorded[0], recorded[1], (sides[0][0], sides[1][0]), args.context)
    if args.json:
        out.write(json.dumps({"event": "compare", **c.summary()}) + "\n")
        return 0
    out.write(c.table())
    if c.diff is not None:
        out.write(f"\nfinal modules: {c.diff.removed} lines only in {c.labels[0]}, {c.diff.added} only in "
                  f"{c.labels[1]}\n")
        out.write(c.diff.unified())
    return 0
