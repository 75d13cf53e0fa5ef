"""bench/decode.py's paired rounds (issue 54) on fake lanes: known ratios come back inside their intervals, the
stated pairs and targets follow, the report prints; the products lane's shapes come from a model's modules."""

from __future__ import annotations

import random
import time

import pytest

from app.core.steady import SteadyPlan
from app.core.verdict import AA_SUFFIX, Block, Round
from bench.decode_report import print_steady, targets
from bench.decode_rounds import PRODUCTS, Lane, run_rounds, verdicts

#: ms per unit of each fake lane: jit-loop 1.25× jit-static's speed, jit-static 2.5× torch's, the products alone
#: 1.1× faster than jit-loop's step.
TRUE_MS = {"torch": 50.0, "jit-static": 20.0, "jit-loop": 16.0, PRODUCTS: 16.0 / 1.1}


def fake_lane(label: str, rng: random.Random) -> Lane:
    def rep() -> list[float]:
        end = time.perf_counter() + 0.002  # a little CPU work, so that the block's CPU share is steady
        while time.perf_counter() < end:
            pass
        return [TRUE_MS[label] * rng.uniform(0.98, 1.02) for _ in range(4)]

    return Lane(label, rep)


def test_rounds_on_fake_lanes_state_the_pairs_with_intervals_around_the_truth(capsys) -> None:
    rng = random.Random(7)
    lanes = [fake_lane(label, rng) for label in TRUE_MS]
    seen: list[int] = []
    # A budget the rounds keep on a loaded machine: with 2 s, preempted rounds were dropped until the budget ended
    # the phase at 3 kept rounds (load average 9, 6 Dec); a quiet run stops once its intervals are precise
    plan = SteadyPlan(budget_s=10.0, min_rounds=4, block_ms=1.0, seed=3)
    steady = run_rounds(lanes, "jit-static", plan, lambda r, v: seen.append(len(r.blocks)))
    assert seen and all(n == len(TRUE_MS) + 1 for n in seen)  # every lane once, jit-static twice
    assert steady["rounds"] >= 4 and steady["rounds"] + steady["dropped"] == steady["rounds_run"]
    assert steady["aa_mode"] == "jit-static" and steady["aa_noise"] is not None
    pairs = {p["name"]: p for p in steady["pairs"]}
    assert set(pairs) == {"jit-loop ÷ jit-static", "jit-static ÷ torch eager", "jit-static step ÷ its products alone",
                          "jit-loop step ÷ its products alone"}  # no torch-compile lane: no such pair
    truth = {"jit-loop ÷ jit-static": 1.25, "jit-static ÷ torch eager": 2.5,
             "jit-static step ÷ its products alone": 1.375, "jit-loop step ÷ its products alone": 1.1}
    for name, value in truth.items():
        p = pairs[name]
        assert p["ci_low"] <= value <= p["ci_high"], (name, p)
        assert set(p) >= {"ratio", "ci_low", "ci_high", "rounds", "aa_noise", "dropped"}
    met = {name: ok for name, _, _, ok in targets(steady)}
    assert met == {"jit-loop ÷ jit-static": True, "jit-static ÷ torch eager": True,
                   "jit-loop step ÷ its products alone": True}
    print_steady(steady, {label: 1.2 for label in TRUE_MS}, [30.0, 31.0])
    out = capsys.readouterr().out
    assert "jit-loop ÷ jit-static" in out and "95 % CI" in out and "A/A (jit-static twice)" in out


def _round(i: int, figures: dict[str, float], cpu_ms: float = 100.0) -> Round:
    return Round(i, tuple(Block(label, label.removesuffix(AA_SUFFIX), ms, 100.0, cpu_ms if label == "torch" else 100.0)
                          for label, ms in figures.items()))


def test_a_preempted_round_is_dropped_and_a_missed_target_says_so() -> None:
    rounds = [_round(i, {"torch": 30.0 + i % 3, "jit-static": 20.0 + (i % 2) * 0.4, "jit-static" + AA_SUFFIX: 20.2,
                         "jit-loop": 20.1 - (i % 2) * 0.3}) for i in range(9)]
    rounds.append(_round(9, {"torch": 90.0, "jit-static": 20.0, "jit-static" + AA_SUFFIX: 20.0, "jit-loop": 20.0},
                         cpu_ms=10.0))  # torch's block got a tenth of its usual CPU: preempted
    v = verdicts(rounds, ["torch", "jit-static", "jit-loop"], "jit-static", threads=1)
    assert list(v.dropped) == [9] and len(v.kept) == 9
    pairs = {name: p for name, p in v.pairs}
    assert pairs["jit-loop ÷ jit-static"].dropped == 1
    steady = {"pairs": [{"name": name, "ratio": p.ratio, "ci_low": p.ci_low, "ci_high": p.ci_high}
                        for name, p in v.pairs]}
    met = {name: ok for name, _, _, ok in targets(steady)}
    assert met["jit-loop ÷ jit-static"] is False  # the interval holds 1.0
    assert met["jit-static ÷ torch eager"] is False  # 1.5×, not 2
    assert pairs["jit-static ÷ torch eager"].ratio == pytest.approx(31.0 / 20.2, rel=0.02)


def test_the_products_lane_takes_every_layer_product_and_the_head() -> None:
    torch = pytest.importorskip("torch")
    from transformers.pytorch_utils import Conv1D

    from bench.matvec_only import model_products

    class Layer(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.q = torch.nn.Linear(8, 4, bias=False)
            self.fc = Conv1D(16, 8)  # stored (in, out): the product is (16, 8)

    class Model(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layers = torch.nn.ModuleList([Layer(), Layer()])
            self.lm_head = torch.nn.Linear(8, 32, bias=False)

        def get_output_embeddings(self):
            return self.lm_head

    layers, head_rows, hidden = model_products(Model())
    assert layers == [[(4, 8), (16, 8)], [(4, 8), (16, 8)]] and (head_rows, hidden) == (32, 8)
