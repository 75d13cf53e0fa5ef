"""An ordered host callback that hands a loop's token to the host and returns one bool, without
``jax.experimental.io_callback``'s per-call work (issue 38).

``io_callback`` runs its Python callback through ``io_callback_impl`` (``jax/_src/callback.py``, jax 0.12): each
call first ``device_put`` s every operand back onto the CPU device as a ``jax.Array`` (``shard_args``), enters
three configuration contexts, then the callback reads the arrays back with ``np.asarray``. In a capture of
jit-loop's decode on the GPT-2-small shape that was ~0.7 ms per token inside the ``io_callback`` event (of a
~19 ms step), time in which the loop's next iteration cannot start, since its condition reads the callback's
result. :func:`token_to_host` lowers through the same ``emit_python_callback`` (public as
``jax.interpreters.mlir.emit_python_callback``: the ``xla_ffi_python_cpu_callback`` custom call, with side
effect, ordered by the same effect token as ``io_callback(..., ordered=True)``), but the callback receives the
operands as the NumPy arrays XLA hands over and returns its bool straight away.

Shapes: operands are any arrays (the loop passes two int32 scalars: token id and iteration count); the result
is one bool scalar. Inside ``jax.jit`` only (there is no eager implementation).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import numpy as np  # noqa: TID253 - a heavy module: its users import it inside functions

from app.core.jax_private import callback_op_sharding, ordered_io_effect

if TYPE_CHECKING:
    import jax
    from jax.core import ShapedArray as Aval
    from jax.interpreters.mlir import LoweringRuleContext, ir

_PRIMITIVE: Any = None


def _primitive() -> Any:
    """The ``token_to_host`` primitive, made and registered on first use (so importing this module does not
    import JAX)."""
    global _PRIMITIVE
    if _PRIMITIVE is not None:
        return _PRIMITIVE
    from jax.core import ShapedArray
    from jax.extend.core import Primitive
    from jax.interpreters import mlir

    effect = ordered_io_effect()
    prim = Primitive("token_to_host")
    prim.multiple_results = True

    def abstract_eval(*avals: object, callback: Callable) -> tuple[list[Any], set[Any]]:
        del avals, callback
        return [ShapedArray((), np.bool_)], {effect}

    def lowering(ctx: LoweringRuleContext, *args: ir.Value, callback: Callable) -> Any:
        def host(*operands: np.ndarray) -> tuple[np.ndarray]:
            return (np.asarray(callback(*operands), dtype=np.bool_),)

        token = ctx.tokens_in.get(effect)
        result, token, _ = mlir.emit_python_callback(
            ctx, host, token, list(args), cast("list[Aval]", ctx.avals_in), ctx.avals_out, has_side_effect=True, returns_token=True,
            sharding=callback_op_sharding(ctx))  # as io_callback's: one device, or every device in a shard_map
        ctx.set_tokens_out(ctx.tokens_in.update_tokens(mlir.TokenSet({effect: token})))
        return result

    prim.def_effectful_abstract_eval(abstract_eval)
    mlir.register_lowering(prim, lowering, cacheable=False)  # the callback object is baked into each lowering
    _PRIMITIVE = prim
    return prim


def token_to_host(callback: Callable[..., Any], *operands: jax.Array) -> Any:
    """Inside a jitted function: call ``callback(*numpy_operands)`` on the host, in program order with every other
    ordered callback, and return what it returned as a traced bool scalar. ``callback`` runs on an XLA runtime
    thread with the GIL held; it must return something ``np.asarray(..., dtype=bool)`` makes a scalar of. It is
    part of the primitive's parameters, so it must be hashable (an object compared by identity is)."""
    return _primitive().bind(*operands, callback=callback)[0]
