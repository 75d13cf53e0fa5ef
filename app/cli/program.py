"""``torchax-playground program FILE.py[:ENTRY]``: run your own JAX function or PyTorch module — timed calls,
jit vs no-jit, a shape sweep with power-of-two buckets — or print its jaxpr / StableHLO / HLO / cost / memory.
``--json`` writes the same ``call`` and ``summary`` lines as ``generate --json``; ``--example NAME`` runs a
gallery example, ``--list-examples`` lists them. ``--static-values [ARG=]V1,V2,…`` makes one call per value of a
static argument, so a changed value compiles again and says which argument changed and how."""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import signal
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from app.cli.common import (
    add_session_args,
    autosave_recorder,
    count_arg,
    main_thread,
    program_target,
    step_ir_text,
    write_json_event,
    write_session_outputs,
    write_text_output,
)
from app.cli.passes import print_kernel_ir, report_args, write_report
from app.core.events import FinishedEvent
from app.core.inspect.views import KIND_PASSES, cli_names
from app.core.live_recording import program_settings
from app.core.passes.lowered import lowered_for
from app.core.passes.record import record_pipeline
from app.core.programs.arguments import parse_argnums
from app.core.programs.compute.requests import ProgramRequest
from app.core.programs.compute.service import ProgramService, plan_request
from app.core.programs.gallery import list_examples
from app.core.programs.ir import entry_ir
from app.core.programs.lanes import COMPARE, run_lanes
from app.core.programs.loader import load_program
from app.core.programs.runner import JIT, NO_JIT, ProgramRunner
from app.core.programs.sites import compile_sites, format_site_table
from app.core.programs.specs import SpecError
from app.core.programs.watch import watch_file
from app.core.recording import RunRecorder
from app.core.report.text import format_call_table
from app.core.units import counted, ms

if TYPE_CHECKING:
    from collections.abc import Callable

    from app.core.programs.loader import PreparedCall
    from app.core.programs.runner import RunResult

#: ``--what``: the IR-view catalog's views an entry point has (``program``), in its order.
WHAT = cli_names(program=True)
#: ``--what`` answered by recording XLA's pass pipeline (as ``passes --program``).
PASS_WHAT = cli_names(kind=KIND_PASSES, program=True)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    p = sub.add_parser("program", help="run or inspect your own JAX function / PyTorch module from a .py file")
    p.add_argument("target", nargs="?", metavar="FILE.py[:ENTRY]",
                   help="the program and optionally its entry point (default: the first one)")
    p.add_argument("--example", metavar="NAME", help="a gallery example instead of FILE (see --list-examples)")
    p.add_argument("--list-examples", action="store_true", help="list the gallery examples and exit")
    p.add_argument("--list", action="store_true", help="list the program's entry points and exit")
    p.add_argument("--args", dest="spec", metavar="SPEC",
                   help="argument spec instead of the file's example arguments, e.g. 'f32[8,128], 3' or "
                        "'({\"w\": f32[4,4]}, i32[8])' (random data, seeded)")
    p.add_argument("--static", metavar="I,J", help="static argument indices (overrides the file's)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random data for --args and --sweep")
    p.add_argument("--calls", type=count_arg(), default=None, help="number of calls (default: 5)")
    p.add_argument("--static-values", action="append", default=None, metavar="[ARG=]V1,V2,…",
                   help="one call per value, each with this value of a static argument, so a call that "
                        "changes it compiles again and says why ('static argument n changed: 3 → 4'); a "
                        "value seen before reuses its executable. ARG: the parameter's name as written or "
                        "its index, optional when the entry has one static argument; values are Python "
                        "literals (3 · 2.5 · True · 'relu' · (2,3)). Repeat it to vary several static "
                        "arguments together (lists of one length). Replaces --calls; not with --sweep. "
                        "E.g. --example static_argnums --static-values length=5,5,8,5")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--no-jit", action="store_true", help="op-by-op dispatch instead of jax.jit")
    mode.add_argument("--compare-jit", action="store_true", help="the jit run, then the no-jit run")
    p.add_argument("--sweep", metavar="1:N|SIZES|SHAPES",
                   help="one call per size of argument --sweep-arg's first axis: 1:16, 1:64:8, 3,5,9, or "
                        "array specs 'f32[1,128], f32[2,128]'")
    p.add_argument("--sweep-arg", default=None, metavar="NAME|K",
                   help="the swept argument, by parameter name or user index (default: the first array argument, "
                        "as in the window, where the sweep field takes x=1:16)")
    p.add_argument("--bucket", action="store_true",
                   help="with --sweep: also run the sweep zero-padded to power-of-two buckets and compare compiles")
    p.add_argument("--what", choices=WHAT, help="print this IR of the entry point instead of running calls")
    p.add_argument("-o", "--output", help="with --what: write to this file instead of stdout")
    p.add_argument("--json", action="store_true", help="one JSON object per call record, then a summary per run "
                   "(with compile_sites: per call site, its compiles, compile ms and causes)")
    p.add_argument("--watch", action="store_true",
                   help="compile the entry again on every save of FILE and print what changed in its jaxpr and HLO, "
                        "the compile's cause and its trace / lower / compile ms (Ctrl+C ends it)")
    add_session_args(p)
    return p


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.list_examples:
        for ex in list_examples():
            print(f"{ex.name:<20} {ex.title}\n{'':<20} {ex.point}", file=out)
        return 0
    path, entry_name = program_target(args)
    stop = threading.Event()
    previous = signal.signal(signal.SIGINT, lambda *_: stop.set()) if main_thread() else None
    try:
        if args.list:
            program = load_program(path, should_stop=stop.is_set)
            for e in program.entries.values():
                source = f"{e.args_function}()" if e.args_function else "needs --args"
                print(f"{e.name:<20} {e.kind:<13} line {e.line:<5} args: {source}  {e.doc}", file=out)
            return 0
        _check_calls(args)
        request = program_request(args, path, entry_name)
        # the window's service prepares it (load, arguments) and plans its lanes: one route for both front ends
        program, prepared, runner = ProgramService().prepare(request, stop.is_set, exact_entry=True)
        label = f"{program.display_name}:{prepared.entry.name}"
        if args.watch:
            return watch(args, path, entry_name, out, stop.is_set)
        if args.what:
            return _print_ir(prepared, args, out, err, stop.is_set)
        lanes = plan_request(prepared, request)
        if not args.json:
            print(f"{label} ({prepared.backend}) args: {prepared.describe_args()}", file=err)
        recorder = autosave_recorder(args, _recorder(request, label, prepared), err)
        for result in run_lanes(prepared, lanes, stop.is_set, runner=runner):
            _report(result, label, args, out, prepared)
            if recorder is not None:
                record_result(recorder, result, label)
        write_session_outputs(args, recorder, err)
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    return 0


def program_request(args: argparse.Namespace, path: str, entry: str | None) -> Any:
    """The :class:`app.core.programs.compute.requests.ProgramRequest` of ``program``'s arguments — the request the
    window's Code workspace sends for the same run: the file's text, ``--args``, ``--static``, ``--seed``,
    ``--calls``, ``--no-jit`` / ``--compare-jit``, ``--sweep`` with ``--sweep-arg`` and ``--bucket``,
    ``--static-values``. A file that cannot be read raises the loader's ProgramError naming it."""
    try:
        source = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        load_program(path)  # raises the loader's ProgramError (stage "load") naming the file
        raise
    static = parse_argnums(args.static or "")
    mode = COMPARE if args.compare_jit else NO_JIT if args.no_jit else JIT
    return ProgramRequest(source, path=str(path), name=Path(path).name, entry=entry or "", spec=args.spec or "",
                          n_calls=_n_calls(args), mode=mode, sweep=sweep_text(args), bucket=args.bucket,
                          seed=args.seed, static_values=tuple(args.static_values or ()), static=static)


def _recorder(request: ProgramRequest, label: str, prepared: PreparedCall) -> Any:
    """A :class:`app.core.recording.RunRecorder` of the program's runs (the model label is the program's
    ``FILE.py:ENTRY``, the settings :func:`app.core.live_recording.program_settings`, as the window records
    them), or None without ``--save-session`` / ``--perfetto``."""
    settings = program_settings(request, prepared.describe_args(), request.mode)
    return RunRecorder(label, request.path, {"backend": prepared.backend}, settings)


def record_result(recorder: RunRecorder, result: RunResult, label: str) -> Any:
    """Record one program run (:class:`app.core.programs.runner.RunResult`: its call records and summary)
    as a run labelled ``"FILE.py:ENTRY · jit"``; returns the :class:`RecordedRun`."""
    what = f"{result.mode} · sweep of {counted(len(result.sizes), 'size')}" if result.sizes else result.mode
    recorder.start(result.mode, label=f"{label} · {what}",
                   settings={**recorder.settings, "mode": result.mode})
    for record in result.records:
        recorder.feed(record)
    return recorder.feed(FinishedEvent("stopped" if result.stopped else "calls", result.summary))


def _n_calls(args: argparse.Namespace) -> int:
    return 5 if args.calls is None else args.calls


def _check_calls(args: argparse.Namespace) -> None:
    """``--static-values`` sets the calls: refused with ``--sweep`` or ``--calls``
    (:class:`app.core.programs.specs.SpecError`)."""
    if not args.static_values:
        return
    if args.sweep:
        raise SpecError("--static-values and --sweep both set the calls: use one of them.")
    if args.calls is not None:
        raise SpecError("--static-values makes one call per value: leave out --calls.")


def sweep_text(args: argparse.Namespace) -> str:
    """``--sweep`` with ``--sweep-arg`` as the window writes it: ``"x=1:16"`` (an argument named by parameter
    name or user index), ``"1:16"`` without ``--sweep-arg`` (the first array argument)."""
    if not args.sweep:
        return ""
    return f"{args.sweep_arg}={args.sweep}" if args.sweep_arg not in (None, "") else args.sweep


def _report(result: RunResult, label: str, args: argparse.Namespace, out: TextIO,
            prepared: PreparedCall | None = None) -> None:
    sites = compile_sites(result.records)
    if args.json:
        for record in result.records:
            write_json_event(out, record, label)
        buf = io.StringIO()
        write_json_event(buf, FinishedEvent("stopped" if result.stopped else "calls", result.summary), label)
        summary = json.loads(buf.getvalue())
        summary["compile_sites"] = [site.to_json() for site in sites]
        out.write(json.dumps(summary) + "\n")
        return
    s = result.summary
    print(f"\n{label} | mode {result.mode} | {counted(s.n_calls, 'call')}{' (stopped)' if result.stopped else ''}",
          file=out)
    print(format_call_table(result.records, input_name=_first_input(result.records)), file=out)
    line = (f"first call {ms(result.first_call_ms)} | steady call {ms(result.steady_ms)} | "
            f"compiles {s.n_compiles} ({ms(s.compile_ms)} compiling) | total {ms(s.total_ms)}")
    if result.sizes:
        buckets = sorted(set(result.padded_sizes))
        line += (f"\nsweep of {counted(len(result.sizes), 'size')} ({min(result.sizes)}…{max(result.sizes)}): "
                 f"{counted(s.n_compiles, 'compile')}" + (f" for buckets {', '.join(map(str, buckets))}"
                                               if result.mode != "jit" else ""))
    if args.static_values and prepared is not None:
        line += "".join(f"\n{name} per call: {', '.join(repr(v) for v in values)}"
                        for name, values in _static_columns(prepared, result).items())
    print(line, file=out)
    if sites:
        print(format_site_table(sites), file=out)


def _static_columns(prepared: PreparedCall, result: RunResult) -> dict[str, list[Any]]:
    """Per static argument that changed over the calls, its value in each call made."""
    out: dict[str, list[Any]] = {}
    for i, values in sorted(result.static_values.items()):
        if len({repr(v) for v in values}) > 1:
            out[f"static {prepared.param_name(i) or i - prepared.user_offset}"] = values
    return out


def _first_input(records: list[Any]) -> str:
    return next(iter(records[0].input_shapes), "input_ids") if records else "input_ids"


def _print_ir(prepared: PreparedCall, args: argparse.Namespace, out: TextIO, err: TextIO,
              should_stop: Callable[[], bool]) -> int:
    if args.what in PASS_WHAT:
        print(f"[passes] recording {prepared.entry.name}'s pass pipeline…", file=err, flush=True)
        buf = io.StringIO()
        _, lowered = lowered_for(ProgramRunner(prepared), should_stop=should_stop)
        pipeline = record_pipeline(lowered, kernel_ir=True)
        print_kernel_ir(pipeline, err)
        write_report(pipeline, report_args(args.what, args.json), buf)
        text = buf.getvalue()
    else:
        text = step_ir_text(entry_ir(prepared, should_stop=should_stop), args.what)
    write_text_output(text, args.output, out, err)
    return 0


def watch(args: argparse.Namespace, path: str, entry: str | None, out: TextIO, should_stop: Callable[[], bool],
          max_steps: int | None = None) -> int:
    """``--watch``: :func:`app.core.programs.watch.watch_file` on ``path``, each compile's lines printed as it
    ends; ``should_stop`` (Ctrl+C) ends it between polls. ``max_steps`` bounds the compiles (tests)."""
    service = ProgramService()

    def prepare(text: str) -> Any:
        request = dataclasses.replace(program_request(args, path, entry), source=text)
        return service.prepare(request, should_stop, exact_entry=True)[1]

    print(f"[watch] {path}: compiling {entry or 'the first entry point'} on every save (Ctrl+C ends)",
          file=out, flush=True)
    for step in watch_file(path, prepare, should_stop, max_steps=max_steps):
        print("\n".join(step.lines()), file=out, flush=True)
    return 0
