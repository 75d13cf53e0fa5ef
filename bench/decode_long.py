"""Issue 38's long runs for ``bench/decode.py``: the first tokens of a run with room for many against a short
run, same mode, warm, in turn."""

from __future__ import annotations

import numpy as np

PROMPT = "The jit function traces a Python function into a jaxpr"


def bench_long(engine, mode: str, short_tokens: int, long_tokens: int, first: int, pairs: int = 3) -> dict:
    """Issue 38: the first ``first`` tokens of a run with room for ``long_tokens`` against a ``short_tokens`` run,
    same mode, warm (each run after one of its own shape, so neither pays a compile in its steady figure), ``pairs``
    pairs run in turn: steady ms/token of each (medians), the median pair's ratio, and the KV-cache positions each
    decoded with (``Summary.cache_len``)."""
    from app.core.events import CallRecord, FinishedEvent, TokenEvent, steady_decode_ms
    from app.core.settings import GenerationSettings

    def run(n_new: int, stop_after: int | None) -> tuple[float | None, int | None, int]:
        settings = GenerationSettings(mode=mode, max_new_tokens=n_new, capture_ir=False, stop_at_eos=False)
        records, tokens, finished = [], [], None
        full = engine.cache_len_for(len(engine.encode(PROMPT)), settings)
        limit = stop_after or n_new
        for event in engine.generate(PROMPT, settings, should_stop=lambda: len(tokens) >= limit):
            if isinstance(event, CallRecord):
                records.append(event)
            elif isinstance(event, TokenEvent):
                tokens.append(event)
            elif isinstance(event, FinishedEvent):
                finished = event
        return steady_decode_ms(records), finished.summary.cache_len if finished else None, full

    run(short_tokens, None)  # compiles the short run's steps
    run(long_tokens, first)  # compiles the long run's first bucket
    shorts, longs = [], []
    for _ in range(pairs):  # in turn, so that the machine's drift moves both alike; the median pair's ratio
        shorts.append(run(short_tokens, None))
        longs.append(run(long_tokens, first))
    ratios = [lg[0] / sh[0] for sh, lg in zip(shorts, longs) if lg[0] and sh[0]]
    ratio = float(np.median(ratios)) if ratios else None
    short_ms, short_cache, _ = shorts[-1]
    long_ms, long_cache, long_full = longs[-1]
    short_ms = float(np.median([sh[0] for sh in shorts if sh[0]]))
    long_ms = float(np.median([lg[0] for lg in longs if lg[0]]))
    print(f"  {mode}: first {first} tokens of a {long_tokens:,}-token run ({long_cache} of {long_full:,} cache "
          f"positions) {long_ms:.2f} ms/token vs a {short_tokens}-token run ({short_cache} positions) "
          f"{short_ms:.2f} ms/token (medians of {pairs}): median pair ratio {ratio:.2f} "
          f"[{min(ratios):.2f}-{max(ratios):.2f}] (target <= 1.2)", flush=True)
    return {"mode": mode, "short_tokens": short_tokens, "short_ms_per_token": short_ms, "short_cache_len": short_cache,
            "long_tokens": long_tokens, "first": first, "long_ms_per_token": long_ms, "long_cache_len": long_cache,
            "long_full_cache_len": long_full, "ratio": ratio, "pair_ratios": ratios}
