"""``torchax-playground inspect``: the jaxpr / StableHLO / HLO / cost / memory / collectives of a compiled
step, or its source map, in any mode that compiles (the catalog's ``inspectable`` modes: the jit modes'
XLA IR, torch-compile's FX graph and Inductor code)."""

from __future__ import annotations

import argparse
import io
from typing import TYPE_CHECKING, TextIO

from app.cli.common import (
    add_model_args,
    load_engine_for,
    phase_printer,
    settings_from_args,
    step_ir_text,
    write_text_output,
)
from app.cli.passes import report_args, write_report
from app.core.errors import InvalidSettingsError
from app.core.inspect import source_map_io
from app.core.inspect.source_map import build_source_map
from app.core.inspect.views import COLLECTIVES, KIND_PASSES, MODEL_STEPS, PASS_HLO, cli_names, view
from app.core.mode_catalog import CATALOG, mode_info
from app.core.parallel.hosts import device_processes
from app.core.parallel.mesh import collectives, format_collectives
from app.core.passes.lowered import lowered_for
from app.core.passes.record import record_pipeline
from app.core.steps import DECODE

if TYPE_CHECKING:
    from app.core.engine.engine import Engine
    from app.core.inspect.ir import StepIR
    from app.core.parallel.mesh import Mesh

#: XLA's pass pipeline, recorded by compiling the step once more with per-pass dumps (``passes`` command).
PASS_WHAT = cli_names(kind=KIND_PASSES)
#: Every ``--what``: the IR-view catalog's (:data:`app.core.inspect.views.IR_VIEWS`), in its order.
WHAT = cli_names()


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    ins = sub.add_parser("inspect", help="print the jaxpr / StableHLO / HLO / cost / memory of a step")
    add_model_args(ins)
    ins.add_argument("--step", choices=MODEL_STEPS, default=DECODE)
    ins.add_argument("--what", choices=WHAT, default=None,
                     help=f"default: {cli_names('xla')[0]} (torch-compile: {cli_names('inductor')[0]})")
    ins.add_argument("-o", "--output", help="write to this file instead of stdout")
    ins.add_argument("--source-map", action="store_true",
                     help="print the source map instead (source line / ATen op → jaxpr equations, StableHLO "
                          "ops, HLO instructions, flops) as CSV, or JSON with -o file.json or --json")
    ins.add_argument("--json", action="store_true",
                     help="with --source-map: JSON instead of CSV; with --what passes / fusions / compile-phases: "
                          "JSON lines (one object per pass / fusion)")
    ins.add_argument("--pass", dest="pass_name", metavar="NAME_OR_INDEX",
                     help="with --what pass-hlo: the snapshot (dump index or pass name, e.g. fusion)")
    ins.add_argument("--fold-layers", action="store_true",
                     help="with --source-map: merge repeated layers (model.layers.*.mlp)")
    return ins


#: What each compiler's step can print (``--what``), its default first.
WHAT_BY_COMPILER = {compiler: cli_names(compiler) for compiler in ("xla", "inductor")}


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    info = mode_info(args.mode)
    if not info.inspectable or info.compiler is None:
        modes = ", ".join(i.name for i in CATALOG if i.inspectable)
        raise InvalidSettingsError(f"Mode {args.mode!r} compiles nothing to inspect: use one of {modes}.")
    allowed = WHAT_BY_COMPILER[info.compiler]
    what = args.what or allowed[0]
    if what not in allowed and not args.source_map:
        raise InvalidSettingsError(f"{args.mode} ({info.compiler}) has no {what}: choose one of {', '.join(allowed)}.")
    if what == view(PASS_HLO).cli and args.pass_name is None:
        raise InvalidSettingsError("--what pass-hlo needs --pass NAME_OR_INDEX (a dump index or a pass name).")
    if args.source_map and info.compiler != "xla":
        raise InvalidSettingsError(f"The source map joins jaxpr, StableHLO and HLO: {args.mode} has none.")
    max_new = 2 if args.step == DECODE else 1  # a decode step compiles at the second token
    settings = settings_from_args(args, max_new_tokens=max_new, stop_at_eos=False)
    engine = load_engine_for(args, err, on_event=phase_printer(err))
    engine.clear_compiled()
    for _ in engine.generate(args.prompt, settings):
        pass
    step_ir = engine.ir.get((args.mode, args.step))
    if step_ir is None:
        raise InvalidSettingsError(f"No {args.step} step was compiled (did generation stop at the prompt?).")
    if args.source_map:
        text = _source_map_text(engine, step_ir, args)
    elif what in PASS_WHAT:
        text = _passes_text(engine, what, args, err)
    else:
        text = _inspect_text(step_ir, what, engine.mesh)
    write_text_output(text, args.output, out, err)
    return 0


def _source_map_text(engine: Engine, step_ir: StepIR, args: argparse.Namespace) -> str:
    sm = build_source_map(step_ir, args.step, getattr(getattr(engine, "loaded", None), "model", None))
    if args.fold_layers:
        sm = sm.fold_layers()
    as_json = args.json or (args.output or "").lower().endswith(".json")
    return source_map_io.to_json(sm, indent=1) if as_json else source_map_io.to_csv(sm)


def _passes_text(engine: Engine, what: str, args: argparse.Namespace, err: TextIO) -> str:
    """Record the step's pass pipeline and print it as ``passes`` does (``--list`` / ``--fusions`` /
    ``--pass-hlo`` / the compile split), through :func:`app.cli.passes.write_report`; the step's ``Lowered``
    from :func:`app.core.passes.lowered.lowered_for`, as every pass recording finds it."""
    _, lowered = lowered_for(engine, args.step, args.mode)
    print(f"[passes] recording the {args.step} step's pass pipeline…", file=err, flush=True)
    pipeline = record_pipeline(lowered)
    buf = io.StringIO()
    write_report(pipeline, report_args(what, args.json, args.pass_name), buf)
    return buf.getvalue()


def _inspect_text(step_ir: StepIR, what: str, mesh: Mesh | None = None) -> str:
    if what == view(COLLECTIVES).cli:  # on a mesh across processes each says whether it crosses a process boundary
        return format_collectives(collectives(step_ir.hlo, device_processes(mesh) if mesh is not None else None),
                                  mesh)
    return step_ir_text(step_ir, what)


