"""``torchax-playground profile``: where the time of a compiled step goes (``--mode``: jit-static's steps by
default; jit-loop's decode loop per iteration, with each token's host callback in the host share), per XLA op,
fusion, PyTorch source line, ATen op or module, with achieved GB/s and GFLOP/s against the machine's read
bandwidth (:mod:`app.core.profile.step`). On a GPU or TPU the rows are the device's kernels joined to the HLO's
instructions (:mod:`app.core.profile.device`). ``--capture FILE.xplane.pb --hlo FILE.hlo.txt`` reads a capture
recorded elsewhere (a GPU machine's ``profile --xplane`` and ``inspect --what hlo``) without loading a model.

Errors are :class:`app.core.errors.PlaygroundError` (exit status 2 through :func:`app.cli.parser.main`).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO

from app.cli.common import add_model_args, load_engine_for, phase_printer
from app.core import units
from app.core.backends import BACKENDS
from app.core.errors import InvalidSettingsError
from app.core.inspect.views import DEFAULT_STEP, STEP_CHOICES
from app.core.mode_catalog import CATALOG, profiling_mode
from app.core.profile.columns import BY_LINE, BY_TITLES, bandwidth_note, profile_columns, profile_summary
from app.core.profile.offline import find_hlo_beside, profile_capture
from app.core.profile.step import (
    LOOP_NOTE,
    aggregate,
    copy_xplane,
    profile_step,
    rows_to_csv,
    rows_to_json_lines,
)
from app.core.report.columns import render_text

if TYPE_CHECKING:
    from app.core.profile.model import StepProfile

BY_CHOICES = tuple(BY_TITLES)
#: The modes ``profile --mode`` measures (``profilable`` in the catalog).
PROFILABLE = tuple(info.name for info in CATALOG if info.profilable)


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Add the ``profile`` subcommand to ``subparsers``."""
    p = subparsers.add_parser("profile", help="measure where a compiled step's time goes (per XLA op, fusion, "
                                              "source line, ATen op or module) against the read bandwidth; "
                                              f"--mode {' or '.join(PROFILABLE)} (jit-loop: its decode loop, "
                                              "one step per iteration, the host callback in the host share)")
    add_model_args(p)
    p.add_argument("--step", choices=STEP_CHOICES, default=DEFAULT_STEP)
    p.add_argument("--steps", type=int, default=20, metavar="N", help="profiled calls (default 20); jit-loop's decode: "
                                                                 "tokens of the one profiled loop call")
    p.add_argument("--warmup", type=int, default=3, metavar="N", help="untraced calls first (default 3)")
    p.add_argument("--by", choices=BY_CHOICES, default=BY_LINE,
                   help="rows per source line (default), ATen op, HLO fusion/instruction or module path")
    p.add_argument("--fold-layers", action="store_true", help="merge repeated layers (model.layers.*.mlp)")
    p.add_argument("--top", type=int, default=15, metavar="N", help="rows in the text table (default 15)")
    p.add_argument("--json", action="store_true",
                   help="one JSON object per row (all rows), then {\"event\": \"summary\", …}")
    p.add_argument("--xplane", metavar="PATH", help="copy the raw capture (.xplane.pb) to PATH")
    p.add_argument("--csv", metavar="PATH", help="write all rows as CSV to PATH")
    offline = p.add_argument_group("a capture recorded elsewhere (no model is loaded)")
    offline.add_argument("--capture", metavar="FILE", help="read this profiler capture (.xplane.pb, or .xplane.pb.gz) "
                                                           "of annotated steps instead of profiling here")
    offline.add_argument("--hlo", metavar="FILE", help="the optimized HLO text of the step that ran (inspect --what "
                                                       "hlo on that machine; .gz accepted); default: the .hlo.txt "
                                                       "beside the capture")
    offline.add_argument("--platform", choices=tuple(BACKENDS), default=None,
                         help="where the capture's ops ran (default: the device planes that hold events, else cpu)")
    offline.add_argument("--bandwidth-gbs", type=float, default=None, metavar="GBS",
                         help="memory bandwidth of the device that ran it (GB/s) for the roofline")
    offline.add_argument("--peak-tflops", type=float, default=None, metavar="TFLOPS",
                         help="peak FLOP/s of that device (TFLOP/s) for the roofline's compute bound")
    return p


def run_capture(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``profile --capture FILE [--hlo FILE]``: the same table from a capture recorded elsewhere
    (:func:`app.core.profile.offline.profile_capture`, the window's File ▸ Open capture… path). Returns 0."""
    if not args.hlo and (found := find_hlo_beside(args.capture)) is not None:
        print(f"[profile] HLO text beside the capture: {found.name}", file=err)
    profile = profile_capture(args.capture, args.hlo or None, step=args.step, platform=args.platform,
                              bandwidth_gbs=args.bandwidth_gbs, peak_tflops=args.peak_tflops)
    return _write(profile, args, out, err)


def _write(profile: StepProfile, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """The rows of ``profile`` as the arguments ask (``--by``, ``--fold-layers``, ``--csv``, ``--json``, ``--top``),
    for a profile measured here or read from a capture. Returns 0."""
    rows = aggregate(profile, by=args.by, fold_layers=args.fold_layers)
    if args.csv:
        with open(args.csv, "w", encoding="utf-8", newline="") as f:
            f.write(rows_to_csv(rows))
        print(f"[profile] {len(rows)} rows written to {args.csv}", file=err)
    if args.json:
        out.write(rows_to_json_lines(rows, profile, by=args.by))
    else:
        out.write(format_profile(profile, rows, args.by, args.top) + "\n")
    out.flush()
    return 0


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run the profile and print it (``--json``: JSON lines). Returns the exit status (0)."""
    if getattr(args, "capture", None):
        return run_capture(args, out, err)
    mode = getattr(args, "mode", None) or profiling_mode()
    if mode not in PROFILABLE:
        raise InvalidSettingsError(f"profile measures the steps of {' and '.join(PROFILABLE)}; got --mode {mode}.")
    if args.steps < 1 or args.warmup < 0:
        raise InvalidSettingsError("--steps must be at least 1 and --warmup at least 0.")
    quiet = args.json
    engine = load_engine_for(args, err, on_event=None if quiet else phase_printer(err))
    progress = None if quiet else (lambda msg: print(f"[profile] {msg}…", file=err, flush=True))
    profile = profile_step(engine, args.prompt, step=args.step, n_steps=args.steps, warmup=args.warmup,
                           on_progress=progress, mode=mode)
    if args.xplane:
        print(f"[profile] capture copied to {copy_xplane(profile, args.xplane)}", file=err)
    return _write(profile, args, out, err)


def format_profile(profile: StepProfile, rows: list[Any], by: str, top: int = 15) -> str:
    """The text report: a header, the ``top`` rows as a table, the step's figures."""
    p = profile
    loop = any(n.startswith(LOOP_NOTE) for n in p.notes)
    profiled = f"{units.counted(p.n_steps, 'loop iteration' if loop else 'call')} profiled"
    head = f"{p.model} | {p.step} step | {profiled} | rows by {by} ({len(rows)}, top {min(top, len(rows))})"
    table = render_text(profile_columns(by), [r.to_dict() for r in rows[:top]])
    if getattr(p, "device", ""):
        return "\n".join([head, table, "", *_device_lines(p, rows)])
    bound = (f"; its {units.nbytes(p.bytes_per_step)} at {p.bandwidth_gbs:.1f} GB/s take "
             f"{p.bound_ms:.2f} ms" if p.bound_ms is not None else "")
    lines = [
        head, table, "", profile_summary(p),
        *([note] if (note := bandwidth_note(rows, p.bandwidth_gbs)) else []),
        f"step wall {p.step_ms:.3f} ms (median {p.step_ms_median:.3f}); ops run {p.op_ms:.3f} ms; host: "
        "arguments, dispatch, token to host",
        f"busy {p.busy_ms:.3f} ms summed over threads; {units.flops(p.flops_per_step)}FLOP per step{bound}",
    ]
    if p.other_modules:
        lines.append("other XLA programs per step (host helpers): " + ", ".join(
            f"{k} ×{v / p.n_steps:.2g}" for k, v in sorted(p.other_modules.items())))
    if p.unmatched:
        lines.append(f"op events matching no HLO instruction: {', '.join(p.unmatched)}")
    lines += [f"note: {n}" for n in p.notes]
    lines.append(f"capture: {p.xplane_path}")
    return "\n".join(lines)


def _device_lines(p: StepProfile, rows: list[Any]) -> list[str]:
    """The figures under a device profile's table: the step's split into device busy time, launch gaps and host
    time, the roofline (or why there is none), the notes."""
    g = p.launch_gaps
    lines = [
        profile_summary(p),
        f"device {p.device}: busy {g.get('device_busy_ms', p.op_ms):.3f} ms per step (any kernel or memcpy running; "
        f"{p.busy_ms:.3f} ms summed over the events, the rows' µs/step) · launch gaps "
        f"{g.get('launch_gap_ms', 0.0):.3f} ms (nothing on the device between its first and last event of the step) "
        f"· host {g.get('host_ms', 0.0):.3f} ms (before the first and after the last device event: arguments, "
        f"dispatch, the token's copy back) · step wall {p.step_ms:.3f} ms (median {p.step_ms_median:.3f})",
    ]
    roof = []
    if p.bound_ms is not None:
        roof.append(f"its {units.nbytes(p.bytes_per_step)} at {p.bandwidth_gbs:,.1f} GB/s take {p.bound_ms:.4f} ms")
    if p.compute_bound_ms is not None:
        roof.append(f"its {units.flops(p.flops_per_step)}FLOP at {p.peak_tflops:,.1f} TFLOP/s take "
                    f"{p.compute_bound_ms:.4f} ms")
    if roof:
        lines.append("roofline: " + "; ".join(roof))
        if note := bandwidth_note(rows, p.bandwidth_gbs):
            lines.append(note)
    else:
        lines.append(f"no roofline figures: no bandwidth or peak FLOP/s of the device that ran it (a capture read on "
                     f"another machine; give --bandwidth-gbs and --peak-tflops). {units.nbytes(p.bytes_per_step)} "
                     f"and {units.flops(p.flops_per_step)}FLOP per step (estimates)")
    if len(p.timeline.threads) > 1:
        lines.append("timeline tracks: " + ", ".join(p.timeline.threads))
    lines += [f"note: {n}" for n in p.notes]
    if p.unmatched:
        lines.append(f"kernels matching no HLO instruction: {', '.join(p.unmatched)}")
    lines.append(f"capture: {p.xplane_path}")
    return lines
