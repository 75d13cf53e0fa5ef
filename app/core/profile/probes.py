"""How the roofline's figures are measured on this machine: the CPU's memory read bandwidth, a device's memory
bandwidth and its matrix-multiply throughput, each the best of a few timed runs and memoised per process. A
backend row names its probes (``bandwidth_probe``, ``peak_flops_probe`` of :mod:`app.core.backends`) by their keys
in :data:`PROBES`. No Qt; JAX imported only to measure.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from app.core.backends import CPU

if TYPE_CHECKING:
    import jax

_bandwidth_cache: dict[tuple[int, int], float] = {}
#: Columns of the read-bandwidth probe's matrix: a 16 KiB row, a decode step's matrix-vector shape.
MATVEC_COLS = 4096


def best_seconds(work: Callable[[], object], repeats: int) -> float:
    """The shortest of ``repeats`` timed runs of ``work()`` in seconds (``time.perf_counter``): the figure every
    bandwidth and throughput measurement here divides by."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - t0)
    return best


def read_bandwidth_gbs(n_bytes: int = 1 << 30, repeats: int = 3, cached: bool = True) -> float:
    """Sustained memory read bandwidth in GB/s (1e9 bytes/s): the faster of two reads of one ``n_bytes`` buffer of
    float32 (1 GiB by default: larger than this machine's 300 MiB L3, whose hits would read faster than memory), each
    the best of ``repeats`` runs: NumPy sums split across one thread per core (NumPy releases the GIL in large
    reductions), and an XLA matrix-vector product of a ``(n_bytes / 16 KiB, 4096)`` matrix (the kernel a decode
    step spends its time in, on XLA's own threads). Two kernels, since either can be bound by the CPU rather than
    the memory: on a slow day here NumPy's sum read 13 GB/s while the product read 30 (27 Nov). Both read the same
    buffer — XLA's matrix, which NumPy views without a copy on the CPU — so a probe touches 1 GiB of fresh memory,
    not 2: a process's first probe took 0.8 s instead of 2.5 s (7 Dec; most of it was the page faults of filling
    new memory, on the model load's path to ready). Memoised per process unless ``cached`` is False (this machine's
    figure moves from minute to minute; compare within one run)."""
    key = (n_bytes, repeats)
    if cached and key in _bandwidth_cache:
        return _bandwidth_cache[key]
    matrix = _probe_matrix(n_bytes)
    try:
        best = _numpy_sum_seconds(matrix, repeats, os.cpu_count() or 1)
        best = min(best, _matvec_seconds(matrix, repeats))
    finally:
        matrix.delete()
    _bandwidth_cache[key] = n_bytes / best / 1e9
    return _bandwidth_cache[key]


def _probe_matrix(n_bytes: int) -> jax.Array:
    """A ``(n_bytes / 16 KiB, 4096)`` float32 ``jax.Array`` of ones on JAX's CPU device (``n_bytes`` rounded down
    to whole rows, at least one): the buffer both probes read."""
    import jax
    import jax.numpy as jnp

    with jax.default_device(jax.devices(CPU.platform)[0]):
        return jnp.ones((max(1, n_bytes // 4 // MATVEC_COLS), MATVEC_COLS), dtype=jnp.float32).block_until_ready()


def _numpy_sum_seconds(matrix: jax.Array, repeats: int, workers: int) -> float:
    """The best of ``repeats`` NumPy sums of ``matrix`` (viewed in place: ``np.asarray`` of a CPU ``jax.Array``)
    split into ``workers`` chunks summed at once."""
    import numpy as np

    chunks = np.array_split(np.asarray(matrix).reshape(-1), workers)
    with ThreadPoolExecutor(workers) as pool:
        return best_seconds(lambda: list(pool.map(np.sum, chunks)), repeats)


def _matvec_seconds(matrix: jax.Array, repeats: int) -> float:
    """The best of ``repeats`` jitted ``matrix @ vector`` on JAX's CPU device, after one warm-up run (the
    compile); its bytes read are the matrix's (the vector is 16 KiB)."""
    import jax
    import jax.numpy as jnp

    with jax.default_device(jax.devices(CPU.platform)[0]):
        vector = jnp.ones((matrix.shape[1],), dtype=jnp.float32)
    matvec = jax.jit(jnp.matmul)
    matvec(matrix, vector).block_until_ready()
    return best_seconds(lambda: matvec(matrix, vector).block_until_ready(), repeats)


_device_bandwidth_cache: dict[tuple[str, int, int], float] = {}


def read_device_bandwidth_gbs(device: object = None, n_bytes: int = 1 << 30, repeats: int = 5,
                              cached: bool = True) -> float:
    """A device's memory bandwidth in GB/s (1e9 bytes/s), counted as bytes read plus bytes written: the best of
    ``repeats`` timed runs of a jitted ``x + 1`` over a float32 array of ``n_bytes`` on ``device`` (a
    ``jax.Device``; JAX's default device when None), after one warm-up run. Measured this way an H100 80GB
    gives about 3.0 TB/s (CONTEXT: device copy 3.03 TB/s). Memoised per device and size unless ``cached`` is
    False. The figure a device profile's roofline uses (the CPU's is :func:`read_bandwidth_gbs`)."""

    import jax
    import jax.numpy as jnp

    device = device or jax.devices()[0]
    key = (str(device), n_bytes, repeats)
    if cached and key in _device_bandwidth_cache:
        return _device_bandwidth_cache[key]
    x = jax.device_put(jnp.ones(n_bytes // 4, dtype=jnp.float32), device)
    add_one = jax.jit(lambda a: a + 1.0)
    add_one(x).block_until_ready()  # warm-up: the compile
    best = best_seconds(lambda: add_one(x).block_until_ready(), repeats)
    _device_bandwidth_cache[key] = 2 * (n_bytes // 4) * 4 / best / 1e9
    return _device_bandwidth_cache[key]


_device_peak_cache: dict[tuple[str, int, str], float] = {}


def read_device_peak_tflops(device: object = None, n: int = 8192, dtype: str = "bfloat16", repeats: int = 5,
                            cached: bool = True) -> float:
    """A device's matrix-multiply throughput in TFLOP/s (1e12 FLOP/s): the best of ``repeats`` timed runs of a
    jitted ``(n, n) @ (n, n)`` in ``dtype`` on ``device`` (a ``jax.Device``; JAX's default when None), counted as
    ``2 n³`` FLOPs (the usual GEMM count), after one warm-up run. The measured ceiling a device profile's
    roofline compares each op's GFLOP/s with (datasheet peaks are higher: an H100 SXM lists 989 dense bf16
    TFLOP/s). Memoised per device, size and dtype unless ``cached`` is False."""

    import jax
    import jax.numpy as jnp

    device = device or jax.devices()[0]
    key = (str(device), n, dtype)
    if cached and key in _device_peak_cache:
        return _device_peak_cache[key]
    a = jax.device_put(jnp.ones((n, n), dtype=dtype), device)
    matmul = jax.jit(lambda x: x @ x)
    matmul(a).block_until_ready()  # warm-up: the compile
    best = best_seconds(lambda: matmul(a).block_until_ready(), repeats)
    _device_peak_cache[key] = 2.0 * n**3 / best / 1e12
    return _device_peak_cache[key]


#: The roofline's measurements by the names backend rows give them (``bandwidth_probe``, ``peak_flops_probe`` of
#: :mod:`app.core.backends`): what a progress line says is measured, and how, of a ``jax.Device``.
PROBES: dict[str, tuple[str, Callable[[Any], float]]] = {
    "host read": ("the memory read bandwidth", lambda device: read_bandwidth_gbs()),
    "device copy": ("the memory bandwidth of {device}", lambda device: read_device_bandwidth_gbs(device)),
    "device matmul": ("the matmul throughput of {device}", lambda device: read_device_peak_tflops(device)),
}


def measure(probe: str, device: object, report: Callable[[str], None]) -> float | None:
    """The figure ``probe`` (a key of :data:`PROBES`, named by the device's backend row) of ``device``, after a
    progress line through ``report``; None for no probe ("")."""
    if not probe:
        return None
    what, run = PROBES[probe]
    report(f"measuring {what.format(device=device)}")
    return run(device)
