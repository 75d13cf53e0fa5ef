"""Floating-point operation estimates for jaxpr equations (no Qt; JAX objects read, never traced).

The formulas follow XLA's ``HloCostAnalysis`` (``xla/service/hlo_cost_analysis.cc``), the same analysis
behind ``Compiled.cost_analysis()["flops"]``, so sums are comparable with it (before fusion rewrites):

- ``dot_general``: ``2 · prod(output shape) · prod(contracting dims of lhs)`` — one multiply and one add per
  output element per contracted element, i.e. ``2·batch·M·N·K`` (``HandleDot``: ``kFmaFlops · fma_count``).
- ``conv_general_dilated``: ``2 · prod(output shape) · (kernel input features) ·
  prod(kernel spatial dims)``; the kernel's input-feature dim is already ``C_in / feature_group_count``
  (``HandleConvolution``).
- element-wise arithmetic (add, mul, exp, logistic, select_n, comparisons …): ``prod(output shape)``, one
  operation per element (``HandleElementwiseOp``; transcendentals counted as one flop each here).
- reductions (``reduce_sum``, ``reduce_max``, ``argmax`` …): ``prod(input shape)`` (one combine per input
  element, ``HandleReduce``).
- data movement (reshape, transpose, broadcast, slice, gather, scatter, concatenate, convert, iota …): 0.
- sub-jaxprs (``jit``/``pjit``, ``custom_jvp_call``, ``closed_call``, ``remat``, ``cond`` branches at their
  maximum): the sum of their equations; ``scan``: body × ``length``; ``while``: body once (the trip count
  is not known statically).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, cast

from app.core.jax_private import jaxprs_in_params

if TYPE_CHECKING:
    from jax.core import ShapedArray
    from jax.extend.core import Jaxpr, JaxprEqn

ZERO_FLOP = frozenset({
    "reshape", "transpose", "broadcast_in_dim", "squeeze", "expand_dims", "slice", "dynamic_slice",
    "dynamic_update_slice", "gather", "scatter", "concatenate", "pad", "convert_element_type", "iota",
    "copy", "copy_p", "rev", "select_and_gather_add", "stop_gradient", "bitcast_convert_type",
    "device_put", "sharding_constraint", "random_bits", "random_seed", "random_wrap", "random_unwrap",
    "threefry2x32", "split",
})
REDUCTIONS = frozenset({
    "reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_and", "reduce_or", "reduce_xor",
    "argmax", "argmin", "cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp", "reduce_precision",
})


def size(shape: tuple[int, ...]) -> int:
    """Number of elements of a shape (1 for a scalar)."""
    return math.prod(int(d) for d in shape)


def _out_size(eqn: JaxprEqn) -> int:
    return sum(size(getattr(v.aval, "shape", ())) for v in eqn.outvars)


def _dot_flops(eqn: JaxprEqn) -> float:
    (lhs_contract, _), _ = eqn.params["dimension_numbers"]
    lhs_shape = cast("ShapedArray", eqn.invars[0].aval).shape
    k = math.prod(int(lhs_shape[d]) for d in lhs_contract)
    return 2.0 * _out_size(eqn) * k


def _conv_flops(eqn: JaxprEqn) -> float:
    rhs_shape = cast("ShapedArray", eqn.invars[1].aval).shape
    dn = eqn.params.get("dimension_numbers")
    if dn is not None and hasattr(dn, "rhs_spec"):
        spec = dn.rhs_spec  # (out feature dim, in feature dim, *spatial dims)
        in_features = int(rhs_shape[spec[1]])
        spatial = math.prod(int(rhs_shape[d]) for d in spec[2:])
    else:  # default OIHW layout
        in_features, spatial = int(rhs_shape[1]), math.prod(int(d) for d in rhs_shape[2:])
    return 2.0 * _out_size(eqn) * in_features * spatial


def sub_jaxprs(eqn: JaxprEqn) -> list[Any]:
    """The jaxprs nested in an equation's parameters (open ``Jaxpr`` objects)."""
    return list(jaxprs_in_params(eqn.params))


def jaxpr_flops(jaxpr: Jaxpr) -> float:
    """Sum of :func:`eqn_flops` over a jaxpr's equations."""
    return sum(eqn_flops(e) for e in jaxpr.eqns)


def eqn_flops(eqn: JaxprEqn) -> float:
    """Estimated flops of one equation (see the module docstring for each formula and its source)."""
    name = eqn.primitive.name
    try:
        if name == "dot_general":
            return _dot_flops(eqn)
        if name == "conv_general_dilated":
            return _conv_flops(eqn)
        if name in ZERO_FLOP:
            return 0.0
        subs = sub_jaxprs(eqn)
        if subs:
            if name == "scan":
                return float(eqn.params.get("length", 1)) * sum(jaxpr_flops(j) for j in subs)
            if name == "cond":
                return max(jaxpr_flops(j) for j in subs)
            return sum(jaxpr_flops(j) for j in subs)
        if name in REDUCTIONS:
            return float(sum(size(getattr(v.aval, "shape", ())) for v in eqn.invars))
        return float(_out_size(eqn))
    except Exception:  # an unexpected parameter layout: no estimate rather than a crash
        return 0.0
