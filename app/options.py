"""Command-line options shared by the CLI (:mod:`app.cli`) and the window (:mod:`app.gui.main`).

Kept apart from both so that the GUI never imports the CLI. Imports nothing heavy: ``--devices`` must be
applied before JAX starts.
"""

from __future__ import annotations

import argparse

from app.core.mode_catalog import PLATFORMS
from app.core.parallel.mesh import simulate_cpu_devices


def add_devices_arg(p: argparse.ArgumentParser) -> None:
    """``--devices N`` (the CLI's and the window's). SUPPRESS: a subcommand's missing ``--devices`` must not
    erase one given before it (``torchax-playground --devices 4 gui``); read it with :func:`apply_devices`."""
    p.add_argument("--devices", type=int, default=argparse.SUPPRESS, metavar="N",
                   help="simulate N CPU devices (XLA_FLAGS=--xla_force_host_platform_device_count=N)")


def add_device_arg(p: argparse.ArgumentParser) -> None:
    """``--device cpu|gpu|tpu`` (the model commands'): the JAX platform the run goes to, and the torch device
    of the PyTorch modes (``cuda`` for ``gpu``). Default None: JAX's default backend, which honours
    ``JAX_PLATFORMS`` (resolved by :func:`app.core.engine.device.resolve_device`)."""
    p.add_argument("--device", choices=PLATFORMS, default=None,
                   help="where to run: JAX's devices of this platform, and for the PyTorch modes (torch, "
                        "torch-compile) the matching torch device (cuda for gpu; torch has no TPU device here). "
                        "Default: JAX's default backend (JAX_PLATFORMS is respected)")


def apply_devices(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int | None:
    """Ask XLA:CPU for ``args.devices`` devices now, before JAX starts (no effect once it has). Exits with
    a usage error below 1. Returns the number, or None when not given."""
    devices = getattr(args, "devices", None)
    if devices is not None and devices < 1:
        parser.error("--devices must be at least 1")
    if devices:
        simulate_cpu_devices(devices)  # every jax import is lazy, so JAX has not started yet
    return devices
