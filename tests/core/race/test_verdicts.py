"""Paired statistics of the race's steady state (app/core/verdict) and its phase (app/core/steady) on synthetic
timings: the interval's coverage, A/A, preempted rounds, the verdict words, the stopping rule, the rounds' order."""

from __future__ import annotations

import math
import random
import time

import pytest

from app.core.events import CallRecord, FinishedEvent, SteadyRoundEvent, Summary, VerdictsEvent
from app.core.settings import GenerationSettings
from app.core.steady import SteadyPlan, steady_modes, steady_phase
from app.core.verdict import (
    AA_SUFFIX,
    Block,
    RatioInterval,
    Round,
    StoppingRule,
    format_verdicts,
    judge,
    paired_ratio,
    pairs_of,
    verdict_text,
)
from app.core.verdict.stats import t_quantile

TRUE_RATIO = 2.4


def block(label: str, ms: float, cpu_share: float = 0.9, stolen_ms: float = 0.0, threads: int = 2) -> Block:
    wall = ms * 20  # 20 tokens a block
    return Block(label, label.removesuffix(AA_SUFFIX), ms, wall, wall * threads * cpu_share, stolen_ms, 20)


def simulate(seed: int, truth: float = TRUE_RATIO, n: int = 12, spikes: float = 0.05,
             noise: float = 0.03) -> list[Round]:
    """Rounds of torch (6 ms/token), a mode ``truth`` times faster and torch's A/A copy, in a shuffled order, on a
    machine that drifts (30 % slower by the end, and a wave), slows the later blocks of a round a little (2 % a
    position), adds log-normal ``noise`` and, in ``spikes`` of the blocks, an outlier 1.2–1.6× slower that the
    CPU clock misses."""
    rng = random.Random(seed)
    base = {"torch": 6.0, "jit-static": 6.0 / truth, "torch" + AA_SUFFIX: 6.0}
    rounds = []
    for i in range(n):
        drift = 1.0 + 0.3 * i / n + 0.1 * math.sin(i)
        labels = list(base)
        rng.shuffle(labels)
        blocks = []
        for pos, label in enumerate(labels):
            ms = base[label] * drift * (1 + 0.02 * pos) * math.exp(rng.gauss(0, noise))
            if rng.random() < spikes:
                ms *= rng.uniform(1.2, 1.6)
            blocks.append(block(label, ms))
        rounds.append(Round(i, tuple(blocks)))
    return rounds


def test_the_95_interval_covers_the_true_ratio_in_at_least_90_percent_of_200_simulations():
    covered = 0
    for seed in range(200):
        verdict = judge(simulate(seed), ["torch", "jit-static"], "torch", 2).pairs[0]
        assert verdict.mode == "jit-static" and verdict.against == "torch" and verdict.rounds == 12
        covered += verdict.ci_low <= TRUE_RATIO <= verdict.ci_high
    assert covered >= 180, f"{covered} of 200"


def test_an_a_a_race_says_no_clear_difference():
    judged = judge(simulate(7, truth=1.0, spikes=0.0, noise=0.01), ["torch", "jit-static"], "torch", 2)
    (verdict,) = judged.pairs
    assert verdict.ci_low < 1.0 < verdict.ci_high and not verdict.clear
    assert verdict.text.startswith("jit-static vs torch: no clear difference (")
    assert judged.aa_noise is not None and 0 < judged.aa_noise < 3.0 and not judged.noisy


@pytest.mark.parametrize("preempted", [{"cpu_share": 0.3}, {"stolen_ms": 40.0}])
def test_a_preempted_round_is_dropped_and_counted(preempted):
    rounds = simulate(3, spikes=0.0, noise=0.01)
    slow = Round(5, tuple(block(b.label, b.ms_per_token * (4 if b.label == "jit-static" else 1),
                                **(preempted if b.label == "jit-static" else {})) for b in rounds[5].blocks))
    rounds[5] = slow
    judged = judge(rounds, ["torch", "jit-static"], "torch", 2)
    assert judged.rounds == 11 and list(judged.dropped) == [5]
    assert "jit-static" in judged.dropped[5]
    (verdict,) = judged.pairs
    assert verdict.dropped == 1 and verdict.rounds == 11
    assert verdict.text.endswith(f"11 paired rounds; A/A ±{judged.aa_noise:.1f} %; 1 dropped)")
    assert verdict.ci_low <= TRUE_RATIO <= verdict.ci_high  # the 4× slower block weighs nothing


def test_the_verdict_text_follows_the_interval():
    faster = RatioInterval(2.41, 2.30, 2.52, 12)
    assert verdict_text("jit-static", "torch", faster, 1.8, 1) == (
        "jit-static is 2.41× faster than torch (95 % CI 2.30–2.52; 12 paired rounds; A/A ±1.8 %; 1 dropped)")
    slower = RatioInterval(0.5, 0.45, 0.55, 10)
    assert verdict_text("torch", "jit-static", slower, 1.8, 0).startswith(
        "jit-static is 2.00× faster than torch (95 % CI 1.82–2.22; 10 paired rounds;")
    unclear = RatioInterval(1.02, 0.98, 1.06, 12)
    assert verdict_text("jit-loop", "jit-static", unclear, 1.8, 0) == (
        "jit-loop vs jit-static: no clear difference (0.98–1.06; 12 paired rounds; A/A ±1.8 %; 0 dropped)")
    assert verdict_text("jit-loop", "jit-static", faster, 4.2, 0).endswith(" — noisy machine (A/A ±4.2 % > ±3 %)")
    assert verdict_text("jit-loop", "torch", RatioInterval(2.0, None, None, 1), None, 3) == (
        "jit-loop vs torch: too few rounds to tell (1 kept, 3 dropped)")


def test_the_interval_is_the_t_interval_on_the_log_ratios():
    assert t_quantile(9) == pytest.approx(2.2622, abs=1e-4)
    num, den = [10.0, 11.0, 12.0, 10.5], [5.0, 5.0, 6.5, 5.0]
    logs = [math.log(a / b) for a, b in zip(num, den)]
    mean = sum(logs) / 4
    sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / 3)
    iv = paired_ratio(num, den)
    assert iv.ratio == pytest.approx(math.exp(mean))
    assert iv.ci_high == pytest.approx(math.exp(mean + t_quantile(3) * sd / 2))
    assert iv.half_width_pct == pytest.approx((math.exp(t_quantile(3) * sd / 2) - 1) * 100)
    with pytest.raises(ValueError):
        paired_ratio([1.0], [1.0, 2.0])


def test_the_stopping_rule():
    rule = StoppingRule(budget_s=30, min_rounds=9, target_pct=3.0)
    tight, loose = RatioInterval(2.0, 1.98, 2.02, 9), RatioInterval(2.0, 1.8, 2.2, 9)
    assert rule.stop_reason(8, 8, 1.0, [tight]) is None  # never before 9 kept rounds
    assert rule.stop_reason(9, 9, 1.0, [tight]) == "precise"
    assert rule.stop_reason(9, 9, 1.0, [tight, loose]) is None  # every pair precise
    assert rule.stop_reason(9, 12, 31.0, [loose]) == "budget"
    assert rule.stop_reason(5, 17, 31.0, [loose]) is None  # rounds dropped: on past the budget
    assert rule.stop_reason(5, 18, 31.0, [loose]) == "budget"  # … up to 2 × the minimum
    assert StoppingRule(max_rounds=20).stop_reason(3, 20, 0.0, [loose]) == "max rounds"


def test_pairs_and_left_out_modes():
    assert pairs_of(["torch", "jit-static", "jit-loop"], "torch") == [
        ("jit-static", "torch"), ("jit-loop", "torch"), ("jit-loop", "jit-static")]
    run, left, baseline = steady_modes(["jit-static", "torchax-eager", "torch"])
    assert run == ["jit-static", "torch"] and baseline == "torch" and list(left) == ["torchax-eager"]
    assert steady_modes(["jit-static", "jit-loop"])[2] == "jit-static"


class FakeEngine:
    """Generates at a set speed per mode (busy, so the CPU clock runs): ``ms`` per decode call."""

    def __init__(self, ms: dict[str, float]) -> None:
        self.ms, self.calls = ms, []

    def generate(self, prompt, settings, should_stop=lambda: False):
        self.calls.append(settings)
        records = []
        for i in range(settings.max_new_tokens):
            end = time.perf_counter() + self.ms[settings.mode] / 1000
            while time.perf_counter() < end:
                pass
            records.append(CallRecord(i, "prefill" if i == 0 else "decode", settings.mode, {}, self.ms[settings.mode],
                                      self.ms[settings.mode]))
            yield records[-1]
        total = sum(r.wall_ms for r in records)
        yield FinishedEvent("max_new_tokens", Summary.from_records(settings.mode, records, len(records), 1.0, total))


def test_the_steady_phase_shuffles_rounds_twins_the_baseline_and_states_its_verdicts():
    engine = FakeEngine({"torch": 0.6, "jit-static": 0.2})
    # budget: on a loaded machine the busy-waiting fake engine loses CPU time and its rounds are dropped as
    # preempted; a zero budget then ended the phase after 2 × min_rounds with too few kept for an interval
    plan = SteadyPlan(budget_s=10.0, min_rounds=4, tokens=3, block_ms=3.0, seed=1)
    settings = GenerationSettings(max_new_tokens=8, capture_ir=True)
    events = list(steady_phase(engine, "p", ["torch", "torchax-eager", "jit-static"], settings, plan,  # type: ignore[arg-type]
                               cache_lens={"jit-static": 64}))
    rounds = [e for e in events if isinstance(e, SteadyRoundEvent)]
    (verdicts,) = [e for e in events if isinstance(e, VerdictsEvent)]
    assert len(rounds) >= 4 and all(sorted(b.label for b in r.blocks) == ["jit-static", "torch", "torch (A/A)"]
                                    for r in rounds)
    assert len({tuple(b.label for b in r.blocks) for r in rounds}) > 1  # the order changes between rounds
    # each mode repeats its generation the same number of times in every block (calibrated once, from one timed
    # generation: a block lasts about block_ms; how long exactly moves with the machine's load)
    reps = {(b.label, b.reps) for r in rounds for b in r.blocks}
    assert len(reps) == 3 and all(n >= 1 for _, n in reps) and all(b.wall_ms > 0 for r in rounds for b in r.blocks)
    assert verdicts.baseline == "torch" and verdicts.left_out.keys() == {"torchax-eager"}
    assert verdicts.rounds + verdicts.dropped == len(rounds) and verdicts.stopped_by in ("precise", "budget")
    assert set(verdicts.threads) == {"torch_intra_op", "xla_cpu"} and verdicts.tokens == 3
    (pair,) = verdicts.pairs
    assert pair.mode == "jit-static" and pair.ratio == pytest.approx(3.0)  # the decode calls' ms, as recorded
    jit = [s for s in engine.calls if s.mode == "jit-static"]
    assert all(s.max_new_tokens == 3 and s.max_cache_len == 64 and not s.capture_ir for s in jit)
    doc = verdicts.to_json()
    assert doc["event"] == "verdicts" and doc["pairs"][0]["ci_low"] is not None
    text = format_verdicts(doc)
    assert "jit-static is 3.00× faster than torch" in text and "(torchax-eager left out: capped lane" in text


def test_stop_ends_the_phase_with_the_rounds_so_far():
    engine = FakeEngine({"torch": 0.3, "jit-static": 0.1})
    polls = {"n": 0}

    def stop_after_a_while() -> bool:
        polls["n"] += 1
        return polls["n"] > 40

    plan = SteadyPlan(budget_s=60.0, tokens=2, block_ms=1.0)
    events = list(steady_phase(engine, "p", ["jit-static", "torch"], GenerationSettings(), plan,  # type: ignore[arg-type]
                               stop_after_a_while))
    (verdicts,) = [e for e in events if isinstance(e, VerdictsEvent)]
    assert verdicts.stopped_by == "stopped" and verdicts.rounds < 9


def test_a_race_with_a_steady_phase_compiles_nothing_again(llama_engine, monkeypatch):
    """Each cold lane drops only its own mode's steps: jit-static's, compiled in the first lane, serve its
    warm-up and rounds after torch's lane (the only compiles are the cold lane's prefill and decode)."""
    from app.core.race import race

    compiled, real = [], llama_engine.generate

    def spy(prompt, settings, *args, **kwargs):
        for event in real(prompt, settings, *args, **kwargs):
            if isinstance(event, CallRecord) and event.compiled:
                compiled.append((settings.mode, event.step, settings.max_new_tokens))
            yield event

    monkeypatch.setattr(llama_engine, "generate", spy)
    plan = SteadyPlan(budget_s=0.0, min_rounds=2, tokens=3, block_ms=20.0)
    events = list(race(llama_engine, "The jit function", ["jit-static", "torch"], GenerationSettings(max_new_tokens=5),
                       steady=plan))
    assert compiled == [("jit-static", "prefill", 5), ("jit-static", "decode", 5)]
    (verdicts,) = [e for e in events if isinstance(e, VerdictsEvent)]
    assert verdicts.baseline == "torch" and [p.mode for p in verdicts.pairs] == ["jit-static"]
    assert verdicts.rounds + verdicts.dropped >= 2


def test_the_race_summary_takes_x_torch_and_its_interval_from_the_steady_rounds():
    from app.core.race import with_verdicts
    from app.core.report.columns import RACE_COLUMNS, render_text

    rows = [{"mode": "torch", "speedup_vs_torch": 1.0}, {"mode": "jit-static", "speedup_vs_torch": 5.13},
            {"mode": "jit-loop", "speedup_vs_torch": 1.5}, {"mode": "jit-dynamic", "speedup_vs_torch": None}]
    doc = {"pairs": [
        {"mode": "jit-static", "against": "torch", "ratio": 2.94, "ci_low": 2.31, "ci_high": 3.73},
        {"mode": "torch", "against": "jit-loop", "ratio": 0.5, "ci_low": 0.4, "ci_high": 0.625},  # said of torch
        {"mode": "jit-static", "against": "jit-loop", "ratio": 1.25, "ci_low": 1.05, "ci_high": 1.48}]}
    got = {r["mode"]: r for r in with_verdicts(rows, doc)}
    assert got["jit-static"]["speedup_vs_torch"] == 2.94 and got["jit-static"]["speedup_ci"] == (2.31, 3.73)
    assert got["jit-loop"]["speedup_vs_torch"] == pytest.approx(2.0)
    assert got["jit-loop"]["speedup_ci"] == pytest.approx((1.6, 2.5))
    assert got["torch"]["speedup_ci"] is None and got["jit-dynamic"]["speedup_vs_torch"] is None
    table = render_text(RACE_COLUMNS, list(got.values()))
    assert "2.94×" in table and "2.31–3.73" in table and "5.13" not in table  # the one-pass ratio is gone
    plain = {r["mode"]: r for r in with_verdicts(rows, None)}  # no rounds: one pass, no interval
    assert plain["jit-static"]["speedup_vs_torch"] == 5.13 and plain["jit-static"]["speedup_ci"] is None
