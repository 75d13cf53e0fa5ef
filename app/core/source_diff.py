"""Prefill-versus-decode comparison of two source maps, per primitive and per source line (no Qt).

Rows are plain data for a table: counts and output shapes side by side, and a ``status`` naming the
difference: ``same``, ``count`` (different number of equations), ``shape`` (same count, other output
shapes — typically the sequence axis: prefill ``[1,5,64]`` vs decode ``[1,1,64]``), ``only a``/``only b``.
Layers are folded first (``model.layers.*.mlp``), so a row stands for all layers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from app.core.source_map import SourceMap, short_file


@dataclass
class DiffRow:
    """One compared key. ``a``/``b`` are the two steps (e.g. prefill, decode); flops estimated."""

    key: str
    a_count: int = 0
    b_count: int = 0
    a_shapes: list[str] = field(default_factory=list)
    b_shapes: list[str] = field(default_factory=list)
    a_flops: float = 0.0
    b_flops: float = 0.0
    module: str = ""
    file: str = ""
    line: int = 0
    scope: str = ""

    @property
    def status(self) -> str:
        if self.a_count and not self.b_count:
            return "only a"
        if self.b_count and not self.a_count:
            return "only b"
        if self.a_count != self.b_count:
            return "count"
        if self.a_shapes != self.b_shapes:
            return "shape"
        return "same"


def primitive_diff(a: SourceMap, b: SourceMap) -> list[DiffRow]:
    """One row per primitive in either step, most frequent first (shapes left empty)."""
    ca, cb = a.primitive_counts(), b.primitive_counts()
    fa: dict[str, float] = {}
    fb: dict[str, float] = {}
    for sm, acc in ((a, fa), (b, fb)):
        for e in sm.equations:
            acc[e.primitive] = acc.get(e.primitive, 0.0) + e.flops
    keys = sorted(set(ca) | set(cb), key=lambda k: -(ca.get(k, 0) + cb.get(k, 0)))
    return [DiffRow(k, ca.get(k, 0), cb.get(k, 0), a_flops=fa.get(k, 0.0), b_flops=fb.get(k, 0.0)) for k in keys]


def line_diff(a: SourceMap, b: SourceMap) -> list[DiffRow]:
    """One row per (folded module, file, line, scope), in the order of ``a`` then new keys of ``b``."""
    rows: dict[tuple, DiffRow] = {}
    for side, sm in (("a", a), ("b", b)):
        folded = sm if sm.folded else sm.fold_layers()
        for g in folded.groups:
            k = g.key
            row = rows.get(k)
            if row is None:
                label = f"{g.module or '(top)'}  {short_file(g.file)}:{g.line}  {g.scope}"
                row = rows[k] = DiffRow(label.strip(), module=g.module, file=g.file, line=g.line, scope=g.scope)
            setattr(row, f"{side}_count", getattr(row, f"{side}_count") + len(g.equations))
            getattr(row, f"{side}_shapes").extend(s for s in g.out_shapes if s not in getattr(row, f"{side}_shapes"))
            setattr(row, f"{side}_flops", getattr(row, f"{side}_flops") + g.flops)
    return list(rows.values())


def compare(a: SourceMap, b: SourceMap, names: tuple[str, str] = ("prefill", "decode")) -> tuple:
    """Everything the comparison view needs: ``(primitive rows, line rows, {name: primitive counts})``."""
    return primitive_diff(a, b), line_diff(a, b), {names[0]: a.primitive_counts(), names[1]: b.primitive_counts()}
