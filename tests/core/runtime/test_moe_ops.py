"""``aten::_grouped_mm`` on JAX (issue 42, :mod:`app.core.runtime.moe_ops`) against torch's own CPU kernel.

Every layout torch accepts (2-D × 3-D, the MoE forward; 3-D × 2-D; 2-D × 2-D with a ragged contraction; 3-D × 3-D),
random group sizes, empty groups, one group, rows past ``offs[-1]``, float32 and bfloat16, eagerly, under
``jax.jit`` (one compile for any group sizes) and through torchax's dispatch of ``torch._grouped_mm``.

Tolerances: float32 ``1e-5`` relative / ``1e-5`` absolute (the same products summed in another order);
bfloat16 ``2e-2`` / ``2e-2``: both sides accumulate in float32 and round once, so they differ by at most one
bfloat16 step (``2**-7`` relative) where the float32 sums round differently. Inner sizes are multiples of 8:
torch's CPU kernel wants 16-byte strides. Where torch's kernel refuses an input (it has none for some dtypes
on some builds) the reference is transformers' ``_grouped_mm_fallback`` (2-D × 3-D only).
"""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

from app.core.runtime.moe_ops import (
    _rows_gathered,
    _rows_masked,
    _rows_ragged,
    group_sizes,
    grouped_mm,
    register,
)

TOLERANCE = {torch.float32: (1e-5, 1e-5), torch.bfloat16: (2e-2, 2e-2)}
DTYPES = [torch.float32, torch.bfloat16]
K, N = 16, 24


def to_jax(t: torch.Tensor) -> jax.Array:
    """A torch CPU tensor as a JAX array of the same dtype (bfloat16 through float32, exactly)."""
    if t.dtype == torch.bfloat16:
        return jnp.asarray(t.float().numpy()).astype(jnp.bfloat16)
    return jnp.asarray(t.numpy())


def reference(a: torch.Tensor, b: torch.Tensor, offs: torch.Tensor | None) -> torch.Tensor:
    """torch's ``_grouped_mm`` on the CPU, or transformers' loop over the groups where torch refuses."""
    try:
        return torch._grouped_mm(a, b, offs=offs)
    except (RuntimeError, NotImplementedError):
        from transformers.integrations.moe import _grouped_mm_fallback

        assert offs is not None and a.dim() == 2 and b.dim() == 3
        return _grouped_mm_fallback(a, b, offs)


def assert_close(out: jax.Array, ref: torch.Tensor, dtype: torch.dtype) -> None:
    assert out.dtype == to_jax(ref[:0]).dtype
    rtol, atol = TOLERANCE[dtype]
    np.testing.assert_allclose(np.asarray(out.astype(jnp.float32)), ref.float().numpy(), rtol=rtol, atol=atol)


def offsets(sizes: list[int]) -> torch.Tensor:
    return torch.tensor(np.cumsum(sizes), dtype=torch.int32)


SIZES = {
    "random": [3, 7, 1, 5],
    "empty groups": [0, 6, 0, 0, 9, 0],
    "one group": [11],
    "all empty": [0, 0, 0],
    "tail past offs[-1]": [2, 4, 1],  # 13 rows, 7 grouped: the rest are ignored (zeros here)
}
ROWS = {"tail past offs[-1]": 13}


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("case", sorted(SIZES))
def test_rows_of_a_ragged_2d_by_3d(case, dtype):
    """The MoE forward: (tokens sorted by expert, in) × (experts, in, out) → (tokens, out)."""
    sizes = SIZES[case]
    gen = torch.Generator().manual_seed(len(sizes))
    m = ROWS.get(case, sum(sizes))
    a = torch.randn(m, K, generator=gen).to(dtype)
    b = torch.randn(len(sizes), K, N, generator=gen).to(dtype)
    offs = offsets(sizes)
    out = grouped_mm(to_jax(a), to_jax(b), jnp.asarray(offs.numpy()))
    used = sum(sizes)
    assert out.shape == (m, N)
    assert_close(out[:used], reference(a, b, offs)[:used], dtype)
    assert not np.asarray(out[used:].astype(jnp.float32)).any()  # torch leaves these uninitialised


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_transposed_weight_view_as_transformers_passes_it(dtype):
    """transformers stores experts as (experts, out, in) and passes ``weight.transpose(-2, -1)``."""
    gen = torch.Generator().manual_seed(1)
    a = torch.randn(12, K, generator=gen).to(dtype)
    stored = torch.randn(3, N, K, generator=gen).to(dtype)
    offs = offsets([5, 0, 7])
    out = grouped_mm(to_jax(a), jnp.swapaxes(to_jax(stored), -2, -1), jnp.asarray(offs.numpy()))
    assert_close(out, reference(a, stored.transpose(-2, -1), offs), dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_other_layouts(dtype):
    gen = torch.Generator().manual_seed(2)
    offs = offsets([8, 0, 16])  # offs[-1] = 24: columns (3-D × 2-D) or contraction (2-D × 2-D) in groups
    a3, b2 = torch.randn(3, 8, K, generator=gen).to(dtype), torch.randn(K, N, generator=gen).to(dtype)
    out = grouped_mm(to_jax(a3), to_jax(b2), jnp.asarray(offs.numpy()))
    assert out.shape == (8, N)
    assert_close(out, reference(a3, b2, offs), dtype)
    a2, b22 = torch.randn(8, N, generator=gen).to(dtype), torch.randn(N, K, generator=gen).to(dtype)
    out = grouped_mm(to_jax(a2), to_jax(b22), jnp.asarray(offs.numpy()))
    assert out.shape == (3, 8, K)
    assert_close(out, reference(a2, b22, offs), dtype)
    b3 = torch.randn(3, K, N, generator=gen).to(dtype)
    assert_close(grouped_mm(to_jax(a3), to_jax(b3)), reference(a3, b3, None), dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_both_platform_branches_agree(dtype):
    """The CPU runs the masked form; ``ragged_dot_general`` under JAX's own lowering is checked here too."""
    gen = torch.Generator().manual_seed(5)
    sizes = [0, 4, 0, 3, 6]
    a, b = torch.randn(15, K, generator=gen).to(dtype), torch.randn(len(sizes), K, N, generator=gen).to(dtype)
    ref = reference(a, b, offsets(sizes))[:13]
    jsizes = jnp.asarray(sizes, jnp.int32)
    for branch in (_rows_masked, _rows_ragged):
        out = jax.jit(branch, static_argnums=3)(to_jax(a), to_jax(b), jsizes, jnp.float32)
        assert not np.asarray(out[13:]).any()
        assert_close(out[:13].astype(to_jax(a).dtype), ref, dtype)


def test_one_compile_serves_any_group_sizes():
    traces = []

    @jax.jit
    def f(a, b, offs):
        traces.append(1)
        return grouped_mm(a, b, offs)

    gen = torch.Generator().manual_seed(3)
    a, b = torch.randn(10, K, generator=gen), torch.randn(4, K, N, generator=gen)
    for sizes in ([10, 0, 0, 0], [1, 2, 3, 4], [0, 0, 0, 10], [5, 0, 5, 0]):
        offs = offsets(sizes)
        assert_close(f(to_jax(a), to_jax(b), jnp.asarray(offs.numpy())), reference(a, b, offs), torch.float32)
    assert len(traces) == 1


def test_group_sizes_and_out_dtype():
    assert group_sizes(jnp.asarray([3, 3, 7], jnp.int32)).tolist() == [3, 0, 4]
    a, b = jnp.ones((4, K), jnp.bfloat16), jnp.ones((2, K, N), jnp.bfloat16)
    out = grouped_mm(a, b, jnp.asarray([1, 4], jnp.int32), out_dtype=torch.float32)
    assert out.dtype == jnp.float32 and float(out[0, 0]) == K


def test_bad_arguments_are_refused_as_torch_refuses_them():
    a, b = jnp.ones((4, K)), jnp.ones((2, K, N))
    with pytest.raises(NotImplementedError, match="bias"):
        grouped_mm(a, b, jnp.asarray([1, 4], jnp.int32), bias=jnp.ones((2, N)))
    with pytest.raises(ValueError, match="needs offs"):
        grouped_mm(a, b)
    with pytest.raises(ValueError, match="3 offsets for 2 groups"):
        grouped_mm(a, b, jnp.asarray([1, 2, 4], jnp.int32))
    with pytest.raises(ValueError, match="contraction"):
        grouped_mm(jnp.ones((4, 8)), b, jnp.asarray([1, 4], jnp.int32))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_torchax_dispatches_torch_grouped_mm_to_the_lowering(dtype):
    """The registered op: ``torch.nn.functional.grouped_mm`` on torchax tensors, eagerly and under jit."""
    import torchax
    from torchax import interop

    env = torchax.default_env()
    register()
    register()  # idempotent
    gen = torch.Generator().manual_seed(4)
    a, stored = torch.randn(9, K, generator=gen).to(dtype), torch.randn(3, N, K, generator=gen).to(dtype)
    offs = offsets([4, 0, 5])

    def torch_side(x, w, o):
        return torch.nn.functional.grouped_mm(x, w.transpose(-2, -1), offs=o)

    jax_fn = interop.jax_view(torch_side)
    args = (to_jax(a), to_jax(stored), jnp.asarray(offs.numpy()))
    with env:
        eager = jax_fn(*args)
    assert_close(eager, reference(a, stored.transpose(-2, -1), offs), dtype)
    assert_close(jax.jit(jax_fn)(*args), reference(a, stored.transpose(-2, -1), offs), dtype)


def test_jaxpr_holds_ragged_dot_and_the_cpu_lowers_it_masked():
    """The jaxpr shows one ``ragged_dot_general`` (not a platform switch hiding it in a branch); on the CPU it lowers
    to the masked batched matmul (groups as a batch dimension), not JAX's fallback that contracts over (group, K)
    and copies every expert's weights; another layout (a ragged contraction) keeps JAX's lowering."""
    register()
    a, b = jnp.ones((6, K)), jnp.ones((3, K, N))
    offs = jnp.asarray([2, 2, 6], jnp.int32)
    jaxpr = jax.make_jaxpr(grouped_mm)(a, b, offs)
    assert "ragged_dot_general" in [e.primitive.name for e in jaxpr.eqns]
    assert not any(e.primitive.name in ("cond", "platform_index") for e in jaxpr.eqns)
    text = jax.jit(grouped_mm).lower(a, b, offs).as_text()
    assert "batching_dims = [0] x [0], contracting_dims = [2] x [1]" in text
    assert "contracting_dims = [0, 2] x [0, 1]" not in text
    ragged_k = jax.jit(grouped_mm)(jnp.ones((4, 6)), jnp.ones((6, N)), offs)  # the weight-gradient layout: JAX's rule
    assert ragged_k.shape == (3, 4, N) and float(ragged_k[0].sum()) == 4 * N * 2  # group 0: rows 0-1 of K


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_few_rows_read_only_their_experts(dtype):
    """A decode step's rows (M ≤ G): the sliced form equals torch's op, rows past ``offs[-1]`` are 0, and the CPU
    lowering picks it (the StableHLO slices one expert per row instead of multiplying all G experts)."""
    register()
    gen = torch.Generator().manual_seed(9)
    for sizes, rows in (([0, 1, 0, 0, 1, 0], 2), ([2, 0, 0, 0, 0, 0], 2), ([0, 0, 1, 0, 0, 0], 3)):
        a, b = torch.randn(rows, K, generator=gen).to(dtype), torch.randn(len(sizes), K, N, generator=gen).to(dtype)
        used = sum(sizes)
        ref = reference(a, b, offsets(sizes))[:used]
        out = jax.jit(_rows_gathered, static_argnums=3)(to_jax(a), to_jax(b), jnp.asarray(sizes, jnp.int32),
                                                        jnp.float32)
        assert not np.asarray(out[used:]).any()
        assert_close(out[:used].astype(to_jax(a).dtype), ref, dtype)
        assert_close(jax.jit(grouped_mm)(to_jax(a), to_jax(b), jnp.asarray(offsets(sizes).numpy()))[:used], ref, dtype)
    text = jax.jit(grouped_mm).lower(jnp.ones((2, K)), jnp.ones((6, K, N)), jnp.asarray([0, 1, 1, 1, 2, 2])).as_text()
    assert "stablehlo.dynamic_slice" in text and f"tensor<6x{K}x{N}xf32>" in text  # one expert per row
    assert "batching_dims" not in text  # no (G, M, K) batched product over every expert


def test_a_decode_step_copies_no_experts_weights():
    """Issue 38: transformers passes the experts' weights transposed (``weight.transpose(-2, -1)``); gathering
    the rows' experts from that view made XLA:CPU copy every expert's weights into the transposed layout each
    decode step (``copy`` of ``f32[8,256,1024]`` per matrix and layer on random:mixtral-tiny). Counted in the
    optimized HLO: no copy or transpose of one expert's elements or more."""
    register()
    experts, hidden, inter = 8, 32, 48
    sizes = jnp.asarray([0, 1, 0, 0, 0, 1, 0, 0], jnp.int32)
    fn = jax.jit(lambda w, x, offs: grouped_mm(x, jnp.swapaxes(w, 1, 2), offs))  # (G, N, K) stored as torch's
    hlo = fn.lower(jnp.ones((experts, inter, hidden)), jnp.ones((2, hidden)), jnp.cumsum(sizes)).compile().as_text()
    moved = [line for line in hlo.split("\n") if (m := re.search(r"= f32\[([\d,]*)\]\S* (copy|transpose)\(", line))
             and np.prod([int(d) for d in m.group(1).split(",") if d]) >= hidden * inter]
    assert not moved, moved
