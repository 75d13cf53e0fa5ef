"""Verdicts you can trust: paired, interleaved steady-state rounds → a ratio per pair of modes with its 95 %
confidence interval, an A/A noise floor, preempted rounds dropped and counted, and the sentence that says it.

Pure Python and SciPy (no JAX, torch or Qt), the one place every ratio the playground states is computed: the
race (:mod:`app.core.steady`), its summaries, session files and the CLI. Sources: Kalibera & Jones, "Rigorous
benchmarking in reasonable time" (ISMM 2013) for the ratio's interval; pyperf (calibrated values of >= 100 ms, a
t-test at 95 %); Google Benchmark's random interleaving (docs/random_interleaving.md) for the shuffled order.

- :mod:`.stats`: :func:`paired_ratio`, :func:`aa_noise_pct`, :class:`StoppingRule`;
- :mod:`.rounds`: :class:`Block`, :class:`Round`, :class:`BlockClock`, :func:`screen` (preempted rounds);
- :mod:`.judge`: :func:`judge`, :func:`pairs_of`;
- :mod:`.words`: :class:`PairVerdict`, :func:`verdict_text`, :func:`format_verdicts`.
"""

from app.core.verdict.judge import Judgement, judge, pairs_of
from app.core.verdict.rounds import AA_SUFFIX, Block, BlockClock, Round, screen
from app.core.verdict.stats import (
    MIN_ROUNDS,
    NOISY_AA_PCT,
    TARGET_HALF_WIDTH_PCT,
    RatioInterval,
    StoppingRule,
    aa_noise_pct,
    paired_ratio,
)
from app.core.verdict.words import PairVerdict, format_verdicts, verdict_text

__all__ = [
    "AA_SUFFIX", "MIN_ROUNDS", "NOISY_AA_PCT", "TARGET_HALF_WIDTH_PCT", "Block", "BlockClock", "Judgement",
    "PairVerdict", "RatioInterval", "Round", "StoppingRule", "aa_noise_pct", "format_verdicts", "judge",
    "paired_ratio", "pairs_of", "screen", "verdict_text",
]
