"""Chrome / Perfetto trace export of recorded runs (JSON Trace Event Format), for ui.perfetto.dev and
``chrome://tracing``.

One process per run (``pid`` = its position from 1, named by its label and machine); in it the track
``compute thread`` (``tid`` 1) holds one complete (``"X"``) slice per call with its ``trace`` / ``lower``
/ ``compile`` (or the compiler's phases) / ``execute`` slices nested inside, and the track ``tokens``
(``tid`` 2) one instant (``"i"``) event per token. A run with a profile gets a second process, ``profile ·
<step>``, with one track per runtime thread holding the ops of the profiled step (times from that step's
start). ``ts`` and ``dur`` are microseconds; every slice is nested in or disjoint from the others of its
track (Perfetto's rule), which :func:`validate` checks.
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Any

from app.core.recording.model import RecordedRun
from app.core.recording.timing import call_spans

COMPUTE_TID, TOKENS_TID = 1, 2


def _ns(ms: float) -> int:
    return round(ms * 1e6)


def _us(ns: int) -> float:
    return ns / 1000


def _slice(name: str, cat: str, pid: int, tid: int, start_ns: int, end_ns: int, args: dict | None = None) -> dict:
    return {"name": name, "cat": cat, "ph": "X", "pid": pid, "tid": tid, "ts": _us(start_ns),
            "dur": _us(max(0, end_ns - start_ns)), "args": args or {}}


def _meta(kind: str, pid: int, tid: int, name: str) -> dict:
    return {"name": kind, "ph": "M", "pid": pid, "tid": tid, "args": {"name": name}}


def _disjoint(bars: list[tuple[int, int, dict]]) -> list[tuple[int, int, dict]]:
    """Bars of one track with partial overlaps removed: each starts no earlier than the previous one ended
    (measured op events can overlap by a few ns); bars left empty are dropped."""
    out, end = [], None
    for start, stop, payload in sorted(bars, key=lambda b: (b[0], -b[1])):
        if end is not None and start < end:
            start = end
        if stop > start:
            out.append((start, stop, payload))
            end = stop
    return out


def run_events(run: RecordedRun, pid: int) -> list[dict[str, Any]]:
    """The trace events of one run as process ``pid`` (and ``pid + 1000`` for its profile)."""
    events = [_meta("process_name", pid, 0, f"{run.label} · {run.model} · {run.machine}"),
              _meta("thread_name", pid, COMPUTE_TID, "compute thread"),
              _meta("thread_name", pid, TOKENS_TID, "tokens")]
    by_index = {r.index: r for r in run.records}
    for span in call_spans(run):
        r = by_index[span.index]
        start, end = _ns(span.start_ms), _ns(span.end_ms)
        args = {"step": r.step, "mode": r.mode, "wall_ms": r.wall_ms, "compiled": r.compiled,
                "input_shapes": r.input_shapes, "mesh": r.mesh}
        if r.compiled:
            args |= {"compile_reason": r.compile_reason, "persistent_cache_hit": r.persistent_cache_hit}
        name = f"{r.step} #{r.index}" + (" (compile)" if r.compiled else "")
        events.append(_slice(name, "call", pid, COMPUTE_TID, start, end, args))
        for phase, p_start, p_end in span.phases:
            s, e = max(start, _ns(p_start)), min(end, _ns(p_end))
            if e > s:
                events.append(_slice(phase, "phase", pid, COMPUTE_TID, s, e, {"ms": p_end - p_start}))
    for t in run.tokens:
        events.append({"name": f"token {t.index}", "cat": "token", "ph": "i", "s": "t", "pid": pid,
                       "tid": TOKENS_TID, "ts": _us(_ns(t.elapsed_ms)),
                       "args": {"token_id": t.token_id, "text": t.text, "call_index": t.call_index}})
    if run.profile is not None and run.profile.timeline.bars:
        events += _profile_events(run, pid + 1000)
    return events


def _profile_events(run: RecordedRun, pid: int) -> list[dict[str, Any]]:
    profile = run.profile
    if profile is None:  # (the caller checks)
        return []
    timeline = profile.timeline
    threads = list(timeline.threads) or sorted({b.thread for b in timeline.bars})
    threads += sorted({b.thread for b in timeline.bars} - set(threads))
    tids = {name: i + 1 for i, name in enumerate(threads)}
    events = [_meta("process_name", pid, 0,
                    f"profile · {profile.step} · {run.label} (one step of {profile.step_ms:.3f} ms, "
                    "µs from its start)")]
    events += [_meta("thread_name", pid, tid, name) for name, tid in tids.items()]
    per_thread: dict[str, list[tuple[int, int, dict]]] = {}
    for b in timeline.bars:
        start = round(b.start_us * 1000)
        per_thread.setdefault(b.thread, []).append((start, start + round(b.duration_us * 1000), {
            "name": b.name, "kind": b.kind, "source": b.source, "module": b.module}))
    for thread, bars in per_thread.items():
        for start, stop, payload in _disjoint(bars):
            events.append(_slice(payload["name"], "op", pid, tids[thread], start, stop,
                                 {k: v for k, v in payload.items() if k != "name"}))
    return events


def trace_document(runs: list[RecordedRun]) -> dict[str, Any]:
    """The whole trace: ``{"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}``."""
    events: list[dict[str, Any]] = []
    for i, run in enumerate(runs):
        events += run_events(run, i + 1)
    other = {"generator": "torchax-playground", "runs": [r.label for r in runs],
             "recorded": [r.recorded_label for r in runs]}
    return {"traceEvents": events, "displayTimeUnit": "ms", "otherData": other}


def write_trace(path: str | os.PathLike, runs: list[RecordedRun]) -> int:
    """Write the runs' trace as JSON to ``path`` (``.json``; ``.json.gz`` is gzip-compressed). Returns
    the number of events written. Raises OSError when the file cannot be written."""
    doc = trace_document(runs)
    data = json.dumps(doc, ensure_ascii=False).encode("utf-8")
    path = Path(path)
    if path.name.endswith(".gz"):
        data = gzip.compress(data)
    path.write_bytes(data)
    return len(doc["traceEvents"])


REQUIRED = {"X": ("name", "ph", "pid", "tid", "ts", "dur"), "i": ("name", "ph", "pid", "tid", "ts", "s"),
            "M": ("name", "ph", "pid", "tid", "args")}


def validate(doc: dict[str, Any]) -> list[str]:
    """Problems of a trace document against the Trace Event Format and Perfetto's rules (empty = valid):
    a known phase with its required fields, numeric non-negative ``ts`` / ``dur``, and on each track
    (``pid``, ``tid``) every two complete slices either disjoint or one strictly inside the other."""
    problems = []
    events = doc.get("traceEvents")
    if not isinstance(events, list):
        return ["no traceEvents list"]
    tracks: dict[tuple[Any, Any], list[tuple[int, int, str]]] = {}
    for n, e in enumerate(events):
        ph = e.get("ph")
        if ph not in REQUIRED:
            problems.append(f"event {n}: unknown phase {ph!r}")
            continue
        missing = [k for k in REQUIRED[ph] if k not in e]
        if missing:
            problems.append(f"event {n} ({ph}): missing {', '.join(missing)}")
            continue
        for k in ("ts", "dur"):
            if k in e and (not isinstance(e[k], (int, float)) or e[k] < 0):
                problems.append(f"event {n}: {k} = {e[k]!r}")
        if ph == "X":
            start = round(e["ts"] * 1000)
            tracks.setdefault((e["pid"], e["tid"]), []).append((start, start + round(e["dur"] * 1000), e["name"]))
    for (pid, tid), slices in tracks.items():
        stack: list[tuple[int, int, str]] = []
        for start, end, name in sorted(slices, key=lambda s: (s[0], -s[1])):
            while stack and stack[-1][1] <= start:
                stack.pop()
            if stack and end > stack[-1][1]:
                problems.append(f"track {pid}/{tid}: {name!r} [{start}, {end}] ns partially overlaps "
                                f"{stack[-1][2]!r} [{stack[-1][0]}, {stack[-1][1]}]")
            stack.append((start, end, name))
    return problems
