"""GPT-2's Conv1D weights as nn.Linear keeps them (``app.core.runtime.linear_layout``) against as stored, one process.

    .venv/bin/python bench/layout_ab.py [--model random:gpt2-small-shape] [--tokens 64] [--rounds 4]

Two engines of the same model: one converted as the app converts it (every ``Conv1D`` weight transposed to
``(out_features, in_features)``), one with that step left out (``x @ W`` over the stored ``(in, out)`` weights, the
state before issue 38's change). Both warm; then ``--rounds`` rounds, each running jit-static and jit-loop on one
engine, then on the other (the order swapped every round, so the machine's drift moves both alike). Each run's
figure is its median token interval (``bench.decode.token_interval_ms``). Prints each round's figures, the medians,
the median of the per-round ratios (stored ÷ linear: above 1 means the transposed weights decode faster) and
whether the greedy tokens agree.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

from bench.decode import PROMPT, token_interval_ms  # noqa: E402

MODES = ("jit-static", "jit-loop")


def run(engine, mode: str, n_tokens: int) -> tuple[float | None, list[int]]:
    """``(median token interval ms, token ids)`` of one run."""
    from app.core.events import FinishedEvent, TokenEvent
    from app.core.settings import GenerationSettings

    settings = GenerationSettings(mode=mode, max_new_tokens=n_tokens, capture_ir=False, stop_at_eos=False)
    arrivals, ids = [], []
    for event in engine.generate(PROMPT, settings):
        if isinstance(event, TokenEvent):
            arrivals.append(time.perf_counter())
        elif isinstance(event, FinishedEvent):
            ids = list(event.token_ids)
    return token_interval_ms(arrivals), ids


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="random:gpt2-small-shape")
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()

    from app.core.engine.engine import load_engine

    linear = load_engine(args.model)
    with mock.patch("app.core.runtime.linear_layout.conv1d_modules", return_value={}):
        stored = load_engine(args.model)  # converted (at load) without the transposition, and kept so
    layouts = {name: engine.jax_state()[0]["transformer.h.0.attn.c_attn.weight"].shape
               for name, engine in (("linear", linear), ("stored", stored))}
    print(f"{args.model}: layer 0's c_attn weight {layouts['linear']} (linear) against {layouts['stored']} (stored)")
    engines = {"linear": linear, "stored": stored}
    tokens: dict[str, list[int]] = {}
    for name, engine in engines.items():  # warm: every step compiled
        for mode in MODES:
            tokens[f"{name} {mode}"] = run(engine, mode, args.tokens)[1]
    figures: dict[tuple[str, str], list[float]] = {(n, m): [] for n in engines for m in MODES}
    for r in range(args.rounds):
        order = list(engines) if r % 2 == 0 else list(engines)[::-1]
        for name in order:
            for mode in MODES:
                ms, _ = run(engines[name], mode, args.tokens)
                figures[(name, mode)].append(ms or float("nan"))
        print(f"round {r + 1}: " + ", ".join(f"{n} {m} {figures[(n, m)][-1]:.2f}" for n in engines for m in MODES),
              flush=True)
    for mode in MODES:
        a, b = figures[("stored", mode)], figures[("linear", mode)]
        ratios = [x / y for x, y in zip(a, b)]
        print(f"{mode}: stored {np.nanmedian(a):.2f} ms/token, linear {np.nanmedian(b):.2f} ms/token; per-round "
              f"stored/linear {', '.join(f'{x:.3f}' for x in ratios)} (median {np.nanmedian(ratios):.3f})")
    same = len({tuple(t) for t in tokens.values()}) == 1
    print(f"greedy tokens {'equal' if same else 'DIFFER'} across the two layouts and both modes")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
