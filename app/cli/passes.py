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
from typing import Any, TextIO

from app.cli.common import add_model_args, load_engine_for, phase_printer, program_target, settings_from_args
from app.core.passes.gpu_text import autotune_text, gpu_report, thunk_kinds, thunk_line


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser("passes", help="XLA's pass pipeline of a step: per-pass snapshots, diffs, times, fusions")
    add_model_args(p)
    p.add_argument("--step", choices=("prefill", "decode"), default="decode")
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


def _snapshot_key(value: str) -> int | str:
    return int(value) if value.lstrip("-").isdigit() else value


def _flags(args: argparse.Namespace) -> dict:
    from app.core.passes.compare import parse_xla_flags, validate_xla_flags

    options = parse_xla_flags(args.xla_flags or "")
    validate_xla_flags(options)
    return options


def _compare_sides(args: argparse.Namespace) -> list[tuple[str, str, dict]] | None:
    """``--compare A,B`` → ``[(label, step, options), …]`` (None without --compare)."""
    from app.core.errors import InvalidSettingsError

    if not args.compare:
        return None
    names = [n.strip() for n in args.compare.split(",") if n.strip()]
    if len(names) != 2:
        raise InvalidSettingsError(f"--compare takes two names, e.g. prefill,decode (got {args.compare!r}).")
    if "flags" in names:
        step = next((n for n in names if n != "flags"), args.step)
        if step not in ("prefill", "decode") or not args.xla_flags:
            raise InvalidSettingsError("--compare STEP,flags compares a step without and with --xla-flags: "
                                       "give --xla-flags too.")
        return [(step, step, {}), (f"{step} + flags", step, _flags(args))]
    bad = [n for n in names if n not in ("prefill", "decode")]
    if bad:
        raise InvalidSettingsError(f"Cannot compare {bad[0]!r}: the names are prefill, decode or flags.")
    options = _flags(args)
    return [(n, n, options) for n in names]


def _program_lowered(args: argparse.Namespace, err: TextIO) -> tuple[str, Any]:
    from app.core.programs.loader import load_program
    from app.core.programs.runner import ProgramRunner

    target = argparse.Namespace(example=None, target=args.program)
    path, entry = program_target(target)
    prepared = load_program(path).prepare(entry, args.spec)
    label = f"{prepared.program.display_name}:{prepared.entry.name}"
    print(f"[passes] {label} ({prepared.backend}) args: {prepared.describe_args()}", file=err)
    return label, ProgramRunner(prepared).lower()


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from app.core.errors import InvalidSettingsError
    from app.core.modes.catalog import CATALOG, mode_info
    from app.core.passes.record import record_pipeline

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
    max_new = 2 if "decode" in steps else 1
    settings = settings_from_args(args, max_new_tokens=max_new, stop_at_eos=False)
    engine = load_engine_for(args, err, on_event=phase_printer(err))
    engine.clear_compiled()
    for _ in engine.generate(args.prompt, settings):
        pass
    if sides:
        return _compare(engine, args, sides, out, err)
    step_ir = engine.ir.get((args.mode, args.step))
    lowered = getattr(step_ir, "lowered", None)
    if lowered is None:
        raise InvalidSettingsError(f"No {args.step} step was compiled (did generation stop at the prompt?).")
    print(f"[passes] recording {args.step} step{' with the fusion log (child process)' if args.fusion_log else ''}…",
          file=err, flush=True)
    t0 = time.perf_counter()
    pipeline = record_pipeline(lowered, fusion_log=args.fusion_log, compiler_options=options,
                               kernel_ir=bool(args.kernel_ir))
    _recorded(pipeline, time.perf_counter() - t0, err)
    write_report(pipeline, args, out)
    return 0


def _run_dumps(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from app.core.errors import InvalidSettingsError
    from app.core.passes.dumps import open_dumps

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


def _recorded(pipeline: Any, seconds: float, err: TextIO, verb: str = "recorded") -> None:
    kept = sum(len(s.compressed) for s in pipeline.all_snapshots())
    print(f"[passes] {len(pipeline.snapshots)} snapshots, {len(pipeline.pass_times)} pass names, "
          f"{pipeline.dump_bytes / 1e6:.1f} MB of dumps → {kept / 1e6:.1f} MB compressed, {verb} in "
          f"{seconds:.1f} s", file=err)
    print_kernel_ir(pipeline, err)


def print_kernel_ir(pipeline: Any, err: TextIO) -> None:
    """One ``[passes] kernel IR: …`` line: whether the kernels' IR is in the recording, or the note saying why it
    was lost (nothing for a recording that does not say, e.g. one read with ``--dumps``)."""
    from app.core.passes.model import kernel_ir_line

    line = kernel_ir_line(pipeline)
    if line == "kernel IR: not requested":
        line += " (--kernel-ir dumps each fusion kernel's LLVM IR)"
    if line:
        print(f"[passes] {line}", file=err, flush=True)


def kernel_ir_json(pipeline: Any) -> dict:
    """The ``kernel_ir`` JSON object of a CPU recording: ``status`` (``dumped``, ``not requested`` or the note of
    a lost one), ``dumped``, ``kernels`` (how many fusion kernels have IR) and ``lost``."""
    from app.core.backends import BACKENDS, CPU
    from app.core.passes.model import KERNEL_IR_DUMPED, kernel_ir_lost

    row = BACKENDS.get(pipeline.platform, CPU)
    return {"event": "kernel_ir", "kind": row.kernel_ir, "status": pipeline.kernel_ir,
            "dumped": pipeline.kernel_ir == KERNEL_IR_DUMPED, "kernels": len(pipeline.fusion_ir),
            "lost": kernel_ir_lost(pipeline)}


def _compare(engine: Any, args: argparse.Namespace, sides: list[tuple[str, str, dict]], out: TextIO,
             err: TextIO) -> int:
    from app.core.errors import InvalidSettingsError
    from app.core.passes.compare import compare_pipelines, flags_text
    from app.core.passes.record import record_pipeline

    recorded = []
    for label, step, options in sides:
        lowered = getattr(engine.ir.get((args.mode, step)), "lowered", None)
        if lowered is None:
            raise InvalidSettingsError(f"No {step} step was compiled (did generation stop at the prompt?).")
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


def report_args(what: str, as_json: bool = False, pass_name: str | None = None) -> argparse.Namespace:
    """The :func:`write_report` arguments for one ``inspect --what`` / ``program --what`` view of a
    pipeline: ``passes`` (every pass run), ``fusions``, ``pass-hlo`` (snapshot ``pass_name``) or
    ``compile-phases``."""
    return argparse.Namespace(json=as_json, pass_hlo=pass_name if what == "pass-hlo" else None, diff=None,
                              context=3, search=None, history=None, fusions=what == "fusions",
                              list=what == "passes", fusion_log=False, compile_phases=what == "compile-phases")


def compile_phases_json(pipeline: Any) -> dict:
    """The compile split as one JSON object (``event: compile_phases``, ``total_ms``, ``parts``, groups)."""
    from app.core.passes import query

    b = query.compile_breakdown(pipeline)
    out = {"event": "compile_phases", "total_ms": round(b.total_ms, 3),
           "groups": {g: round(ms, 3) for g, ms in b.by_group().items()},
           "parts": [{"label": p.label, "ms": round(p.ms, 3), "group": p.group, "source": p.source}
                     for p in b.parts], "fusion_compile_ms": round(b.fusion_compile_ms, 3),
           "n_fusion_compiles": b.n_fusion_compiles}
    if pipeline.gpu is not None or not pipeline.has_capture:
        out.update(platform=pipeline.platform, has_capture=pipeline.has_capture,
                   kernel_compile_event=b.kernel_compile_event, ptxas_ms=round(b.ptxas_ms, 3), n_ptxas=b.n_ptxas)
    return out


def gpu_json(pipeline: Any) -> list[dict]:
    """XLA:GPU's extras as JSON objects: one ``pipeline`` event per top-level pipeline (ms, passes, autotune
    flag), the ``autotune`` phase, the ``thunks`` summary and ``kernel_ir`` (PTX files dumped or not)."""
    from app.core.passes import query

    gpu = pipeline.gpu
    rows = [{"event": "pipeline", **r} for r in query.pipeline_rows(pipeline)]
    rows.append({"event": "autotune", **gpu.autotune.summary()})
    rows.append({"event": "thunks", "n": len(gpu.thunks), "n_after_passes": len(gpu.thunks_after_passes),
                 "kinds": thunk_kinds(gpu.thunks_after_passes or gpu.thunks),
                 "command_buffers": sum(t.kind == "kCommandBuffer" for t in gpu.thunks_after_passes)})
    rows.append({"event": "kernel_ir", "kind": "PTX", "files": gpu.kernel_ir_files,
                 "dumped": gpu.kernel_ir_files > 0, "arch": gpu.arch}
                | ({"status": pipeline.kernel_ir} if pipeline.kernel_ir else {}))
    return rows



def write_report(pipeline: Any, args: argparse.Namespace, out: TextIO) -> None:
    """Print what the arguments ask of a recorded pipeline (shared by any source of a ``Lowered``)."""
    from app.core.passes import query

    as_json = args.json
    if args.pass_hlo is not None:
        out.write(pipeline.snapshot(_snapshot_key(args.pass_hlo)).text)
        return
    if args.diff is not None:
        new = pipeline.snapshot(_snapshot_key(args.diff))
        old = query.previous_snapshot(pipeline, new)
        if old is None:
            raise KeyError(f"Snapshot {args.diff!r} is the first: nothing to diff against.")
        d = query.diff_snapshots(old, new, args.context)
        if as_json:
            out.write(json.dumps({"old": d.old, "new": d.new, "added": d.added, "removed": d.removed,
                                  "hunks": [{"header": h.header, "folded_before": h.folded_before,
                                             "lines": [[ln.tag, ln.old, ln.new, ln.text] for ln in h.lines]}
                                            for h in d.hunks], "folded_after": d.folded_after}) + "\n")
        else:
            out.write(d.unified())
        return
    if args.search is not None:
        hits = query.search(pipeline, args.search)
        first = query.first_appearance(pipeline, args.search)
        for h in hits:
            out.write((json.dumps(vars(h)) if as_json else f"{h.label}: line {h.line}: {h.text.strip()}") + "\n")
        if not as_json:
            out.write(f"{len(hits)} snapshots contain {args.search!r}"
                      + (f"; first defined in {first.label} line {first.line}" if first else "") + "\n")
        return
    if args.history is not None:
        h = query.instruction_history(pipeline, args.history)
        rows = [vars(e) for e in h.events] + [d.summary() for d in h.decisions]
        for r in rows:
            out.write((json.dumps(r) if as_json else "  ".join(f"{k}={v}" for k, v in r.items())) + "\n")
        return
    if getattr(args, "thunks", False):
        _write_thunks(pipeline, as_json, out)
        return
    if getattr(args, "autotune", False):
        _write_autotune(pipeline, as_json, out)
        return
    if args.fusions:
        gpu = pipeline.gpu is not None
        for f in query.fusion_table(pipeline):
            row = {"fusion": f.name, "kind": f.kind, "created_by": f.created_by, "created_in": f.created_in,
                   "source": f.source, "absorbed": [list(a) for a in f.absorbed],
                   "decisions": [d.summary() for d in f.decisions], "llvm_ir": f.has_llvm_ir}
            if gpu:
                row.update(config=f.config, autotuned=f.autotuned, kernel_ir="PTX")
            lines = sorted({w for _, _, w in f.absorbed if w} | ({f.source} if f.source else set()))
            out.write(json.dumps(row) + "\n" if as_json else
                      f"{f.name:<36} {f.kind:<8} by {f.created_by or '-':<16} {len(f.absorbed):>3} ops  "
                      f"{', '.join(lines[:3])}{' …' if len(lines) > 3 else ''}"
                      f"{'  [' + f.config + ']' if gpu and f.config else ''}{'  autotuned' if f.autotuned else ''}\n")
        if gpu and not as_json and not pipeline.fusion_ir:
            out.write("PTX per fusion: not dumped (no .ptx files in the dump folder)\n")
        return
    if args.list:
        for r in query.pass_rows(pipeline):
            out.write(json.dumps(r) + "\n" if as_json else _pass_line(r))
        return
    if getattr(args, "compile_phases", False):
        if as_json:
            out.write(json.dumps(compile_phases_json(pipeline)) + "\n")
        else:
            _summary(pipeline, out)
        return
    if args.fusion_log:
        for d in pipeline.fusion_log:
            out.write(json.dumps(d.summary()) + "\n" if as_json else
                      f"{'fused  ' if d.fused else 'refused'} {d.producer} → {d.consumer}"
                      f"{' = ' + d.fusion if d.fusion else ''}{' ' + d.kind if d.kind else ''}: {d.reason}\n")
        if not as_json:
            _summary(pipeline, out)
        return
    if as_json:
        for s in pipeline.all_snapshots():
            out.write(json.dumps({"event": "snapshot", **s.summary()}) + "\n")
        if pipeline.gpu is not None:
            for row in gpu_json(pipeline):
                out.write(json.dumps(row) + "\n")
        elif pipeline.kernel_ir:
            out.write(json.dumps(kernel_ir_json(pipeline)) + "\n")
        out.write(json.dumps(compile_phases_json(pipeline)) + "\n")
        return
    for s in pipeline.all_snapshots():
        out.write(f"{s.index:>5} {s.pipeline[:38]:<38} {s.pass_name[:34]:<34} {s.n_instructions:>6} instr "
                  f"{s.n_fusions:>4} fusions {_kinds(s.fusion_kinds)}\n")
    if pipeline.gpu is not None:
        out.write(gpu_report(pipeline))
    _summary(pipeline, out)


def _write_autotune(pipeline: Any, as_json: bool, out: TextIO) -> None:
    if pipeline.gpu is None:
        out.write(json.dumps({"event": "autotune", "platform": pipeline.platform, "choices": []}) + "\n" if as_json
                  else f"XLA:{pipeline.platform.upper()} does not autotune.\n")
        return
    if as_json:
        out.write(json.dumps({"event": "autotune", **pipeline.gpu.autotune.summary()}) + "\n")
    else:
        out.write(autotune_text(pipeline))


def _write_thunks(pipeline: Any, as_json: bool, out: TextIO) -> None:
    gpu = pipeline.gpu
    thunks = (gpu.thunks_after_passes or gpu.thunks) if gpu is not None else []
    if not thunks and not as_json:
        out.write("No thunk sequence in the dump folder (XLA:GPU writes thunk_sequence.txt).\n")
    for t in thunks:
        if as_json:
            out.write(json.dumps({"event": "thunk", **t.summary()}) + "\n")
        else:
            out.write(thunk_line(t) + "\n")


def _kinds(kinds: dict[str, int]) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted(kinds.items()))


def _pass_line(r: dict) -> str:
    counts = f"{r['n_instructions']:>6} instr {r['n_fusions']:>4} fusions" if r["index"] is not None else ""
    mark = f"#{r['index']:<4}" if r["index"] is not None else "  -  "
    return f"{mark} {r['pipeline'][:36]:<36} {r['pass'][:36]:<36} ×{r['runs']:<3} {r['ms']:>9.3f} ms {counts}\n"


def _summary(pipeline: Any, out: TextIO) -> None:
    from app.core.passes import query

    b = query.compile_breakdown(pipeline)
    if not pipeline.has_capture:
        out.write("\nno profiler capture of the compile in the folder: no pass times, no compile split\n")
        return
    opened = " (read from the capture: XLA's client compile)" if pipeline.source else " (recorded with dumps on)"
    out.write(f"\ncompile {b.total_ms:,.1f} ms{opened}:\n")
    for group, ms in b.by_group().items():
        out.write(f"  {group:<12} {ms:>9.1f} ms  {100 * ms / max(b.total_ms, 1e-9):5.1f} %\n")
    for p in b.parts:
        out.write(f"    {p.label[:48]:<48} {p.ms:>9.2f} ms\n")
    out.write(f"  per-fusion kernel compiles (concurrent): {b.n_fusion_compiles} × {b.kernel_compile_event}, "
              f"{b.fusion_compile_ms:.1f} ms\n")
    if b.n_ptxas:
        out.write(f"  ptxas (concurrent): {b.n_ptxas} × PTX->CUBIN, {b.ptxas_ms:.1f} ms summed\n")
    if pipeline.fusion_log:
        fused = sum(d.fused for d in pipeline.fusion_log)
        out.write(f"  fusion log: {len(pipeline.fusion_log)} decisions, {fused} fused\n")
