"""The KV-cache classes of the pinned transformers (5.25) as pytrees (issue 56, part 5): every ``Cache`` and cache
layer class is registered with JAX and torch, and a cache survives flatten → unflatten with its tensors as leaves,
its plain values (``max_cache_len``, ``device``, flags) as static aux data, and a treedef that does not change
when the same structure is flattened again (a changed treedef would recompile every decode step).

5.25 changed the layers: they no longer store ``dtype`` (the tensors carry it), they gained ``crop()``, and the
linear-attention layers keep recurrent and convolution states per state index (``transformers/cache_utils.py``)."""

from __future__ import annotations

import inspect

import jax
import pytest
import torch
import torch.utils._pytree as torch_pytree
from transformers import LlamaConfig, StaticCache, cache_utils

from app.core.runtime.pytrees import FlatTree, register_cache_pytrees


@pytest.fixture(scope="module", autouse=True)
def registered():
    register_cache_pytrees()


def _config() -> LlamaConfig:
    return LlamaConfig(vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                       num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=64)


def _kv(seq: int, fill: float) -> tuple[torch.Tensor, torch.Tensor]:
    """``(batch=1, kv_heads=1, seq, head_dim=8)`` float32 keys and values."""
    return torch.full((1, 1, seq, 8), fill), torch.full((1, 1, seq, 8), -fill)


def test_every_cache_and_layer_class_is_registered_with_jax_and_torch():
    bases = [cache_utils.Cache, cache_utils.CacheLayerMixin, cache_utils.LinearAttentionCacheLayerMixin]
    classes = set()
    stack = list(bases)
    while stack:
        cls = stack.pop()
        if cls not in classes:
            classes.add(cls)
            stack.extend(cls.__subclasses__())
    assert {"StaticCache", "DynamicCache", "StaticLayer", "DynamicLayer", "LinearAttentionLayer"} <= {
        c.__name__ for c in classes}
    missing_torch = [c.__name__ for c in classes if c not in torch_pytree.SUPPORTED_NODES]
    assert not missing_torch
    for cls in (c for c in classes if not inspect.isabstract(c)):  # JAX flattens each as a node, not a leaf
        instance = cls.__new__(cls)
        instance.__dict__["marker"] = torch.zeros(1)
        leaves, _ = jax.tree_util.tree_flatten(instance)
        assert len(leaves) == 1 and leaves[0] is instance.__dict__["marker"], cls.__name__


def test_a_static_cache_round_trips_with_tensors_as_leaves_and_a_stable_treedef():
    cache = StaticCache(config=_config(), max_cache_len=16)
    for index in range(2):
        keys, values = _kv(3, float(index + 1))
        cache.update(keys, values, index, {"cache_position": torch.arange(3)})
    flat = FlatTree.of(cache)
    assert all(isinstance(leaf, torch.Tensor) for leaf in flat.leaves)
    assert len(flat.leaves) >= 4  # keys and values of two layers
    rebuilt = flat.unflatten()
    assert type(rebuilt) is StaticCache and len(rebuilt.layers) == 2
    for layer, original in zip(rebuilt.layers, cache.layers, strict=True):
        assert layer.max_cache_len == 16 and layer.keys.dtype == torch.float32
        assert torch.equal(layer.keys, original.keys) and torch.equal(layer.values, original.values)
        assert layer.keys.shape == (1, 1, 16, 8)
    assert FlatTree.of(rebuilt).treedef == flat.treedef  # the same structure: no recompile
    assert rebuilt.get_seq_length() == cache.get_seq_length() == 3


def test_a_dynamic_layer_round_trips_through_torchs_pytree_and_still_crops():
    layer = cache_utils.DynamicLayer()
    layer.update(*_kv(5, 2.0))
    leaves, spec = torch_pytree.tree_flatten(layer)
    rebuilt = torch_pytree.tree_unflatten(leaves, spec)
    assert type(rebuilt) is cache_utils.DynamicLayer and rebuilt.get_seq_length() == 5
    rebuilt.crop(-2)  # 5.25: a layer crops a negative count of tokens off its end
    assert rebuilt.get_seq_length() == 3 and layer.get_seq_length() == 5


def test_a_linear_attention_layers_states_are_leaves_and_its_flags_static():
    layer = cache_utils.LinearAttentionLayer(number_of_states=2)
    layer.update_conv_state(torch.ones(1, 4, 3), state_idx=0)
    layer.update_recurrent_state(torch.full((1, 2, 4, 4), 3.0), state_idx=1)
    leaves, treedef = jax.tree_util.tree_flatten(layer)
    tensors = [leaf for leaf in leaves if isinstance(leaf, torch.Tensor)]
    assert any(t.shape == (1, 2, 4, 4) for t in tensors) and any(t.shape == (1, 4, 3) for t in tensors)
    rebuilt = jax.tree_util.tree_unflatten(treedef, leaves)
    assert rebuilt.number_of_states == 2 and rebuilt.is_conv_states_initialized == layer.is_conv_states_initialized
    assert jax.tree_util.tree_structure(rebuilt) == treedef
