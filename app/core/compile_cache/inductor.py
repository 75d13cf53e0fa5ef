"""Inductor's on-disk caches for the ``torch-compile`` mode: turn on/off, locate, size, clear.

Mirrors :mod:`app.core.compile_cache.xla` (JAX's persistent cache). Everything Inductor writes lives under
one directory, ``TORCHINDUCTOR_CACHE_DIR``, read on every use by ``cache_dir()`` in
torch/_inductor/runtime/cache_dir_utils.py (default ``/tmp/torchinductor_<user>``). Under it:

- ``fxgraph/`` — the FX graph cache (``torch._inductor.config.fx_graph_cache``): one entry per
  post-AOT-autograd graph + Inductor config, holding the generated output code; a hit skips lowering,
  code generation and C++ compilation (``counters["inductor"]["fxgraph_cache_hit"]``).
- ``aotautograd/`` — the AOT autograd cache (``torch._functorch.config.enable_autograd_cache``): a hit
  also skips AOT autograd's tracing and points at the FX graph cache entry
  (``counters["aot_autograd"]["autograd_cache_hit"]``).
- two-letter hash folders — the output code modules (``*.py``) and the C++ kernels (``*.cpp`` /
  ``*.so``), keyed by source hash (torch/_inductor/codecache.py ``CppCodeCache``): a kernel whose source
  was built before is loaded, not recompiled, even when the FX graph cache is off.

Dynamo's own cache (the guarded bytecode on each code object) is in memory only: a new process always
re-traces with Dynamo, and the disk caches serve the Inductor part.

Turning the caches off sets ``torch.compiler.config.force_disable_caches`` (torch/compiler/config.py),
which bypasses the FX graph and AOT autograd caches and makes ``compile_fx_inner`` run in a fresh
temporary cache folder (``with_fresh_cache_if_config`` in torch/_inductor/compile_fx.py), so C++ kernels
are rebuilt too: every compile is cold. Those folders are not deleted by PyTorch; here they go to a
per-process temporary directory removed at exit.

``torch.compiler.save_cache_artifacts()`` / ``load_cache_artifacts(blob)`` (torch/compiler/__init__.py)
serialise the FX graph, AOT autograd (and on GPU Triton / autotune) entries created in this process into
one bytes blob and hot-load them into the caches of another process or machine. The directory cache
above already persists across processes on one machine, so this module does not use them.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

from app.core.compile_cache.xla import clear_disk_cache, disk_cache_size
from app.core.paths import cache_dir

_ENV = "TORCHINDUCTOR_CACHE_DIR"
_state = {"configured": False, "scratch": None}


def default_inductor_cache_dir() -> Path:
    """``<the app's cache dir>/inductor`` (:func:`app.core.paths.cache_dir`)."""
    return cache_dir() / "inductor"


def _clear_in_process_code_caches() -> None:
    """``torch._inductor.utils.clear_caches()``: drop the lru caches that remember the cache directory and
    loaded code (what ``temporary_cache_dir`` in torch/_inductor/runtime/cache_dir_utils.py does)."""
    from torch._inductor.utils import clear_caches

    clear_caches()


def set_inductor_cache(directory: str | Path | None) -> Path | None:
    """Use ``directory`` (created if missing) for Inductor's caches with the FX graph and AOT autograd
    caches on, or turn every Inductor cache off with None. Takes effect for the next compile in this
    process (graphs already compiled stay in Dynamo's in-memory cache: see
    :func:`app.core.modes.torch_compile.clear_torch_compile`). Returns the directory in use, None when off.
    Call it on the thread that compiles (the app's compute thread): a torch compiler config value set on a
    thread is seen by that thread only, the main thread included (measured with torch 2.13)."""
    import torch
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config

    _state["configured"] = True
    if directory is None:
        torch.compiler.config.force_disable_caches = True
        inductor_config.fx_graph_cache = False
        functorch_config.enable_autograd_cache = False
        os.environ[_ENV] = _scratch_dir()
        _clear_in_process_code_caches()
        return None
    path = Path(directory).expanduser().resolve()
    path.mkdir(parents=True, exist_ok=True)
    torch.compiler.config.force_disable_caches = False
    inductor_config.fx_graph_cache = True
    functorch_config.enable_autograd_cache = True
    os.environ[_ENV] = str(path)
    _clear_in_process_code_caches()
    return path


def ensure_inductor_cache() -> Path | None:
    """Apply the default directory once, unless the app already called :func:`set_inductor_cache` or the
    user set ``TORCHINDUCTOR_CACHE_DIR``. Called by the ``torch-compile`` runner before its first compile."""
    if not _state["configured"]:
        _state["configured"] = True
        if _ENV not in os.environ:
            set_inductor_cache(default_inductor_cache_dir())
    return inductor_cache_dir()


def inductor_cache_dir() -> Path | None:
    """The directory Inductor's caches use, or None when they are off (``force_disable_caches``)."""
    import torch
    from torch._inductor.runtime.cache_dir_utils import cache_dir

    if torch.compiler.config.force_disable_caches:
        return None
    return Path(cache_dir())


def inductor_cache_size(directory: str | Path) -> tuple[int, int]:
    """``(n_files, n_bytes)`` stored under ``directory`` (0, 0 if it does not exist)."""
    return disk_cache_size(directory)


def clear_inductor_disk_cache(directory: str | Path) -> int:
    """Delete every entry under ``directory`` (the directory itself stays) and Inductor's in-process code
    caches, so the next cold compile really rebuilds. Returns the bytes freed. Graphs already compiled in
    memory keep running; clear them with :func:`app.core.modes.torch_compile.clear_torch_compile`."""
    freed = clear_disk_cache(directory)
    _clear_in_process_code_caches()
    return freed


def _scratch_dir() -> str:
    """A per-process temporary directory for Inductor's throw-away folders while caches are off."""
    if _state["scratch"] is None:
        scratch = tempfile.mkdtemp(prefix="torchax-playground-inductor-")
        atexit.register(shutil.rmtree, scratch, True)
        _state["scratch"] = scratch
    return str(_state["scratch"])
