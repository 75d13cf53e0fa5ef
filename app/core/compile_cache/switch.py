"""One switch for both persistent compilation caches: JAX's (:mod:`app.core.compile_cache.xla`) in a
directory, Inductor's FX-graph / AOT-autograd caches (:mod:`app.core.compile_cache.inductor`) beside it.
The CLI's ``--persistent-cache`` and the window's cache toggle both call :func:`use_persistent_caches`."""

from __future__ import annotations

from pathlib import Path


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
    from app.core.compile_cache import inductor, xla

    used = xla.set_persistent_cache(directory)
    return used, inductor.set_inductor_cache(inductor_dir_for(used) if used else None)
