"""A recorded run's timeline: where each call sat in time, and a replay schedule of its events.

Times are milliseconds from the run's start (the clock of ``TokenEvent.elapsed_ms`` and
``Summary.ttft_ms``: the start of the first call).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.core.events import (
    CallRecord,
    Event,
    FinishedEvent,
    IREvent,
    Phase,
    PhaseEvent,
    PromptEvent,
    TokenEvent,
)
from app.core.recording.model import RecordedRun


@dataclass(frozen=True)
class CallSpan:
    """Call ``index`` ran from ``start_ms`` to ``end_ms`` (ms since the run's start); ``phases`` are its
    sub-intervals in order, ``(name, start_ms, end_ms)`` with names ``trace``, ``lower``, ``compile`` (or
    the compiler's own phase names) and ``execute``, each inside ``[start_ms, end_ms]`` and not overlapping."""

    index: int
    start_ms: float
    end_ms: float
    phases: tuple[tuple[str, float, float], ...] = ()


def _phase_lengths(r: CallRecord) -> list[tuple[str, float]]:
    if r.compiled:
        compile_parts = list(r.compile_phases.items()) or [
            (name, ms) for name, ms in (("trace", r.trace_ms), ("lower", r.lower_ms), ("compile", r.compile_ms))
            if ms is not None]
    else:
        compile_parts = []
    return [(n, max(0.0, float(ms))) for n, ms in compile_parts] + [("execute", max(0.0, float(r.execute_ms)))]


def call_spans(run: RecordedRun) -> list[CallSpan]:
    """One :class:`CallSpan` per call record, in order, never overlapping.

    A call's end is its record's ``timestamp`` (Unix seconds at the call's end) relative to the first
    call's start (its end minus its ``wall_ms``); without timestamps the calls are laid end to end.
    A call starts ``wall_ms`` before its end, and never before the previous call's end. Phases are laid end
    to end from the call's start, cut at its end."""
    spans: list[CallSpan] = []
    records = run.records
    timed = bool(records) and all(r.timestamp > 0 for r in records)
    t0 = records[0].timestamp - records[0].wall_ms / 1000 if timed else 0.0
    previous_end = 0.0
    for r in records:
        wall = max(0.0, float(r.wall_ms))
        end = (r.timestamp - t0) * 1000 if timed else previous_end + wall
        end = max(end, previous_end)
        start = max(previous_end, end - wall)
        phases, cursor = [], start
        for name, length in _phase_lengths(r):
            stop = min(end, cursor + length)
            if stop > cursor:
                phases.append((name, cursor, stop))
            cursor = stop
        spans.append(CallSpan(r.index, start, end, tuple(phases)))
        previous_end = end
    return spans


_PHASE_OF: dict[str, Phase] = {"trace": "tracing", "lower": "lowering", "compile": "compiling"}


def replay_schedule(run: RecordedRun, speed: float = 1.0, skip_compile: bool = False) -> list[tuple[float, Any]]:
    """The run's events with the time (ms from the replay's start) at which to emit each, in order: what
    "Replay at recorded pace" plays.

    Events are those of :meth:`RecordedRun.events` plus, for each compiling call, a started and an ended
    :class:`PhaseEvent` per compile phase (``tracing``, ``lowering``, ``compiling``; torch-compile's phases
    as ``compiling`` with their name as ``detail``) at the times they happened. ``speed`` > 0 divides every
    time (2.0 = twice as fast); ``skip_compile`` removes the compile phases' time (the wait) and their
    phase events. Times never decrease. Raises ValueError for ``speed <= 0``."""
    if speed <= 0:
        raise ValueError(f"speed must be > 0, got {speed}")
    spans = {s.index: s for s in call_spans(run)}
    skipped = 0.0  # compile time removed so far (skip_compile)
    timed: list[tuple[float, Any]] = []
    last = 0.0

    def emit(t: float, event: Event) -> None:
        nonlocal last
        last = max(last, t - skipped)
        timed.append((last, event))

    for event in run.events():
        if isinstance(event, PromptEvent):
            emit(0.0, event)
        elif isinstance(event, CallRecord):
            span = spans[event.index]
            for name, start, end in span.phases:
                if name == "execute":
                    continue
                if skip_compile:
                    skipped += end - start
                    continue
                phase = _PHASE_OF.get(name, "compiling")
                detail = f"{event.step} step" if name in _PHASE_OF else f"{event.step} step: {name}"
                emit(start, PhaseEvent(phase, True, detail))
                emit(end, PhaseEvent(phase, False, detail, end - start))
            emit(span.end_ms, event)
        elif isinstance(event, IREvent):
            emit(last + skipped, event)
        elif isinstance(event, TokenEvent):
            emit(event.elapsed_ms, event)
        elif isinstance(event, FinishedEvent):
            emit(event.summary.total_ms, event)
    return [(t / speed, e) for t, e in timed]


def token_intervals_ms(run: RecordedRun) -> list[float]:
    """Time between consecutive tokens' arrivals (ms), ``len(tokens) - 1`` values; the first token's
    arrival (the TTFT) is ``run.tokens[0].elapsed_ms``."""
    times = [t.elapsed_ms for t in run.tokens]
    return [b - a for a, b in zip(times, times[1:])]
