"""``bench/decode.py``'s steady-state rounds (issue 54): every speed ratio it states, measured in paired,
interleaved rounds with a 95 % interval, on the race's own verdict module (:mod:`app.core.verdict`).

After each mode has run cold (its first calls and compile, :func:`bench.decode.bench_mode`), each lane is warmed
and calibrated (:func:`calibrate`: one untimed repetition, then one timed one gives the repetitions a block needs
to last ``block_ms``, >= 100 ms, as :func:`app.core.steady.calibrate` does). A lane is a mode — one repetition
generates ``tokens`` tokens of the bench's prompt, warm, and its figure is the mean interval between token
arrivals on the host, the first two tokens left out (the prefill's token, and the first decode, which for jit-loop
launches its loop): the rate a reader of the stream sees, the same clock for every mode (a jit-static call's own
``wall_ms`` leaves out the engine's Python between calls, which jit-loop's interval includes) — or the
**products alone** (:data:`PRODUCTS`): the jitted chain of the model's matrix-vector products, same shapes and
bytes, nothing else (:func:`bench.matvec_only.chain_of`), its figure the ms per call. Then rounds: one block per
lane and the A/A lane (jit-static, on one side of every target) twice, in an order shuffled per round from a
seeded generator, every lane on XLA:CPU's thread budget (:func:`app.core.steady.same_threads`), until
:class:`app.core.verdict.StoppingRule` says stop (>= 9 kept rounds, then every stated pair within ±3 % or the
time budget). Rounds with a preempted block are dropped and counted (:func:`app.core.verdict.screen`).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass

from app.core.steady import SteadyPlan, same_threads
from app.core.verdict import AA_SUFFIX, Block, BlockClock, Round, aa_noise_pct, paired_ratio, screen
from app.core.verdict.stats import RatioInterval, is_noisy
from app.core.verdict.words import PairVerdict, pair_verdict

#: The products-alone lane's label.
PRODUCTS = "products alone"
#: Modes that do not take part in the rounds (seconds per token, or a compile per token).
NO_ROUNDS = ("torchax-eager", "jit-dynamic")
#: The stated pairs: ``(name, mode, against)``, the ratio ``against``'s ms over ``mode``'s (speed-ups of ``mode``;
#: for the products lane, the step's time over its products' time).
PAIRS = (
    ("jit-loop ÷ jit-static", "jit-loop", "jit-static"),
    ("jit-static ÷ torch eager", "jit-static", "torch"),
    ("jit-static ÷ torch.compile", "jit-static", "torch-compile"),
    ("jit-static step ÷ its products alone", PRODUCTS, "jit-static"),
    ("jit-loop step ÷ its products alone", PRODUCTS, "jit-loop"),
)


@dataclass(frozen=True)
class Lane:
    """One lane of the rounds: ``label``, and ``rep()``: one repetition, returning its units' ms (token
    intervals, or one call's time)."""

    label: str
    rep: Callable[[], list[float]]


def mode_lane(engine, mode: str, prompt: str, tokens: int, skip: int = 2) -> Lane:
    """A mode's lane: one repetition generates ``tokens`` tokens of ``prompt`` (no IR capture, no stop at EOS);
    its units are the intervals between token arrivals on the host, the first ``skip`` tokens left out."""
    from app.core.events import TokenEvent
    from app.core.settings import GenerationSettings

    settings = GenerationSettings(mode=mode, max_new_tokens=tokens, capture_ir=False, stop_at_eos=False)

    def rep() -> list[float]:
        arrivals = [time.perf_counter() for e in engine.generate(prompt, settings) if isinstance(e, TokenEvent)]
        kept = arrivals[skip:]
        return [(b - a) * 1000.0 for a, b in zip(kept, kept[1:])]

    return Lane(mode, rep)


def products_lane(model) -> tuple[Lane, int]:
    """The products-alone lane of a PyTorch causal LM (:func:`bench.matvec_only.model_products`; random float32
    weights of the same shapes) and its weight bytes."""
    from bench.matvec_only import chain_of, model_products

    layers, head_rows, hidden = model_products(model)
    fn, args, n_bytes = chain_of(layers, head_rows, hidden)

    def rep() -> list[float]:
        t0 = time.perf_counter()
        fn(*args).block_until_ready()
        return [(time.perf_counter() - t0) * 1000.0]

    return Lane(PRODUCTS, rep), n_bytes


def time_block(lane: Lane, reps: int, label: str) -> Block:
    """``reps`` repetitions of ``lane`` as one timed block; its figure is the mean of their units (ms)."""
    units: list[float] = []
    with BlockClock() as clock:
        for _ in range(reps):
            units += lane.rep()
    figure = sum(units) / len(units) if units else clock.wall_ms
    return Block(label, lane.label, figure, clock.wall_ms, clock.cpu_ms, clock.stolen_ms, len(units), reps)


def calibrate(lane: Lane, block_ms: float) -> int:
    """Warm ``lane`` (one untimed repetition); the repetitions a block needs to last ``block_ms``."""
    lane.rep()
    one = time_block(lane, 1, lane.label)
    return max(1, math.ceil(block_ms / max(one.wall_ms, 1e-3)))


@dataclass(frozen=True)
class Verdicts:
    """The stated pairs over the kept rounds: ``pairs`` ``(name, PairVerdict)``; the A/A lane's floor."""

    pairs: tuple[tuple[str, PairVerdict], ...]
    aa_noise: float | None
    kept: tuple[Round, ...]
    dropped: dict[int, str]

    def intervals(self) -> list[RatioInterval]:
        return [RatioInterval(p.ratio, p.ci_low, p.ci_high, p.rounds) for _, p in self.pairs]


def verdicts(rounds: list[Round], labels: list[str], aa: str, threads: int) -> Verdicts:
    """Screen ``rounds`` and state each pair of :data:`PAIRS` whose lanes are in ``labels``."""
    sc = screen(rounds, threads)
    kept = sc.kept
    twin = aa + AA_SUFFIX
    aa_pct = aa_noise_pct([r.figure(aa) or 0.0 for r in kept], [r.figure(twin) or 0.0 for r in kept])
    out = []
    for name, mode, against in PAIRS:
        if mode not in labels or against not in labels:
            continue
        if kept:
            iv = paired_ratio([r.figure(against) or 0.0 for r in kept], [r.figure(mode) or 0.0 for r in kept])
        else:
            iv = RatioInterval(1.0, None, None, 0)
        out.append((name, pair_verdict(mode, against, iv, aa_pct, len(sc.dropped))))
    return Verdicts(tuple(out), aa_pct, tuple(kept), dict(sc.dropped))


def run_rounds(lanes: list[Lane], aa: str, plan: SteadyPlan,
               on_round: Callable[[Round, Verdicts], None] = lambda r, v: None) -> dict:
    """Calibrate every lane, then rounds as the module's docstring says; returns the phase as plain data
    (:func:`summary`)."""
    plan = plan.validated()
    by_label = {lane.label: lane for lane in lanes}
    with same_threads() as threads:
        reps = {lane.label: calibrate(lane, plan.block_ms) for lane in lanes}
        rng, rule, rounds = random.Random(plan.seed), plan.rule(), []
        started, stopped_by, judged = time.perf_counter(), "stopped", None
        while True:
            labels = [*by_label, aa + AA_SUFFIX]
            rng.shuffle(labels)
            blocks = []
            for label in labels:
                lane = by_label[label.removesuffix(AA_SUFFIX)]
                blocks.append(time_block(lane, reps[lane.label], label))
            rounds.append(Round(len(rounds), tuple(blocks)))
            judged = verdicts(rounds, list(by_label), aa, threads["xla_cpu"])
            on_round(rounds[-1], judged)
            ivs = judged.intervals() + ([paired_ratio([r.figure(aa) or 1.0 for r in judged.kept],
                                                      [r.figure(aa + AA_SUFFIX) or 1.0 for r in judged.kept])]
                                        if len(judged.kept) >= 2 else [])
            reason = rule.stop_reason(len(judged.kept), len(rounds), time.perf_counter() - started, ivs)
            if reason is not None:
                stopped_by = reason
                break
    return summary(judged, list(by_label), aa, threads, reps, stopped_by, time.perf_counter() - started,
                   len(rounds))


def summary(judged: Verdicts, labels: list[str], aa: str, threads: dict[str, int], reps: dict[str, int],
            stopped_by: str, elapsed_s: float, total: int) -> dict:
    """The phase as JSON-ready data: per pair ``name, mode, against, ratio, ci_low, ci_high, rounds, aa_noise,
    dropped, noisy, text``; the A/A lane and floor; each lane's median figure over the kept rounds (ms)."""
    import statistics

    medians = {label: statistics.median([r.figure(label) or 0.0 for r in judged.kept]) if judged.kept else None
               for label in labels}
    pairs = [{"name": name, "mode": p.mode, "against": p.against, "ratio": p.ratio, "ci_low": p.ci_low,
              "ci_high": p.ci_high, "rounds": p.rounds, "aa_noise": p.aa_noise, "dropped": p.dropped,
              "noisy": p.noisy, "text": p.text} for name, p in judged.pairs]
    return {"pairs": pairs, "aa_mode": aa, "aa_noise": judged.aa_noise, "noisy": is_noisy(judged.aa_noise),
            "rounds": len(judged.kept), "rounds_run": total, "dropped": len(judged.dropped),
            "dropped_rounds": [f"round {i + 1}: {why}" for i, why in sorted(judged.dropped.items())],
            "stopped_by": stopped_by, "elapsed_s": elapsed_s, "threads": dict(threads), "reps": reps,
            "median_ms": medians}
