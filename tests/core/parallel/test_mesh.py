"""Tensor parallelism on 4 simulated CPU devices (conftest sets XLA_FLAGS before JAX starts)."""

from __future__ import annotations

import io
import os

import pytest
import torch
from conftest import build_model_dir

from app.cli import main
from app.core.engine.engine import load_engine
from app.core.errors import InvalidSettingsError
from app.core.events import IREvent
from app.core.parallel.mesh import MeshSpec, collectives, parse_mesh
from app.core.settings import GenerationSettings

PROMPT = "The jit function traces"


@pytest.fixture(scope="module")
def tp_dirs(tmp_path_factory):
    """Tiny models whose heads divide 4 (GQA models get 4 KV heads)."""
    dirs = {}
    for arch, extra in (("llama", {"num_key_value_heads": 4}), ("qwen2", {"num_key_value_heads": 4}),
                        ("gpt2", {})):
        dirs[arch] = str(build_model_dir(tmp_path_factory.mktemp(f"tp-{arch}"), arch, **extra))
    return dirs


def test_simulated_devices_flag_replaces_an_earlier_count(monkeypatch):
    from app.core.parallel.mesh import simulate_cpu_devices

    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_foo=1 --xla_force_host_platform_device_count=2")
    simulate_cpu_devices(8)
    flags = os.environ["XLA_FLAGS"].split()
    assert flags.count("--xla_force_host_platform_device_count=8") == 1 and "--xla_cpu_foo=1" in flags
    assert not any(f.endswith("count=2") for f in flags)


@pytest.mark.parametrize("arch", ["llama", "qwen2", "gpt2"])
def test_tp4_greedy_tokens_equal_pytorch(tp_dirs, arch):
    engine = load_engine(tp_dirs[arch])
    ids = engine.encode(PROMPT)
    ref = engine.model.generate(torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                                max_new_tokens=10, do_sample=False)[0, len(ids):].tolist()
    engine.set_mesh(parse_mesh("tp=4"))
    events = list(engine.generate(PROMPT, GenerationSettings(max_new_tokens=10)))
    assert events[-1].token_ids == ref
    assert events[-1].summary.n_compiles == 2 and events[-1].summary.mesh == "tp=4"
    decode_ir = next(e.ir for e in events if isinstance(e, IREvent) and e.step == "decode")
    kinds = [c.kind for c in collectives(decode_ir.hlo)]
    assert kinds.count("all-reduce") >= 1
    assert any(c.source.startswith("transformers/models/") for c in collectives(decode_ir.hlo))


def test_weights_and_cache_are_really_sharded(tp_dirs):
    engine = load_engine(tp_dirs["llama"])
    engine.set_mesh(MeshSpec((("tp", 4),)))
    weights = engine.jax_state()[0]
    q = weights["model.layers.0.self_attn.q_proj.weight"]
    assert tuple(q.sharding.spec) == ("tp", None)
    assert q.addressable_shards[0].data.shape == (q.shape[0] // 4, q.shape[1])
    assert tuple(weights["model.layers.0.self_attn.o_proj.weight"].sharding.spec) == (None, "tp")
    list(engine.generate(PROMPT, GenerationSettings(max_new_tokens=3)))
    per_device = engine.device_bytes()
    assert len(per_device["weights"]) == 4 and len(per_device["kv_cache"]) == 4
    assert len(set(per_device["kv_cache"].values())) == 1  # heads split evenly
    engine.set_mesh(None)  # back to one device
    assert len(engine.device_bytes()["weights"]) == 1
    assert list(engine.generate(PROMPT, GenerationSettings(max_new_tokens=3)))[-1].summary.mesh == "1 device"


def test_non_dividing_mesh_gives_its_error_and_changes_nothing(tp_dirs):
    engine = load_engine(tp_dirs["llama"])
    # The advice names only sizes that divide the model and fit the 4 simulated devices.
    with pytest.raises(InvalidSettingsError, match=r"tp=3 does not divide num_attention_heads=4.*use tp=1 or tp=2 or tp=4 on these 4 devices"):
        engine.set_mesh(parse_mesh("tp=3"))
    with pytest.raises(InvalidSettingsError, match="needs 8 devices"):
        engine.set_mesh(parse_mesh("tp=8"))
    assert engine.mesh is None
    with pytest.raises(InvalidSettingsError, match="batch 1"):
        parse_mesh("dp=2,tp=2")
    with pytest.raises(InvalidSettingsError, match="Bad mesh"):
        parse_mesh("tp=four")


def test_cli_mesh_and_collectives(tp_dirs):
    out, err = io.StringIO(), io.StringIO()
    code = main(["inspect", "--model", tp_dirs["gpt2"], "--mesh", "tp=2", "--what", "collectives"], out=out, err=err)
    assert code == 0, err.getvalue()
    assert "all-reduce" in out.getvalue() and "weights per device" in err.getvalue()


def test_tp_sizes_are_the_ones_every_split_dimension_allows():
    from types import SimpleNamespace

    from app.core.parallel.mesh import tp_sizes

    smollm2 = SimpleNamespace(num_attention_heads=9, num_key_value_heads=3, intermediate_size=1536)
    assert tp_sizes(smollm2, 4) == (1, 3)
    assert tp_sizes(smollm2, 1) == (1,)
    gpt2 = SimpleNamespace(n_head=12, n_inner=None, intermediate_size=None, num_key_value_heads=None)
    assert tp_sizes(gpt2, 8) == (1, 2, 3, 4, 6)


def test_mesh_change_uncommits_torchax_key(tp_dirs):
    """torchax's interop.jax_jit leaves env.prng_key committed to its call's devices (nightlies since 2026-10):
    a mesh change gives it back uncommitted with the same value, so the next call can place it anywhere."""
    import jax
    import torchax

    env = torchax.default_env()
    engine = load_engine(tp_dirs["llama"])
    env.prng_key = jax.device_put(jax.random.key(7), jax.devices()[3])  # as jax_jit leaves it
    assert env.prng_key.committed
    engine.set_mesh(parse_mesh("tp=2"))
    assert not env.prng_key.committed
    assert (jax.random.key_data(env.prng_key) == jax.random.key_data(jax.random.key(7))).all()
    engine.set_mesh(None)
    assert not env.prng_key.committed
