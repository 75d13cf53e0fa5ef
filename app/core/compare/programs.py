"""The compiled programs of two recorded runs compared: the structural diff of their StableHLO
(:func:`stablehlo_diffs`, :mod:`app.core.inspect.stablehlo_diff`) and the first XLA pass whose output differs
where both recorded their pass pipelines (:func:`first_pass`). Pure Python: no JAX or torch."""

from __future__ import annotations

from typing import Any

from app.core.inspect.hlo_diff import diff_hlo
from app.core.inspect.stablehlo_diff import diff_stablehlo, parse_stablehlo
from app.core.recording.model import RecordedPasses, RecordedRun

#: What a session keeps of each pass's snapshot and :func:`first_pass` compares (it keeps no per-pass text).
SNAPSHOT_FIGURES = ("n_instructions", "fusion_kinds", "custom_calls")


def stablehlo_diffs(a: RecordedRun, b: RecordedRun) -> dict[str, dict[str, Any]]:
    """Per step both runs recorded StableHLO text for: the structural diff
    (:func:`app.core.inspect.stablehlo_diff.diff_stablehlo`, sources from the debug text) as a dict."""
    out = {}
    for step, ir_a in a.ir.items():
        ir_b = b.ir.get(step)
        if ir_a.stablehlo and ir_b is not None and ir_b.stablehlo:
            ma = parse_stablehlo(ir_a.stablehlo, ir_a.stablehlo_debug)
            mb = parse_stablehlo(ir_b.stablehlo, ir_b.stablehlo_debug)
            out[step] = diff_stablehlo(ma, mb).to_dict()
    return out


def _figures(s: dict[str, Any]) -> dict[str, Any]:
    return {k: s.get(k) for k in SNAPSHOT_FIGURES}


def _why(sa: dict[str, Any], sb: dict[str, Any]) -> str:
    """``"instructions 412 → 398, fusions {kLoop: 12} → {kLoop: 9}"``: what differs after a pass."""
    parts = []
    if sa.get("n_instructions") != sb.get("n_instructions"):
        parts.append(f"instructions {sa.get('n_instructions')} → {sb.get('n_instructions')}")
    if (sa.get("fusion_kinds") or {}) != (sb.get("fusion_kinds") or {}):
        fa, fb = sa.get("fusion_kinds") or {}, sb.get("fusion_kinds") or {}
        kinds = [f"{k} {fa.get(k, 0)} → {fb.get(k, 0)}" for k in sorted(set(fa) | set(fb)) if fa.get(k) != fb.get(k)]
        parts.append("fusions " + ", ".join(kinds))
    if sa.get("custom_calls") != sb.get("custom_calls"):
        parts.append(f"custom calls {sa.get('custom_calls')} → {sb.get('custom_calls')}")
    return ", ".join(parts)


def _walk(pa: RecordedPasses, pb: RecordedPasses) -> dict[str, Any] | None:
    """The first snapshot, in dump order, where the pipelines part: another pass ran (or changed the module), or
    the module after the same pass differs in its recorded figures. None when every snapshot agrees."""
    for i, (sa, sb) in enumerate(zip(pa.snapshots, pb.snapshots)):
        where = {"position": i, "pipeline": sa.get("pipeline"), "pass": sa.get("pass"),
                 "b_pass": sb.get("pass"), "b_pipeline": sb.get("pipeline")}
        if (sa.get("pipeline"), sa.get("pass")) != (sb.get("pipeline"), sb.get("pass")):
            return {**where, "why": f"it changed A's module; B's next change came from {sb.get('pipeline')} / "
                                    f"{sb.get('pass')}"}
        if _figures(sa) != _figures(sb):
            return {**where, "why": _why(sa, sb)}
    if len(pa.snapshots) != len(pb.snapshots):
        i = min(len(pa.snapshots), len(pb.snapshots))
        longer = pa.snapshots if len(pa.snapshots) > i else pb.snapshots
        s = longer[i]
        return {"position": i, "pipeline": s.get("pipeline"), "pass": s.get("pass"), "b_pass": None,
                "b_pipeline": None, "why": f"only {'A' if longer is pa.snapshots else 'B'} changed the module "
                                          f"{len(longer) - i} more time(s)"}
    return None


def first_pass(a: RecordedRun, b: RecordedRun) -> dict[str, Any]:
    """Where both runs recorded XLA's pass pipeline of the same step: ``recorded`` True, ``step``,
    ``input_same`` (the module before the passes, structurally; None when not kept), ``first`` (the first pass
    whose output differs: ``position`` in the snapshots, ``pipeline``, ``pass``, ``why``; None when none does)
    and ``line`` (a sentence). Otherwise ``recorded`` False and ``line`` says what was missing. A session keeps
    each snapshot's figures (:data:`SNAPSHOT_FIGURES`), not its text: a pass that changed an op without
    changing those figures is not seen, and the final modules' structural diff says what differs at the end."""
    pa, pb = a.passes, b.passes
    if pa is None or pb is None:
        who = "either run" if pa is None and pb is None else ("A" if pa is None else "B")
        return {"recorded": False, "line": f"XLA's pass pipeline: not recorded by {who} (the Passes tab records "
                                          "it; a saved session keeps it)"}
    if pa.step != pb.step:
        return {"recorded": False, "line": f"XLA's pass pipeline: A recorded its {pa.step} step, B its {pb.step}: "
                                          "not comparable"}
    input_same = diff_hlo(pa.initial_hlo, pb.initial_hlo).same if pa.initial_hlo and pb.initial_hlo else None
    first = _walk(pa, pb)
    doc: dict[str, Any] = {"recorded": True, "step": pa.step, "input_same": input_same, "first": first,
                           "n_a": len(pa.snapshots), "n_b": len(pb.snapshots)}
    head = f"XLA's pass pipeline of {pa.step}"
    given = "" if input_same is not False else " (their input modules already differ)"
    if first is None:
        doc["line"] = (f"{head}: every pass changed the module alike in the recorded figures "
                       f"({len(pa.snapshots)} snapshots){given}")
    else:
        doc["line"] = (f"{head}: the first pass whose output differs is {first['pipeline']} / {first['pass']} "
                       f"(snapshot {first['position'] + 1} of {len(pa.snapshots)} vs {len(pb.snapshots)}: "
                       f"{first['why']}){given}")
    return doc
