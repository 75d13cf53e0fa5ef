"""The compiler settings a race can compare, listed once: name, what it sets, which backend has it, which compiler
(XLA or Inductor), and how it reaches the compiler.

Every XLA row is applied per compile, as ``Lowered.compile(compiler_options=…)`` (:mod:`.options`): XLA reads
``XLA_FLAGS`` once per process, so a flag in the environment could not differ between two lanes of one race. The
effort levels ``O0``…``O3`` set ``optimization_level`` (``jax_optimization_level``'s compile option; ``mem-O0``…
``mem-O3`` set ``memory_fitting_level``), openxla.org/xla/effort_levels; the XLA:CPU rows follow XLA's 2026 defaults
(YNNPACK handles dots, XNNPACK on, oneDNN off, fast math off; a YNNPACK slowdown: openxla/xla#46351). What a user
types is a setting too (:func:`parse_setting`): an ``XLA_FLAGS``-style string (``--xla_cpu_enable_fast_math=true
--xla_cpu_use_onednn=true``), applied per compile the same way, or a ``jax.config`` pair (``jax_optimization_level=O3``;
the effort levels become compile options, any other name is set with ``jax.config.update`` for the lane and put back).
The Inductor rows are ``torch.compile`` modes (``torch._inductor.list_mode_options``): a race runs their lanes in
the ``torch-compile`` mode, the model's PyTorch module compiled by Dynamo and Inductor (:func:`inductor_mode`), so
one race puts XLA's settings and Inductor's on one trade-off plot. They need a torch device (not a TPU) and have no
decode loop and no XLA pass pipeline.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from app.core.backends import BACKENDS, CPU, GPU
from app.core.errors import InvalidSettingsError

ANY = "any"  # a setting every XLA backend has

Compiler = Literal["XLA", "Inductor"]
#: Which backend has a setting: ``"any"`` (every XLA backend) or one row of :data:`app.core.backends.BACKENDS`
#: (its ``platform``: XLA:CPU's or XLA:GPU's).
Backend = str
#: How a setting reaches its compiler: per-compile ``compiler_options``, ``jax.config`` for the lane, or a
#: ``torch.compile`` mode.
Path = Literal["compiler_options", "jax.config", "torch.compile"]

#: The setting every race compares against: XLA's defaults, nothing set.
BASELINE = "default"


@dataclass(frozen=True)
class CompileSetting:
    """One compiler setting. ``options``: XLA compile options (debug-option names without ``--``, or
    ``optimization_level`` / ``memory_fitting_level``); ``config``: ``jax.config`` pairs set for the lane; ``sets``:
    what it sets, as a reader types it; ``changes_results``: the setting may change outputs (fast math reorders
    and approximates floating point), so unequal tokens are expected, not a bug."""

    name: str
    sets: str
    backend: Backend = "any"
    compiler: Compiler = "XLA"
    path: Path = "compiler_options"
    options: dict[str, Any] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    changes_results: bool = False
    note: str = ""

    def runs_on(self, platform: str) -> bool:
        """Whether a backend of ``platform`` (JAX's: ``"cpu"``, ``"gpu"``, ``"tpu"``) has this setting."""
        if self.backend == ANY:
            return True
        row = BACKENDS.get(self.backend)
        return row is not None and BACKENDS.get(platform) is row


def _xla(name: str, sets: str, backend: Backend = "any", changes_results: bool = False, note: str = "",
         **options: Any) -> CompileSetting:
    return CompileSetting(name, sets, backend, "XLA", "compiler_options", dict(options), {}, changes_results, note)


def _inductor(mode: str, note: str) -> CompileSetting:
    return CompileSetting(f"inductor-{mode}", f'torch.compile(mode="{mode}")', "any", "Inductor", "torch.compile",
                          note=note)


CATALOG: tuple[CompileSetting, ...] = (
    _xla(BASELINE, "nothing: XLA's defaults", note="the baseline of every race"),
    *(_xla(f"O{i}", f"optimization_level=O{i} (jax_optimization_level)", note=note, optimization_level=f"O{i}")
      for i, note in enumerate(("least effort for run time", "", "XLA's usual effort", "most effort for run time"))),
    *(_xla(f"mem-O{i}", f"memory_fitting_level=O{i} (jax_memory_fitting_level)", memory_fitting_level=f"O{i}")
      for i in range(4)),
    _xla("llvm-O0", "--xla_backend_optimization_level=0 (LLVM at -O0)", xla_backend_optimization_level=0),
    _xla("llvm-cheap", "--xla_llvm_disable_expensive_passes=true", xla_llvm_disable_expensive_passes=True),
    _xla("cpu-fast-math", "--xla_cpu_enable_fast_math=true", CPU.platform, changes_results=True,
         note="reassociates and approximates floating point: outputs may differ", xla_cpu_enable_fast_math=True),
    _xla("cpu-onednn", "--xla_cpu_use_onednn=true", CPU.platform, note="oneDNN's matmul rewrite fires above 2^24 flops "
         "(openxla/xla#10556)", xla_cpu_use_onednn=True),
    _xla("cpu-no-ynn", "--xla_cpu_experimental_ynn_fusion_type= (YNNPACK off for dots)", CPU.platform,
         xla_cpu_experimental_ynn_fusion_type=""),
    _xla("cpu-no-xnnpack", "--xla_cpu_use_xnnpack=false", CPU.platform, xla_cpu_use_xnnpack=False),
    _xla("cpu-isa-avx2", "--xla_cpu_max_isa=AVX2", CPU.platform, xla_cpu_max_isa="AVX2"),
    _xla("cpu-isa-sse4", "--xla_cpu_max_isa=SSE4_2", CPU.platform, xla_cpu_max_isa="SSE4_2"),
    _xla("gpu-autotune-0", "--xla_gpu_autotune_level=0 (no autotuning)", GPU.platform, xla_gpu_autotune_level=0),
    _xla("gpu-no-command-buffer", "--xla_gpu_enable_command_buffer= (no CUDA graphs)", GPU.platform,
         xla_gpu_enable_command_buffer=""),
    _inductor("default", "Inductor's default"),
    _inductor("reduce-overhead", "CUDA graphs on a GPU"),
    _inductor("max-autotune", "autotunes matmul and conv templates"),
)

#: Catalog names, in order.
NAMES: tuple[str, ...] = tuple(s.name for s in CATALOG)
_BY_NAME = {s.name: s for s in CATALOG}
_EFFORT_CONFIG = {"jax_optimization_level": "optimization_level", "jax_memory_fitting_level": "memory_fitting_level"}


def _value(text: str) -> Any:
    """A flag's value as XLA wants it: ``true``/``false`` → bool, an integer → int, a number → float, else str."""
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _flags_backend(names: list[str]) -> Backend:
    cpu = any(n.startswith("xla_cpu_") for n in names)
    gpu = any(n.startswith("xla_gpu_") for n in names)
    if cpu and gpu:
        raise InvalidSettingsError(f"{' '.join(names)} mixes XLA:CPU and XLA:GPU flags: race them as two settings.")
    return CPU.platform if cpu else GPU.platform if gpu else ANY


def parse_flags(text: str) -> CompileSetting:
    """A setting from an ``XLA_FLAGS``-style string, e.g. ``"--xla_cpu_enable_fast_math=true --xla_cpu_max_isa=AVX2"``
    (a bare ``--xla_flag`` means ``=true``). Raises :class:`InvalidSettingsError` for a word that is not
    ``--xla_…``."""
    options: dict[str, Any] = {}
    for word in text.split():
        name, eq, value = word.removeprefix("--").partition("=")
        if not word.startswith("--xla_") or not name:
            raise InvalidSettingsError(f"{word!r} in {text!r} is not an XLA flag: write --xla_name=value.")
        options[name] = _value(value) if eq else True
    if not options:
        raise InvalidSettingsError("An empty XLA_FLAGS string sets nothing: name a flag, e.g. --xla_cpu_use_onednn=true.")
    fast = options.get("xla_cpu_enable_fast_math") is True
    return CompileSetting(text.strip(), text.strip(), _flags_backend(list(options)), "XLA", "compiler_options",
                          options, changes_results=fast)


def parse_config(text: str) -> CompileSetting:
    """A setting from a ``jax.config`` pair ``jax_name=value``. ``jax_optimization_level`` and
    ``jax_memory_fitting_level`` become compile options (as ``O0``…``O3``); any other name JAX has is set for the
    lane. Raises :class:`InvalidSettingsError` for a name ``jax.config`` does not have."""
    import jax

    name, eq, value = text.partition("=")
    name = name.strip()
    if not eq or name not in jax.config.values:
        raise InvalidSettingsError(f"{name!r} is not a jax.config option: write jax_name=value "
                                   "(e.g. jax_optimization_level=O3).")
    if name in _EFFORT_CONFIG:
        return CompileSetting(text, text, options={_EFFORT_CONFIG[name]: value.strip()})
    return CompileSetting(text, text, path="jax.config", config={name: _value(value.strip())})


def parse_setting(text: str, platform: str = CPU.platform) -> CompileSetting:
    """The setting ``text`` names on a backend of ``platform``: a catalog name (:data:`NAMES`), an ``XLA_FLAGS``
    string (``--xla_…``) or a ``jax.config`` pair (``jax_…=value``). Raises :class:`InvalidSettingsError`, naming the
    setting, for an unknown name, a setting ``platform``'s backend does not have (an XLA:GPU flag on the CPU) or an
    Inductor mode on a TPU (no torch device there)."""
    text = text.strip()
    if text.startswith("--"):
        setting = parse_flags(text)
    elif text.startswith("jax_"):
        setting = parse_config(text)
    elif text in _BY_NAME:
        setting = _BY_NAME[text]
    else:
        raise InvalidSettingsError(f"Unknown compiler setting {text!r}: use one of {', '.join(NAMES)}, an XLA_FLAGS "
                                   "string (--xla_name=value) or a jax.config pair (jax_name=value).")
    row = BACKENDS.get(platform)
    if setting.compiler == "Inductor" and row is not None and not row.torch_device:
        raise InvalidSettingsError(f"{setting.name} is an Inductor setting ({setting.sets}) and this run is on "
                                   f"{platform.upper()}: PyTorch has no device there to compile for.")
    if not setting.runs_on(platform):
        where = f"XLA:{setting.backend.upper()}"
        raise InvalidSettingsError(f"{setting.name} is an {where} setting and this run is on {platform}: "
                                   f"it has no such option here.")
    return setting


def inductor_mode(setting: CompileSetting) -> str | None:
    """The ``torch.compile`` mode of an Inductor row (``"max-autotune"`` for ``inductor-max-autotune``), None for
    an XLA setting."""
    return setting.name.removeprefix("inductor-") if setting.path == "torch.compile" else None

