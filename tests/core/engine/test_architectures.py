"""Greedy tokens equal to transformers' own ``generate(do_sample=False)`` for every promised family.

Each model is a small random config saved with ``save_pretrained`` and loaded through the engine's real
``from_pretrained`` path. Failures of the cache recipe are silent (wrong tokens, no exception), so every
architecture is compared token by token (CONTEXT.md).
"""

from __future__ import annotations

import pytest
import torch
from conftest import ARCH_CONFIGS

from app.core.events import FinishedEvent
from app.core.settings import GenerationSettings

PROMPT = "The jit function traces a Python function"
NEW_TOKENS = 12  # prompt + 12 > the sliding window of 8 in mistral and gemma2


def _reference(engine, n_new: int) -> list[int]:
    ids = engine.encode(PROMPT)
    out = engine.model.generate(
        torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long),
        max_new_tokens=n_new, do_sample=False,
    )
    return out[0, len(ids):].tolist()


def _tokens(engine, mode: str, n_new: int) -> FinishedEvent:
    events = list(engine.generate(PROMPT, GenerationSettings(mode=mode, max_new_tokens=n_new)))
    return events[-1]


@pytest.mark.parametrize("arch", sorted(ARCH_CONFIGS))
def test_jit_static_matches_transformers_generate(engines, arch):
    engine = engines(arch)
    finished = _tokens(engine, "jit-static", NEW_TOKENS)
    assert finished.token_ids == _reference(engine, NEW_TOKENS)
    assert finished.summary.n_compiles == 2


@pytest.mark.parametrize("arch", sorted(ARCH_CONFIGS))
def test_torchax_eager_matches_transformers_generate(engines, arch):
    engine = engines(arch)
    # Eager dispatch compiles each ATen op of every new shape, and the cache grows a shape each step: the prefill and
    # two decode steps (the second reads a cache the first decode step wrote), same check.
    finished = _tokens(engine, "torchax-eager", 3)
    assert finished.token_ids == _reference(engine, 3)
    assert finished.summary.n_compiles == 0


@pytest.mark.parametrize(("mode", "n_new"), [("torch", 8), ("jit-dynamic", 3)], ids=["torch", "jit-dynamic"])
def test_other_modes_match_on_llama(engines, mode, n_new):
    # jit-dynamic compiles every step (a new shape each): the prefill and two decode steps
    engine = engines("llama")
    assert _tokens(engine, mode, n_new).token_ids == _reference(engine, n_new)
