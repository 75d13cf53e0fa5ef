"""What ``passes`` (and ``inspect`` / ``program --what passes|fusions|pass-hlo|compile-phases``) prints of a
recorded or opened pass pipeline: one writer per question the arguments ask (:func:`write_report`), as text or
JSON lines. What differs between backends (the kernel IR's name and files, the assembler event) is read from the
pipeline's backend row (:mod:`app.core.backends`); what a backend's own dumps add (XLA:GPU's autotuning, thunks)
is asked of the pipeline's extra compile facts (:class:`app.core.passes.model.BackendCompileFacts`), never of its
platform."""

from __future__ import annotations

import argparse
import json
from typing import TextIO

from app.core.backends import BACKENDS, CPU, BackendFacts
from app.core.inspect.views import COMPILE_PHASES, FUSIONS, PASS_HLO, PASSES, view
from app.core.passes import query
from app.core.passes.gpu_text import autotune_text, thunk_line
from app.core.passes.model import KERNEL_IR_DUMPED, PassPipeline, kernel_ir_lost


def _row(pipeline: PassPipeline) -> BackendFacts:
    return BACKENDS.get(pipeline.platform, CPU)


def _snapshot_key(value: str) -> int | str:
    return int(value) if value.lstrip("-").isdigit() else value


def report_args(what: str, as_json: bool = False, pass_name: str | None = None) -> argparse.Namespace:
    """The :func:`write_report` arguments for one ``inspect --what`` / ``program --what`` view of a
    pipeline: ``passes`` (every pass run), ``fusions``, ``pass-hlo`` (snapshot ``pass_name``) or
    ``compile-phases``."""
    return argparse.Namespace(json=as_json, pass_hlo=pass_name if what == view(PASS_HLO).cli else None, diff=None,
                              context=3, search=None, history=None, fusions=what == view(FUSIONS).cli,
                              list=what == view(PASSES).cli, fusion_log=False,
                              compile_phases=what == view(COMPILE_PHASES).cli)


#: The ``event`` of the compile split's JSON line (``passes --compile-phases --json``).
COMPILE_PHASES_EVENT = "compile_phases"


def kernel_ir_json(pipeline: PassPipeline) -> dict:
    """The ``kernel_ir`` JSON object of a CPU recording: ``status`` (``dumped``, ``not requested`` or the note of
    a lost one), ``dumped``, ``kernels`` (how many fusion kernels have IR) and ``lost``."""
    return {"event": "kernel_ir", "kind": _row(pipeline).kernel_ir, "status": pipeline.kernel_ir,
            "dumped": pipeline.kernel_ir == KERNEL_IR_DUMPED, "kernels": len(pipeline.fusion_ir),
            "lost": kernel_ir_lost(pipeline)}


def compile_phases_json(pipeline: PassPipeline) -> dict:
    """The compile split as one JSON object (``event: compile_phases``, ``total_ms``, ``parts``, groups)."""
    b = query.compile_breakdown(pipeline)
    out = {"event": COMPILE_PHASES_EVENT, "total_ms": round(b.total_ms, 3),
           "groups": {g: round(ms, 3) for g, ms in b.by_group().items()},
           "parts": [{"label": p.label, "ms": round(p.ms, 3), "group": p.group, "source": p.source}
                     for p in b.parts], "fusion_compile_ms": round(b.fusion_compile_ms, 3),
           "n_fusion_compiles": b.n_fusion_compiles}
    if pipeline.extras is not None or not pipeline.has_capture:
        out.update(platform=pipeline.platform, has_capture=pipeline.has_capture,
                   kernel_compile_event=b.kernel_compile_event, ptxas_ms=round(b.ptxas_ms, 3), n_ptxas=b.n_ptxas)
    return out


def write_report(pipeline: PassPipeline, args: argparse.Namespace, out: TextIO) -> None:
    """Print what the arguments ask of a recorded pipeline (shared by any source of a ``Lowered``): the first of
    ``--pass-hlo``, ``--diff``, ``--search``, ``--history``, ``--thunks``, ``--autotune``, ``--fusions``,
    ``--list``, the compile phases and ``--fusion-log`` that is given, else every snapshot and the summary."""
    as_json = args.json
    asked = [
        (args.pass_hlo is not None, lambda: out.write(pipeline.snapshot(_snapshot_key(args.pass_hlo)).text)),
        (args.diff is not None, lambda: _write_diff(pipeline, args.diff, args.context, as_json, out)),
        (args.search is not None, lambda: _write_search(pipeline, args.search, as_json, out)),
        (args.history is not None, lambda: _write_history(pipeline, args.history, as_json, out)),
        (getattr(args, "thunks", False), lambda: _write_thunks(pipeline, as_json, out)),
        (getattr(args, "autotune", False), lambda: _write_autotune(pipeline, as_json, out)),
        (args.fusions, lambda: _write_fusions(pipeline, as_json, out)),
        (args.list, lambda: _write_pass_list(pipeline, as_json, out)),
        (getattr(args, "compile_phases", False), lambda: _write_compile_phases(pipeline, as_json, out)),
        (args.fusion_log, lambda: _write_fusion_log(pipeline, as_json, out)),
    ]
    write = next((w for on, w in asked if on), lambda: _write_snapshots(pipeline, as_json, out))
    write()


def _write_diff(pipeline: PassPipeline, key: str, context: int, as_json: bool, out: TextIO) -> None:
    new = pipeline.snapshot(_snapshot_key(key))
    old = query.previous_snapshot(pipeline, new)
    if old is None:
        raise KeyError(f"Snapshot {key!r} is the first: nothing to diff against.")
    d = query.diff_snapshots(old, new, context)
    if as_json:
        out.write(json.dumps({"old": d.old, "new": d.new, "added": d.added, "removed": d.removed,
                              "hunks": [{"header": h.header, "folded_before": h.folded_before,
                                         "lines": [[ln.tag, ln.old, ln.new, ln.text] for ln in h.lines]}
                                        for h in d.hunks], "folded_after": d.folded_after}) + "\n")
    else:
        out.write(d.unified())


def _write_search(pipeline: PassPipeline, text: str, as_json: bool, out: TextIO) -> None:
    hits = query.search(pipeline, text)
    first = query.first_appearance(pipeline, text)
    for h in hits:
        out.write((json.dumps(vars(h)) if as_json else f"{h.label}: line {h.line}: {h.text.strip()}") + "\n")
    if not as_json:
        out.write(f"{len(hits)} snapshots contain {text!r}"
                  + (f"; first defined in {first.label} line {first.line}" if first else "") + "\n")


def _write_history(pipeline: PassPipeline, name: str, as_json: bool, out: TextIO) -> None:
    h = query.instruction_history(pipeline, name)
    rows = [vars(e) for e in h.events] + [d.summary() for d in h.decisions]
    for r in rows:
        out.write((json.dumps(r) if as_json else "  ".join(f"{k}={v}" for k, v in r.items())) + "\n")


def _write_fusions(pipeline: PassPipeline, as_json: bool, out: TextIO) -> None:
    extras, kernel_ir = pipeline.extras is not None, _row(pipeline)
    for f in query.fusion_table(pipeline):
        row = {"fusion": f.name, "kind": f.kind, "created_by": f.created_by, "created_in": f.created_in,
               "source": f.source, "absorbed": [list(a) for a in f.absorbed],
               "decisions": [d.summary() for d in f.decisions], "llvm_ir": f.has_llvm_ir}
        if extras:
            row.update(config=f.config, autotuned=f.autotuned, kernel_ir=kernel_ir.kernel_ir)
        lines = sorted({w for _, _, w in f.absorbed if w} | ({f.source} if f.source else set()))
        out.write(json.dumps(row) + "\n" if as_json else
                  f"{f.name:<36} {f.kind:<8} by {f.created_by or '-':<16} {len(f.absorbed):>3} ops  "
                  f"{', '.join(lines[:3])}{' …' if len(lines) > 3 else ''}"
                  f"{'  [' + f.config + ']' if f.config else ''}{'  autotuned' if f.autotuned else ''}\n")
    if extras and not as_json and not pipeline.fusion_ir:
        out.write(f"{kernel_ir.kernel_ir} per fusion: not dumped (no .{kernel_ir.kernel_ir_ext} files in the dump "
                  "folder)\n")


def _write_pass_list(pipeline: PassPipeline, as_json: bool, out: TextIO) -> None:
    for r in query.pass_rows(pipeline):
        out.write(json.dumps(r) + "\n" if as_json else _pass_line(r))


def _write_compile_phases(pipeline: PassPipeline, as_json: bool, out: TextIO) -> None:
    if as_json:
        out.write(json.dumps(compile_phases_json(pipeline)) + "\n")
    else:
        _summary(pipeline, out)


def _write_fusion_log(pipeline: PassPipeline, as_json: bool, out: TextIO) -> None:
    for d in pipeline.fusion_log:
        out.write(json.dumps(d.summary()) + "\n" if as_json else
                  f"{'fused  ' if d.fused else 'refused'} {d.producer} → {d.consumer}"
                  f"{' = ' + d.fusion if d.fusion else ''}{' ' + d.kind if d.kind else ''}: {d.reason}\n")
    if not as_json:
        _summary(pipeline, out)


def _write_snapshots(pipeline: PassPipeline, as_json: bool, out: TextIO) -> None:
    """Every snapshot with its counts, the backend's extras and the compile split (or all of it as JSON lines)."""
    if as_json:
        for s in pipeline.all_snapshots():
            out.write(json.dumps({"event": "snapshot", **s.summary()}) + "\n")
        extra = pipeline.extras.report_json(pipeline) if pipeline.extras is not None else []
        for row in extra:
            out.write(json.dumps(row) + "\n")
        if pipeline.kernel_ir and not any(row.get("event") == "kernel_ir" for row in extra):
            out.write(json.dumps(kernel_ir_json(pipeline)) + "\n")
        out.write(json.dumps(compile_phases_json(pipeline)) + "\n")
        return
    for s in pipeline.all_snapshots():
        out.write(f"{s.index:>5} {s.pipeline[:38]:<38} {s.pass_name[:34]:<34} {s.n_instructions:>6} instr "
                  f"{s.n_fusions:>4} fusions {_kinds(s.fusion_kinds)}\n")
    if pipeline.extras is not None:
        out.write(pipeline.extras.report_text(pipeline))
    _summary(pipeline, out)


def _write_autotune(pipeline: PassPipeline, as_json: bool, out: TextIO) -> None:
    tuned = pipeline.extras.autotune if pipeline.extras is not None else None
    if tuned is None:
        out.write(json.dumps({"event": "autotune", "platform": pipeline.platform, "choices": []}) + "\n" if as_json
                  else f"XLA:{pipeline.platform.upper()} does not autotune.\n")
        return
    if as_json:
        out.write(json.dumps({"event": "autotune", **tuned.summary()}) + "\n")
    else:
        out.write(autotune_text(tuned))


def _write_thunks(pipeline: PassPipeline, as_json: bool, out: TextIO) -> None:
    thunks = pipeline.extras.thunk_sequence if pipeline.extras is not None else []
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


def _summary(pipeline: PassPipeline, out: TextIO) -> None:
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
        out.write(f"  ptxas (concurrent): {b.n_ptxas} × {b.assembler_event}, {b.ptxas_ms:.1f} ms summed\n")
    if pipeline.fusion_log:
        fused = sum(d.fused for d in pipeline.fusion_log)
        out.write(f"  fusion log: {len(pipeline.fusion_log)} decisions, {fused} fused\n")
