"""A host callback inside a program that runs on a device mesh, reaching every process's host once per call.

Under ``jax.jit`` with automatic sharding a host callback gets a MAXIMAL sharding on the mesh's first device
(``jax._src.callback._callback_op_sharding``): on a mesh across processes only process 0's host would be called,
and the others would never see jit-loop's tokens. Inside ``jax.shard_map`` with every mesh axis manual the
callback runs on every device (same source: "the JAX program has per-device semantics, so we run the callback on
each device"). :func:`mesh_host_call` wraps a callback that way, lets it act on one device per process (the
process's first device of the mesh; the others return False at once), and combines the bool it returns over the
mesh with ``pmax``: a Stop asked on any process ends the loop on every device at the same iteration, so no
device waits in a collective for a peer that left.

Measured on this 2-core CPU (jax 0.12, Gloo): the ordered callback inside ``shard_map`` inside a
``while_loop`` keeps its program order on each host, across 2 processes and on 2 simulated devices of one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jax
    import numpy as np
    from jax.sharding import Mesh


class _OnePerProcess:
    """The callback of one device per process: ``(device_index, *operands) -> bool``. Hashed by identity (a
    primitive's parameter)."""

    def __init__(self, callback: Callable[..., Any], leaders: frozenset[int]) -> None:
        self.callback = callback
        self.leaders = leaders

    def __call__(self, index: np.ndarray, *operands: np.ndarray) -> Any:
        import numpy as np

        if int(index) not in self.leaders:
            return np.asarray(False)
        return self.callback(*operands)


def leader_indices(mesh: Mesh) -> frozenset[int]:
    """The flat index in ``mesh`` of each process's first device of it."""
    first: dict[int, int] = {}
    for i, device in enumerate(mesh.devices.flat):
        first.setdefault(int(getattr(device, "process_index", 0)), i)
    return frozenset(first.values())


def mesh_host_call(mesh: Mesh, to_host: Callable[..., Any]) -> Callable[..., Any]:
    """``call(callback, *operands) -> traced bool`` for use inside a function jitted on ``mesh``: ``to_host(cb,
    *operands)`` (a host-callback primitive returning a bool scalar, e.g.
    :func:`app.core.runtime.host_token.token_to_host`) run on every device, ``callback(*operands)`` on one device
    per process, the results OR-ed over the mesh. ``operands`` are replicated scalars or arrays."""
    import jax
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec

    axes = tuple(mesh.axis_names)
    leaders = leader_indices(mesh)

    def call(callback: Callable[..., Any], *operands: jax.Array) -> Any:
        gate = _OnePerProcess(callback, leaders)

        def per_device(*ops: jax.Array) -> Any:
            stop = to_host(gate, jax.lax.axis_index(axes), *ops)
            return jax.lax.pmax(stop.astype(jnp.int32), axes) > 0

        specs = tuple(PartitionSpec() for _ in operands)
        return jax.shard_map(per_device, mesh=mesh, in_specs=specs, out_specs=PartitionSpec(),
                             check_vma=False)(*operands)

    return call
