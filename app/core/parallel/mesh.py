"""Tensor parallelism on a JAX device mesh: sharding rules, weight/cache placement, collectives.

JAX's SPMD partitioner (GSPMD) is the distributed engine: we place weights and the KV cache with
``NamedSharding`` and XLA inserts the collectives. Rules are Megatron-style (Shoeybi et al. 2019,
"Megatron-LM", section 3): column-parallel q/k/v/gate/up projections (output features split),
row-parallel o/down projections (input features split, an all-reduce after), embedding and lm_head split by
vocabulary when it divides the axis (else replicated), KV cache split on heads. Norms and biases of
row-parallel layers are replicated.

On a CPU, N devices are simulated with ``XLA_FLAGS=--xla_force_host_platform_device_count=N`` set
before JAX starts (:func:`simulate_cpu_devices`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.core.errors import InvalidSettingsError
from app.core.inspect.text_index import HLO_INSTRUCTION, hlo_instructions
from app.core.parallel.groups import processes_of, replica_groups
from app.core.parallel.hosts import check_mesh_spans_processes, device_processes, mesh_label, place_global

if TYPE_CHECKING:
    import jax
    from jax.sharding import Mesh
    from transformers import PretrainedConfig

# Name patterns (parameter path → which dimension of the *stored* tensor is split on "tp"). torch.nn.Linear stores
# (out_features, in_features), and so does every GPT-2 Conv1D weight on JAX (transposed at conversion:
# app.core.runtime.linear_layout), hence c_attn / c_fc / c_proj follow the Linear rules.
_COLUMN = re.compile(r"\.(q_proj|k_proj|v_proj|gate_proj|up_proj|gate_up_proj|qkv_proj|query_key_value|fc1|dense_h_to_4h"
                     r"|c_attn|c_fc)\.(weight|bias)$")
_ROW = re.compile(r"\.(o_proj|down_proj|out_proj|fc2|dense_4h_to_h|dense|c_proj)\.weight$")
_VOCAB = re.compile(r"(embed_tokens|wte|word_embeddings|lm_head|embed_out)\.weight$")
_EXPERTS = re.compile(r"\.experts\.(gate_up_proj|up_proj|down_proj)$")  # issue 42: MoE experts (experts, out, in)


@dataclass(frozen=True)
class MeshSpec:
    """Mesh axes and sizes, e.g. ``MeshSpec((("tp", 4),))``. ``dp`` > 1 needs a batch > 1, which this
    playground (one sequence at a time) does not decode, so it is refused with a message. ``processes``: how
    many processes the mesh spans (``jax.process_count()`` after ``jax.distributed.initialize()``; 1 on one
    host), named by ``str()`` (``tp=2 across 2 processes``), hence by every record's ``mesh``."""

    axes: tuple[tuple[str, int], ...] = (("tp", 1),)
    processes: int = 1

    @property
    def tp(self) -> int:
        return dict(self.axes).get("tp", 1)

    @property
    def n_devices(self) -> int:
        n = 1
        for _, size in self.axes:
            n *= size
        return n

    def __str__(self) -> str:
        return mesh_label(",".join(f"{k}={v}" for k, v in self.axes), self.processes)


def parse_mesh(text: str | None) -> MeshSpec:
    """``"tp=4"`` or ``"dp=1,tp=2"`` → :class:`MeshSpec`. Raises :class:`InvalidSettingsError`."""
    if not text:
        return MeshSpec()
    axes = []
    for part in text.split(","):
        name, _, size = part.strip().partition("=")
        if name not in ("dp", "tp") or not size.isdigit() or int(size) < 1:
            raise InvalidSettingsError(f"Bad mesh {text!r}: write axis=size pairs such as 'tp=4' or 'dp=1,tp=2'.")
        axes.append((name, int(size)))
    spec = MeshSpec(tuple(axes))
    if dict(spec.axes).get("dp", 1) > 1:
        raise InvalidSettingsError(
            f"Mesh {text!r}: dp > 1 splits the batch, and the playground decodes one sequence (batch 1). "
            "Use tp only, e.g. 'tp=4'."
        )
    return spec


def simulate_cpu_devices(n: int) -> None:
    """Ask XLA:CPU for ``n`` devices. Must run before JAX initialises its backend (before the first
    array is created); later calls have no effect, which :func:`build_mesh` reports."""
    flags = re.sub(r"--xla_force_host_platform_device_count=\d+", "", os.environ.get("XLA_FLAGS", ""))
    os.environ["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count={n}".strip()


def build_mesh(spec: MeshSpec) -> Any:
    """A ``jax.sharding.Mesh`` over the first ``spec.n_devices`` devices (of every process: ``jax.devices()``).
    Raises :class:`InvalidSettingsError` when there are fewer devices, saying how to simulate more, and across
    processes when the mesh leaves some out (:func:`app.core.parallel.hosts.check_mesh_spans_processes`)."""
    import jax
    import numpy as np

    devices = jax.devices()
    check_mesh_spans_processes(spec.n_devices, jax.process_count(), len(devices))
    if spec.n_devices > len(devices):
        raise InvalidSettingsError(
            f"Mesh {spec} needs {spec.n_devices} devices but JAX sees {len(devices)} ({devices[0].platform}). "
            f"On a CPU, start with --devices {spec.n_devices} (XLA_FLAGS="
            f"--xla_force_host_platform_device_count={spec.n_devices})."
        )
    names = tuple(name for name, _ in spec.axes)
    shape = tuple(size for _, size in spec.axes)
    return jax.sharding.Mesh(np.asarray(devices[: spec.n_devices]).reshape(shape), names)


def uncommit_torchax_key() -> bool:
    """Give torchax's environment PRNG key (``torchax.default_env().prng_key``) back uncommitted, same value.

    Since the torchax nightlies of October 2026, ``torchax.interop.jax_jit`` writes back the key its jitted call
    returned, committed to that call's devices (``torchax/interop.py``: "a later call with args on other devices
    fails until ``env.prng_key`` is reset"). A module of the user's that runs through it on one device, then on
    a mesh (or back), would fail. Called when the engine's mesh changes: the key's data goes through the host, so
    the next call places it freely. Returns whether the key was committed (and so replaced)."""
    import jax
    import numpy as np
    import torchax

    env = torchax.default_env()
    key = env.prng_key
    if not getattr(key, "committed", False):
        return False
    # jax.dtypes re-exports issubdtype from jax._src.dtypes without the redundant alias pyright looks for
    if jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key):  # pyright: ignore[reportPrivateImportUsage]
        data = np.asarray(jax.device_get(jax.random.key_data(key)))
        # host key data (uncommitted once wrapped): wrap_key_data is annotated Array and takes any array
        env.prng_key = jax.random.wrap_key_data(data, impl=jax.random.key_impl(key))  # pyright: ignore[reportArgumentType]
    else:  # a raw uint32[2] key
        env.prng_key = jax.numpy.asarray(np.asarray(jax.device_get(key)))
    return True


def _split_dims(config: PretrainedConfig) -> dict[str, int]:
    """The model dimensions tensor parallelism splits: attention heads, KV heads, MLP width."""
    cfg = config.get_text_config(decoder=True) if hasattr(config, "get_text_config") else config
    dims = {
        "num_attention_heads": getattr(cfg, "num_attention_heads", None) or getattr(cfg, "n_head", None),
        "num_key_value_heads": getattr(cfg, "num_key_value_heads", None),
        "intermediate_size": getattr(cfg, "intermediate_size", None) or getattr(cfg, "n_inner", None)
        or getattr(cfg, "ffn_dim", None),
    }
    return {name: value for name, value in dims.items() if isinstance(value, int) and value > 0}


def tp_sizes(config: PretrainedConfig, n_devices: int) -> tuple[int, ...]:
    """The tensor-parallel sizes this model can use on ``n_devices`` devices: every ``tp <= n_devices``
    that divides all of :func:`_split_dims` (SmolLM2's 9 heads / 3 KV heads on 4 devices: ``(1, 3)``)."""
    dims = _split_dims(config).values()
    return tuple(tp for tp in range(1, max(1, n_devices) + 1) if all(v % tp == 0 for v in dims))


def check_divisible(config: PretrainedConfig, tp: int, n_devices: int | None = None) -> None:
    """Raise :class:`InvalidSettingsError` naming the first model dimension that ``tp`` does not divide, and
    the sizes that work (:func:`tp_sizes` on ``n_devices``, default ``tp``'s own count)."""
    for name, value in _split_dims(config).items():
        if value % tp:
            valid = tp_sizes(config, n_devices or tp)
            raise InvalidSettingsError(
                f"tp={tp} does not divide {name}={value} of this model: use tp=" + " or tp=".join(map(str, valid))
                + f" on these {n_devices or tp} devices."
            )


def weight_spec(name: str, shape: tuple[int, ...], tp: int) -> tuple:
    """The ``PartitionSpec`` entries for one parameter (see the module docstring for the rules)."""
    if tp == 1 or not shape:
        return ()
    def split(dim: int) -> tuple:
        if shape[dim] % tp:
            return ()
        spec: list[str | None] = [None] * len(shape)
        spec[dim] = "tp"
        return tuple(spec)

    if _VOCAB.search(name):
        return split(0)
    if _COLUMN.search(name):
        return split(0)
    if _ROW.search(name) and len(shape) == 2:
        return split(1)
    if _EXPERTS.search(name) and len(shape) == 3:  # issue 42: MoE experts column- / row-parallel like an MLP
        return split(2 if name.endswith("down_proj") else 1)  # issue 42: MoE experts
    return ()


def shard_weights(weights: dict[str, Any], mesh: Mesh, tp: int) -> dict[str, Any]:
    """Place each weight with ``NamedSharding(mesh, PartitionSpec(*weight_spec(...)))``; on a mesh across
    processes each process makes only its own shards (:func:`app.core.parallel.hosts.place_global`)."""
    from jax.sharding import NamedSharding, PartitionSpec

    return {
        name: place_global(value, NamedSharding(mesh, PartitionSpec(*weight_spec(name, value.shape, tp))))
        for name, value in weights.items()
    }


def leaf_cache_sharding(x: jax.Array, mesh: Mesh, tp: int) -> Any:
    """Sharding of one KV-cache leaf: 4-D keys/values ``(batch, kv_heads, max_cache_len, head_dim)`` split
    on heads, everything else (lengths) replicated."""
    from jax.sharding import NamedSharding, PartitionSpec

    if getattr(x, "ndim", 0) == 4 and tp > 1 and x.shape[1] % tp == 0:
        return NamedSharding(mesh, PartitionSpec(None, "tp", None, None))
    return NamedSharding(mesh, PartitionSpec())


def _map_cache_leaves(cache: object, fn: Callable[[jax.Array], jax.Array]) -> Any:
    import jax

    leaves, treedef = jax.tree.flatten(cache)
    return treedef.unflatten([fn(x) for x in leaves])


def place_cache(cache: object, mesh: Mesh, tp: int) -> Any:
    """Place every cache leaf with :func:`leaf_cache_sharding` (each process its own shards on a mesh across
    processes: :func:`app.core.parallel.hosts.place_global`)."""
    return _map_cache_leaves(cache, lambda x: place_global(x, leaf_cache_sharding(x, mesh, tp)))


def constrain_cache(cache: object, mesh: Mesh, tp: int) -> Any:
    """Inside a traced step: keep the output cache sharded like the input (heads on ``tp``), so the next
    call's inputs match the compiled executable."""
    import jax

    return _map_cache_leaves(
        cache, lambda x: jax.lax.with_sharding_constraint(x, leaf_cache_sharding(x, mesh, tp))
    )


def bytes_per_device(tree: object) -> dict[str, int]:
    """Bytes each device holds for the arrays of ``tree`` (``"cpu:0" → bytes``), from addressable shards."""
    import jax

    out: dict[str, int] = {}
    for leaf in jax.tree.leaves(tree):
        for shard in getattr(leaf, "addressable_shards", []):
            key = f"{shard.device.platform}:{shard.device.id}"
            out[key] = out.get(key, 0) + shard.data.nbytes
    return dict(sorted(out.items(), key=lambda kv: int(kv[0].split(":")[1])))


@dataclass(frozen=True)
class Collective:
    """One collective instruction of an optimized HLO module."""

    kind: str  # all-reduce, all-gather, reduce-scatter, collective-permute, all-to-all
    name: str
    shape: str  # e.g. "f32[1,1,768]"
    op_name: str  # name scope, e.g. "jit(step)/aten::mm"
    source: str  # "modeling_llama.py:245 (forward)" or "" when the metadata has none
    line: int  # 1-based line in the HLO text
    #: The processes its widest device group spans (app.core.parallel.groups), None when not known (no device
    #: processes given, or groups in a form not read)
    processes: tuple[int, ...] | None = None

    @property
    def crosses_processes(self) -> bool | None:
        """Whether its data crosses a process boundary (between hosts, on a run across hosts); None: unknown."""
        return None if self.processes is None else len(self.processes) > 1


COLLECTIVE_KINDS = ("all-reduce", "all-gather", "reduce-scatter", "collective-permute", "all-to-all")


def collectives(hlo_text: str | None, device_processes: list[int] | None = None) -> list[Collective]:
    """Collectives XLA inserted, in text order, with shapes and the model source line (HLO metadata's
    stack frame, resolved by :func:`app.core.inspect.text_index.hlo_instructions`). With ``device_processes``
    (each mesh device's process, :func:`app.core.parallel.hosts.device_processes`) each one also names the
    processes its device groups span (:func:`app.core.parallel.groups.replica_groups`). A text naming no
    collective opcode is not parsed (~70 ms per SmolLM2 step, after every run: issue 37's Stop-to-idle)."""
    if not any(kind in (hlo_text or "") for kind in COLLECTIVE_KINDS):
        return []
    lines = (hlo_text or "").split("\n")
    found = []
    for ins in hlo_instructions(hlo_text):
        kind = ins.opcode.removesuffix("-start")
        if kind not in COLLECTIVE_KINDS:
            continue
        m = HLO_INSTRUCTION.match(lines[ins.text_line - 1])
        shape = re.sub(r"\{[^}]*\}", "", m.group(2)) if m else ""
        source = f"{ins.location.label} ({ins.function})" if ins.file else ""
        spans = None if device_processes is None else processes_of(replica_groups(lines[ins.text_line - 1]),
                                                                   device_processes)
        found.append(Collective(kind, ins.name, shape, ins.scope, source, ins.text_line, spans))
    return found


def format_collectives(found: list[Collective], mesh: Mesh | None = None) -> str:
    """``inspect --what collectives``' text: a count, then one line per collective (kind, shape, HLO line, model
    source). On a mesh across processes (``mesh``: the engine's ``jax.sharding.Mesh``) the count names the mesh's
    devices with their processes and how many collectives cross a process boundary, and each line says
    ``across processes 0,1`` (its widest device group spans them) or ``within one process`` (``processes ?`` where
    its groups were not read)."""
    processes = device_processes(mesh) if mesh is not None else []
    if mesh is None or len(set(processes)) <= 1:
        lines = [f"{c.kind:<18} {c.shape:<16} line {c.line:<6} {c.source}" for c in found]
        return "\n".join([f"{len(found)} collectives", *lines])
    devices = ", ".join(f"{d.platform}:{d.id}@{p}" for d, p in zip(mesh.devices.flat, processes, strict=True))
    crossing = sum(1 for c in found if c.crosses_processes)
    head = (f"{len(found)} collectives on {len(processes)} devices of {len(set(processes))} processes ({devices}): "
            f"{crossing} cross a process boundary")

    def where(c: Collective) -> str:
        if c.processes is None:
            return "processes ?"
        names = ",".join(map(str, c.processes))
        return f"across processes {names}" if c.crosses_processes else "within one process"

    lines = [f"{c.kind:<18} {c.shape:<16} line {c.line:<6} {where(c):<24} {c.source}" for c in found]
    return "\n".join([head, *lines])
