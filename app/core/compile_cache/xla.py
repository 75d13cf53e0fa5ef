"""JAX's persistent compilation cache and the in-memory caches: turn on/off, locate, clear.

On CPU the persistent cache stores nothing with the default ``jax_persistent_cache_min_compile_time_secs``
of 1.0 s (our compiles are shorter), so it is set to 0 (https://docs.jax.dev/en/latest/persistent_compilation_cache.html; measured here: first decode call 1.1 s → 0.47 s
from a warm disk cache in a new process). A compile served from disk fires the
``/jax/compilation_cache/cache_hits`` monitoring event, which :mod:`app.core.runtime.compiled_step` records as
``CallRecord.persistent_cache_hit``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from app.core.jax_private import reset_compilation_cache
from app.core.paths import cache_dir


def default_cache_dir() -> Path:
    """``<the app's cache dir>/jax-compilation-cache`` (:func:`app.core.paths.cache_dir`)."""
    return cache_dir() / "jax-compilation-cache"


def set_persistent_cache(path: str | Path | None) -> Path | None:
    """Use ``path`` as JAX's persistent compilation cache (created if missing), or turn it off with None.

    Takes effect for the next compile in this process. Returns the directory in use.
    """
    import jax

    if path is None:
        jax.config.update("jax_compilation_cache_dir", None)
        reset_compilation_cache()
        return None
    directory = Path(path).expanduser().resolve()
    directory.mkdir(parents=True, exist_ok=True)
    jax.config.update("jax_compilation_cache_dir", str(directory))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    reset_compilation_cache()
    return directory


def persistent_cache_dir() -> Path | None:
    """The directory in use, or None when the persistent cache is off."""
    import jax

    value = jax.config.jax_compilation_cache_dir
    return Path(value) if value else None


def disk_cache_size(path: str | Path) -> tuple[int, int]:
    """``(n_files, n_bytes)`` stored under ``path`` (0, 0 if it does not exist)."""
    root = Path(path)
    if not root.is_dir():
        return 0, 0
    files = [p for p in root.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def clear_disk_cache(path: str | Path) -> int:
    """Delete every entry under ``path`` (the directory itself stays). Returns the bytes freed."""
    root = Path(path)
    _, size = disk_cache_size(root)
    if root.is_dir():
        for child in root.iterdir():
            shutil.rmtree(child) if child.is_dir() else child.unlink()
    return size


def clear_in_memory_caches() -> None:
    """``jax.clear_caches()``: drop JAX's in-memory tracing and executable caches (engines also need
    ``Engine.clear_compiled()`` for their own executables)."""
    import jax

    jax.clear_caches()
