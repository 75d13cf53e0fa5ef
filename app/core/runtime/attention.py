"""Scaled dot-product attention for torchax that reads the KV cache where it lies (issue 38).

torchax lowers ``torch.nn.functional.scaled_dot_product_attention`` with its reference definition
(``torchax/ops/jtorch.py``, ``_sdpa_reference``): ``query @ key.transpose(-2, -1)``, and for grouped-query
attention ``key.repeat_interleave(...)`` / ``value.repeat_interleave(...)`` first. XLA:CPU does not fold that
transpose into the dot: every decode step copied each layer's whole key cache into a transposed buffer
(``f32[1, kv_heads, head_dim, cache_len]``, one ``copy`` per layer in the optimized HLO of jit-static's step and of
jit-loop's body: 30 per SmolLM2 step, 2× the key cache's bytes read and written per step, on top of reading it).
:func:`sdpa` writes the same attention as two ``einsum`` s that contract ``head_dim`` of the key and the cache
axis of the value in place (XLA's dot takes them as they are: no transpose, no copy), and handles grouped-query
attention by viewing the queries as ``(batch, kv_heads, group × q_len, head_dim)`` (each key/value head's query
heads as rows of one product) instead of repeating the keys and values.

Same definition as the reference: scores scaled by ``scale`` (default ``1/sqrt(head_dim)``), a boolean mask
keeps True positions (False → -inf), a float mask is added, ``is_causal`` keeps the lower triangle; softmax in
the query's dtype. Dropout (``dropout_p > 0``, training only) goes to torchax's own lowering. Shapes: query
``(..., q_heads, q_len, head_dim)``, key / value ``(..., kv_heads, kv_len, head_dim)`` with ``q_heads`` a multiple
of ``kv_heads``; the mask broadcasts to ``(..., q_heads, q_len, kv_len)``. Returns ``(..., q_heads, q_len,
head_dim)``. Checked against torchax 0.0.14.dev20261026 and jax 0.12.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import jax  # noqa: TID253 - a heavy module: its users import it inside functions
import jax.numpy as jnp  # noqa: TID253 - a heavy module: its users import it inside functions

from app.core.jax_private import exclude_from_tracebacks

if TYPE_CHECKING:
    import torch
    from torchax.tensor import Environment

_REGISTERED: set[int] = set()
#: The name scope of each part: the ATen op torchax's reference lowering (``_sdpa_reference``) runs for it, so the
#: source map groups the parts as it did before this lowering (``scaled_dot_product_attention/aten::bmm``: the
#: scores' and the output's products; ``aten::_softmax``; the mask's ``aten::where`` or ``aten::add``).
ATEN_SCOPES = {"dot": "aten::bmm", "scale": "aten::mul.Tensor", "select": "aten::where.ScalarSelf",
               "add": "aten::add.Tensor", "softmax": "aten::_softmax"}


def sdpa(query: jax.Array, key: jax.Array, value: jax.Array, attn_mask: jax.Array | None = None,
         is_causal: bool = False, scale: float | None = None) -> jax.Array:
    """Attention of ``query`` over ``key`` / ``value`` (see the module doc for shapes and the definition)."""
    *batch, q_heads, q_len, head_dim = query.shape
    kv_heads, kv_len = key.shape[-3], key.shape[-2]
    if q_heads % kv_heads:
        raise ValueError(f"sdpa: {q_heads} query heads are not a multiple of {kv_heads} key/value heads")
    group = q_heads // kv_heads
    scale = 1.0 / math.sqrt(head_dim) if scale is None else scale
    # (kv_heads, group × q_len) rows: a 5-D (…, group, q_len, …) einsum made XLA:CPU copy the keys transposed again
    q = query.reshape(*batch, kv_heads, group * q_len, head_dim)
    nb = len(batch) + 1  # batch dims and the key/value head: one dot_general each product, no nested jit (a
    batch_dims = (tuple(range(nb)), tuple(range(nb)))  # jnp.einsum's pjit hid the dots from the source map's lines)
    # Each part in the name scope of the ATen op torchax's reference runs for it (ATEN_SCOPES), so the source map
    # shows the attention's parts apart (scores and output under aten::bmm, the softmax, the mask), as before.
    with jax.named_scope(ATEN_SCOPES["dot"]):  # (…, h, m, d) · (…, h, k, d) over d → (…, h, m, k)
        scores = jax.lax.dot_general(q, key, (((nb + 1,), (nb + 1,)), batch_dims))
    with jax.named_scope(ATEN_SCOPES["scale"]):
        scores = scores * jnp.asarray(scale, query.dtype)
    full = (*batch, q_heads, q_len, kv_len)
    rows = (*batch, kv_heads, group * q_len, kv_len)
    if is_causal:
        with jax.named_scope(ATEN_SCOPES["select"]):
            keep = jnp.broadcast_to(jnp.tril(jnp.ones((q_len, kv_len), jnp.bool_)), full).reshape(rows)
            scores = jnp.where(keep, scores, -jnp.inf)
    if attn_mask is not None:
        boolean = attn_mask.dtype == jnp.bool_
        with jax.named_scope(ATEN_SCOPES["select" if boolean else "add"]):
            mask = jnp.broadcast_to(attn_mask, full).reshape(rows)
            scores = jnp.where(mask, scores, -jnp.inf) if boolean else scores + mask.astype(scores.dtype)
    with jax.named_scope(ATEN_SCOPES["softmax"]):
        weights = jax.nn.softmax(scores, axis=-1)
    with jax.named_scope(ATEN_SCOPES["dot"]):  # over k → (…, h, m, d)
        out = jax.lax.dot_general(weights, value, (((nb + 1,), (nb,)), batch_dims))
    return out.reshape(*batch, q_heads, q_len, value.shape[-1])


def register(env: Environment | None = None) -> None:
    """Register :func:`sdpa` for ``torch.nn.functional.scaled_dot_product_attention`` and
    ``aten::scaled_dot_product_attention`` in torchax environment ``env`` (default: ``torchax.default_env()``)
    through its public ``override_op_definition``; dropout goes to torchax's reference. Idempotent. This file is
    excluded from JAX's source attribution like torchax's lowerings, so the attention maps to the model's line."""
    import torch
    import torchax
    from torchax.ops import jtorch

    exclude_from_tracebacks(__file__)
    env = env if env is not None else torchax.default_env()
    if id(env) in _REGISTERED:
        return
    reference = jtorch.scaled_dot_product_attention

    def impl(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, attn_mask: torch.Tensor | None = None, dropout_p: float = 0.0,
             is_causal: bool = False, scale: float | None = None, enable_gqa: bool = False) -> Any:
        if dropout_p > 0:
            return reference(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa, env=env)
        jq, jk, jv, jmask = env.t2j_iso((query, key, value, attn_mask))
        return env.j2t_iso(sdpa(jq, jk, jv, jmask, is_causal, scale))

    impl.__name__ = impl.__qualname__ = "scaled_dot_product_attention"
    env.override_op_definition(torch.nn.functional.scaled_dot_product_attention, impl)
    env.override_op_definition(torch.ops.aten.scaled_dot_product_attention, impl)
    _REGISTERED.add(id(env))
