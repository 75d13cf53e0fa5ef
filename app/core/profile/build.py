"""Turn a capture (:mod:`app.core.profile.capture`), a parsed HLO module (:mod:`app.core.profile.hlo`)
and its attribution (:mod:`app.core.profile.attrib`) into a :class:`app.core.profile.model.StepProfile`,
and aggregate its rows per source line, ATen op, fusion or module. Plain inputs only: testable without an
engine or a profiler run.

A loop (jit-loop's decode: one ``while`` whose body streams each token to the host through a callback) is one
call that makes many tokens; :func:`split_loop_iterations` cuts each profiled call into one step per iteration,
at the end of each iteration's callback, so a loop profile's figures are per token, like jit-static's decode.
"""

from __future__ import annotations

import bisect
import statistics
from typing import Any

from app.core.inspect.module_paths import fold_path
from app.core.profile.attrib import Attribution, Part, Source, common_module
from app.core.profile.capture import Capture, OpEvent, StepWindow, gaps, merge, wall_shares
from app.core.profile.columns import BY_FUSION, BY_LINE, BY_MODULE, BY_OP, BY_TITLES
from app.core.profile.hlo import CONTAINERS, HloModuleInfo, HloOp
from app.core.profile.model import ProfileRow, StepProfile, Timeline, TimelineBar
from app.core.steps import DECODE

BY = tuple(BY_TITLES)  # every aggregation, in the order the window's and the CLI's choices show them


def _part_dict(p: Part) -> dict[str, Any]:
    s = p.source
    return {"fraction": p.fraction, "source": s.where, "module": s.module, "aten": s.aten, "via": p.via,
            "function": s.function, "scope": s.scope, "file": s.file, "line": s.line}


def _parts(name: str, info: HloModuleInfo, attribution: Attribution,
           labels: dict[str, tuple[str, str, str]] | None = None) -> list[Part]:
    parts = attribution.parts.get(name)
    if parts:
        return parts
    if labels and name in labels:
        label, via, _ = labels[name]
        return [Part(Source(label=label), 1.0, via)]
    via = "unmatched" if name not in info.ops else "none"
    return [Part(Source(label=f"<{via}: {name}>"), 1.0, via)]


def _step_figures(capture: Capture) -> tuple[list[dict[str, float]], dict[int, float]]:
    """Per step: wall, union of op time, host and between-op gaps (ns); per event (by id) its wall share."""
    by_step: dict[int, list[OpEvent]] = {}
    for ev in capture.events:
        by_step.setdefault(ev.step, []).append(ev)
    figures, charged = [], {}
    for win in capture.steps:
        evs = by_step.get(win.index, [])
        iv = [(max(e.start_ns, win.start_ns), min(e.end_ns, win.end_ns)) for e in evs]
        iv = [(a, max(a, b)) for a, b in iv]
        union = sum(b - a for a, b in merge(iv))
        first = min((a for a, _ in iv), default=win.end_ns)
        last = max((b for _, b in iv), default=win.end_ns)
        host = (first - win.start_ns) + (win.end_ns - last) if iv else win.duration_ns
        figures.append({"wall": win.duration_ns, "union": union, "host": host,
                        "busy": sum(e.duration_ns for e in evs)})
        for e, share in zip(evs, wall_shares(iv)):
            charged[id(e)] = share
    return figures, charged


def split_loop_iterations(capture: Capture, info: HloModuleInfo) -> Capture:
    """A host-thread capture (XLA:CPU) of calls of a loop, re-cut into one step per loop iteration.

    Each call's window is cut at the end of each event of the loop's host callbacks
    (:meth:`app.core.profile.hlo.HloModuleInfo.loop_callbacks`): iteration ``k`` runs from the end of callback
    ``k - 1`` (the call's start for the first) to the end of callback ``k``, the last one to the call's end, so the
    steps tile the calls (their wall times add up to the calls'). The first iteration of a call holds its dispatch
    (arguments, launch); each iteration ends with its callback, whose events are host time (the token handed to
    the host, the Stop flag back): they are left out of the op events, so the host share (before the first and
    after the last op of a step) counts them. Events of container instructions (a ``while`` whose condition or
    body ran instructions with events of their own, :data:`app.core.profile.hlo.CONTAINERS`) are left out: their
    time is their instructions'. A call without callback events stays one step. Device captures (GPU, TPU) are
    returned as they are, and so is a module without loop callbacks (only its containers are dropped)."""
    if capture.device:
        return capture
    callbacks = set(info.loop_callbacks())
    evented = {info.ops[e.name].computation for e in capture.events if e.name in info.ops}
    containers = {name for name, op in info.ops.items() if op.opcode in CONTAINERS
                  and evented & info.loop_computations(name)}
    ops = [e for e in capture.events if e.name not in containers]
    if not callbacks:
        if len(ops) == len(capture.events):
            return capture
        return Capture(capture.module, capture.steps, ops, dict(capture.other_modules))
    steps: list[StepWindow] = []
    events: list[OpEvent] = []
    by_step: dict[int, list[OpEvent]] = {}
    for e in ops:
        by_step.setdefault(e.step, []).append(e)
    for win in capture.steps:
        evs = sorted(by_step.get(win.index, []), key=lambda e: e.start_ns)
        cuts = sorted(e.end_ns for e in evs if e.name in callbacks)
        bounds = [win.start_ns] + [c for c in cuts[:-1] if win.start_ns < c < win.end_ns] + [win.end_ns]
        first = len(steps)
        steps += [StepWindow(first + k, a, b - a) for k, (a, b) in enumerate(zip(bounds, bounds[1:]))]
        starts = bounds[:-1]
        for e in evs:
            if e.name in callbacks:
                continue
            k = max(0, bisect.bisect_right(starts, e.start_ns) - 1)
            events.append(OpEvent(e.name, e.thread, e.start_ns, e.duration_ns, first + k, e.kernel, e.hlo_op))
    return Capture(capture.module, steps, events, dict(capture.other_modules))


def loop_figures(capture: Capture, info: HloModuleInfo, iterations: int) -> dict[str, float]:
    """What the host callbacks of a loop capture (before :func:`split_loop_iterations`) took: ``callback_ms``
    per iteration (mean over ``iterations``), ``callbacks`` events in all, ``calls`` profiled calls."""
    callbacks = set(info.loop_callbacks())
    cb = [e for e in capture.events if e.name in callbacks]
    return {"callback_ms": sum(e.duration_ns for e in cb) / max(1, iterations) / 1e6, "callbacks": len(cb),
            "calls": len(capture.steps)}


def build_profile(capture: Capture, info: HloModuleInfo, attribution: Attribution,
                  bandwidth_gbs: float | None = None, step: str = DECODE, xplane_path: str = "",
                  model: str = "") -> StepProfile:
    """The :class:`StepProfile` of ``capture``'s steps. Raises ``ValueError`` when it has no step."""
    n = len(capture.steps)
    if n == 0:
        raise ValueError("The capture holds no step to profile.")
    figures, charged = _step_figures(capture)
    wall_ns = sum(f["wall"] for f in figures)
    step_us = wall_ns / n / 1e3
    acc: dict[str, ProfileRow] = {}
    for ev in capture.events:
        row = acc.setdefault(ev.name, ProfileRow(ev.name))
        row.calls_per_step += 1 / n
        row.us_per_step += ev.duration_ns / n / 1e3
        row.wall_us_per_step += charged.get(id(ev), 0.0) / n / 1e3
        if ev.thread not in row.threads:
            row.threads.append(ev.thread)
    parts = {name: _parts(name, info, attribution, capture.labels) for name in acc}
    for name, row in acc.items():
        _describe(row, info.ops.get(name), parts[name])
        if name in capture.labels and name not in info.ops:
            row.kind = capture.labels[name][2]
        row.finish(step_us, bandwidth_gbs)
    rows = sorted(acc.values(), key=lambda r: -r.wall_us_per_step)
    union_share = sum(f["union"] for f in figures) / wall_ns if wall_ns else 0.0
    host_share = sum(f["host"] for f in figures) / wall_ns if wall_ns else 0.0
    total_bytes = sum(r.bytes_per_step for r in rows)
    profile = StepProfile(
        step=step, module=capture.module, n_steps=n, step_ms=step_us / 1e3,
        step_ms_median=statistics.median(f["wall"] for f in figures) / 1e6,
        op_ms=sum(f["union"] for f in figures) / n / 1e6, busy_ms=sum(f["busy"] for f in figures) / n / 1e6,
        attributed_share=union_share, idle_share=1.0 - union_share, host_share=host_share,
        between_ops_share=max(0.0, 1.0 - union_share - host_share), bandwidth_gbs=bandwidth_gbs,
        bytes_per_step=total_bytes, flops_per_step=sum(r.flops_per_step for r in rows),
        bound_ms=total_bytes / bandwidth_gbs / 1e6 if bandwidth_gbs else None, rows=rows,
        parts={k: [_part_dict(p) for p in v] for k, v in parts.items()},
        timeline=_timeline(capture, figures, parts, info),
        unmatched=sorted(k for k, v in parts.items() if v[0].via == "unmatched"),
        other_modules=dict(capture.other_modules), xplane_path=str(xplane_path), model=model,
    )
    if capture.device:
        profile.device, profile.notes = capture.device, list(capture.notes)
        profile.launch_gaps = _launch_gaps(figures, n)
    return profile


def _launch_gaps(figures: list[dict[str, float]], n: int) -> dict[str, float]:
    """A device profile's step split (ms per step, means over the ``n`` steps): ``device_busy_ms`` (at least one
    kernel or memcpy running), ``launch_gap_ms`` (between the step's first and last device event with nothing
    running on the device: kernel launches, the host's work between programs), ``host_ms`` (before the first
    and after the last device event: building arguments, dispatch, the token's copy back)."""
    return {"device_busy_ms": sum(f["union"] for f in figures) / n / 1e6,
            "launch_gap_ms": sum(max(0.0, f["wall"] - f["union"] - f["host"]) for f in figures) / n / 1e6,
            "host_ms": sum(f["host"] for f in figures) / n / 1e6}


def _describe(row: ProfileRow, op: HloOp | None, parts: list[Part]) -> None:
    main = max(parts, key=lambda p: p.fraction)
    row.source, row.module, row.aten, row.via = main.source.where, main.source.module, main.source.aten, main.via
    row.instructions = [row.key]
    if op is not None:
        row.kind, row.hlo_line = op.kind, op.text_line
        row.bytes_per_step = op.bytes_accessed * row.calls_per_step
        row.flops_per_step = op.flops * row.calls_per_step


def _timeline(capture: Capture, figures: list[dict], parts: dict[str, list[Part]],
              info: HloModuleInfo) -> Timeline:
    walls = [f["wall"] for f in figures]
    median = sorted(walls)[len(walls) // 2]
    win = capture.steps[walls.index(median)]
    bars, iv = [], []
    for ev in capture.events:
        if ev.step != win.index:
            continue
        main = max(parts[ev.name], key=lambda p: p.fraction).source
        op = info.ops.get(ev.name)
        bars.append(TimelineBar(ev.thread, (ev.start_ns - win.start_ns) / 1e3, ev.duration_ns / 1e3, ev.name,
                                op.kind if op is not None else "?", main.where, main.module))
        iv.append((ev.start_ns, ev.end_ns))
    holes = [[(a - win.start_ns) / 1e3, (b - a) / 1e3] for a, b in gaps(iv, win.start_ns, win.end_ns)]
    threads = sorted({b.thread for b in bars}, key=lambda t: (not t.startswith("XLAPjRt"), t))
    host = [TimelineBar(ev.thread, (ev.start_ns - win.start_ns) / 1e3, ev.duration_ns / 1e3, ev.name, "host", "")
            for ev in capture.host_events if ev.step == win.index]
    if host:  # a device profile: the host track below the device streams
        bars += host
        threads += list(dict.fromkeys(b.thread for b in host))
    return Timeline(win.index, win.duration_ns / 1e3, bars, holes, threads)


def aggregate(profile: StepProfile, by: str = BY_LINE, fold_layers: bool = False) -> list[ProfileRow]:
    """Rows of ``profile`` summed per ``by``: ``"line"`` (source ``file:line``), ``"op"`` (ATen op),
    ``"fusion"`` (HLO instruction: the profile's own rows) or ``"module"`` (module path; ``fold_layers``
    merges repeated layers into ``model.layers.*``). An instruction standing for several parts is split
    with their fractions (:mod:`app.core.profile.attrib`), so each aggregation's ``share`` sums to
    ``profile.attributed_share``. Sorted by wall time, largest first. Raises ``ValueError`` for another
    ``by``."""
    if by not in BY:
        raise ValueError(f"by must be one of {', '.join(BY)}, got {by!r}.")
    if by == BY_FUSION:
        return list(profile.rows)
    acc: dict[str, ProfileRow] = {}
    best: dict[str, float] = {}
    modules: dict[str, list[str]] = {}
    step_us = profile.step_ms * 1e3
    for row in profile.rows:
        for p in profile.parts.get(row.key, []):
            module = fold_path(p["module"]) if fold_layers else p["module"]
            key = {BY_LINE: p["source"], BY_OP: p["aten"], BY_MODULE: module or _no_module(p)}[by]
            _add(acc.setdefault(key, ProfileRow(key, aten=p["aten"])), row, p, module, best, key)
            modules.setdefault(key, []).append(module)
    for key, agg in acc.items():
        if by != BY_MODULE:
            agg.module = common_module(modules[key])
        agg.finish(step_us, profile.bandwidth_gbs)
    return sorted(acc.values(), key=lambda r: -r.wall_us_per_step)


def _no_module(part: dict[str, Any]) -> str:
    return "<root>" if part["file"] else "<no module>"


def _add(agg: ProfileRow, row: ProfileRow, p: dict[str, Any], module: str, best: dict[str, float],
         key: str) -> None:
    f = p["fraction"]
    agg.us_per_step += f * row.us_per_step
    agg.wall_us_per_step += f * row.wall_us_per_step
    agg.bytes_per_step += f * row.bytes_per_step
    agg.flops_per_step += f * row.flops_per_step
    if row.key not in agg.instructions:
        agg.instructions.append(row.key)
        agg.calls_per_step += row.calls_per_step
    for k in row.kind.split(", ") if row.kind else []:
        if k not in agg.kind.split(", "):
            agg.kind = f"{agg.kind}, {k}" if agg.kind else k
    agg.threads += [t for t in row.threads if t not in agg.threads]
    if f * row.wall_us_per_step >= best.get(key, -1.0):
        best[key] = f * row.wall_us_per_step
        agg.source, agg.aten, agg.via, agg.module = p["source"], p["aten"], p["via"], module
