"""Several processes, one mesh: JAX's multi-controller runtime, as the engine uses it (no Qt; JAX imported lazily).

After ``jax.distributed.initialize()`` (:mod:`app.core.parallel.join`) every process runs the same program on the
same global mesh, and each one holds only the shards of its own devices (JAX docs, "Introduction to
multi-controller JAX" and "Distributed arrays and automatic parallelization"). So an array is never
``device_put`` whole onto devices a process cannot address: each process builds its addressable shards from its
own host copy (:func:`place_global`, ``jax.make_array_from_callback``); the small inputs of a step (token ids,
positions, the PRNG key's data) are host values every process has the same of, which ``jax.jit`` takes as
replicated; what comes back (a token) is replicated and read from a local shard (:func:`replicated_value`).

Which modes run across processes: :data:`MODES_ACROSS_PROCESSES` (:func:`check_modes_across_processes` refuses
the others by name, before anything loads).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from app.core.errors import InvalidSettingsError
from app.core.mode_catalog import CATALOG, modes_across_processes

if TYPE_CHECKING:
    import jax
    from jax.sharding import Mesh, Sharding
    from jax.typing import ArrayLike

#: The modes that run across processes (the mode catalog's ``across_processes`` rows): every step is one jitted
#: SPMD program (jit-dynamic, jit-static), or the decode loop is (jit-loop, each process's host taking the tokens
#: from its own device's callback).
MODES_ACROSS_PROCESSES: tuple[str, ...] = modes_across_processes()
#: Why each other mode cannot (the catalog row's ``processes_note``): said by :func:`check_modes_across_processes`.
_WHY_NOT = {info.name: info.processes_note for info in CATALOG if info.processes_note}


def check_modes_across_processes(modes: list[str] | tuple[str, ...], processes: int) -> None:
    """Raise :class:`InvalidSettingsError` naming the first of ``modes`` that cannot run across ``processes``
    (> 1) processes, why, and the modes that can. Nothing is checked for one process."""
    if processes <= 1:
        return
    for mode in modes:
        if mode not in MODES_ACROSS_PROCESSES:
            why = _WHY_NOT.get(mode, "it does not run on a mesh")
            raise InvalidSettingsError(
                f"Mode {mode!r} cannot run across {processes} processes ({why}): use "
                f"{' or '.join(MODES_ACROSS_PROCESSES)}."
            )


def process_count() -> int:
    """``jax.process_count()``: 1 unless ``jax.distributed.initialize()`` joined several processes."""
    import jax

    return jax.process_count()


def process_index() -> int:
    import jax

    return jax.process_index()


def local_device(platform: str | None = None) -> Any:
    """This process's first device of ``platform`` (None: the default backend): where its single-device work
    goes (``jax.devices()[0]`` belongs to process 0, and another process cannot place anything on it)."""
    import jax

    return jax.local_devices(backend=platform)[0]


def place_global(value: ArrayLike, sharding: Sharding) -> Any:
    """``value`` (a host or single-device array, every process holding the same) placed with ``sharding``.

    On devices this process addresses alone, ``jax.device_put``. On a mesh across processes, each process makes
    only its own shards from its host copy (``jax.make_array_from_callback``: the callback gets each
    addressable shard's index into the global shape), so nothing crosses a host."""
    import jax
    import numpy as np

    if sharding.is_fully_addressable:
        return jax.device_put(value, sharding)
    host = np.asarray(value)
    return jax.make_array_from_callback(host.shape, sharding, lambda index: host[index])


def replicated_value(array: jax.Array) -> Any:
    """A replicated array's value as NumPy, read from this process's own copy (its first addressable shard),
    without a gather: on a mesh across processes ``np.asarray`` of the global array is refused for arrays that
    are not fully replicated, and costs a check for those that are."""
    import numpy as np

    if getattr(array, "is_fully_addressable", True):
        return np.asarray(array)
    if not array.is_fully_replicated:
        raise ValueError(f"Expected a replicated array, got sharding {array.sharding}.")
    return np.asarray(array.addressable_data(0))


def device_processes(mesh: Mesh) -> list[int]:
    """The process index of each device of ``mesh``, in the mesh's flat device order: the order of the
    logical device ids an SPMD program's replica groups name."""
    return [int(getattr(d, "process_index", 0)) for d in mesh.devices.flat]


def check_mesh_spans_processes(n_devices: int, processes: int, devices: int) -> None:
    """Across several processes the mesh must hold every device (each process then owns a part of every split
    weight, and reads its tokens from its own devices). Raise :class:`InvalidSettingsError` otherwise."""
    if processes > 1 and n_devices != devices:
        raise InvalidSettingsError(
            f"Across {processes} processes the mesh must span all {devices} devices they have (tp={devices}); "
            f"got {n_devices}. Give --mesh tp={devices} on every process."
        )


def mesh_label(spec_text: str, processes: int) -> str:
    """``tp=2`` on one process, ``tp=2 across 2 processes`` on several: what records, ``--json`` and
    the window's run names say."""
    return spec_text if processes <= 1 else f"{spec_text} across {processes} processes"
