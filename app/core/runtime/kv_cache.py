"""KV caches as pytrees of jax arrays, built from transformers' own cache classes.

Shapes: per layer, keys/values ``(batch, kv_heads, seq, head_dim)``; a ``StaticCache`` has
``seq = max_cache_len`` and an int ``cumulative_length`` per layer; a ``DynamicCache`` grows ``seq`` by the
number of new tokens per call.
"""

from __future__ import annotations

from typing import Any


def to_jax(cache: Any) -> Any:
    """Copy a cache's torch tensors to jax arrays and mark its layers as living on the ``jax`` device
    (torchax keeps tensors created with ``device='cpu'`` as plain torch tensors, which then fail to mix
    with the traced ones)."""
    import torch
    import torchax

    cache = torchax.default_env().t2j_copy(cache)
    for layer in getattr(cache, "layers", []):
        if hasattr(layer, "device"):
            layer.device = torch.device("jax")
    return cache


def empty_dynamic_cache(config: Any) -> Any:
    """An empty ``DynamicCache(config=config)`` ready to cross ``jax.jit``."""
    from transformers import DynamicCache

    return to_jax(DynamicCache(config=config))


def static_cache_template(model: Any, max_cache_len: int, pad_id: int) -> Any:
    """A zeroed ``StaticCache`` of ``max_cache_len`` positions as jax arrays (:func:`torch_static_cache`
    moved to JAX)."""
    return to_jax(torch_static_cache(model, max_cache_len, pad_id))


def torch_static_cache(model: Any, max_cache_len: int, pad_id: int) -> Any:
    """A zeroed ``StaticCache`` of ``max_cache_len`` positions (torch tensors): the one template every
    static-cache mode starts from.

    Each ``StaticSlidingWindowLayer`` (transformers/cache_utils.py) becomes a full-length ``StaticLayer`` (the
    sliding layer keeps a Python int length that would silently reset or recompile every step; HF masks
    use absolute positions, so the window is still enforced); shapes are materialised by one eager
    1-token PyTorch forward, then ``reset()``.
    """
    import torch
    from transformers import StaticCache
    from transformers.cache_utils import StaticLayer, StaticSlidingWindowLayer

    cache = StaticCache(config=model.config, max_cache_len=max_cache_len)
    for i, layer in enumerate(cache.layers):
        if isinstance(layer, StaticSlidingWindowLayer):
            cache.layers[i] = StaticLayer(max_cache_len=max_cache_len)
    with torch.no_grad():
        model(
            input_ids=torch.tensor([[pad_id]]),
            position_ids=torch.tensor([[0]]),
            past_key_values=cache,
            use_cache=True,
        )
    cache.reset()
    return cache
