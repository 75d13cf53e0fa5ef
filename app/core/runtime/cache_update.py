"""A KV-cache write at one position as ``jax.lax.dynamic_update_slice``, for torchax (issue 38).

transformers' static cache writes a decode step's key and value with ``Tensor.index_copy_`` at one position
(``transformers/cache_utils.py``, ``StaticLayer.update``); torch decomposes it into ``index_put_``, which torchax
lowers to ``x.at[index].set(values)``: an XLA ``scatter``. XLA:CPU turns that scatter into a bounds-checked
``select`` over a ``dynamic-update-slice`` that also reads the old row, and copy insertion then copies every
cache buffer twice per step to keep the read and the write apart (measured in the optimized HLO of SmolLM2's
decode step: 120 copies of ``f32[1,3,L,64]``, 2 per key and value buffer, about 2 × the cache's bytes per
step: at an 8,192-position cache that is most of the step). A write of one index along one axis is exactly a
``dynamic_update_slice`` at that index, which XLA updates in place in the donated buffer: no copy.

:func:`index_put` takes that case — no accumulation, one integer index tensor of one element, every index
before it ``None`` (whole axes), values of the written slice's shape — and hands every other case to torchax's
own lowering unchanged. The one difference is an out-of-range index: torch raises, a scatter drops the write,
``dynamic_update_slice`` clamps it into range; a cache position is never out of range (the engine bounds
decoding by the cache's length). Negative indices count from the end, as torch's. Checked against torchax
0.0.14.dev20261026 and jax 0.12.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import jax  # noqa: TID253 - a heavy module: its users import it inside functions
import jax.numpy as jnp  # noqa: TID253 - a heavy module: its users import it inside functions

from app.core.jax_private import exclude_from_tracebacks

if TYPE_CHECKING:
    import torch
    from torchax.tensor import Environment

#: torchax's own ``aten::index_put`` lowering: ``(x, indexes, values, accumulate) -> x`` with the write.
IndexPut = Callable[[jax.Array, Sequence[jax.Array | None], jax.Array, bool], jax.Array]

_REGISTERED: set[int] = set()


def one_position(x: jax.Array, indexes: Sequence[jax.Array | None], values: jax.Array) -> tuple[int, jax.Array] | None:
    """``(axis, index)`` when ``x.at[indexes].set(values)`` writes one position along one axis (see the module
    doc), else None."""
    indexes = list(indexes)
    present = [i for i, ix in enumerate(indexes) if ix is not None]
    if len(present) != 1:
        return None
    axis = present[0]
    ix = indexes[axis]
    if ix is None or not hasattr(ix, "dtype") or not jnp.issubdtype(ix.dtype, jnp.integer) or ix.size != 1:
        return None
    if any(i is not None for i in indexes[axis + 1:]) or values.ndim != x.ndim:
        return None
    if tuple(values.shape) != tuple(x.shape[:axis]) + (1,) + tuple(x.shape[axis + 1:]):
        return None
    index = jnp.reshape(ix, ()).astype(jnp.int32)
    return axis, jnp.where(index < 0, index + x.shape[axis], index)


def index_put(x: jax.Array, indexes: Sequence[jax.Array | None], values: jax.Array, accumulate: bool = False,
              fallback: IndexPut | None = None) -> jax.Array:
    """``aten::index_put``: one position along one axis as a ``dynamic_update_slice``, else ``fallback``
    (torchax's lowering)."""
    hit = None if accumulate else one_position(x, indexes, values)
    if hit is None:
        if fallback is None:
            raise ValueError("index_put: no fallback lowering for this case")
        return fallback(x, indexes, values, accumulate)
    axis, index = hit
    # the barrier keeps XLA from fusing the update into each reader (it copied the whole cache buffer per reader)
    return jax.lax.optimization_barrier(jax.lax.dynamic_update_slice_in_dim(x, values.astype(x.dtype), index, axis))


def register(env: Environment | None = None) -> None:
    """Register :func:`index_put` as ``aten::index_put`` in torchax environment ``env`` (default:
    ``torchax.default_env()``) through its public ``override_op_definition``, falling back to torchax's own
    lowering for every other case. Idempotent. Like torchax's own lowerings, this file is excluded from
    JAX's source attribution, so the write is mapped to the model's line (the cache's ``index_copy_``)."""
    import torch
    import torchax
    from torchax.ops import jaten

    exclude_from_tracebacks(__file__)

    env = env if env is not None else torchax.default_env()
    if id(env) in _REGISTERED:
        return
    fallback = jaten._aten_index_put  # pyright: ignore[reportPrivateUsage]  # torchax's own lowering, kept

    def impl(x: torch.Tensor, indexes: Sequence[torch.Tensor | None], values: torch.Tensor, accumulate: bool = False) -> Any:
        jx, jindexes, jvalues = env.t2j_iso((x, list(indexes), values))
        return env.j2t_iso(index_put(jx, jindexes, jvalues, accumulate, fallback))

    impl.__name__ = impl.__qualname__ = "index_put"
    env.override_op_definition(torch.ops.aten.index_put.default, impl)
    _REGISTERED.add(id(env))
