"""Prefill-versus-decode comparison of two source maps, per primitive and per source line (no Qt).

Rows are plain data for a table, aligned by source line (module, file, line, name scope) and by primitive:
counts, primitives and output shapes side by side, and a ``status`` naming the difference:

- ``same``: same primitives, same output shapes;
- ``seq``: same primitives, shapes that differ only in the sequence axis (prefill ``f32[1,16,256]`` vs
  decode ``f32[1,1,256]``: the expected difference of a one-token step);
- structural differences: ``ops`` (same count, other primitives), ``count`` (another number of
  equations), ``shape`` (shapes that differ beyond the sequence axis), ``only a`` / ``only b``.

The sequence lengths ``(a, b)`` are inferred as the most frequent pair of differing dimensions over all
rows (:func:`sequence_pair`). Layers are folded first (``model.layers.*.mlp``), so a row stands for all
layers.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from app.core.inspect.location import SourceLocation
from app.core.inspect.source_map import SourceMap
from app.core.inspect.views import MODEL_STEPS
from app.core.units import short_file


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
    a_prims: dict[str, int] = field(default_factory=dict)
    b_prims: dict[str, int] = field(default_factory=dict)
    seq: tuple[int, int] | None = None  # the sequence lengths of the two steps (see sequence_pair)

    @property
    def location(self) -> SourceLocation:
        return SourceLocation(self.file, self.line, "", self.scope)

    @property
    def status(self) -> str:
        if self.a_count and not self.b_count:
            return "only a"
        if self.b_count and not self.a_count:
            return "only b"
        if self.a_count != self.b_count:
            return "count"
        if self.a_prims != self.b_prims:
            return "ops"
        if self.a_shapes == self.b_shapes:
            return "same"
        if self.seq and _seq_only(self.a_shapes, self.b_shapes, self.seq):
            return "seq"
        return "shape"

    @property
    def structural(self) -> bool:
        """Another computation, not just another sequence length (``ops``, ``count``, ``shape``, only)."""
        return self.status not in ("same", "seq")

    def primitive_change(self) -> str:
        """``+2 mul, −1 select_n``: primitives whose counts differ from ``a`` to ``b`` (``""`` if none)."""
        parts = []
        for p in sorted(set(self.a_prims) | set(self.b_prims)):
            d = self.b_prims.get(p, 0) - self.a_prims.get(p, 0)
            if d:
                parts.append(f"{'+' if d > 0 else '−'}{abs(d)} {p}")
        return ", ".join(parts)


_SHAPE = re.compile(r"^(\w+)\[([\d,]*)\]$")


def _dims(shape: str) -> tuple[str, tuple[int, ...]] | None:
    m = _SHAPE.match(shape)
    if not m:
        return None
    return m.group(1), tuple(int(d) for d in m.group(2).split(",") if d)


def _differing(a: str, b: str) -> list[tuple[int, int]] | None:
    """Pairs of differing dimensions of two shapes of the same dtype and rank, else ``None``."""
    da, db = _dims(a), _dims(b)
    if da is None or db is None or da[0] != db[0] or len(da[1]) != len(db[1]):
        return None
    return [(x, y) for x, y in zip(da[1], db[1]) if x != y]


def _seq_only(a_shapes: list[str], b_shapes: list[str], seq: tuple[int, int]) -> bool:
    """Every shape of one side has a partner on the other side equal to it but in the sequence axis."""

    def matched(xs: list[str], ys: list[str], pair: tuple[int, int]) -> bool:
        for x in xs:
            if not any((d := _differing(x, y)) is not None and all(p == pair for p in d) for y in ys):
                return False
        return True

    return matched(a_shapes, b_shapes, seq) and matched(b_shapes, a_shapes, (seq[1], seq[0]))


def sequence_pair(rows: list[DiffRow]) -> tuple[int, int] | None:
    """The most frequent pair of differing dimensions between the rows' shapes, position by position
    (prefill 16 vs decode 1 → ``(16, 1)``); ``None`` when no shape differs."""
    pairs: Counter[tuple[int, int]] = Counter()
    for r in rows:
        if r.a_count != r.b_count or len(r.a_shapes) != len(r.b_shapes):
            continue
        for a, b in zip(r.a_shapes, r.b_shapes):
            d = _differing(a, b)
            if d and len(set(d)) == 1:
                pairs[d[0]] += 1
    return pairs.most_common(1)[0][0] if pairs else None


def summary(rows: list[DiffRow], names: tuple[str, str] = MODEL_STEPS) -> str:
    """``91 source-line groups: 15 same, 60 differ only in sequence length (16 → 1), 16 structurally``."""
    counts = Counter("same" if r.status == "same" else "seq" if r.status == "seq" else "structural"
                     for r in rows)
    seq = next((r.seq for r in rows if r.seq), None)
    seq_text = f" ({names[0]} {seq[0]} → {names[1]} {seq[1]})" if seq else ""
    return (f"{len(rows)} source-line groups: {counts['same']} the same, {counts['seq']} differ only in "
            f"sequence length{seq_text}, {counts['structural']} differ in structure")


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
                op = g.scope.split("/")[0].removeprefix("aten::")
                label = f"{g.module or '(top)'} · {short_file(g.file).rsplit('/', 1)[-1]}:{g.line} · {op}"
                row = rows[k] = DiffRow(label.strip(), module=g.module, file=g.file, line=g.line, scope=g.scope)
            setattr(row, f"{side}_count", getattr(row, f"{side}_count") + len(g.equations))
            getattr(row, f"{side}_shapes").extend(s for s in g.out_shapes if s not in getattr(row, f"{side}_shapes"))
            setattr(row, f"{side}_flops", getattr(row, f"{side}_flops") + g.flops)
            prims = getattr(row, f"{side}_prims")
            for p, n in g.primitives.items():
                prims[p] = prims.get(p, 0) + n
    out = list(rows.values())
    seq = sequence_pair(out)
    for row in out:
        row.seq = seq
    return out


def compare(a: SourceMap, b: SourceMap, names: tuple[str, str] = MODEL_STEPS) -> tuple:
    """Everything the comparison view needs: ``(primitive rows, line rows, {name: primitive counts})``."""
    return primitive_diff(a, b), line_diff(a, b), {names[0]: a.primitive_counts(), names[1]: b.primitive_counts()}
