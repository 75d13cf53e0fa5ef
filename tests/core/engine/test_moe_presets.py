"""The built-in small mixtures of experts (issue 42): ``random:mixtral-tiny`` and ``random:qwen3-moe-tiny`` are in
the model list, build offline, route decisively, and give transformers' greedy tokens in jit-static."""

from __future__ import annotations

import pytest
import torch

from app.core.engine.engine import load_engine
from app.core.events import CallRecord
from app.core.models.random_moe import MOE_PRESETS
from app.core.models.sources import RANDOM_PREFIX, SHAPE_PRESETS
from app.core.settings import GenerationSettings

PROMPT = "The jit function traces a Python function"


def test_presets_are_in_the_model_list():
    for name in ("mixtral-tiny", "qwen3-moe-tiny"):
        assert name in SHAPE_PRESETS and name in MOE_PRESETS


@pytest.mark.parametrize("name", sorted(MOE_PRESETS))
def test_preset_gives_transformers_greedy_tokens(name):
    engine = load_engine(RANDOM_PREFIX + name)
    assert engine.spec.random_weights and engine.routing is not None and len(engine.routing.layers) == 4
    assert engine.model.config._experts_implementation == "grouped_mm"
    events = list(engine.generate(PROMPT, GenerationSettings(mode="jit-static", max_new_tokens=8, stop_at_eos=False)))
    tokens = events[-1].token_ids
    ids = engine.encode(PROMPT)
    with torch.no_grad():
        out = engine.model.generate(torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                                    max_new_tokens=8, do_sample=False, eos_token_id=None)
    assert tokens == out[0, len(ids):].tolist()
    records = [e for e in events if isinstance(e, CallRecord)]
    decode_routes = {tuple(sorted(r.experts[0][0])) for r in records[1:]}
    assert len(decode_routes) >= 2  # the widened routers route tokens to different experts
    top = [max(w) for layer in records[0].expert_weights for w in layer]
    assert sum(top) / len(top) > 0.6  # decisive: the first expert holds most of the weight (init's: ~0.5)
