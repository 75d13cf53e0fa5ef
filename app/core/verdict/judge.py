"""From steady-state rounds to verdicts: which pairs are compared, the A/A floor, the dropped rounds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from app.core.verdict.rounds import AA_SUFFIX, Round, screen
from app.core.verdict.stats import RatioInterval, aa_noise_pct, is_noisy, paired_ratio
from app.core.verdict.words import PairVerdict, pair_verdict


def pairs_of(modes: Sequence[str], baseline: str) -> list[tuple[str, str]]:
    """The pairs a race states, ``(mode, against)``: each mode against ``baseline`` first, then each later mode
    against each earlier one that is not the baseline (``jit-loop`` against ``jit-static``), in race order."""
    others = [m for m in modes if m != baseline]
    return [(m, baseline) for m in others] + [(b, a) for i, a in enumerate(others) for b in others[i + 1:]]


@dataclass(frozen=True)
class Judgement:
    """The verdicts of a phase's rounds: ``pairs`` one :class:`PairVerdict` per pair (:func:`pairs_of`);
    ``aa``: the A/A pair's interval (None when the baseline was measured once per round); ``aa_noise``: its
    half-width (± %); ``noisy``: wider than ±3 %; ``rounds``: rounds kept; ``dropped``: round index → why."""

    pairs: tuple[PairVerdict, ...]
    aa: RatioInterval | None
    aa_noise: float | None
    noisy: bool
    rounds: int
    dropped: dict[int, str] = field(default_factory=dict)

    def intervals(self) -> list[RatioInterval]:
        """Every pair's interval and the A/A one: what the stopping rule needs precise."""
        ivs = [RatioInterval(p.ratio, p.ci_low, p.ci_high, p.rounds) for p in self.pairs]
        return ivs + ([self.aa] if self.aa is not None else [])


def judge(rounds: Sequence[Round], modes: Sequence[str], baseline: str, threads: int) -> Judgement:
    """Screen ``rounds`` (:func:`app.core.verdict.rounds.screen`) and state each pair of ``modes`` over the kept
    ones. ``baseline``: the mode measured twice per round (its blocks ``baseline`` and ``baseline (A/A)``);
    ``threads``: the thread budget every mode had. A pair's ratio is ``against``'s ms/token over ``mode``'s
    (:func:`app.core.verdict.stats.paired_ratio`); with no kept round its ratio is 1.0 with no interval."""
    sc = screen(rounds, threads)
    kept, dropped = sc.kept, len(sc.dropped)
    twin = baseline + AA_SUFFIX
    aa = aa_pct = None
    if kept and all(r.figure(twin) is not None for r in kept):
        first = [r.figure(baseline) or 0.0 for r in kept]
        second = [r.figure(twin) or 0.0 for r in kept]
        aa = paired_ratio(first, second)
        aa_pct = aa_noise_pct(first, second)
    verdicts = []
    for mode, against in pairs_of(modes, baseline):
        if kept:
            iv = paired_ratio([r.figure(against) or 0.0 for r in kept], [r.figure(mode) or 0.0 for r in kept])
        else:
            iv = RatioInterval(1.0, None, None, 0)
        verdicts.append(pair_verdict(mode, against, iv, aa_pct, dropped))
    return Judgement(tuple(verdicts), aa, aa_pct, is_noisy(aa_pct), len(kept), dict(sc.dropped))
