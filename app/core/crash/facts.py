"""What a crash report says about the machine: versions, backend, ``XLA_FLAGS``. Read from package metadata
and the environment; JAX is asked for its backend only when it has already started one (nothing is imported,
nothing is initialised by writing a report)."""

from __future__ import annotations

import os
import platform
import sys
from importlib import metadata

#: (label, distribution names tried in order) of every version a report lists.
PACKAGES = (
    ("torchax-playground", ("torchax-playground", "torchax_playground")),
    ("jax", ("jax",)),
    ("jaxlib", ("jaxlib",)),
    ("torch", ("torch",)),
    ("torchax", ("torchax",)),
    ("transformers", ("transformers",)),
    ("PySide6", ("PySide6-Essentials", "PySide6")),
)


def versions() -> dict[str, str]:
    """``{"Python": "3.12.3", "torchax-playground": "0.1.0", "jax": "0.10.2", …}``; ``"not installed"`` for a
    package that is missing."""
    found = {"Python": platform.python_version()}
    for label, names in PACKAGES:
        found[label] = "not installed"
        for name in names:
            try:
                found[label] = metadata.version(name)
                break
            except metadata.PackageNotFoundError:
                continue
    return found


def backend() -> str:
    """JAX's default backend (``"cpu"``, ``"gpu"``, ``"tpu"``) if JAX has started one in this process, else
    ``"JAX not started"``; ``JAX_PLATFORMS`` is added when set."""
    wanted = os.environ.get("JAX_PLATFORMS", "")
    note = f" (JAX_PLATFORMS={wanted})" if wanted else ""
    bridge = sys.modules.get("jax._src.xla_bridge")
    if bridge is None or not getattr(bridge, "_backends", None):
        return "JAX not started" + note
    try:
        return str(sys.modules["jax"].default_backend()) + note
    except Exception as exc:  # noqa: BLE001 - a report is written whatever JAX's state
        return f"unknown ({type(exc).__name__})" + note


def facts_lines(backend_text: str | None = None) -> list[str]:
    """The report's "Versions" section, one ``name: value`` a line, then the OS, backend and ``XLA_FLAGS``."""
    lines = [f"{name}: {version}" for name, version in versions().items()]
    lines.append(f"OS: {platform.platform()}")
    lines.append(f"backend: {backend() if backend_text is None else backend_text}")
    lines.append(f"XLA_FLAGS: {os.environ.get('XLA_FLAGS', '') or '(not set)'}")
    return lines
