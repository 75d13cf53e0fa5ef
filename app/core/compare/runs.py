"""Two recorded runs compared, as plain data and as text (``torchax-playground compare``).

:func:`compare_runs` returns a JSON-ready dict (every figure ``compare --json`` prints); :func:`format_comparison`
its text, the verdict line first. Steady speed is a ratio with its 95 % interval only when the two runs were
lanes of one race whose steady-state phase paired them in rounds (the session's ``verdicts``,
:mod:`app.core.verdict`); otherwise the ratio of the two medians is given and said to have no interval.
"""

from __future__ import annotations

from typing import Any

from app.core.compare.programs import first_pass, stablehlo_diffs
from app.core.inspect.hlo_diff import diff_hlo
from app.core.inspect.views import HLO, PASSES, STABLEHLO
from app.core.recording.model import RecordedRun, is_program_run

#: Compile stages of a call record, in order (ms).
STAGES = ("trace_ms", "lower_ms", "compile_ms")
#: Environment keys whose difference is named.
ENV_KEYS = ("platform", "device_kind", "device_count", "machine", "cpu_model", "cpu_count", "os", "python",
            "xla_flags", "mesh")
NO_ROUNDS = "recorded without rounds: no interval"


def compile_stages(run: RecordedRun) -> dict[str, float | None]:
    """The run's compile time per stage (ms, summed over its compiling calls), with the XLA split of a recorded
    pass pipeline (``xla:<group>``, its ``breakdown.by_group``) where there is one."""
    compiling = [r for r in run.records if r.compiled]
    out: dict[str, float | None] = {}
    for key in STAGES:
        values = [getattr(r, key) for r in compiling if getattr(r, key) is not None]
        out[key.removesuffix("_ms")] = sum(values) if values else None
    if run.passes is not None:
        for group, ms in (run.passes.breakdown.get("by_group") or {}).items():
            out[f"xla:{group}"] = float(ms)
    return out


def _verdict_pair(verdicts: list[dict[str, Any]], a: RecordedRun, b: RecordedRun) -> dict[str, Any] | None:
    """B's speed-up over A from the race that paired their modes in rounds: ``ratio``, ``ci_low``, ``ci_high``,
    ``rounds`` (> 1: B is faster); None when no recorded race did."""
    if a.race is None or a.race != b.race or a.mode == b.mode:
        return None
    for doc in verdicts:
        if doc.get("race") not in (None, a.race):
            continue
        for p in doc.get("pairs") or []:
            lo, hi = p.get("ci_low"), p.get("ci_high")
            if (p.get("mode"), p.get("against")) == (b.mode, a.mode):
                return {"ratio": p["ratio"], "ci_low": lo, "ci_high": hi, "rounds": p.get("rounds")}
            if (p.get("mode"), p.get("against")) == (a.mode, b.mode):
                return {"ratio": 1 / p["ratio"], "ci_low": 1 / hi if hi else None, "ci_high": 1 / lo if lo else None,
                        "rounds": p.get("rounds")}
    return None


def steady(a: RecordedRun, b: RecordedRun, verdicts: list[dict[str, Any]]) -> dict[str, Any]:
    """Steady ms per token (per call for programs) of both and B's speed-up over A (``a_ms / b_ms``), with its
    interval from the paired rounds when recorded (``interval``: True), else ``note`` :data:`NO_ROUNDS`."""
    a_ms = a.summary.steady_decode_ms if a.summary else None
    b_ms = b.summary.steady_decode_ms if b.summary else None
    unit = "ms/call" if is_program_run(a) and is_program_run(b) else "ms/token"
    out: dict[str, Any] = {"a_ms": a_ms, "b_ms": b_ms, "unit": unit, "ratio": None, "ci_low": None,
                           "ci_high": None, "rounds": None, "interval": False, "note": NO_ROUNDS}
    if pair := _verdict_pair(verdicts, a, b):
        return {**out, **pair, "interval": pair["ci_low"] is not None, "note": ""}
    if a_ms and b_ms:
        out["ratio"] = a_ms / b_ms
    return out


def hlo_diffs(a: RecordedRun, b: RecordedRun) -> dict[str, dict[str, Any]]:
    """Per step both runs recorded optimized HLO for (their IR, else their pass pipeline's final module): the
    structural diff (:func:`app.core.inspect.hlo_diff.diff_hlo`) as a dict."""
    texts_a = {s: ir.hlo for s, ir in a.ir.items() if ir.hlo}
    texts_b = {s: ir.hlo for s, ir in b.ir.items() if ir.hlo}
    for run, texts in ((a, texts_a), (b, texts_b)):
        if run.passes is not None and run.passes.final_hlo and run.passes.step not in texts:
            texts[run.passes.step] = run.passes.final_hlo
    return {s: diff_hlo(texts_a[s], texts_b[s]).to_dict() for s in texts_a if s in texts_b}


def token_parity(a: RecordedRun, b: RecordedRun) -> dict[str, Any]:
    """``same`` (None when either generated none), ``first_difference`` (index or None) and the tokens there."""
    ta, tb = a.token_ids, b.token_ids
    if not ta or not tb:
        return {"same": None, "first_difference": None, "a_token": None, "b_token": None, "n_a": len(ta),
                "n_b": len(tb)}
    first = next((i for i, (x, y) in enumerate(zip(ta, tb)) if x != y), None)
    if first is None and len(ta) != len(tb):
        first = min(len(ta), len(tb))
    at = [ids[first] if first is not None and first < len(ids) else None for ids in (ta, tb)]
    return {"same": first is None, "first_difference": first, "a_token": at[0], "b_token": at[1],
            "n_a": len(ta), "n_b": len(tb)}


def differences(a: RecordedRun, b: RecordedRun) -> dict[str, list[Any]]:
    """What differs between the runs' versions, environment, settings and modes: key → ``[A's, B's]``."""
    out: dict[str, list[Any]] = {}
    pa, pb = a.environment.get("packages") or {}, b.environment.get("packages") or {}
    for k in sorted(set(pa) | set(pb)):
        if pa.get(k) != pb.get(k):
            out[k] = [pa.get(k), pb.get(k)]
    for k in ENV_KEYS:
        if a.environment.get(k) != b.environment.get(k):
            out[k] = [a.environment.get(k), b.environment.get(k)]
    for k in sorted(set(a.settings) | set(b.settings)):
        if a.settings.get(k) != b.settings.get(k):
            out[f"setting {k}"] = [a.settings.get(k), b.settings.get(k)]
    for k, va, vb in (("mode", a.mode, b.mode), ("model", a.model, b.model)):
        if va != vb:
            out[k] = [va, vb]
    return out


def compare_runs(a: RecordedRun, b: RecordedRun, verdicts: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Every figure of A against B as JSON-ready data: ``a`` / ``b`` (label, machine), ``compile`` (stage → [A ms,
    B ms]), ``steady`` (:func:`steady`); the views' sections under their IR-view keys: ``hlo`` (:func:`hlo_diffs`), ``stablehlo``
    (:func:`app.core.compare.programs.stablehlo_diffs`), ``passes`` (:func:`app.core.compare.programs.first_pass`),
    ``tokens`` (:func:`token_parity`), ``differ`` (:func:`differences`) and ``verdict`` (the line
    :func:`app.core.compare.text.format_comparison` prints first).
    ``verdicts``: the sessions' recorded race verdicts (``SessionFile.verdicts``)."""
    ca, cb = compile_stages(a), compile_stages(b)
    doc: dict[str, Any] = {
        "a": {"label": a.label, "mode": a.mode, "machine": a.machine},
        "b": {"label": b.label, "mode": b.mode, "machine": b.machine},
        "compile": {k: [ca.get(k), cb.get(k)] for k in dict.fromkeys([*ca, *cb])},
        "steady": steady(a, b, verdicts or []), HLO: hlo_diffs(a, b), STABLEHLO: stablehlo_diffs(a, b),
        PASSES: first_pass(a, b), "tokens": token_parity(a, b), "differ": differences(a, b),
    }
    doc["verdict"] = verdict_line(doc)
    return doc


def _speed_words(s: dict[str, Any]) -> str:
    what = "at steady decode" if s["unit"] == "ms/token" else "per steady call"
    r, lo, hi = s["ratio"], s["ci_low"], s["ci_high"]
    if r is None:
        return "no steady speed to compare"
    if lo is not None and hi is not None:
        if lo <= 1.0 <= hi:
            return f"no clear difference {what} (95 % CI {lo:.2f}–{hi:.2f})"
        return (f"B is {r:.2f}× faster {what} (95 % CI {lo:.2f}–{hi:.2f})" if r >= 1 else
                f"B is {1 / r:.2f}× slower {what} (95 % CI {1 / hi:.2f}–{1 / lo:.2f})")
    return (f"B is {r:.2f}× faster" if r >= 1 else f"B is {1 / r:.2f}× slower") + f" {what} ({NO_ROUNDS})"


def verdict_line(doc: dict[str, Any]) -> str:
    """``"B is 1.31× faster at steady decode (95 % CI 1.22–1.40); its optimized HLO differs in 3 changes in 2
    fusions; compile +812 ms"`` or ``"no clear difference at steady decode (…); the same optimized HLO"``.
    StableHLO is named where no optimized HLO was compared, or where it is the same while the HLO differs (XLA
    compiled the same program differently)."""
    parts = [_speed_words(doc["steady"])]
    diffs, shlo = doc[HLO], doc.get(STABLEHLO) or {}
    shlo_same = bool(shlo) and all(d["same"] for d in shlo.values())
    if diffs and all(d["same"] for d in diffs.values()):
        parts.append("the same optimized HLO")
    elif diffs:
        parts.append("its optimized HLO differs: " + "; ".join(f"{s} {d['summary']}" for s, d in diffs.items()
                                                              if not d["same"])
                     + (" (from the same StableHLO)" if shlo_same else ""))
    elif shlo_same:
        parts.append("the same StableHLO")
    elif shlo:
        parts.append("its StableHLO differs: " + "; ".join(f"{s} {d['summary']}" for s, d in shlo.items()
                                                           if not d["same"]))
    ca = sum(v[0] or 0.0 for k, v in doc["compile"].items() if k in ("trace", "lower", "compile"))
    cb = sum(v[1] or 0.0 for k, v in doc["compile"].items() if k in ("trace", "lower", "compile"))
    if ca or cb:
        parts.append(f"compile {cb - ca:+.0f} ms")
    return "; ".join(parts)
