"""Which devices a collective of an SPMD program joins, and whether they are on more than one process.

An optimized HLO collective names its groups in ``replica_groups=`` in one of three forms (XLA's HLO text, as
jax 0.12's XLA prints them):

- a list: ``{{0,1},{2,3}}``;
- an iota list (``IotaReplicaGroupList``): ``[2,2]<=[4]`` or ``[2,2]<=[2,2]T(1,0)``: ``iota(prod(dims))``
  reshaped to the dims after ``<=``, transposed by ``T(...)``, reshaped to ``[groups, group size]``;
- mesh axes (``MeshAxesReplicaGroupList``, what the SPMD partitioner now writes):
  ``mesh['tp'=2] {'tp'}`` or ``mesh['a'=2,'b'=4] {'b'}``: the devices ``0 … N-1`` laid out on the named axes,
  one group per position of the axes not in braces.

With ``use_global_device_ids=true`` (every collective the partitioner inserts) the numbers are indices into
the program's device assignment, the mesh's devices in order (:func:`app.core.parallel.hosts.device_processes`
gives each one's process). A form not read here gives None: the view then says nothing about processes.
"""

from __future__ import annotations

import re

_GROUPS = re.compile(r"replica_groups=(\{\{[^=]*?\}\}|\{\}|\[[\d,]+\]<=\[[\d,]+\](?:T\([\d,]+\))?|mesh\[[^\]]*\]\s*\{[^}]*\})")
_PAIRS = re.compile(r"source_target_pairs=(\{\{[^=]*?\}\})")
_IOTA = re.compile(r"\[([\d,]+)\]<=\[([\d,]+)\](?:T\(([\d,]+)\))?")
_MESH = re.compile(r"mesh\[([^\]]*)\]\s*\{([^}]*)\}")
_AXIS = re.compile(r"'([^']+)'=(\d+)")


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def _iota(text: str) -> list[list[int]] | None:
    m = _IOTA.fullmatch(text)
    if m is None:
        return None
    import numpy as np

    shape, dims = _ints(m.group(1)), _ints(m.group(2))
    ids = np.arange(int(np.prod(dims))).reshape(dims)
    if m.group(3):
        ids = ids.transpose(_ints(m.group(3)))
    return ids.reshape(shape).tolist()


def _mesh(text: str) -> list[list[int]] | None:
    m = _MESH.fullmatch(text)
    if m is None:
        return None
    axes = _AXIS.findall(m.group(1))
    if not axes or _AXIS.sub("", m.group(1)).strip(", "):  # sub-axes or device ids: not read here
        return None
    names = [name for name, _ in axes]
    wanted = re.findall(r"'([^']+)'", m.group(2))
    if any(name not in names for name in wanted) or ":" in m.group(2):
        return None
    import numpy as np

    sizes = [int(size) for _, size in axes]
    ids = np.arange(int(np.prod(sizes))).reshape(sizes)
    keep = [i for i, name in enumerate(names) if name not in wanted]
    grouped = [names.index(name) for name in wanted]
    size = int(np.prod([sizes[i] for i in grouped])) if grouped else 1
    return ids.transpose(keep + grouped).reshape(-1, size).tolist()


def replica_groups(instruction: str) -> list[list[int]] | None:
    """The device groups of one HLO collective instruction's text (see the module doc), or None when it has no
    ``replica_groups`` or names them in a form not read here. ``{}`` (every device, one group) gives ``[]``."""
    m = _GROUPS.search(instruction)
    if m is None:
        pairs = _PAIRS.search(instruction)  # collective-permute: each source → target pair is a group
        return None if pairs is None else [_ints(p) for p in re.findall(r"\{([\d,]*)\}", pairs.group(1)[1:-1])]
    text = m.group(1)
    if text == "{}":
        return []
    if text.startswith("{{"):
        return [_ints(group) for group in re.findall(r"\{([\d,]*)\}", text[1:-1])]
    return _iota(text) if text.startswith("[") else _mesh(text)


def processes_of(groups: list[list[int]] | None, device_processes: list[int]) -> tuple[int, ...] | None:
    """The processes the widest of ``groups`` spans (sorted), from each device's process
    (``device_processes[i]`` for the program's device ``i``); ``[]`` (one group of every device) spans all of
    them. None when the groups are unknown or name a device beyond ``device_processes``."""
    if groups is None or not device_processes:
        return None
    if not groups:
        return tuple(sorted(set(device_processes)))
    widest: set[int] = set()
    for group in groups:
        if any(i >= len(device_processes) for i in group):
            return None
        spanned = {device_processes[i] for i in group}
        if len(spanned) > len(widest):
            widest = spanned
    return tuple(sorted(widest))
