"""Which PyTorch source line, ATen op and module each executed HLO instruction stands for, and how its
measured time is split when it stands for several. No Qt, no JAX: works on a parsed module
(:mod:`app.core.profile.hlo`) and, optionally, a :class:`app.core.inspect.source_map.SourceMap`.

Rules, in order, for a top-level instruction (one that runs and has profiler events):

1. ``fused`` — a fusion is split over the source locations ``(file, line, function, scope)`` of its fused
   instructions that carry metadata (XLA keeps each fused op's own metadata). **Split rule**: each
   location gets the fraction ``FLOPs of its fused ops / FLOPs of all located fused ops`` (the
   :mod:`app.core.profile.hlo` estimates); a fusion whose located ops have no FLOPs at all (data movement)
   is split equally over its locations. Time, bytes and FLOPs of the instruction are split with the same
   fractions, so every aggregation sums back to the instruction's totals.
2. ``metadata`` — any other instruction with metadata (or a fusion whose fused ops have none but which
   has its own) is one location.
3. ``weight`` — an instruction without metadata that reads a weight parameter (XLA drops the metadata of
   the projection ``dot`` s it rewrites on CPU; inside a loop's body the weight is an element of the body's
   parameter, followed back to the entry parameter the loop was given): the weight's own module (``weights['model.layers.0.mlp.
   up_proj.weight']`` → ``model.layers.0.mlp.up_proj``) and the source line of the jaxpr equation that
   consumes that input in the source map.
4. ``operand`` — otherwise the dominant location of its first operand that has one (``copy`` of a
   fusion result, a ``reduce-window`` split out of a reduction), then ``input`` — a copy of an entry
   parameter (``<input cache[1]>``), else ``none``.

Module paths: HLO metadata has no layer identity (the layers run the same Python lines). A location's
module comes from the source-map groups with the same ``(file, line)`` and the longest matching scope: when
those groups (one per layer, in trace order) are as many as the top-level instructions holding that
location (in schedule order), the k-th instruction gets the k-th group's module; otherwise the groups'
common folded path (``model.layers.*.mlp``), or their common prefix. Before that count, a weight hint
decides when it can: the one candidate module related to (prefix of, or under) the module of a weight the
instruction reads (``model.layers.3.input_layernorm.weight`` picks layer 3's norm), else a weight its
users read, its operands read, then two hops away.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from app.core.inspect.location import SourceLocation
from app.core.inspect.module_paths import fold_path
from app.core.profile.hlo import NO_WORK, HloModuleInfo, HloOp

if TYPE_CHECKING:
    from app.core.inspect.source_map import SourceMap

_WEIGHT = re.compile(r"^weights\[['\"](.+)['\"]\]$")


@dataclass(frozen=True)
class Source:
    """Where (part of) an instruction came from. ``file``/``line``/``function``: the user frame (line 0
    when unknown); ``scope``: torchax's name stack (``scaled_dot_product_attention/aten::bmm``);
    ``module``: the ``nn.Module`` path (``""`` when unknown); ``label``: text for a location without a
    line (``<input cache[1]>``, ``<no source>``); ``primitive``: the JAX primitive of the metadata's
    ``op_name`` (``dot_general``), for ops outside any ATen scope."""

    file: str = ""
    line: int = 0
    function: str = ""
    scope: str = ""
    module: str = ""
    label: str = ""
    primitive: str = ""

    @property
    def location(self) -> SourceLocation:
        return SourceLocation(self.file, self.line, self.function, self.scope)

    @property
    def where(self) -> str:
        """``transformers/models/llama/modeling_llama.py:164`` (:attr:`SourceLocation.label`), or :attr:`label`
        without a line."""
        return self.location.label or self.label or "<no source>"

    @property
    def aten(self) -> str:
        """The ATen op: the last ``aten::`` component of the scope, else its first component
        (``linear``, ``scaled_dot_product_attention``), else ``jax:<primitive>`` (code outside torchax,
        such as the app's token selection), else ``<function>``, else :attr:`label`."""
        parts = [p for p in self.scope.split("/") if p]
        aten = [p for p in parts if p.startswith("aten::")]
        if aten or parts:
            return aten[-1] if aten else parts[0]
        if self.primitive:
            return f"jax:{self.primitive}"
        return f"<{self.function}>" if self.function else (self.label or "<no source>")

    @property
    def key(self) -> tuple[str, int, str]:
        return (self.file, self.line, self.scope)


@dataclass
class Part:
    """A share of one instruction: ``fraction`` of its time, bytes and FLOPs go to ``source``; ``via`` is
    the rule that found it (``fused``, ``metadata``, ``weight``, ``operand``, ``input``, ``none``)."""

    source: Source
    fraction: float
    via: str


@dataclass
class Attribution:
    """``parts[name]``: the parts of every top-level instruction that does work; ``weights_read[name]``:
    weight labels it reads."""

    parts: dict[str, list[Part]] = field(default_factory=dict)
    weights_read: dict[str, list[str]] = field(default_factory=dict)


def _located(op: HloOp) -> Source | None:
    return Source(op.file, op.line, op.function, op.scope, primitive=op.primitive) if op.file else None


def _fused_parts(op: HloOp, info: HloModuleInfo) -> list[Part]:
    flops: dict[Source, float] = {}
    for name in op.fused:
        inner = info.ops[name]
        src = _located(inner)
        if src is not None and inner.opcode not in ("parameter", "fusion"):
            flops[src] = flops.get(src, 0.0) + inner.flops
    total = sum(flops.values())
    if not flops:
        return []
    return [Part(s, f / total if total > 0 else 1.0 / len(flops), "fused") for s, f in flops.items()]


def _weight_source(label: str, source_map: Any | None) -> Source:
    module = _weight_module(label)
    eqn = _consumer(label, source_map)
    if eqn is None:
        return Source(module=module, label=f"<weight {label}>")
    return Source(eqn.file, eqn.line, eqn.function, eqn.scope, module)


def _consumer(label: str, source_map: Any | None) -> Any | None:
    """The first jaxpr equation reading input ``label`` (a ``dot_general`` preferred), or None."""
    if source_map is None:
        return None
    labels = list(getattr(source_map, "input_labels", []) or [])
    if label not in labels:
        return None
    k = -1 - labels.index(label)
    readers = [e for e in source_map.equations if k in e.operands and e.line]
    dots = [e for e in readers if e.primitive == "dot_general"]
    return (dots or readers or [None])[0]


def attribute(info: HloModuleInfo, source_map: Any | None = None) -> Attribution:
    """Parts of every top-level instruction of ``info`` that does work (see the module docstring)."""
    out = Attribution()
    in_entry = set(info.entry)
    order = info.entry + [n for n, op in info.ops.items() if op.top_level and n not in in_entry]
    for name in order:
        op = info.ops[name]
        if op.opcode in NO_WORK:
            continue
        weights = [w for w in _params_read(op, info) if _WEIGHT.match(w)]
        out.weights_read[name] = weights
        parts = _fused_parts(op, info) if op.opcode == "fusion" else []
        if not parts and (src := _located(op)) is not None:
            parts = [Part(src, 1.0, "metadata")]
        if not parts and weights:
            parts = [Part(_weight_source(weights[0], source_map), 1.0, "weight")]
        if not parts:
            parts = _inherited(op, info, out.parts)
        out.parts[name] = parts
    if source_map is not None:
        _assign_modules(out, info, source_map)
    return out


def _params_read(op: HloOp, info: HloModuleInfo) -> list[str]:
    """Entry-parameter labels ``op`` reads, directly or through bitcasts / tuple elements (inside a loop's body:
    through the element of the body's parameter that the loop was given that entry parameter for)."""
    out, frontier, seen = [], list(op.operands), set()
    while frontier:
        name = frontier.pop(0)
        src = info.ops.get(name)
        if src is None or name in seen:
            continue
        seen.add(name)
        if src.opcode == "parameter" and src.param_label and src.top_level:
            out.append(src.param_label)
        elif (outer := info.carried_source(name)) is not None:
            frontier.append(outer)
        elif src.opcode in ("bitcast", "get-tuple-element", "tuple"):
            frontier += src.operands
    return out


def _inherited(op: HloOp, info: HloModuleInfo, done: dict[str, list[Part]]) -> list[Part]:
    for name in op.operands:
        parts = [p for p in done.get(name, []) if p.via != "none"]
        if parts:
            best = max(parts, key=lambda p: p.fraction)
            return [Part(best.source, 1.0, "operand")]
    for name in op.operands:
        if label := info.parameter_of(name):
            return [Part(Source(label=f"<input {label}>"), 1.0, "input")]
    return [Part(Source(label=f"<no source: {op.opcode}>"), 1.0, "none")]


def _groups_for(key: tuple[str, int, str], by_line: dict[tuple[str, int], list[Any]]) -> list[Any]:
    file, line, scope = key
    cands = [g for g in by_line.get((file, line), []) if g.scope == scope or scope.startswith(g.scope + "/")
             or not g.scope]
    if not cands:
        return []
    best = max(len(g.scope) for g in cands)
    return [g for g in cands if len(g.scope) == best]


def common_module(modules: list[str]) -> str:
    """One path for several modules: itself if they agree, else their common folded path
    (``model.layers.*.mlp``), else the longest common dotted prefix of the folded paths (``""`` when
    none)."""
    distinct = list(dict.fromkeys(modules))
    if len(distinct) <= 1:
        return distinct[0] if distinct else ""
    folded = list(dict.fromkeys(fold_path(m) for m in distinct))
    if len(folded) == 1:
        return folded[0]
    parts = [m.split(".") for m in folded]
    prefix = []
    for items in zip(*parts):
        if len(set(items)) != 1:
            break
        prefix.append(items[0])
    return ".".join(prefix)


def _weight_module(label: str) -> str:
    m = _WEIGHT.match(label)
    name = m.group(1) if m else label
    return name.rsplit(".", 1)[0] if "." in name else name


def _hint_levels(out: Attribution, info: HloModuleInfo) -> dict[str, list[list[str]]]:
    """Per instruction, modules of the weights read by itself, by its users, by its operands, then by
    its users' users and its operands' operands."""
    own = {n: [_weight_module(w) for w in ws] for n, ws in out.weights_read.items()}
    users: dict[str, list[str]] = {}
    for name in out.parts:
        for o in info.ops[name].operands:
            users.setdefault(o, []).append(name)
    ups = {n: [o for o in info.ops[n].operands if o in out.parts] for n in out.parts}

    def reads(names: list[str]) -> list[str]:
        return [m for n in names for m in own.get(n, [])]

    return {n: [own.get(n, []), reads(users.get(n, [])), reads(ups[n]),
                reads([u for v in users.get(n, []) for u in users.get(v, [])]),
                reads([u for v in ups[n] for u in ups.get(v, [])])] for n in out.parts}


def _related(module: str, hint: str) -> bool:
    return hint == module or hint.startswith(module + ".") or module.startswith(hint + ".")


def _pick(candidates: list[str], levels: list[list[str]]) -> str | None:
    """The one candidate module a weight hint points at (nearest level first), or None."""
    unique = list(dict.fromkeys(candidates))
    if len(unique) == 1:
        return unique[0]
    for hints in levels:
        hits = [c for c in unique if any(_related(c, h) for h in hints)]
        longest = [c for c in hits if len(c) == max((len(h) for h in hits), default=0)]
        if len(longest) == 1:
            return longest[0]
    return None


def _assign_modules(out: Attribution, info: HloModuleInfo, source_map: SourceMap) -> None:
    by_line: dict[tuple[str, int], list[Any]] = {}
    for g in source_map.groups:
        by_line.setdefault((g.file, g.line), []).append(g)
    holders: dict[tuple, list[str]] = {}
    for name, parts in out.parts.items():
        for p in parts:
            if p.via in ("fused", "metadata"):
                holders.setdefault(p.source.key, []).append(name)
    levels = _hint_levels(out, info)
    module_of: dict[tuple, dict[str, str]] = {}
    for key, names in holders.items():
        modules = [g.module for g in _groups_for(key, by_line)]
        zipped = dict(zip(names, modules)) if len(modules) == len(names) else {}
        fallback = common_module(modules)
        module_of[key] = {n: _pick(modules, levels[n]) or zipped.get(n, fallback) for n in names}
    resolved: dict[str, list[Part]] = {}
    for name, parts in out.parts.items():
        new = []
        for p in parts:
            if p.via in ("fused", "metadata"):
                p = Part(_with_module(p.source, module_of[p.source.key][name]), p.fraction, p.via)
            elif p.via == "operand":
                p = _inherit_module(p, name, info, resolved)
            new.append(p)
        resolved[name] = new
    out.parts = resolved


def _with_module(src: Source, module: str) -> Source:
    return Source(src.file, src.line, src.function, src.scope, module, src.label, src.primitive)


def _inherit_module(p: Part, name: str, info: HloModuleInfo, resolved: dict[str, list[Part]]) -> Part:
    for operand in info.ops[name].operands:
        for q in resolved.get(operand, []):
            if q.source.key == p.source.key and q.source.label == p.source.label:
                return Part(q.source, p.fraction, p.via)
    return p
