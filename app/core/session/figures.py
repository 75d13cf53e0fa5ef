"""The session's figures, computed once from the same fields as :class:`app.core.events.Summary`: the stats
strip's :class:`LiveFigures` of a run, the race table's rows (:func:`race_rows`) and the one-line summaries the
session says when a request ends (:func:`program_line`, :func:`race_done`, :func:`passes_done`,
:func:`profile_done`, :func:`capture_done`)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from app.core.events import steady_decode_ms
from app.core.profile.columns import profile_summary
from app.core.programs.sites import n_inner_compiles
from app.core.race import summary_rows
from app.core.session import requests as rq
from app.core.session.runs import RunState
from app.core.units import counted, ms
from app.core.verdict.words import headline


@dataclass(frozen=True)
class LiveFigures:
    """The stats strip's figures. While a run streams: ``ttft_ms`` is the first token's ``elapsed_ms``
    (the same clock as :attr:`Summary.ttft_ms`), ``live_tokens_per_s`` the rate since the first token; once it
    ends, the :class:`Summary` values themselves (decode tokens/s when there was a steady decode)."""

    ttft_ms: float | None = None
    live_tokens_per_s: float | None = None
    n_tokens: int = 0
    n_compiles: int = 0
    steady_ms: float | None = None
    #: A program run (``RunState.program``): ``ttft_ms`` is its first call's wall time, ``steady_ms`` the
    #: median of its calls that did not compile, ``n_calls`` its calls.
    program: bool = False
    n_calls: int = 0
    #: The steady decode's share of the memory-bandwidth bound (0.71: 71 %), with the bound's arithmetic
    #: (:class:`app.core.profile.bound.MemoryBound`); None for a program or a run without a bound.
    bandwidth_share: float | None = None
    bound_note: str = ""

    @staticmethod
    def of(run: RunState) -> LiveFigures:
        if run.program:
            recs = run.records
            steady = [r.wall_ms for r in recs if not r.compiled and not r.inner_compiles]
            return LiveFigures(recs[0].wall_ms if recs else None, None, 0,
                               sum(1 for r in recs if r.compiled) + n_inner_compiles(recs),  # what XLA compiled
                               statistics.median(steady) if steady else None, True, len(recs))
        if run.finished is not None:
            s = run.finished.summary
            return LiveFigures(s.ttft_ms, s.decode_tokens_per_s or s.overall_tokens_per_s, s.n_tokens, s.n_compiles,
                               s.steady_decode_ms)
        toks = run.tokens
        rate = None
        if len(toks) > 1 and toks[-1].elapsed_ms > toks[0].elapsed_ms:
            rate = (len(toks) - 1) / ((toks[-1].elapsed_ms - toks[0].elapsed_ms) / 1000)
        ttft = toks[0].elapsed_ms if toks else None
        return LiveFigures(ttft, rate, len(toks), run.n_compiles, steady_decode_ms(run.records))


def program_line(run: RunState) -> str:
    """One line about a finished program run: ``run 2 · jit · selu: 10 calls · first call 61.2 ms · steady call
    12.1 ms · 1 compile``."""
    finished = run.finished
    if finished is None:
        raise RuntimeError(f"{run.label} has not finished: no line about it yet.")
    s = finished.summary
    steady = f" · steady call {ms(s.steady_decode_ms)}" if s.steady_decode_ms is not None else ""
    ended = {"stopped": " (stopped)", "error": " (error)"}.get(finished.reason, "")
    return (f"{run.label}: {s.n_calls} call{'s' if s.n_calls != 1 else ''}{ended} · first call {ms(s.ttft_ms)}"
            f"{steady} · {s.n_compiles} compile{'s' if s.n_compiles != 1 else ''}")


def race_rows(runs: list[RunState], bound_ms: float | None = None) -> list[dict[str, Any]]:
    """Summary rows (:func:`app.core.race.summary_rows`) of the finished lanes of the newest race in ``runs``
    (or of the newest run; none when the newest run is a program's)."""
    if not runs or runs[-1].program:  # a program's calls are no model race (issue 37: it showed 0 tokens)
        return []
    run = runs[-1]
    lanes = [r for r in runs if r.race == run.race] if run.race is not None else [run]
    return summary_rows({r.mode: r.finished for r in lanes if r.finished is not None},
                        None if run.origin else bound_ms)


def race_done(rows: list[dict[str, Any]], modes: tuple[str, ...], verdicts: dict[str, Any] | None = None) -> str:
    """What a race of ``modes`` says when it ends, from its :func:`race_rows`: the lanes finished, stopped and
    not run, and the fastest steady decode; with its steady-state ``verdicts`` (their JSON form), the fastest
    mode's verdict against the baseline (:func:`app.core.verdict.words.headline`)."""
    said = headline(verdicts) if verdicts else []
    return _race_done(rows, modes) + (f" · steady state: {said[-1]}" if said else "")


def _race_done(rows: list[dict[str, Any]], modes: tuple[str, ...]) -> str:
    done = [r["mode"] for r in rows if r["reason"] != "stopped"]
    stopped = [r["mode"] for r in rows if r["reason"] == "stopped"]
    steady = [r for r in rows if r["steady_ms_per_token"] and r["mode"] in done]
    best = min(steady, key=lambda r: r["steady_ms_per_token"], default=None)
    tail = (f" · fastest steady decode: {best['mode']} ({best['steady_ms_per_token']:.2f} ms/token)"
            if best and len(done) > 1 else "")
    if stopped or len(rows) < len(modes):
        untouched = [m for m in modes if m not in done + stopped]
        return (f"Race stopped: finished {', '.join(done) or 'none'}"
                + (f"; stopped {', '.join(stopped)}" if stopped else "")
                + (f"; not run {', '.join(untouched)}" if untouched else "") + tail)
    return f"Race done: {', '.join(done)}{tail}"


def passes_done(request: rq.PassesRequest, ready: rq.PassesReady | None) -> str:
    """What a pass recording says when it ends (``ready``: the last one recorded)."""
    if ready is None or ready.request is not request:
        return "Pass recording stopped."
    p = ready.pipeline
    return (f"Recorded {ready.mode} · {ready.step}: {len(p.snapshots)} snapshots, {len(ready.rows)} passes, "
            f"compile {ready.breakdown['total_ms']:,.0f} ms, in {ready.seconds:.1f} s")


def profile_done(request: rq.ProfileRequest, ready: rq.ProfileReady | None) -> str:
    """What a profile says when it ends (``ready``: the last one measured); "" when it measured nothing."""
    p = ready.profile if ready is not None else None
    if p is None or p.step != request.step:
        return ""
    return f"Profiled {counted(p.n_steps, f'{p.step} step')}: {profile_summary(p)}"


def capture_done(origin: str) -> str:
    """What opening a capture recorded at ``origin`` says ("" when it opened nothing)."""
    return f"Opened {origin}: shown in the {'Passes' if origin.startswith('dumps') else 'Profile'} tab" \
        if origin else ""
