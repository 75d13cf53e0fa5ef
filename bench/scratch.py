"""Benchmarks never read or write the user's own settings and caches: :func:`use_own_dirs` points the app's config
and cache folders (:mod:`app.core.paths`) at ``<checkout>/.cache/bench/`` (ignored by git; kept between runs so a
warm-cache figure stays warm) unless the caller already chose folders (``TORCHAX_PLAYGROUND_CONFIG_DIR`` /
``TORCHAX_PLAYGROUND_CACHE_DIR``, as CI does). Child processes a benchmark starts inherit the choice."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / ".cache" / "bench"


def use_own_dirs() -> Path:
    """Set the two environment variables (when unset) and return the benchmark's scratch root."""
    os.environ.setdefault("TORCHAX_PLAYGROUND_CONFIG_DIR", str(ROOT / "config"))
    os.environ.setdefault("TORCHAX_PLAYGROUND_CACHE_DIR", str(ROOT / "cache"))
    return ROOT
