"""Verdict words: what a paired ratio and its interval allow one to say, in one sentence.

- the interval excludes 1: ``"jit-static is 2.41× faster than torch (95 % CI 2.30–2.52; 12 paired rounds;
  A/A ±1.8 %; 1 dropped)"`` — always said of the faster mode, so the ratio is >= 1;
- the interval contains 1: ``"jit-loop vs jit-static: no clear difference (0.98–1.06; 12 paired rounds; A/A
  ±1.8 %; 0 dropped)"``;
- fewer than 2 kept rounds: ``"… too few rounds to tell (1 kept, 3 dropped)"``;
- and, after any of them, ``" — noisy machine (A/A ±4.2 % > ±3 %)"`` when the A/A interval is wider than
  :data:`app.core.verdict.stats.NOISY_AA_PCT`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from app.core.verdict.stats import NOISY_AA_PCT, RatioInterval, is_noisy


@dataclass(frozen=True)
class PairVerdict:
    """One pair's verdict, as plain data (``race --json``'s per-pair fields).

    ``mode`` against ``against``: ``ratio`` is the geometric mean over the paired rounds of ``against``'s
    ms/token over ``mode``'s — the speed-up of ``mode`` (> 1: ``mode`` is faster); ``ci_low`` / ``ci_high`` its
    95 % interval (None with fewer than 2 rounds); ``rounds``: paired rounds kept; ``aa_noise``: the A/A
    interval's half-width (± %, None when unknown); ``dropped``: rounds dropped as preempted; ``noisy``: the A/A
    interval is wider than ±3 %; ``text``: the sentence (:func:`verdict_text`).
    """

    mode: str
    against: str
    ratio: float
    ci_low: float | None
    ci_high: float | None
    rounds: int
    aa_noise: float | None
    dropped: int
    noisy: bool
    text: str

    @property
    def clear(self) -> bool:
        """The interval excludes 1: one mode is faster (False without an interval)."""
        return self.ci_low is not None and self.ci_high is not None and not self.ci_low <= 1.0 <= self.ci_high


def _tail(rounds: int, aa_noise: float | None, dropped: int) -> str:
    aa = f"A/A ±{aa_noise:.1f} %" if aa_noise is not None else "A/A –"
    return f"{rounds} paired rounds; {aa}; {dropped} dropped"


def verdict_text(mode: str, against: str, iv: RatioInterval, aa_noise: float | None, dropped: int) -> str:
    """The sentence for ``mode`` against ``against`` (``iv``: the interval of ``against``'s ms/token over
    ``mode``'s, :func:`app.core.verdict.stats.paired_ratio`); see the module's docstring for its forms."""
    if iv.ci_low is None or iv.ci_high is None:
        text = f"{mode} vs {against}: too few rounds to tell ({iv.rounds} kept, {dropped} dropped)"
    elif iv.ci_low <= 1.0 <= iv.ci_high:
        text = (f"{mode} vs {against}: no clear difference ({iv.ci_low:.2f}–{iv.ci_high:.2f}; "
                f"{_tail(iv.rounds, aa_noise, dropped)})")
    else:
        fast, slow, r, lo, hi = mode, against, iv.ratio, iv.ci_low, iv.ci_high
        if r < 1.0:  # said of the faster mode: invert the ratio and its interval
            fast, slow, r, lo, hi = against, mode, 1.0 / r, 1.0 / hi, 1.0 / lo
        text = (f"{fast} is {r:.2f}× faster than {slow} (95 % CI {lo:.2f}–{hi:.2f}; "
                f"{_tail(iv.rounds, aa_noise, dropped)})")
    if is_noisy(aa_noise):
        text += f" — noisy machine (A/A ±{aa_noise:.1f} % > ±{NOISY_AA_PCT:g} %)"
    return text


def pair_verdict(mode: str, against: str, iv: RatioInterval, aa_noise: float | None, dropped: int) -> PairVerdict:
    """A :class:`PairVerdict` of ``iv`` (``against``'s ms/token over ``mode``'s) with its sentence."""
    return PairVerdict(mode, against, iv.ratio, iv.ci_low, iv.ci_high, iv.rounds, aa_noise, dropped,
                       is_noisy(aa_noise), verdict_text(mode, against, iv, aa_noise, dropped))


#: How the thread budget's keys read in a sentence.
THREAD_NAMES = {"torch_intra_op": "torch intra-op", "xla_cpu": "XLA:CPU"}


def format_verdicts(doc: dict[str, Any]) -> str:
    """The verdict lines of a steady-state phase as the CLI prints them (``race``, ``show-session``), from its
    JSON form (:meth:`app.core.events.VerdictsEvent.to_json`, or as a session file keeps it): a head line with
    the rounds, the A/A floor, the thread budget and why the phase stopped, then one line per pair."""
    threads = " · ".join(f"{THREAD_NAMES.get(k, k)} {v}" for k, v in (doc.get("threads") or {}).items())
    aa = doc.get("aa_noise")
    head = (f"steady state: {doc.get('rounds', 0)} paired rounds ({doc.get('dropped', 0)} dropped), baseline "
            f"{doc.get('baseline', '?')}" + (f", A/A ±{aa:.1f} %" if aa is not None else "")
            + f"; threads {threads or '–'}; stopped: {doc.get('stopped_by', '?')} after "
            f"{doc.get('elapsed_s', 0):.1f} s")
    lines = [head]
    lines += [f"  {p['text']}" for p in doc.get("pairs", [])]
    lines += [f"  ({mode} left out: {why})" for mode, why in (doc.get("left_out") or {}).items()]
    if doc.get("noisy"):
        lines.append(f"  noisy machine: the A/A interval is wider than ±{NOISY_AA_PCT:g} %; "
                     "differences smaller than it cannot be told")
    return "\n".join(lines)


def json_lines(doc: dict[str, Any]) -> list[str]:
    """``race --json``'s verdict lines from a :class:`app.core.events.VerdictsEvent`'s JSON (or a session file's
    copy): one ``{"event": "verdict", "mode", "against", "ratio", "ci_low", "ci_high", "rounds", "aa_noise",
    "dropped", "noisy", "text", "baseline", "threads"}`` per pair, then ``{"event": "steady", …}`` with the
    phase's figures (rounds, dropped, A/A, threads, load average, budget, why it stopped)."""
    pairs = doc.get("pairs") or []
    lines = [json.dumps({"event": "verdict", **p, "baseline": doc.get("baseline"), "threads": doc.get("threads")})
             for p in pairs]
    rest = {k: v for k, v in doc.items() if k not in ("event", "pairs")}
    return [*lines, json.dumps({"event": "steady", **rest})]


def short_verdict(pair: dict[str, Any]) -> str:
    """One pair's verdict in a few words (a :class:`PairVerdict`'s JSON form): ``"jit-static 2.41× faster than
    torch (95 % CI 2.30–2.52)"``, ``"jit-loop vs jit-static: no clear difference (0.98–1.06)"`` or ``"jit-loop
    vs torch: too few rounds"`` — said of the faster mode, as :func:`verdict_text` says it."""
    mode, against, lo, hi = pair["mode"], pair["against"], pair.get("ci_low"), pair.get("ci_high")
    if lo is None or hi is None:
        return f"{mode} vs {against}: too few rounds"
    if lo <= 1.0 <= hi:
        return f"{mode} vs {against}: no clear difference ({lo:.2f}–{hi:.2f})"
    fast, slow, r = (mode, against, pair["ratio"]) if pair["ratio"] >= 1.0 else (against, mode, 1 / pair["ratio"])
    lo, hi = (lo, hi) if fast == mode else (1 / hi, 1 / lo)
    return f"{fast} {r:.2f}× faster than {slow} (95 % CI {lo:.2f}–{hi:.2f})"


def _terse(pair: dict[str, Any]) -> str:
    """A pair against the baseline without its name: ``"jit-static 2.41× faster (2.30–2.52)"``."""
    mode, lo, hi, r = pair["mode"], pair.get("ci_low"), pair.get("ci_high"), pair["ratio"]
    if lo is None or hi is None:
        return f"{mode}: too few rounds"
    if lo <= 1.0 <= hi:
        return f"{mode}: no clear difference ({lo:.2f}–{hi:.2f})"
    if r >= 1.0:
        return f"{mode} {r:.2f}× faster ({lo:.2f}–{hi:.2f})"
    return f"{mode} {1 / r:.2f}× slower ({1 / hi:.2f}–{1 / lo:.2f})"


def headline(doc: dict[str, Any]) -> list[str]:
    """The verdict line a talk reads on the latency plot, from a phase's JSON form (:func:`format_verdicts`'s
    ``doc``): its wordings, longest first, for the plot to draw the first that fits — every pair, then the
    pairs against the baseline, then those tersely (``"vs torch, 95 % CI: jit-static 2.41× faster (2.30–2.52) ·
    …"``), then the fastest mode's alone, last without "95 % CI"; each ends ``" · noisy machine (A/A ±4.2 %)"``
    (the last: ``" · noisy machine"``) when the A/A floor is wider than ±3 %. A plot may wrap a wording at its
    ``" · "``. ``[]`` when the phase compared nothing (one mode); a phase stopped before its first round
    says so."""
    pairs, base = list(doc.get("pairs") or []), doc.get("baseline", "")
    if not pairs:
        return []
    tail = f" · noisy machine (A/A ±{doc['aa_noise']:.1f} %)" if doc.get("noisy") and doc.get("aa_noise") else ""
    if not doc.get("rounds"):
        return [f"steady state {doc.get('stopped_by') or 'stopped'} before a round: no verdict" + tail]
    vs_base = [p for p in pairs if p["against"] == base] or pairs
    best = max(vs_base, key=lambda p: p["ratio"])
    wordings = [" · ".join(short_verdict(p) for p in pairs), " · ".join(short_verdict(p) for p in vs_base),
                f"vs {base}, 95 % CI: " + " · ".join(_terse(p) for p in vs_base), short_verdict(best)]
    shortest = short_verdict(best).replace("(95 % CI ", "(")  # "jit-static 2.41× faster than torch (2.30–2.52)"
    return [w + tail for w in dict.fromkeys(wordings)] + [shortest + (" · noisy machine" if tail else "")]


def progress_line(round_index: int, label: str, elapsed_s: float, budget_s: float, min_rounds: int) -> str:
    """A steady-state phase's progress (a :class:`app.core.events.SteadyBlockEvent`'s fields): ``"steady state ·
    round 4 (≥ 9) · jit-static · 6.3 s of 30 s"``; while warming: ``"steady state · warming jit-static · 0.4 s"``."""
    if round_index < 0:
        return f"steady state · warming {label} · {elapsed_s:.1f} s"
    return (f"steady state · round {round_index + 1} (≥ {min_rounds}) · {label} · {elapsed_s:.1f} s of "
            f"{budget_s:g} s")
