"""Paired ratios with confidence intervals, the A/A noise floor and the stopping rule (pure Python + SciPy).

Two modes measured in the same round share the machine's state in that round (its clock, its load, the other
tenants of a shared host), so their ratio in the round cancels most of the drift between rounds; the rounds'
ratios are then summarised on the log scale: the geometric mean of the per-round ratios and a Student-t
interval on the mean of their logarithms, exponentiated back. That is the interval for a ratio of execution
times of Kalibera & Jones, "Rigorous benchmarking in reasonable time" (ISMM 2013, §5: "confidence interval for
the ratio"), in its paired form; pyperf compares two benchmarks with a t-test at 95 % in the same spirit
(``pyperf compare_to``, ``pyperf/_compare.py``), and Google Benchmark interleaves repetitions at random
(``--benchmark_enable_random_interleaving``, docs/random_interleaving.md) so that drift falls on every
benchmark alike. An A/A pair (one mode measured twice per round) gives the interval's width when nothing
differs: the noise floor below which no difference can be told.

Units: times are milliseconds (per token, ms/token); a ratio is dimensionless; a half-width is in percent.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

#: Confidence level of every interval stated (two-sided).
LEVEL = 0.95
#: A pair is measured precisely enough when its interval's half-width is at most this many percent.
TARGET_HALF_WIDTH_PCT = 3.0
#: The A/A interval wider than this (± %) makes the machine "noisy": differences below it cannot be told.
NOISY_AA_PCT = 3.0
#: Rounds measured at least (Google Benchmark's U test wants 9 repetitions or more: ``statistics.cc``).
MIN_ROUNDS = 9


def t_quantile(df: int, level: float = LEVEL) -> float:
    """The two-sided Student-t critical value: the ``(1 + level) / 2`` quantile of t with ``df`` degrees of
    freedom (``scipy.special.stdtrit``, the inverse of Student's t CDF, as ``scipy.stats.t.ppf`` computes it;
    2.262 for df 9 at 95 %). Raises ValueError for ``df < 1`` or a level outside (0, 1)."""
    if df < 1 or not 0.0 < level < 1.0:
        raise ValueError(f"t_quantile needs df >= 1 and 0 < level < 1; got df={df}, level={level}")
    from scipy.special import stdtrit

    return float(stdtrit(df, (1.0 + level) / 2.0))


@dataclass(frozen=True)
class RatioInterval:
    """The geometric-mean ratio of paired times and its confidence interval.

    ``ratio``: ``exp(mean(log(num_i / den_i)))`` over the ``rounds`` paired rounds (dimensionless; > 1 when the
    numerator's times are the longer); ``ci_low`` / ``ci_high``: the interval at :data:`LEVEL`, None with fewer
    than 2 rounds (no spread to estimate); ``log_sd``: the sample standard deviation of the per-round log ratios.
    """

    ratio: float
    ci_low: float | None
    ci_high: float | None
    rounds: int
    log_sd: float = 0.0

    @property
    def half_width_pct(self) -> float | None:
        """The interval's half-width in percent of the ratio (``(ci_high / ratio - 1) × 100``; the interval is
        symmetric on the log scale); None without an interval."""
        if self.ci_high is None:
            return None
        return (self.ci_high / self.ratio - 1.0) * 100.0

    def contains(self, value: float = 1.0) -> bool:
        """Whether ``value`` lies inside the interval (True without one: nothing is excluded)."""
        if self.ci_low is None or self.ci_high is None:
            return True
        return self.ci_low <= value <= self.ci_high


def paired_ratio(num_ms: Sequence[float], den_ms: Sequence[float], level: float = LEVEL) -> RatioInterval:
    """The geometric mean of ``num_ms[i] / den_ms[i]`` over paired rounds, with a Student-t interval on the
    mean of the log ratios (Kalibera & Jones 2013, §5), exponentiated back.

    ``num_ms`` / ``den_ms``: per-round times in ms (or any one unit, both alike), paired by position. Raises
    ValueError when the sequences differ in length, are empty, or hold a time that is not positive.
    """
    if len(num_ms) != len(den_ms) or not num_ms:
        raise ValueError(f"paired_ratio needs two equally long, non-empty sequences; got {len(num_ms)} and "
                         f"{len(den_ms)}")
    if min(num_ms) <= 0 or min(den_ms) <= 0:
        raise ValueError("paired_ratio needs positive times")
    logs = [math.log(a / b) for a, b in zip(num_ms, den_ms)]
    mean, n = statistics.fmean(logs), len(logs)
    if n < 2:
        return RatioInterval(math.exp(mean), None, None, n)
    sd = statistics.stdev(logs)
    half = t_quantile(n - 1, level) * sd / math.sqrt(n)
    return RatioInterval(math.exp(mean), math.exp(mean - half), math.exp(mean + half), n, sd)


def aa_noise_pct(first_ms: Sequence[float], second_ms: Sequence[float], level: float = LEVEL) -> float | None:
    """The A/A noise floor: the half-width (± %) of the ratio interval of one mode measured twice per round
    (:func:`paired_ratio` of the two copies); None with fewer than 2 rounds."""
    if len(first_ms) < 2:
        return None
    return paired_ratio(first_ms, second_ms, level).half_width_pct


def is_noisy(aa_pct: float | None, limit_pct: float = NOISY_AA_PCT) -> bool:
    """A noisy machine: the A/A interval is wider than ``±limit_pct`` % (False when it is not known)."""
    return aa_pct is not None and aa_pct > limit_pct


def precise_enough(intervals: Sequence[RatioInterval], target_pct: float = TARGET_HALF_WIDTH_PCT) -> bool:
    """Every interval's half-width is at most ``target_pct`` % (False when one has no interval yet)."""
    widths = [iv.half_width_pct for iv in intervals]
    return all(w is not None and w <= target_pct for w in widths)


@dataclass(frozen=True)
class StoppingRule:
    """When a steady-state phase stops adding rounds: never before ``min_rounds`` kept rounds; then as soon
    as every pair's interval is within ``target_pct`` (± %), or once ``budget_s`` seconds have passed. A phase
    whose rounds keep being dropped stops at the budget once it has run ``2 × min_rounds`` rounds in all, and
    ``max_rounds`` rounds end any phase (pyperf calibrates each value to >= 100 ms and runs a fixed number of
    values; this rule adds rounds only while the answer is still imprecise, as paired A/B tools do)."""

    budget_s: float = 30.0
    min_rounds: int = MIN_ROUNDS
    target_pct: float = TARGET_HALF_WIDTH_PCT
    max_rounds: int = 200

    def stop_reason(self, kept: int, total: int, elapsed_s: float,
                    intervals: Sequence[RatioInterval]) -> str | None:
        """Why to stop now (``"precise"``, ``"budget"``, ``"max rounds"``), or None to run another round.
        ``kept``: rounds kept so far; ``total``: rounds run (dropped ones included); ``elapsed_s``: seconds since
        the first round started; ``intervals``: every pair's interval over the kept rounds."""
        if total >= self.max_rounds:
            return "max rounds"
        if kept >= self.min_rounds and precise_enough(intervals, self.target_pct):
            return "precise"
        if elapsed_s >= self.budget_s and (kept >= self.min_rounds or total >= 2 * self.min_rounds):
            return "budget"
        return None
