"""A JAX lowering of ``aten::_grouped_mm`` for torchax, so mixture-of-experts models run on JAX (issue 42).

transformers 5.x runs a MoE layer's experts through ``torch.nn.functional.grouped_mm`` / ``torch._grouped_mm``
(``transformers/integrations/moe.py``, ``grouped_mm_experts_forward``): the (token, expert) pairs are sorted
by expert, ``offs`` holds each expert's cumulative end row, and one grouped matmul multiplies every expert's
rows by that expert's weights. torchax has no lowering for that ATen op ("Operator with name
aten::_grouped_mm has no lowering"); this module supplies one, built on ``jax.lax.ragged_dot_general`` (with a
CPU variant, below). Everything else the experts path calls (``sort``, ``histc``, ``cumsum``, gathers,
``index_put``) torchax already lowers. The group sizes are data, not shapes: one compiled step serves every
routing.

What XLA runs: the jaxpr always holds one ``ragged_dot_general`` equation per grouped matmul, attributed to
the model's ``_grouped_mm`` call (transformers' ``integrations/moe.py``). On TPU and GPU, JAX lowers it to
XLA's ``ragged_dot`` instruction. On the CPU (jax 0.12) JAX's own lowering is a dense fallback that masks each
group's rows and contracts over (group, K), and XLA:CPU then copies every expert's weights into that layout on
every call: one decode step's grouped matmul (8 experts, 1024 → 2048, float32, 2 rows) took 153 ms that way.
So :func:`register` gives ``ragged_dot_general`` a CPU lowering of its own for the MoE layout (rows of the
left operand ragged, groups the right operand's first dimension): a masked batched matmul over the groups,
summed (6 ms on the same shapes; ``G``× the ideal FLOPs and a ``(G, M, N)`` intermediate, the price of
static shapes there) — or, when there are no more rows than experts (a decode step: ``top_k`` rows per token),
each row times its own expert's weights, gathered, so a step reads ``top_k`` experts' weights, not all of them
(2 rows, 8 experts, 1024 → 2048: 4.2 ms masked, 1.7 ms gathered, medians of 15 paired calls). Other layouts keep JAX's lowering. The rule is registered for the whole process (JAX
has one lowering table): a user's own ``jax.lax.ragged_dot`` on the CPU gets it too, with the same numbers.
Under a ``tp`` mesh the experts are split like an MLP (:func:`app.core.parallel.mesh.weight_spec`):
``gate_up_proj`` on its output features, ``down_proj`` on its input features, one all-reduce after the down
projection.

Checked against torchax 0.0.14.dev20261026, torch 2.15.0 (and 2.13.0), jax 0.12.0.1 and transformers 5.25.0 (and
5.23.0). Written to be offered upstream: :func:`grouped_mm` is a plain JAX function with ``aten::_grouped_mm``'s
signature, so in ``torchax/ops/jaten.py`` it would read ``@op(torch.ops.aten._grouped_mm)`` over the same body.

Semantics (torch's ``_meta_registrations.py``, ``meta_grouped_mm``, and ``torch.nn.functional.grouped_mm``'s
docs; ``offs`` is int32, ``offs[i]`` is the end of group ``i``, so the sizes are ``diff([0, *offs])``):

============  ====================  ===================  ==========================  ==================
mat_a         mat_b                 ragged dimension     result                      used by
============  ====================  ===================  ==========================  ==================
(M, K)        (G, K, N)             M (rows of mat_a)    (M, N)                      the MoE forward
(G, M, K)     (K, N)                N (columns of mat_b) (M, N)                      —
(M, K)        (K, N)                K (contraction)      (G, M, N)                   weight gradients
(G, M, K)     (G, K, N)             none (``offs=None``) (G, M, N)                   a plain batched mm
============  ====================  ===================  ==========================  ==================

Rows (or columns) past ``offs[-1]`` are ignored: torch leaves them uninitialised, this lowering writes
zeros. Products accumulate in float32 and are rounded once to ``out_dtype`` (default: ``mat_a``'s dtype),
as torch's CPU kernel does for bfloat16. ``bias`` is refused, as torch 2.13 refuses it ("Bias not supported
yet").

Experts implementations (``config._experts_implementation``; ``from_pretrained(...,
experts_implementation=...)``), per mode: every JAX mode (jit-static, jit-loop, jit-dynamic,
torchax-eager) runs the model as loaded, and transformers' default is ``"grouped_mm"`` — the one that
works in all of them with this lowering. ``"eager"`` loops over the experts a batch hit (``nonzero``: a
data-dependent shape, which ``jax.jit`` cannot trace; only torchax-eager could run it), and
``"batched_mm"`` gathers a copy of an expert's weights for every (token, expert) pair (``top_k × tokens``
weight matrices per layer in a prefill), so neither is chosen for the JAX modes. The ``torch`` and
``torch-compile`` modes run PyTorch's own kernels and need nothing from here.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

import jax  # noqa: TID253 - a heavy module: its users import it inside functions
import jax.numpy as jnp  # noqa: TID253 - a heavy module: its users import it inside functions
from jax.typing import DTypeLike  # noqa: TID253 - a heavy module: its users import it inside functions

if TYPE_CHECKING:
    import torch
    from jax.core import ShapedArray
    from jax.interpreters.mlir import LoweringRuleContext, ir
    from torchax.tensor import Environment

from app.core.backends import CPU
from app.core.jax_private import exclude_from_tracebacks, ragged_dot_lowering

#: An MLIR lowering rule of a primitive: ``rule(ctx, *operands, **params)`` → the results' values.
LoweringRule = Callable[..., Sequence["ir.Value"]]

#: The torchax release this lowering was checked against (a newer one may bring its own).
CHECKED_TORCHAX = "0.0.14.dev20261026"
#: Environments :func:`register` has seen.
_REGISTERED: weakref.WeakSet[Any] = weakref.WeakSet()
#: Whether :func:`register` gave ``ragged_dot_general`` its CPU lowering (:func:`_cpu_rule`).
_CPU_LOWERED = False


def group_sizes(offs: jax.Array) -> jax.Array:
    """Sizes of the groups whose cumulative end offsets are ``offs`` (``diff([0, *offs])``), int32."""
    offs = jnp.asarray(offs, jnp.int32)
    return jnp.diff(offs, prepend=jnp.zeros((1,), jnp.int32))


def _jax_dtype(dtype: DTypeLike | torch.dtype | None, default: DTypeLike) -> Any:
    """``dtype`` as a JAX dtype (torch dtypes through torchax's table); ``default`` when ``None``."""
    if dtype is None:
        return default
    import torch

    if isinstance(dtype, torch.dtype):
        from torchax.ops import mappings

        return mappings.t2j_dtype(dtype)
    return jnp.dtype(dtype)


def _ragged(lhs: jax.Array, rhs: jax.Array, sizes: jax.Array, dims: jax.lax.RaggedDotDimensionNumbers, acc: DTypeLike) -> jax.Array:
    return jax.lax.ragged_dot_general(lhs, rhs, sizes, dims, preferred_element_type=acc)


def _dot_dims(contract: tuple[int, int], ragged: int, group: tuple[int, ...]) -> Any:
    return jax.lax.RaggedDotDimensionNumbers(
        dot_dimension_numbers=(((contract[0],), (contract[1],)), ((), ())),
        lhs_ragged_dimensions=[ragged],
        rhs_group_dimensions=list(group),
    )


def _rows_ragged(mat_a: jax.Array, mat_b: jax.Array, sizes: jax.Array, acc: DTypeLike) -> jax.Array:
    """(M, K) × (G, K, N) → (M, N), the rows in groups: one ``ragged_dot_general`` equation (lowered to XLA's
    ``ragged_dot`` on TPU and GPU, to :func:`_rows_masked` on the CPU once :func:`register` ran)."""
    return _ragged(mat_a, mat_b, sizes, _dot_dims((1, 1), 0, (0,)), acc)


def _rows_masked(mat_a: jax.Array, mat_b: jax.Array, sizes: jax.Array, acc: DTypeLike) -> jax.Array:
    """The same on XLA:CPU: each group's rows masked out of a copy of ``mat_a``, one batched matmul over the
    groups, summed (one nonzero term per row, so the sum is exact). ``G``× the FLOPs, as JAX's own CPU
    fallback of ``ragged_dot``, but the weights keep their layout: that fallback contracts over (group, K)
    and XLA:CPU copies every expert's weights into that layout on every call."""
    ends = jnp.cumsum(sizes)
    rows = jnp.arange(mat_a.shape[0])
    mask = (rows >= (ends - sizes)[:, None]) & (rows < ends[:, None])  # (G, M)
    lhs = jnp.where(mask[:, :, None], mat_a[None], jnp.zeros((), mat_a.dtype))  # (G, M, K)
    out = jax.lax.dot_general(lhs, mat_b, (((2,), (1,)), ((0,), (0,))), preferred_element_type=acc)
    return out.sum(0, dtype=acc)


def _rows_gathered(mat_a: jax.Array, mat_b: jax.Array, sizes: jax.Array, acc: DTypeLike) -> jax.Array:
    """The same for few rows (``M ≤ G``, a decode step's ``top_k`` rows): each row times its own group's weights,
    sliced out one row at a time (``M`` experts' weights read instead of all ``G``); rows past the last group are
    0. One ``dynamic_slice`` and one vector-matrix product per row, not one gather of ``(M, K, N)``: transformers
    passes the experts' weights transposed (``weight.transpose(-2, -1)``, ``integrations/moe.py``), and XLA:CPU
    copied every expert's weights into that layout before a gather, each step (issue 38: 2 × 8 MB per layer on
    ``random:mixtral-tiny``), while it moves a transpose through a ``dynamic_slice`` and into the dot."""
    groups = mat_b.shape[0]
    ends = jnp.cumsum(sizes)
    group = jnp.searchsorted(ends, jnp.arange(mat_a.shape[0]), side="right")  # row r: groups ending at or before r
    index = jnp.minimum(group, groups - 1)
    if mat_a.shape[0] == 0:  # no rows (every group empty)
        return jnp.zeros((0, mat_b.shape[2]), acc)
    stored = jnp.swapaxes(mat_b, 1, 2)  # (G, N, K): the weights as stored when mat_b is their transpose (XLA
    out = jnp.stack([jax.lax.dot_general(  # folds the two transposes); each output a row of it · the row of mat_a
        jax.lax.dynamic_index_in_dim(stored, index[r], keepdims=False), mat_a[r], (((1,), (0,)), ((), ())),
        preferred_element_type=acc) for r in range(mat_a.shape[0])])
    return jnp.where((group < groups)[:, None], out, jnp.zeros((), acc))


def _is_rows_layout(dims: jax.lax.RaggedDotDimensionNumbers) -> bool:
    """Whether ``ragged_dot_general``'s dimension numbers are the MoE forward's: ``(M, K) × (G, K, N)``."""
    (contract, batch) = dims.dot_dimension_numbers
    return (tuple(map(tuple, contract)) == ((1,), (1,)) and tuple(map(tuple, batch)) == ((), ())
            and tuple(dims.lhs_ragged_dimensions) == (0,) and tuple(dims.rhs_group_dimensions) == (0,))


def _cpu_rule(jax_rule: LoweringRule) -> LoweringRule:
    """The CPU lowering of ``ragged_dot_general``: for the MoE layout (2-D × 3-D, no group offset)
    :func:`_rows_gathered` when there are no more rows than groups, else :func:`_rows_masked`; ``jax_rule`` (JAX's
    own) for any other."""
    from jax.interpreters import mlir

    def moe_layout(lhs: jax.Array, rhs: jax.Array, sizes: jax.Array, *, preferred_element_type: DTypeLike | None,
                   **_: object) -> jax.Array:
        acc = preferred_element_type if preferred_element_type is not None else jnp.float32
        few = lhs.shape[0] <= rhs.shape[0]  # static: a decode step's rows read only their experts' weights
        return (_rows_gathered if few else _rows_masked)(lhs, rhs, sizes, acc).astype(acc)

    moe_rule = mlir.lower_fun(moe_layout, multiple_results=False)

    def rule(ctx: LoweringRuleContext, lhs: ir.Value, rhs: ir.Value, sizes: ir.Value, *rest: ir.Value,
             **params: object) -> Sequence[ir.Value]:
        avals = cast("Sequence[ShapedArray]", ctx.avals_in)
        if (not rest and params.get("group_offset") is None and len(avals[0].shape) == 2 and len(avals[1].shape) == 3
                and isinstance(dims := params["ragged_dot_dimension_numbers"], jax.lax.RaggedDotDimensionNumbers)
                and _is_rows_layout(dims)):
            return moe_rule(ctx, lhs, rhs, sizes, **params)
        return jax_rule(ctx, lhs, rhs, sizes, *rest, **params)

    return rule


def _grouped(mat_a: jax.Array, mat_b: jax.Array, offs: jax.Array, acc: DTypeLike) -> jax.Array:
    """The three layouts with a ragged dimension (see the module's table), accumulated in ``acc``."""
    sizes = group_sizes(offs)
    if mat_a.ndim == 2 and mat_b.ndim == 3:  # rows of mat_a ragged: (M, K) x (G, K, N) -> (M, N)
        return _rows_ragged(mat_a, mat_b, sizes, acc)
    if mat_a.ndim == 3 and mat_b.ndim == 2:  # columns of mat_b ragged: transpose into the case above
        return _rows_ragged(mat_b.T, jnp.swapaxes(mat_a, 1, 2), sizes, acc).T
    # contraction ragged: (M, K) x (K, N) -> (G, M, N); XLA adds the group dimension first
    return _ragged(mat_a, mat_b, sizes, _dot_dims((1, 0), 1, ()), acc)


def grouped_mm(mat_a: jax.Array, mat_b: jax.Array, offs: jax.Array | None = None, bias: jax.Array | None = None,
               out_dtype: DTypeLike | torch.dtype | None = None) -> jax.Array:
    """``aten::_grouped_mm(mat_a, mat_b, offs=None, bias=None, out_dtype=None)`` on JAX arrays.

    See the module docstring for the four layouts. Raises ``ValueError`` for operands that are not 2-D or
    3-D, a missing ``offs`` where a 2-D operand needs one (or one given for 3-D × 3-D), mismatched group
    counts or contraction sizes, and ``NotImplementedError`` for a ``bias`` (as torch 2.13 does)."""
    mat_a, mat_b = jnp.asarray(mat_a), jnp.asarray(mat_b)
    out = _jax_dtype(out_dtype, mat_a.dtype)
    _check(mat_a, mat_b, offs, bias)
    acc = jnp.promote_types(out, jnp.float32) if jnp.issubdtype(out, jnp.floating) else out  # bf16 -> f32
    if offs is None:  # 3-D x 3-D: a plain batched matmul
        result = jnp.matmul(mat_a, mat_b, preferred_element_type=acc)
    else:
        result = _grouped(mat_a, mat_b, offs, acc)
    return result.astype(out)


def _check(mat_a: jax.Array, mat_b: jax.Array, offs: jax.Array | None, bias: object) -> None:
    """torch's own argument checks (``_meta_grouped_mm_common``), as ``ValueError``\\ s."""
    if bias is not None:
        raise NotImplementedError("_grouped_mm: a bias is not supported (torch 2.13 refuses it too)")
    if mat_a.ndim not in (2, 3) or mat_b.ndim not in (2, 3):
        raise ValueError(f"_grouped_mm: operands must be 2-D or 3-D, got {mat_a.ndim}-D and {mat_b.ndim}-D")
    both_2d = mat_a.ndim == 2 and mat_b.ndim == 2
    if not both_2d and mat_a.shape[-1] != mat_b.shape[-2]:
        raise ValueError(f"_grouped_mm: contraction sizes differ: {mat_a.shape} and {mat_b.shape}")
    if both_2d and mat_a.shape[1] != mat_b.shape[0]:
        raise ValueError(f"_grouped_mm: contraction sizes differ: {mat_a.shape} and {mat_b.shape}")
    if mat_a.ndim == 3 and mat_b.ndim == 3:
        if offs is not None:
            raise ValueError("_grouped_mm: offs is given, but 3-D x 3-D operands need none")
        if mat_a.shape[0] != mat_b.shape[0]:
            raise ValueError(f"_grouped_mm: batch sizes differ: {mat_a.shape} and {mat_b.shape}")
        return
    if offs is None or jnp.ndim(offs) != 1:
        raise ValueError("_grouped_mm: a 2-D operand needs offs, a 1-D tensor of cumulative group ends")
    groups = mat_b.shape[0] if mat_b.ndim == 3 else mat_a.shape[0] if mat_a.ndim == 3 else None
    if groups is not None and jnp.shape(offs)[0] != groups:
        raise ValueError(f"_grouped_mm: {jnp.shape(offs)[0]} offsets for {groups} groups")


def _torch_impl(env: Environment) -> Callable[..., torch.Tensor]:
    """``grouped_mm`` as torchax calls a user-defined op: torchax tensors in and out, through ``env``."""

    def impl(mat_a: torch.Tensor, mat_b: torch.Tensor, offs: torch.Tensor | None = None,
             bias: torch.Tensor | None = None, out_dtype: torch.dtype | None = None) -> torch.Tensor:
        args = env.t2j_iso((mat_a, mat_b, offs, bias))
        return env.j2t_iso(grouped_mm(*args, out_dtype=out_dtype))

    impl.__name__ = impl.__qualname__ = "grouped_mm"
    return impl


def _register_cpu_lowering() -> None:
    """Give ``ragged_dot_general`` :func:`_cpu_rule` on the CPU (once per process)."""
    global _CPU_LOWERED
    if _CPU_LOWERED:
        return
    from jax.interpreters import mlir

    primitive, jax_rule = ragged_dot_lowering()
    mlir.register_lowering(primitive, _cpu_rule(jax_rule), platform=CPU.platform)
    _CPU_LOWERED = True


def register(env: Environment | None = None) -> None:
    """Register :func:`grouped_mm` as ``aten::_grouped_mm`` in torchax environment ``env`` (default:
    ``torchax.default_env()``), through its public ``override_op_definition``. Idempotent; a torchax whose
    own op table (``torchax.ops.ops_registry.all_aten_ops``) already lowers the op keeps its lowering.
    Like torchax's own lowerings, this file is excluded from JAX's source attribution (the model's line owns
    the equations). Also registers the CPU lowering of ``ragged_dot_general`` (see the module docstring)."""
    import torch
    import torchax
    from torchax.ops import ops_registry

    exclude_from_tracebacks(__file__)
    _register_cpu_lowering()

    env = env if env is not None else torchax.default_env()
    if env in _REGISTERED:
        return
    op = torch.ops.aten._grouped_mm.default
    if op not in ops_registry.all_aten_ops and op.overloadpacket not in ops_registry.all_aten_ops:
        env.override_op_definition(op, _torch_impl(env))
    _REGISTERED.add(env)
