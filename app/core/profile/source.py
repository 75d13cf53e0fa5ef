"""Measured time on the nodes of a source map: which ATen-op groups (module, file, line, scope) of a
:class:`app.core.inspect.source_map.SourceMap` a profile's time goes to, for the explorer's measured columns, the
HLO view's tints and the cross-links from a profile row or timeline bar to the PyTorch line. No Qt.

Units as in :mod:`app.core.profile.model`: ``busy_us`` and ``wall_us`` in µs per step, ``bytes`` per step,
``share`` of the step's wall time (``wall_us / step_us``).

Matching rule (:func:`groups_for_part`): a part of an instruction (``StepProfile.parts``: its fraction,
module, file, line, scope) goes to the map's groups on the same ``(file, line)``; among them, those of the
same module (folded paths such as ``model.layers.*.mlp`` match every layer; a folded map compares folded
paths), else of a module above or below it, else all; then those of the same scope (or one nesting it),
else all of these. **Split rule**: a part matching several groups (one per layer when the profiler could
not tell the layers apart) is split equally over them — the layers run the same code on the same shapes.
A part on no line of the map (copies of inputs, ``<no source>``) goes to :attr:`SourceMeasure.rest`, so
the groups' shares plus ``rest.share`` sum to the profile's ``attributed_share``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.core.inspect.module_paths import fold_path
from app.core.inspect.source_map import SourceMap
from app.core.profile.model import StepProfile


@dataclass
class Measured:
    """Measured figures of one node: ``busy_us`` summed op time, ``wall_us`` charged wall time (µs per
    step), ``bytes`` accessed per step (estimate), ``share`` of the step's wall time."""

    busy_us: float = 0.0
    wall_us: float = 0.0
    bytes: float = 0.0
    share: float = 0.0

    def add(self, other: Measured, fraction: float = 1.0) -> None:
        self.busy_us += fraction * other.busy_us
        self.wall_us += fraction * other.wall_us
        self.bytes += fraction * other.bytes
        self.share += fraction * other.share

    @property
    def gbs(self) -> float | None:
        """Achieved GB/s (1e9 bytes/s) over the busy time; None without time."""
        return self.bytes / self.busy_us / 1e3 if self.busy_us > 0 else None


@dataclass
class SourceMeasure:
    """A profile laid on a source map: ``groups`` (group index → :class:`Measured`), ``rest`` (time on no
    line of the map), ``step`` and ``step_us`` (the profiled step and its mean wall time),
    ``attributed_share`` (the share of the step during which ops run: groups + rest)."""

    step: str
    step_us: float
    attributed_share: float
    groups: dict[int, Measured] = field(default_factory=dict)
    rest: Measured = field(default_factory=Measured)


def _related(a: str, b: str) -> bool:
    return a == b or a.startswith(b + ".") or b.startswith(a + ".") or not a or not b


def groups_for_part(part: dict[str, Any], source_map: SourceMap, index: dict | None = None) -> list[int]:
    """Indexes of ``source_map``'s groups that ``part`` (a ``StepProfile.parts`` entry) stands for, by the
    module docstring's rule; empty when its line is not in the map. ``index``: a cache of
    ``(file, line) → group indexes`` (built when None)."""
    if index is None:
        index = line_index(source_map)
    found = index.get((part.get("file") or "", int(part.get("line") or 0)), [])
    if not found:
        return []
    groups, module = source_map.groups, part.get("module") or ""
    norm = fold_path if getattr(source_map, "folded", False) or "*" in module else (lambda p: p)
    same = [gi for gi in found if norm(groups[gi].module) == norm(module)]
    near = same or [gi for gi in found if _related(norm(groups[gi].module), norm(module))] or found
    scope = part.get("scope") or ""
    exact = [gi for gi in near if groups[gi].scope == scope]
    nested = [gi for gi in near if groups[gi].scope and scope.startswith(groups[gi].scope + "/")]
    return exact or nested or near


def line_index(source_map: SourceMap) -> dict[tuple[str, int], list[int]]:
    """``(file, line)`` → indexes of the map's groups on that line."""
    out: dict[tuple[str, int], list[int]] = {}
    for gi, g in enumerate(source_map.groups):
        if g.file:
            out.setdefault((g.file, g.line), []).append(gi)
    return out


def measure_source_map(profile: StepProfile, source_map: SourceMap) -> SourceMeasure:
    """Lay ``profile`` (:class:`app.core.profile.model.StepProfile`) on ``source_map`` (folded or not)."""
    step_us = profile.step_ms * 1e3
    out = SourceMeasure(profile.step, step_us, profile.attributed_share)
    index = line_index(source_map)
    for row in profile.rows:
        whole = Measured(row.us_per_step, row.wall_us_per_step, row.bytes_per_step, row.share)
        for part in profile.parts.get(row.key, []):
            targets = groups_for_part(part, source_map, index)
            if not targets:
                out.rest.add(whole, part["fraction"])
            for gi in targets:
                out.groups.setdefault(gi, Measured()).add(whole, part["fraction"] / len(targets))
    return out


def groups_for_instruction(profile: StepProfile, name: str, source_map: SourceMap) -> list[int]:
    """The groups of the largest part of instruction ``name`` (the line it mostly stands for); empty when
    the profile does not know ``name`` or its line is not in the map."""
    parts = profile.parts.get(name) or []
    if not parts:
        return []
    return groups_for_part(max(parts, key=lambda p: p["fraction"]), source_map)


def top_lines(line_rows: list[dict[str, Any]], n: int = 10) -> list[dict[str, Any]]:
    """The ``n`` rows of the ``by="line"`` aggregation with the most wall time that are PyTorch source lines
    (``file:line``; inputs and ``<no source>`` left out), largest first."""
    lines = [r for r in line_rows if r.get("key") and not r["key"].startswith("<")]
    return sorted(lines, key=lambda r: -(r.get("wall_us_per_step") or 0.0))[:n]


def hlo_line_shares(profile: StepProfile) -> dict[int, tuple[float, float]]:
    """1-based HLO text line (of ``profile.hlo_text``) → ``(share, busy µs per step)`` of the instruction
    on it, for every executed instruction with a line."""
    return {r.hlo_line: (r.share, r.us_per_step) for r in profile.rows if r.hlo_line}
