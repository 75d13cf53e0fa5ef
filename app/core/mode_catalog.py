"""The mode catalog: the one place where execution modes are named, described and given capabilities.

Everything that lists modes derives from :data:`CATALOG`: the CLI's ``--mode`` / ``--modes`` choices, the
form's mode box, the race controls, the GUI's colour and marker of each mode, what ``inspect`` and
``profile`` accept. A mode's class is named here as ``"module:Class"`` and imported on first use
(:func:`mode_class`), so listing modes never loads torch.compile's machinery and nothing registers itself
on import (the shape of transformers' ``models/auto/`` name → lazily imported class mappings).

Each mode also says where it can run (``ModeInfo.devices``, platforms of :data:`PLATFORMS`) and on what
(``ModeInfo.framework``): the JAX modes run on JAX's devices of the chosen platform, the PyTorch modes on the
matching torch device (``cpu``, or ``cuda`` for ``gpu``; torch has no TPU device in this project: torch_xla is
not a dependency). :func:`check_runs_on` refuses a mode on a platform by name.

Importing this module imports nothing heavy (no JAX, no torch).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from app.core.backends import BACKENDS
from app.core.errors import InvalidSettingsError

#: JAX platform names a run can be placed on (``--device``; ``jax.devices(platform)``).
PLATFORMS: tuple[str, ...] = tuple(BACKENDS)
#: The platforms PyTorch runs on (a row with a ``torch_device``): where the torch modes can run.
TORCH_PLATFORMS: tuple[str, ...] = tuple(p for p, row in BACKENDS.items() if row.torch_device)
#: Why a PyTorch mode cannot run on a TPU here.
_NO_TORCH_TPU = ("PyTorch has no TPU device in this project (torch_xla is not used): PyTorch runs on cpu or "
                 "gpu (CUDA) only")


@dataclass(frozen=True)
class ModeInfo:
    """One execution mode.

    Attributes
    ----------
    name : the mode's name in the CLI, the settings and every record (``CallRecord.mode``).
    help : one line for ``--help``, the form's tooltip and the race controls.
    compiler : ``None`` (nothing compiles), ``"xla"`` (``jax.jit``) or ``"inductor"`` (``torch.compile``):
        what the IR views show for this mode.
    class_path : ``"module:Class"`` of its :class:`app.core.modes.base.Mode` subclass.
    colour : ``#rrggbb`` of its curve and race lane in the window.
    marker : pyqtgraph symbol of its decode points (so lanes stay apart where their lines overlap).
    profilable : ``profile`` can measure its steps (``app.core.profile.step``).
    token_cap : default cap on its tokens in a race (``None`` = none): torchax-eager dispatches every ATen
        op on its own (~0.5–2 s per token cold).
    framework : ``"jax"`` (runs on JAX's device of the chosen platform: the jit modes and torchax-eager, whose
        ops torchax dispatches to JAX; torchax's env treats even ``cuda`` tensors as JAX ones,
        ``Configuration.treat_cuda_as_jax_device``) or ``"torch"`` (runs on the torch device: ``cpu``, or
        ``cuda`` for ``gpu``).
    devices : platforms of :data:`PLATFORMS` the mode can run on.
    device_note : why it cannot run on the others (said by :func:`check_runs_on`).
    across_processes : runs on a mesh spread over several processes (``--hosts``): every step is one jitted SPMD
        program, or the decode loop is (:mod:`app.core.parallel.hosts`, :func:`modes_across_processes`).
    processes_note : why it cannot, where it cannot (said by ``check_modes_across_processes``).
    decode_loop : its decode is the whole loop over the tokens compiled as one XLA program: what ``profile``
        measures of its decode, and the settings race's ``loop`` step (:func:`decode_loop_mode`).
    race_lane : the compiler (``"xla"`` or ``"inductor"``) whose settings a settings race's model lane runs this
        mode for ("": none; :func:`race_lane_mode`).
    """

    name: str
    help: str
    compiler: str | None
    class_path: str
    colour: str
    marker: str
    profilable: bool = False
    token_cap: int | None = None
    framework: str = "jax"
    devices: tuple[str, ...] = PLATFORMS
    device_note: str = ""
    across_processes: bool = False
    processes_note: str = ""
    decode_loop: bool = False
    race_lane: str = ""

    @property
    def inspectable(self) -> bool:
        """A compiler runs, so there is IR to show (jaxpr / StableHLO / HLO, or FX graph / Inductor code)."""
        return self.compiler is not None

    @property
    def on_torch(self) -> bool:
        """It runs on PyTorch (``framework == "torch"``): on the torch device, not JAX's."""
        return self.framework == "torch"


#: Why the PyTorch modes cannot run across processes.
_TORCH_ONE_HOST = "PyTorch runs on this host's CPU or GPU only, outside JAX's mesh"

#: Every mode, from the PyTorch reference to the fully jitted static-cache path, in display order.
CATALOG: tuple[ModeInfo, ...] = (
    ModeInfo("torch", "PyTorch eager reference: our own loop over the HF module with a DynamicCache "
             "(on the CPU, or on CUDA with --device gpu)",
             None, "app.core.modes.eager:TorchMode", "#475569", "o",
             framework="torch", devices=TORCH_PLATFORMS, device_note=_NO_TORCH_TPU,
             processes_note=_TORCH_ONE_HOST),
    ModeInfo("torchax-eager", "torchax without jit: every ATen op dispatched to JAX one by one",
             None, "app.core.modes.eager:TorchaxEagerMode", "#9333ea", "t2", token_cap=8,
             processes_note="it reads each step's logits on the host, and a process holds only its own devices' "
                            "part of them"),
    ModeInfo("jit-dynamic", "jax.jit with a growing DynamicCache: a new shape, hence a recompile, every step",
             "xla", "app.core.modes.jit:JitDynamicMode", "#0891b2", "t", across_processes=True),
    ModeInfo("jit-static", "jitted prefill + decode with a StaticCache: two compiles, then every step reuses them",
             "xla", "app.core.modes.jit:JitStaticMode", "#2563eb", "t1", profilable=True, across_processes=True,
             race_lane="xla"),
    ModeInfo("jit-loop", "jit-static's prefill, then the whole decode loop as one compiled jax.lax.while_loop "
             "(one compile, one dispatch for all tokens; each token streamed out by an ordered io_callback, Stop "
             "through its return value, EOS ends it on the device). The right tool for long generations with no "
             "per-token host logic; not when the host must act between tokens (a program's own sampling, "
             "constraints, tools) or for a few tokens (its compile is one more step's)",
             "xla", "app.core.modes.loop:JitLoopMode", "#854d0e", "h", profilable=True, across_processes=True,
             decode_loop=True),
    ModeInfo("torch-compile", "PyTorch's own compiler: torch.compile over a StaticCache; on CPU Inductor's C++ "
             "kernels (mode 'default'), on GPU its Triton kernels with mode 'reduce-overhead': CUDA graphs replay "
             "each step's launches, as XLA:GPU's command buffers do for jit-static",
             "inductor", "app.core.modes.torch_compile:TorchCompileMode", "#dc2626", "t3",
             framework="torch", devices=TORCH_PLATFORMS, device_note=_NO_TORCH_TPU, processes_note=_TORCH_ONE_HOST,
             race_lane="inductor"),
)
#: Mode names in display order.
MODE_NAMES: tuple[str, ...] = tuple(info.name for info in CATALOG)
#: The PyTorch eager reference every speed-up ("× torch") is measured against.
REFERENCE_MODE: str = CATALOG[0].name
#: The mode a new user gets: the one the playground exists to show (two compiles, then fast steps).
DEFAULT_MODE: str = CATALOG[3].name
_BY_NAME = {info.name: info for info in CATALOG}


def mode_info(name: str) -> ModeInfo:
    """The catalog entry of mode ``name``. Raises KeyError for a name not in :data:`CATALOG`."""
    return _BY_NAME[name]


def profiling_mode() -> str:
    """The mode whose steps ``profile`` measures (the one marked ``profilable``)."""
    return next(info.name for info in CATALOG if info.profilable)


def modes_across_processes() -> tuple[str, ...]:
    """Names of the modes that run across processes (``across_processes``), in display order."""
    return tuple(info.name for info in CATALOG if info.across_processes)


def decode_loop_mode() -> str:
    """The mode whose decode is one compiled loop over the tokens (the one marked ``decode_loop``)."""
    return next(info.name for info in CATALOG if info.decode_loop)


def race_lane_mode(compiler: str) -> str:
    """The mode a settings race's model lane runs for the settings of ``compiler`` (``"xla"`` or ``"inductor"``:
    the row whose ``race_lane`` it is). Raises StopIteration for another compiler."""
    return next(info.name for info in CATALOG if info.race_lane == compiler)


def mode_name_of(cls: type) -> str:
    """The name of the mode whose class is ``cls`` or one of its bases (a subclass of a mode's class is
    that mode). Raises KeyError for a class not in the catalog."""
    for klass in cls.__mro__:
        path = f"{klass.__module__}:{klass.__qualname__}"
        for info in CATALOG:
            if info.class_path == path:
                return info.name
    raise KeyError(f"{cls.__module__}:{cls.__qualname__}")


def mode_class(name: str) -> type:
    """The :class:`app.core.modes.base.Mode` subclass of mode ``name``, imported on first use (typed
    ``type``: the catalog imports no mode, not even for type checking). Raises KeyError for an unknown name."""
    module, _, cls = mode_info(name).class_path.partition(":")
    return getattr(importlib.import_module(module), cls)


def modes_on(platform: str) -> tuple[str, ...]:
    """Names of the modes that can run on ``platform`` (one of :data:`PLATFORMS`), in display order."""
    return tuple(info.name for info in CATALOG if platform in info.devices)


def check_runs_on(name: str, platform: str) -> None:
    """Raise :class:`InvalidSettingsError` naming mode ``name`` and ``platform`` when the mode cannot run
    there (its ``devices``), with the reason and the modes that can."""
    info = mode_info(name)
    if platform not in info.devices:
        note = f" ({info.device_note})" if info.device_note else ""
        raise InvalidSettingsError(
            f"Mode {name!r} cannot run on the {platform} device{note}. On {platform} use one of "
            f"{', '.join(modes_on(platform))}, or choose --device {' or '.join(info.devices)}."
        )
