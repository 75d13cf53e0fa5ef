"""Where a run was recorded: package versions, platform, devices, CPU, XLA flags (no JAX or torch import).

Package versions come from ``importlib.metadata``; devices are read from JAX only when ``jax`` is already
imported (``sys.modules``), so recording a ``torch``-mode run or opening a session never starts JAX.
"""

from __future__ import annotations

import os
import platform
import sys
from importlib import metadata
from typing import Any

from app.core.backends import BACKENDS
from app.core.report.export import VERSIONED as PACKAGES  # the packages whose versions a session records


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def cpu_model() -> str | None:
    """The CPU's model name from ``/proc/cpuinfo`` (Linux), else ``platform.processor()``; None if unknown."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "Hardware") and value.strip():
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or None


def _devices() -> dict[str, Any]:
    """Platform, device kind and count of the JAX backend if JAX is already imported, else Nones."""
    jax = sys.modules.get("jax")
    if jax is None:
        return {"platform": None, "device_kind": None, "device_count": None, "process_count": None}
    try:
        devices = jax.devices()
        return {"platform": devices[0].platform, "device_kind": devices[0].device_kind,
                "device_count": len(devices), "process_count": jax.process_count()}
    except Exception:  # a backend that cannot answer leaves the fields empty
        return {"platform": None, "device_kind": None, "device_count": None, "process_count": None}


def environment() -> dict[str, Any]:
    """The recording machine, as JSON-ready data.

    Keys: ``packages`` (name → version or None, :data:`PACKAGES`), ``python``, ``os``, ``machine`` (CPU
    architecture), ``cpu_model``, ``cpu_count`` (logical cores), ``platform`` (JAX backend: ``"cpu"``,
    ``"gpu"``, ``"tpu"``; None when JAX was not imported), ``device_kind`` (``"cpu"``, ``"TPU v6e"``, …),
    ``device_count``, ``process_count`` and ``xla_flags`` (``$XLA_FLAGS`` or None).
    """
    return {
        "packages": {name: _version(name) for name in PACKAGES},
        "python": platform.python_version(),
        "os": platform.platform(),
        "machine": platform.machine(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        **_devices(),
        "xla_flags": os.environ.get("XLA_FLAGS") or None,
    }


def machine_name(env: dict[str, Any]) -> str:
    """Short device description: ``"CPU × 1"``, ``"TPU v6e × 8"``, ``"NVIDIA H100 × 2"``; without JAX
    devices (a ``torch`` run) the CPU's core count: ``"CPU (2 cores)"``."""
    kind, count = env.get("device_kind"), env.get("device_count")
    if kind is None or count is None:
        return f"CPU ({env.get('cpu_count') or '?'} cores)"
    # the backend row's name for its device (the CPU's), by the platform or a kind that is a platform's name
    names = [row.device_name for key in (env.get("platform"), str(kind).lower())
             if (row := BACKENDS.get(key or "")) is not None and row.device_name]
    return f"{names[0] if names else kind} × {count}"


def machine_label(env: dict[str, Any]) -> str:
    """The machine and JAX version, used to group and colour runs by where they ran:
    ``"CPU × 1 · jax 0.10.2"`` (``"jax –"`` when JAX was not installed)."""
    jax_version = (env.get("packages") or {}).get("jax") or "–"
    return f"{machine_name(env)} · jax {jax_version}"


def recorded_label(env: dict[str, Any], recorded_at: str) -> str:
    """One line for the window and the CLI: ``"recorded on CPU × 1 · jax 0.10.2 · 2026-11-25"``
    (``recorded_at`` an ISO 8601 timestamp; its date part is shown)."""
    return f"recorded on {machine_label(env)} · {recorded_at[:10]}"
