"""Mode race: one prompt through several execution modes, one after another, as one event stream.

:func:`race` yields a :class:`app.core.events.LaneEvent` before each mode's events, so the CLI's ``race``
and the window consume the same stream. Each mode starts cold by default (``Engine.clear_compiled()`` and
``jax.clear_caches()``), so the summary shows what a first run costs: time to first token, total compile
ms, steady ms/token, tokens/s, total time, number of compiles. ``torchax-eager`` dispatches every ATen op
on its own (~0.5–2 s per token from cold), so its lane is capped at ``eager_tokens`` (the catalog's
``token_cap``). With a :class:`app.core.steady.SteadyPlan` the race ends with a steady-state phase: paired,
interleaved rounds of every mode and the verdicts they allow (:mod:`app.core.steady`, :mod:`app.core.verdict`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from app.core.errors import InvalidSettingsError
from app.core.events import FinishedEvent, LaneEvent, PromptEvent, RaceEvent
from app.core.mode_catalog import CATALOG, REFERENCE_MODE, mode_info
from app.core.report.columns import RACE_COLUMNS, render_text
from app.core.settings import MODES, GenerationSettings
from app.core.steady import SteadyPlan, steady_phase

if TYPE_CHECKING:
    from app.core.engine.engine import Engine

#: Default token cap of a capped lane (torchax-eager): the catalog's ``token_cap``.
EAGER_TOKENS: int = next(info.token_cap for info in CATALOG if info.token_cap is not None)


def lane_settings(settings: GenerationSettings, mode: str, eager_tokens: int = EAGER_TOKENS) -> GenerationSettings:
    """``settings`` for one lane: ``mode`` set; a mode with a ``token_cap`` in the catalog (torchax-eager) is
    capped at ``eager_tokens`` (>= 1)."""
    if mode_info(mode).token_cap is not None:
        settings = settings.with_(max_new_tokens=min(settings.max_new_tokens, max(1, eager_tokens)))
    return settings.with_(mode=mode)


def race(
    engine: Engine,
    prompt: str,
    modes: list[str],
    settings: GenerationSettings,
    should_stop: Callable[[], bool] = lambda: False,
    cold: bool = True,
    eager_tokens: int = EAGER_TOKENS,
    on_live_phase: Callable[[Any], None] | None = None,
    steady: SteadyPlan | None = None,
) -> Iterator[RaceEvent]:
    """Run ``prompt`` through each of ``modes`` in order: per lane a :class:`LaneEvent`, then the events of
    :meth:`app.core.engine.engine.Engine.generate`; with ``steady``, then the steady-state phase's events
    (:func:`app.core.steady.steady_phase`: a :class:`SteadyRoundEvent` per round, a :class:`VerdictsEvent`). A
    cold lane with ``steady`` drops only its own mode's compiled steps (the others' serve the rounds' warm-up).

    Raises :class:`app.core.errors.InvalidSettingsError` for an unknown mode before running anything.
    Stops between modes (and within a mode, between steps) once ``should_stop()`` is true.
    """
    unknown = [m for m in modes if m not in MODES]
    if unknown or not modes:
        raise InvalidSettingsError(f"Race modes must be among {', '.join(MODES)}; got {', '.join(modes) or 'none'}.")
    if steady is not None:
        steady.validated()
    cache_lens: dict[str, int | None] = {}
    for i, mode in enumerate(modes):
        if should_stop():
            return
        lane = lane_settings(settings, mode, eager_tokens)
        yield LaneEvent(mode, i, len(modes), lane.max_new_tokens)
        if cold:
            engine.clear_compiled([mode] if steady is not None else None)
        for event in engine.generate(prompt, lane, should_stop, on_live_phase):
            if isinstance(event, PromptEvent):
                cache_lens[mode] = event.cache_len
            yield event
    if steady is not None and not should_stop():
        yield from steady_phase(engine, prompt, modes, settings, steady, should_stop, cache_lens)


def by_lane(events: Iterator[RaceEvent]) -> Iterator[tuple[str | None, RaceEvent]]:
    """Pair each event of a race stream with the mode of its lane."""
    mode = None
    for event in events:
        if isinstance(event, LaneEvent):
            mode = event.mode
        yield mode, event


def summary_rows(finished: dict[str, FinishedEvent], bound_ms: float | None = None) -> list[dict[str, Any]]:
    """One row per mode, keyed as :data:`app.core.report.columns.RACE_COLUMNS`: ``ttft_ms``, ``compile_ms``,
    ``steady_ms_per_token``, ``decode_tokens_per_s``, ``total_ms``, ``n_compiles``, ``n_tokens``, ``reason``,
    ``speedup_vs_torch`` (steady decode tokens/s over torch's, when torch ran), ``x_bound`` (steady ms/token over
    ``bound_ms``, the memory-bandwidth bound: :mod:`app.core.profile.bound`; None without one), ``cache_len`` (the
    static KV cache's positions at the lane's end; None for torch's DynamicCache), ``parity`` (:func:`parity`:
    whether the lane's tokens equal the baseline lane's)."""
    rows = []
    same = parity(finished)
    torch = finished.get(REFERENCE_MODE)
    torch_rate = torch.summary.decode_tokens_per_s if torch else None
    for mode, fin in finished.items():
        s = fin.summary
        rows.append({
            "mode": mode,
            "ttft_ms": s.ttft_ms,
            "compile_ms": s.compile_ms,
            "steady_ms_per_token": s.steady_decode_ms,
            "decode_tokens_per_s": s.decode_tokens_per_s,
            "total_ms": s.total_ms,
            "n_compiles": s.n_compiles,
            "n_tokens": s.n_tokens,
            "reason": fin.reason,
            "speedup_vs_torch": (s.decode_tokens_per_s / torch_rate)
            if torch_rate and s.decode_tokens_per_s else None,
            "x_bound": s.steady_decode_ms / bound_ms if bound_ms and s.steady_decode_ms else None,
            "cache_len": s.cache_len,
            "speedup_ci": None,  # one pass: no interval (with_verdicts gives one from steady-state rounds)
            "parity": same.get(mode),
        })
    return rows


def parity(finished: dict[str, FinishedEvent]) -> dict[str, str | None]:
    """Per lane, whether its generated token ids equal the baseline lane's (torch when it ran, else the first
    lane) over the tokens both made (torchax-eager's lane is capped): ``"baseline"``, ``"same"``, ``"differs at
    token k"`` (1-based, the first that differs) or None (no tokens to compare) — the race summary's parity row
    (issue 55: the CLI said "identical tokens across modes", the window nothing)."""
    if not finished:
        return {}
    base_mode = REFERENCE_MODE if REFERENCE_MODE in finished else next(iter(finished))
    base = list(finished[base_mode].token_ids)
    out: dict[str, str | None] = {}
    for mode, fin in finished.items():
        ids = list(fin.token_ids)
        n = min(len(ids), len(base))
        if mode == base_mode:
            out[mode] = "baseline" if base else None
        elif n == 0:
            out[mode] = None
        else:
            k = next((i for i in range(n) if ids[i] != base[i]), None)
            out[mode] = "same" if k is None else f"differs at token {k + 1}"
    return out


def with_verdicts(rows: list[dict[str, Any]], verdicts: dict[str, Any] | None) -> list[dict[str, Any]]:
    """``rows`` of :func:`summary_rows` whose ``speedup_vs_torch`` comes from the race's steady-state rounds when it
    measured them: the geometric-mean ratio of torch's ms/token over the mode's in paired rounds, with
    ``speedup_ci`` ``(ci_low, ci_high)``, its 95 % interval (:mod:`app.core.verdict`). ``verdicts``: the phase's
    JSON form (:meth:`app.core.events.VerdictsEvent.to_json`, or a session file's copy). A mode without a pair
    against torch — or a race without rounds — keeps its one-pass ratio and no interval (``speedup_ci`` None)."""
    pairs: dict[str, tuple[float, float | None, float | None]] = {}
    for p in (verdicts or {}).get("pairs") or []:
        lo, hi = p.get("ci_low"), p.get("ci_high")
        if p.get("against") == REFERENCE_MODE:
            pairs[p["mode"]] = (p["ratio"], lo, hi)
        elif p.get("mode") == REFERENCE_MODE and p.get("ratio"):  # said of torch: invert ratio and interval
            pairs[p["against"]] = (1.0 / p["ratio"], 1.0 / hi if hi else None, 1.0 / lo if lo else None)
    out = []
    for row in rows:
        ratio, lo, hi = pairs.get(row["mode"], (row.get("speedup_vs_torch"), None, None))
        out.append({**row, "speedup_vs_torch": ratio, "speedup_ci": (lo, hi) if lo and hi else None})
    return out


def format_race_table(rows: list[dict[str, Any]]) -> str:
    """The race summary as the CLI prints it."""
    return render_text(RACE_COLUMNS, rows)
