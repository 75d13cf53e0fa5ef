"""Where a run executes: one JAX platform (``cpu``, ``gpu``, ``tpu``) and the matching torch device.

:func:`resolve_device` turns ``--device`` (or the window's choice) into a :class:`Device`: the JAX work of
the run (the jit modes, torchax-eager) goes to ``jax.devices(platform)[0]``, the PyTorch modes (``torch``,
``torch-compile``) to ``cuda:0`` on a GPU and to the CPU on a CPU. A TPU has no torch device here (torch_xla is
not a dependency): the catalog refuses the PyTorch modes there by name
(:func:`app.core.mode_catalog.check_runs_on`). Without a platform the default is JAX's default backend
(``jax.default_backend()``), which honours ``JAX_PLATFORMS``.

:func:`device_copy_bandwidth_gbs` measures the device's memory bandwidth with a device-to-device copy through
JAX, the figure the decode benchmark's memory-bandwidth bound uses on a GPU or TPU.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any, Protocol

from app.core.backends import BACKENDS, CPU, TORCH_CUDA
from app.core.errors import InvalidSettingsError
from app.core.mode_catalog import check_runs_on, mode_info


@dataclass(frozen=True)
class Device:
    """One placement of a run.

    Attributes
    ----------
    platform : JAX's platform name, one of :data:`app.core.backends.BACKENDS`.
    jax_device : the ``jax.Device`` the JAX modes run on (``jax.local_devices(backend=platform)[0]``: this
        process's first, the same as ``jax.devices(platform)[0]`` unless several processes joined).
    torch_device : the torch device of the PyTorch modes (``"cpu"``, ``"cuda:0"``), None where torch has none
        (a TPU; a GPU with a CPU-only torch build).
    label : what records and status lines show: ``"cpu"``, or the device kind and JAX's name of the device,
        e.g. ``"NVIDIA H100 80GB HBM3 (gpu:0)"``.
    torch_label : the same for the torch device (``"cpu"``, ``"NVIDIA H100 80GB HBM3 (cuda:0)"``), None without one.
    is_default : the device is JAX's default device (``jax.local_devices()[0]``): the engine then leaves JAX's
        placement exactly as it is without a device choice.
    """

    platform: str
    jax_device: Any
    torch_device: str | None
    label: str
    torch_label: str | None
    is_default: bool = True

    def label_for(self, mode: str) -> str:
        """The device that runs ``mode``: :attr:`torch_label` for a PyTorch mode, else :attr:`label`."""
        if mode_info(mode).on_torch:
            return self.torch_label or self.label
        return self.label

    def check(self, mode: str) -> None:
        """Raise :class:`InvalidSettingsError` when ``mode`` cannot run here: the catalog's rule, and for a
        PyTorch mode on a GPU, a torch build without CUDA."""
        check_runs_on(mode, self.platform)
        if mode_info(mode).on_torch and self.torch_device is None:
            raise InvalidSettingsError(
                f"Mode {mode!r} cannot run on the {self.platform} device: this torch ({_torch_version()}) has no "
                f"{self.platform} device (torch.cuda.is_available() is False). Install a CUDA build of torch, or "
                "use a JAX mode (jit-static, jit-dynamic, torchax-eager)."
            )


def default_platform() -> str:
    """JAX's default backend (``jax.default_backend()``: ``JAX_PLATFORMS`` if set, else the first of tpu, gpu,
    cpu that initialises)."""
    import jax

    return jax.default_backend()


def resolve_device(platform: str | None = None) -> Device:
    """The :class:`Device` of ``platform`` (None: JAX's default backend).

    Raises :class:`InvalidSettingsError` for a name without a backend row (:data:`app.core.backends.BACKENDS`)
    and for a platform JAX does not have here, naming it, the platforms it has and ``JAX_PLATFORMS`` when that
    hides it."""
    import jax

    if platform is None:
        platform = default_platform()
    if platform not in BACKENDS:
        raise InvalidSettingsError(f"Unknown device {platform!r}: choose one of {', '.join(BACKENDS)}.")
    try:  # this process's devices: on a run across hosts jax.devices()[0] is process 0's (issue 39)
        devices = jax.local_devices(backend=platform)
    except RuntimeError as exc:
        raise InvalidSettingsError(_missing_platform(platform, exc)) from None
    if not devices:
        raise InvalidSettingsError(_missing_platform(platform, None))
    dev = devices[0]
    default = jax.local_devices()[0]
    torch_device, torch_label = _torch_device(platform)
    return Device(platform, dev, torch_device, _label(dev), torch_label, is_default=dev == default)


class JaxDevice(Protocol):
    """What this module reads of a ``jax.Device`` (``jax.Device`` is an alias pyright cannot use as a type)."""

    @property
    def platform(self) -> str: ...

    @property
    def device_kind(self) -> str: ...

    @property
    def id(self) -> int: ...


def _label(dev: JaxDevice) -> str:
    if dev.platform == CPU.platform:
        return CPU.torch_device
    return f"{dev.device_kind} ({dev.platform}:{dev.id})"


def _torch_device(platform: str) -> tuple[str | None, str | None]:
    """``(torch device, label)`` for ``platform``: its row's ``torch_device`` (:mod:`app.core.backends`): the CPU,
    CUDA device 0 for a GPU when torch has CUDA; ``(None, None)`` where torch does not run."""
    device = BACKENDS[platform].torch_device
    if not device.startswith(TORCH_CUDA):
        return (device, device) if device else (None, None)
    import torch

    if torch.cuda.is_available():
        return device, f"{torch.cuda.get_device_name(0)} ({device})"
    return None, None


def _torch_version() -> str:
    import torch

    return f"torch {torch.__version__}"


def available_platforms() -> list[str]:
    """The platforms of :data:`app.core.backends.BACKENDS` JAX can initialise here (initialising each one it
    tries)."""
    import jax

    found = []
    for platform in BACKENDS:
        try:
            if jax.devices(platform):
                found.append(platform)
        except RuntimeError:
            pass
    return found


def _missing_platform(platform: str, exc: BaseException | None) -> str:
    env = os.environ.get("JAX_PLATFORMS", "")
    have = ", ".join(available_platforms()) or "none"
    hint = BACKENDS[platform].install_hint
    hidden = f"; JAX_PLATFORMS={env!r} limits JAX to those" if env else ""
    first = str(exc).strip().splitlines()[0] if exc is not None else "no devices"
    return (f"--device {platform}: JAX has no {platform} platform on this machine (it has: {have}{hidden}); "
            f"{hint}. JAX said: {first}")


def device_copy_bandwidth_gbs(device: JaxDevice, nbytes: int = 1 << 30, repeats: int = 5) -> float:
    """Memory bandwidth of ``device`` (a ``jax.Device``) in GB/s (1e9 bytes/s), counting the bytes read and the
    bytes written: a jitted ``x + 1`` over ``nbytes`` of float32 on the device reads and writes every byte once
    (a device-to-device copy); best of ``repeats`` timed calls after one warm call. On an H100 80GB this read
    3.03 TB/s (issue 30). Decoding one token reads every weight once, so ``weight_bytes / bandwidth`` bounds
    a decode step from below."""
    import jax
    import jax.numpy as jnp

    n = nbytes // 4
    with jax.default_device(device):
        x = jax.device_put(jnp.zeros((n,), jnp.float32), device)
    copy = jax.jit(lambda a: a + 1.0)
    jax.block_until_ready(copy(x))
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(copy(x))
        best = min(best, time.perf_counter() - t0)
    return 2 * n * 4 / best / 1e9


def use_as_default(device: Device) -> None:
    """Make ``device`` the process's default JAX device (``jax_default_device``; None, JAX's own default, when
    it is the default backend's first device), so the small arrays a mode makes per step (token ids,
    positions, PRNG keys) are created where the weights are instead of being copied there every step. Also
    what ``profile`` and ``passes`` then run on."""
    import jax

    jax.config.update("jax_default_device", None if device.is_default else device.jax_device)
