"""Mode race: one prompt through several execution modes, one after another, with a summary table.

Each mode starts cold by default (``Engine.clear_compiled()`` and ``jax.clear_caches()``), so the table
shows what a first run costs: time to first token, total compile ms, steady ms/token, tokens/s, total time,
number of compiles.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator

from app.core.events import Event, FinishedEvent
from app.core.settings import MODES, GenerationSettings


@dataclass(frozen=True)
class RaceEvent:
    """An engine event tagged with the mode (lane) of the race that produced it."""

    mode: str
    event: Event


def race(
    engine: Any,
    prompt: str,
    modes: list[str],
    settings: GenerationSettings,
    should_stop: Callable[[], bool] = lambda: False,
    cold: bool = True,
) -> Iterator[RaceEvent]:
    """Run ``prompt`` through each of ``modes`` in order; yields every event tagged with its mode.

    Raises :class:`app.core.errors.InvalidSettingsError` for an unknown mode before running anything.
    Stops between modes (and within a mode, between steps) once ``should_stop()`` is true.
    """
    from app.core.errors import InvalidSettingsError

    unknown = [m for m in modes if m not in MODES]
    if unknown or not modes:
        raise InvalidSettingsError(f"Race modes must be among {', '.join(MODES)}; got {', '.join(modes) or 'none'}.")
    for mode in modes:
        if should_stop():
            return
        if cold:
            engine.clear_compiled()
        for event in engine.generate(prompt, settings.with_(mode=mode), should_stop):
            yield RaceEvent(mode, event)


def summary_rows(finished: dict[str, FinishedEvent]) -> list[dict[str, Any]]:
    """One row per mode: ``ttft_ms``, ``compile_ms``, ``steady_ms_per_token``, ``tokens_per_s``,
    ``total_ms``, ``n_compiles``, ``n_tokens``, ``reason``, ``speedup_vs_torch`` (steady tokens/s ratio)."""
    rows = []
    torch = finished.get("torch")
    torch_rate = torch.summary.decode_tokens_per_s if torch else None
    for mode, fin in finished.items():
        s = fin.summary
        rows.append({
            "mode": mode,
            "ttft_ms": s.ttft_ms,
            "compile_ms": s.compile_ms,
            "steady_ms_per_token": s.steady_decode_ms,
            "tokens_per_s": s.decode_tokens_per_s,
            "total_ms": s.total_ms,
            "n_compiles": s.n_compiles,
            "n_tokens": s.n_tokens,
            "reason": fin.reason,
            "speedup_vs_torch": (s.decode_tokens_per_s / torch_rate)
            if torch_rate and s.decode_tokens_per_s else None,
        })
    return rows


def format_race_table(rows: list[dict[str, Any]]) -> str:
    from app.core.report import fmt as f

    header = (f"{'mode':<14} {'TTFT ms':>10} {'compile ms':>11} {'steady ms/tok':>14} {'tokens/s':>9} "
              f"{'total ms':>10} {'compiles':>8} {'x torch':>8}")
    lines = [header, "-" * len(header)]
    for r in rows:
        lines.append(
            f"{r['mode']:<14} {f(r['ttft_ms'], ',.1f'):>10} {f(r['compile_ms'], ',.1f'):>11} "
            f"{f(r['steady_ms_per_token'], ',.2f'):>14} {f(r['tokens_per_s'], ',.1f'):>9} "
            f"{f(r['total_ms'], ',.1f'):>10} {r['n_compiles']:>8} {f(r['speedup_vs_torch'], '.2f'):>8}"
        )
    return "\n".join(lines)
