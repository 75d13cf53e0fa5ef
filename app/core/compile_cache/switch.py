"""One switch for both persistent compilation caches: JAX's (:mod:`app.core.compile_cache.xla`) in a
directory, Inductor's FX-graph / AOT-autograd caches (:mod:`app.core.compile_cache.inductor`) beside it.
The CLI's ``--persistent-cache`` and the window's cache toggle both call :func:`use_persistent_caches`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from app.core.compile_cache import inductor, xla
from app.core.compile_cache import inductor as ic
from app.core.compile_cache import xla as cc
from app.core.errors import PlaygroundError
from app.core.units import nbytes


def inductor_dir_for(jax_dir: str | Path) -> Path:
    """Where Inductor's caches go beside JAX's persistent cache in ``jax_dir``: the sibling ``inductor``
    folder of the default ``…/jax-compilation-cache``, else ``<jax_dir>-inductor``."""
    path = Path(jax_dir)
    if path.name == "jax-compilation-cache":
        return path.parent / "inductor"
    return path.parent / f"{path.name}-inductor"


def use_persistent_caches(directory: str | Path | None) -> tuple[Path | None, Path | None]:
    """Turn both persistent caches on in ``directory`` (JAX's there, Inductor's beside it) or off (None).
    Returns ``(jax_dir, inductor_dir)`` in use, None for a cache that is off. Call it on the thread that
    compiles (torch's compiler config is thread-local: :func:`app.core.compile_cache.inductor.set_inductor_cache`)."""
    used = xla.set_persistent_cache(directory)
    return used, inductor.set_inductor_cache(inductor_dir_for(used) if used else None)


def cache_action(action: str, directory: str, clear_compiled: Callable[[], None] | None = None) -> str:
    """Do one of the window's cache actions on both compilers' caches and say what it did: ``persistent_on`` /
    ``persistent_off`` (in ``directory``), ``clear_memory`` (``clear_compiled``: the engine's compiled steps,
    else JAX's in-memory caches), ``clear_disk`` (JAX's and Inductor's files under ``directory``), ``refresh``
    (nothing: the caller measures). Raises :class:`app.core.errors.PlaygroundError` for another action."""
    if action in ("persistent_on", "persistent_off"):
        used, inductor_used = use_persistent_caches(directory if action == "persistent_on" else None)
        return f"Persistent caches on: {used} (Inductor: {inductor_used})" if used else (
            "Persistent caches off: every compile is cold.")
    if action == "clear_memory":
        clear_compiled() if clear_compiled is not None else cc.clear_in_memory_caches()
        return "In-memory caches cleared: the next run compiles again."
    if action == "clear_disk":
        freed = cc.clear_disk_cache(directory) if directory else 0
        if directory and inductor_dir_for(directory).is_dir():
            freed += ic.clear_inductor_disk_cache(inductor_dir_for(directory))
        return f"Disk caches cleared: {nbytes(freed)} freed."
    if action == "refresh":
        return ""
    raise PlaygroundError(f"Unknown cache action {action!r}.")
