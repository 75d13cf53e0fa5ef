"""Mixture-of-experts models in every JAX mode (issue 42): greedy tokens equal transformers' own.

Tiny random Mixtral-style and Qwen3-MoE-style models (2 layers, hidden 64, 4 experts, top-2), saved with
``save_pretrained`` and loaded through the engine's real ``from_pretrained`` path. transformers runs their
experts through ``aten::_grouped_mm`` (its default ``experts_implementation="grouped_mm"``), which torchax
lowers with :mod:`app.core.runtime.moe_ops`. The routers get wider random weights than the init's (whose
near-equal logits would make top-2 a coin toss between float orders): routing is then decisive and varies
from token to token, which the compile-count test checks before it counts.
"""

from __future__ import annotations

import jax
import pytest
import torch
from conftest import build_tokenizer

from app.core.engine.engine import load_engine
from app.core.events import IREvent
from app.core.parallel.mesh import collectives, parse_mesh
from app.core.settings import GenerationSettings

PROMPT = "The jit function traces a Python function"
OTHER_PROMPT = "The function compiles it with XLA"  # 14 tokens, 15 above: one prompt bucket (16), one shape
ROUTER_STD = 1.0
COMMON = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
              num_key_value_heads=2, max_position_embeddings=256, num_experts_per_tok=2)
FAMILIES = {
    "mixtral": dict(model_type="mixtral", num_local_experts=4, **COMMON),
    "qwen3_moe": dict(model_type="qwen3_moe", num_experts=4, moe_intermediate_size=64, head_dim=16,
                      decoder_sparse_step=1, norm_topk_prob=True, **COMMON),
}


def build_moe_dir(path, family: str, seed: int = 0, **overrides):
    """A saved tiny MoE model of ``family`` (the pattern of ``conftest.build_model_dir``); ``overrides`` change
    its config (``num_hidden_layers=1`` for the tiniest one)."""
    from transformers import AutoConfig, AutoModelForCausalLM

    tok = build_tokenizer(path)
    kwargs = {**FAMILIES[family], **overrides}
    model_type = kwargs.pop("model_type")
    eos = tok.eos_token_id
    config = AutoConfig.for_model(model_type, vocab_size=320, bos_token_id=eos, eos_token_id=eos, **kwargs)
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config).eval()
    with torch.no_grad():
        for name, param in model.named_parameters():
            if name.endswith("mlp.gate.weight"):
                param.normal_(0.0, ROUTER_STD)
    model.save_pretrained(path)
    return str(path)


@pytest.fixture(scope="module")
def moe_dirs(tmp_path_factory):
    return {family: build_moe_dir(tmp_path_factory.mktemp(f"moe-{family}"), family) for family in FAMILIES}


@pytest.fixture(scope="module")
def moe_engines(moe_dirs):
    cache = {}

    def get(family: str):
        if family not in cache:
            cache[family] = load_engine(moe_dirs[family])
        return cache[family]

    return get


def reference(engine, n_new: int, prompt: str = PROMPT) -> list[int]:
    """transformers' own greedy ``generate`` in PyTorch eager (the experts on torch's CPU grouped_mm)."""
    ids = engine.encode(prompt)
    out = engine.model.generate(torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                                max_new_tokens=n_new, do_sample=False)
    return out[0, len(ids):].tolist()


def run(engine, mode: str, n_new: int, prompt: str = PROMPT) -> list:
    return list(engine.generate(prompt, GenerationSettings(mode=mode, max_new_tokens=n_new)))


def routes(engine, prompt: str, generated: list[int]) -> list[tuple[int, ...]]:
    """Each MoE layer's chosen experts for every position of ``prompt`` + ``generated`` (torch forward hooks on
    the routers, which return ``(logits, weights, indices)``)."""
    chosen: list[tuple[int, ...]] = []
    hooks = [module.register_forward_hook(lambda _m, _a, out: chosen.extend(map(tuple, out[2].sort(-1)[0].tolist())))
             for name, module in engine.model.named_modules() if name.endswith("mlp.gate")]
    try:
        with torch.no_grad():
            engine.model(torch.tensor([engine.encode(prompt) + generated]))
    finally:
        for hook in hooks:
            hook.remove()
    return chosen


def test_experts_run_through_grouped_mm(moe_engines):
    for family in FAMILIES:
        assert moe_engines(family).model.config._experts_implementation == "grouped_mm"


# Greedy parity of each family in each mode (transformers' tokens, the mode's compiles) is checked on the run that
# records the routing: test_moe_routing.test_each_call_records_the_experts_its_run_chose (issue 53: one run each).


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_one_compile_serves_every_routing(moe_dirs, family):
    """Two prompts, then the routers reversed: routing changes, the two compiled steps are reused."""
    engine = load_engine(moe_dirs[family])
    first = run(engine, "jit-static", 8)[-1]
    second = run(engine, "jit-static", 8, OTHER_PROMPT)[-1]
    assert first.summary.n_compiles == 2 and second.summary.n_compiles == 0
    assert second.token_ids == reference(engine, 8, OTHER_PROMPT)
    first_routes, second_routes = routes(engine, PROMPT, first.token_ids), routes(engine, OTHER_PROMPT, second.token_ids)
    assert len(set(first_routes)) >= 3 and first_routes != second_routes
    weights = engine.jax_state()[0]
    with torch.no_grad():
        for name, param in engine.model.named_parameters():
            if name.endswith("mlp.gate.weight"):
                param.neg_()  # the least likely experts become the most likely
                weights[name] = -weights[name]
    flipped = run(engine, "jit-static", 8)[-1]
    assert flipped.summary.n_compiles == 0
    assert flipped.token_ids == reference(engine, 8)
    assert routes(engine, PROMPT, flipped.token_ids) != first_routes


@pytest.mark.skipif(jax.device_count() < 2, reason="tp=2 needs 2 devices (conftest simulates 4 CPU devices)")
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_tp2_mesh_shards_the_experts(moe_engines, family):
    engine = moe_engines(family)  # the module's engine, put back on one device after (set_mesh(None))
    expected = reference(engine, 8)
    engine.set_mesh(parse_mesh("tp=2"))
    try:
        weights = engine.jax_state()[0]
        gate_up, down = (weights[f"model.layers.0.mlp.experts.{p}"] for p in ("gate_up_proj", "down_proj"))
        assert tuple(gate_up.sharding.spec) == (None, "tp", None)  # (experts, 2 x intermediate, hidden): columns
        assert tuple(down.sharding.spec) == (None, None, "tp")  # (experts, hidden, intermediate): rows
        assert gate_up.addressable_shards[0].data.shape[1] == gate_up.shape[1] // 2
        events = run(engine, "jit-static", 8)
    finally:
        engine.set_mesh(None)
    assert events[-1].token_ids == expected and events[-1].summary.mesh == "tp=2"
    decode_ir = next(e.ir for e in events if isinstance(e, IREvent) and e.step == "decode")
    # the experts' all-reduce maps to the model's grouped_mm call (transformers), not to our lowering (excluded)
    assert any(c.kind == "all-reduce" and "grouped_mm" in c.source and "app/core" not in c.source
               for c in collectives(decode_ir.hlo))
