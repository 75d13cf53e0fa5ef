"""The in-place attention (app/core/runtime/attention.py, issue 38) against PyTorch's own
``scaled_dot_product_attention``, and its parts in the ATen name scopes the source map groups by."""

from __future__ import annotations

import jax
import numpy as np
import pytest
import torch

from app.core.runtime.attention import ATEN_SCOPES, sdpa


@pytest.mark.parametrize(("q_heads", "kv_heads", "q_len", "mask"), [
    (4, 4, 1, None), (6, 2, 1, "bool"), (6, 3, 5, "causal"), (4, 2, 3, "float")])
def test_sdpa_equals_pytorchs(q_heads, kv_heads, q_len, mask):
    g = torch.Generator().manual_seed(q_heads * 10 + q_len)
    kv_len, d = 7, 8
    q = torch.randn(2, q_heads, q_len, d, generator=g)
    k = torch.randn(2, kv_heads, kv_len, d, generator=g)
    v = torch.randn(2, kv_heads, kv_len, d, generator=g)
    attn_mask = None
    if mask == "bool":
        attn_mask = torch.rand(2, 1, q_len, kv_len, generator=g) > 0.3
        attn_mask[..., 0] = True  # every row keeps a position
    elif mask == "float":
        attn_mask = torch.randn(2, 1, q_len, kv_len, generator=g)
    want = torch.nn.functional.scaled_dot_product_attention(
        q, k, v, attn_mask=attn_mask, is_causal=mask == "causal", enable_gqa=q_heads != kv_heads)
    got = sdpa(*(jax.numpy.asarray(t.numpy()) for t in (q, k, v)),
               None if attn_mask is None else jax.numpy.asarray(attn_mask.numpy()), is_causal=mask == "causal")
    np.testing.assert_allclose(np.asarray(got), want.numpy(), rtol=1e-5, atol=1e-5)


def test_each_part_is_in_its_aten_scope():
    q, k = jax.numpy.ones((1, 2, 1, 8)), jax.numpy.ones((1, 2, 5, 8))
    mask = jax.numpy.ones((1, 1, 1, 5), bool)
    text = jax.jit(lambda q, k, v, m: sdpa(q, k, v, m)).lower(q, k, k, mask).as_text(debug_info=True)
    for part in ("dot", "scale", "select", "softmax"):
        assert f"{ATEN_SCOPES[part]}/" in text, part
    assert text.count(f'{ATEN_SCOPES["dot"]}/dot_general') >= 2  # the scores' and the output's products
