"""KV caches as pytrees of jax arrays, built from transformers' own cache classes.

Shapes: per layer, keys/values ``(batch, kv_heads, seq, head_dim)``; a ``StaticCache`` has
``seq = max_cache_len`` and an int ``cumulative_length`` per layer; a ``DynamicCache`` grows ``seq`` by the
number of new tokens per call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from transformers import Cache, PretrainedConfig, PreTrainedModel

    from app.core.runtime.pytrees import FlatTree


def to_jax(cache: Cache) -> Any:
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


def empty_dynamic_cache(config: PretrainedConfig) -> Any:
    """An empty ``DynamicCache(config=config)`` ready to cross ``jax.jit``."""
    from transformers import DynamicCache

    return to_jax(DynamicCache(config=config))


def static_cache_template(model: PreTrainedModel, max_cache_len: int, pad_id: int) -> Any:
    """A zeroed ``StaticCache`` of ``max_cache_len`` positions as jax arrays (:func:`torch_static_cache`
    moved to JAX)."""
    return to_jax(torch_static_cache(model, max_cache_len, pad_id))


def torch_static_cache(model: PreTrainedModel, max_cache_len: int, pad_id: int) -> Any:
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


#: The first capacity (positions) of a static KV cache whose run may need more: a run's cache starts at the smallest
#: of ``FIRST_CAPACITY × 2^k`` that holds its prompt bucket, and doubles when decoding reaches its end, up to the
#: run's full length (:func:`next_capacity`). Attention reads the whole buffer every step (its padding masked out),
#: so a cache sized for 8,192 positions made every token cost that read from the first one (issue 38: ~2.1× the
#: ms/token of a 128-position cache on SmolLM2); a run whose full length is at most this keeps one capacity.
FIRST_CAPACITY = 256


def first_capacity(full_len: int, prompt_bucket_len: int) -> int:
    """Positions of a run's KV cache at prefill: the smallest ``FIRST_CAPACITY × 2^k`` ≥ ``prompt_bucket_len`` (the
    padded prompt the prefill writes), at most ``full_len`` (the run's length, :meth:`Engine.cache_len_for`)."""
    capacity = FIRST_CAPACITY
    while capacity < prompt_bucket_len:
        capacity *= 2
    return min(capacity, full_len)


def next_capacity(capacity: int, position: int, full_len: int) -> int:
    """The capacity that holds a write at ``position`` (0-based): ``capacity`` doubled until it does, at most
    ``full_len``. Raises ``ValueError`` when ``position`` is past ``full_len``."""
    if position >= full_len:
        raise ValueError(f"position {position} is past the KV cache's {full_len} positions")
    capacity = max(capacity, 1)
    while capacity <= position:
        capacity *= 2
    return min(capacity, full_len)


def growable(cache: object) -> bool:
    """Whether every layer of ``cache`` (an HF cache object) is a static layer whose length :func:`grow` can change
    (``max_cache_len`` and ``keys`` / ``values`` of shape ``(batch, heads, max_cache_len, head_dim)``)."""
    layers = getattr(cache, "layers", None)
    return bool(layers) and all(
        isinstance(getattr(layer, "max_cache_len", None), int)
        and all(getattr(getattr(layer, name, None), "shape", (0, 0, -1))[-2:-1] == (layer.max_cache_len,)
                for name in ("keys", "values"))
        for layer in layers)


def grow(flat: FlatTree, new_len: int) -> Any:
    """The static KV cache ``flat`` (a :class:`app.core.runtime.pytrees.FlatTree` of jax arrays) with every layer's
    keys and values zero-padded along the position axis to ``new_len`` and its ``max_cache_len`` set to it (the
    masks' key length); positions already written and the layers' lengths unchanged. A new treedef: the jitted
    steps compile once for the new length."""
    import jax.numpy as jnp

    from app.core.runtime.pytrees import FlatTree  # noqa: PLC0415 - heavy: jax

    cache = flat.unflatten()
    for layer in cache.layers:
        extra = new_len - layer.max_cache_len
        if extra < 0:
            raise ValueError(f"cannot shrink a KV cache layer from {layer.max_cache_len} to {new_len} positions")
        pad = [(0, 0)] * (layer.keys.ndim - 2) + [(0, extra), (0, 0)]
        layer.keys, layer.values = jnp.pad(layer.keys, pad), jnp.pad(layer.values, pad)
        layer.max_cache_len = new_len
    return FlatTree.of(cache)
