"""Where the app keeps the user's files: one config directory and one cache directory, each overridable by an
environment variable (tests, benchmarks and CI point both at scratch folders, never at the user's own).

- config: ``$TORCHAX_PLAYGROUND_CONFIG_DIR``, else ``platformdirs.user_config_dir("torchax-playground")``
  (``~/.config/torchax-playground`` on Linux): the window's settings (``gui.json``), the Code workspace's draft.
- cache: ``$TORCHAX_PLAYGROUND_CACHE_DIR``, else ``platformdirs.user_cache_dir("torchax-playground")``
  (``~/.cache/torchax-playground``): converted GGUF models (``gguf/``), JAX's persistent compilation cache
  (``jax-compilation-cache/``), Inductor's caches (``inductor/``).

And where the app's own read-only data is (:func:`assets_dir`, :func:`asset`, :func:`examples_dir`): in a
checkout, ``assets/`` beside ``app/``; installed from a wheel (everything under the one package
``torchax_playground``: tools/package_build.py), ``importlib.resources.files("torchax_playground") / "assets"``.
No Qt, no JAX."""

from __future__ import annotations

import atexit
import contextlib
import importlib.resources
import os
from importlib.resources.abc import Traversable
from pathlib import Path

import platformdirs

APP_NAME = "torchax-playground"
CONFIG_ENV = "TORCHAX_PLAYGROUND_CONFIG_DIR"
CACHE_ENV = "TORCHAX_PLAYGROUND_CACHE_DIR"
#: The import package a wheel installs the app under (``torchax_playground.app``, ``torchax_playground.widgets``,
#: ``torchax_playground/assets``); in a checkout ``app`` and ``widgets`` are top-level.
DIST_PACKAGE = "torchax_playground"
#: Resources extracted to real files for the process's life (only when the package is not on a file system,
#: e.g. imported from a zip): closed at exit.
_extracted = contextlib.ExitStack()
atexit.register(_extracted.close)


def config_dir() -> Path:
    """``$TORCHAX_PLAYGROUND_CONFIG_DIR`` if set, else the platform's user config dir for the app."""
    override = os.environ.get(CONFIG_ENV)
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def cache_dir() -> Path:
    """``$TORCHAX_PLAYGROUND_CACHE_DIR`` if set, else the platform's user cache dir for the app."""
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))


def installed() -> bool:
    """True for the copy installed from a wheel (this module is ``torchax_playground.app.core.paths``), False
    in a checkout (``app.core.paths``)."""
    return __name__.split(".", 1)[0] == DIST_PACKAGE


def package_root() -> Path:
    """The folder that holds ``app/`` and ``widgets/``: the checkout's root, or the installed
    ``…/site-packages/torchax_playground``."""
    return Path(__file__).resolve().parents[2]


def _as_path(resource: Traversable) -> Path:
    """A real path for ``resource`` (itself when the package is on a file system, else a copy kept until exit)."""
    if isinstance(resource, Path):
        return resource
    return _extracted.enter_context(importlib.resources.as_file(resource))


def assets_dir() -> Path:
    """The app's data folder (built-in model, style sheet, example prompts, icons): ``assets/`` in a checkout,
    ``importlib.resources.files("torchax_playground") / "assets"`` when installed."""
    if installed():
        return _as_path(importlib.resources.files(DIST_PACKAGE) / "assets")
    return package_root() / "assets"


def asset(*parts: str) -> Path:
    """``assets_dir() / parts…``, e.g. ``asset("icons", "torchax-playground.svg")`` (not checked to exist)."""
    return assets_dir().joinpath(*parts)


def examples_dir() -> Path:
    """The examples gallery's folder, the package ``app.examples`` (``importlib.resources``)."""
    return _as_path(importlib.resources.files("app.examples"))
