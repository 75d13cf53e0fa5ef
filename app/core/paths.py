"""Where the app keeps the user's files: one config directory and one cache directory, each overridable by an
environment variable (tests, benchmarks and CI point both at scratch folders, never at the user's own).

- config: ``$TORCHAX_PLAYGROUND_CONFIG_DIR``, else ``platformdirs.user_config_dir("torchax-playground")``
  (``~/.config/torchax-playground`` on Linux): the window's settings (``gui.json``), the Code workspace's draft.
- cache: ``$TORCHAX_PLAYGROUND_CACHE_DIR``, else ``platformdirs.user_cache_dir("torchax-playground")``
  (``~/.cache/torchax-playground``): converted GGUF models (``gguf/``), JAX's persistent compilation cache
  (``jax-compilation-cache/``), Inductor's caches (``inductor/``).
No Qt, no JAX."""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "torchax-playground"
CONFIG_ENV = "TORCHAX_PLAYGROUND_CONFIG_DIR"
CACHE_ENV = "TORCHAX_PLAYGROUND_CACHE_DIR"


def config_dir() -> Path:
    """``$TORCHAX_PLAYGROUND_CONFIG_DIR`` if set, else the platform's user config dir for the app."""
    override = os.environ.get(CONFIG_ENV)
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def cache_dir() -> Path:
    """``$TORCHAX_PLAYGROUND_CACHE_DIR`` if set, else the platform's user cache dir for the app."""
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))
