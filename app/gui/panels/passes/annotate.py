"""A recorded compile split where the user already looks at that compile: the plot's note beside the call's
compile spike, and the compile log's row of that call; and the measured ms per call a recording's comparison
shows. Plain functions over the session's runs (:class:`app.core.session.runs.RunState`). GUI thread only."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from app.core import units
from app.core.events import COMPILE_PHASES_FIELD
from app.core.session.model import RunState
from app.core.session.requests import PassesReady
from widgets.demo.compile_log import CompileLog
from widgets.plot.latency_plot import LatencyPlot


def compiling_record(runs: Sequence[RunState], step: str, mode: str) -> tuple[str, Any] | None:
    """(run label, CallRecord) of the newest run in ``mode`` whose first compiling call of ``step``
    exists (None when no run of this window compiled it, e.g. a session file's)."""
    for run in reversed(runs):
        if run.mode != mode:
            continue
        record = next((r for r in run.records if r.compiled and r.step == step), None)
        if record is not None:
            return run.label.removeprefix("run "), record
    return None


def compile_spike(runs: Sequence[RunState], plot: LatencyPlot, record: Any, b: dict) -> None:
    """The plot's note beside ``record``'s compile spike gains XLA's split (HLO passes / backend / other) of
    the breakdown ``b`` (``PassesReady.breakdown``)."""
    run = next((r for r in runs if any(x is record for x in r.records)), None)
    groups = b.get("by_group") or {}
    if run is not None and groups:
        line = "XLA: " + " · ".join(f"{g} {units.ms(ms)}" for g, ms in groups.items())
        plot.annotate_compile(run.run_id, record.index, line)


def compile_log_row(log: CompileLog | None, found: tuple[str, Any], b: dict) -> None:
    """The compile log's row of that call: the recorded split after its phases, the parts in its tooltip."""
    if log is None:
        return
    label, record = found
    groups = dict(b.get("by_group") or {})
    if not groups:  # a breakdown recorded without its groups (an older session file): sum its parts
        for part in b.get("parts", []):
            groups[part.get("group", "other")] = groups.get(part.get("group", "other"), 0.0) + part["ms"]
    note = "XLA: " + " · ".join(f"{g} {units.ms(ms)}" for g, ms in groups.items())
    tip = "\n".join([f"Recorded compile (dumps on) {units.ms(b['total_ms'])}:"]
                    + [f"  {p['label']}: {units.ms(p['ms'])}" for p in b["parts"] if p["ms"] > 0])
    log.annotate({"run": label, "call": record.index, "step": record.step}, note, tip, key=COMPILE_PHASES_FIELD)


def measured_ms(runs: Sequence[RunState], ready: PassesReady) -> float | None:
    """Median wall ms of the latest run's non-compiling calls of the recorded step in its mode (None for a
    recording with XLA flags, which no run executed, or without such calls)."""
    if getattr(ready.request, "xla_flags", ""):
        return None
    for run in reversed(runs):
        if run.mode != ready.mode:
            continue
        walls = [r.wall_ms for r in run.records if r.step == ready.step and not r.compiled]
        if walls:
            return float(statistics.median(walls))
    return None


def recording_label(ready: PassesReady) -> str:
    """``"jit-static · decode"``, with ``" + FLAGS"`` for a recording with XLA flags."""
    flags = getattr(ready.request, "xla_flags", "")
    return f"{ready.mode} · {ready.step}" + (f" + {flags}" if flags else "")
