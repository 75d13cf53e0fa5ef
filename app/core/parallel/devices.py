"""The JAX devices this process sees, as plain data for views (no Qt; JAX imported lazily).

Call :func:`list_devices` on the thread that owns JAX (the GUI's compute thread, or a script): the first
call initialises JAX's backend, so on a CPU the simulated device count
(:func:`app.core.parallel.mesh.simulate_cpu_devices`) must be set before it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class DeviceInfo:
    """One device. ``key`` (``"cpu:0"``) matches the keys of :func:`app.core.parallel.mesh.bytes_per_device`.

    ``memory_bytes`` / ``memory_in_use``: the device's memory limit and bytes in use from
    ``device.memory_stats()``, or None when the backend does not report them (XLA:CPU)."""

    id: int
    platform: str
    kind: str
    process_index: int = 0
    memory_bytes: int | None = None
    memory_in_use: int | None = None

    @property
    def key(self) -> str:
        return f"{self.platform}:{self.id}"


class _MemoryStats(Protocol):
    """What :func:`_memory` reads of a ``jax.Device``: its allocator's statistics (None or ``{}`` when it has none)."""

    def memory_stats(self) -> dict[str, int] | None: ...


def _memory(device: _MemoryStats) -> tuple[int | None, int | None]:
    try:
        stats = device.memory_stats()
    except Exception:  # noqa: BLE001 — some backends raise instead of returning None
        return None, None
    if not stats:
        return None, None
    limit = stats.get("bytes_limit") or stats.get("bytes_reservable_limit")
    used = stats.get("bytes_in_use")
    return (int(limit) if limit else None), (int(used) if used is not None else None)


def list_devices(platform: str | None = None) -> list[DeviceInfo]:
    """Every device of ``jax.devices(platform)`` (all processes; None: JAX's default backend), in id order."""
    import jax

    out = []
    for d in jax.devices(platform):
        limit, used = _memory(d)
        out.append(
            DeviceInfo(
                int(d.id),
                str(d.platform),
                str(getattr(d, "device_kind", d.platform)),
                int(getattr(d, "process_index", 0)),
                limit,
                used,
            )
        )
    return sorted(out, key=lambda info: info.id)
