"""Source map of a compiled step: PyTorch source line ↔ ATen op ↔ jaxpr equations ↔ StableHLO ops ↔
optimized-HLO instructions and fusions. Plain dataclasses; no Qt. Build it where JAX objects live (the
compute thread or the CLI) and hand the result to views.

A :class:`OpGroup` gathers the equations that share (module path, source file, line, name scope). The
equations are the top-level ones of the step's jaxpr and, for a control-flow equation (:data:`REGIONS`: the
``while`` of jit-loop's decode loop, a program's ``scan``, ``cond`` or nested ``jit``; :mod:`app.core.inspect.regions`),
the equations of its regions (``cond_jaxpr``, ``body_jaxpr``), walked
recursively: the decode step inside a loop's body maps to its PyTorch lines as the jit-static step does. The module path comes from the traceback (``app/core/inspect/module_paths.py``); the source line is JAX's
user frame (torch and torchax are excluded by ``app.core.inspect.ir.attribute_to_model_source``); the scope is
the name stack torchax opens per ATen op (``scaled_dot_product_attention/aten::bmm``).

Links into the texts of :class:`app.core.inspect.ir.StepIR` (1-based line numbers):

- ``jaxpr`` / ``jaxpr_source``: each equation's line range, parsed from the pretty-printed text (an equation
  inside a region: its line range in that region's block, inline or a shared ``let`` block);
- ``stablehlo``: the ops lowered from each equation. Ops are aligned to equations in order (lowering
  visits equations in order) by matching their (file, line, scope) debug location, so each layer gets its
  own ops; ops of private functions (``call @silu``) are added to the calling equation; ops inside a
  ``stablehlo.while`` region align with the region's equations (the name stack's ``while/body`` segments are
  dropped, :func:`app.core.inspect.text_index.split_loc_name`);
- ``hlo``: optimized HLO keeps no layer identity, so a group links to every instruction whose metadata
  names its (file, line) and scope, in all layers (exact once layers are folded), plus the fusions those
  instructions were fused into; instructions of a ``while`` body computation link the same way.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from app.core.inspect import text_index as tx
from app.core.inspect.flops import eqn_flops
from app.core.inspect.ir import attribute_to_model_source
from app.core.inspect.location import SourceLocation
from app.core.inspect.module_paths import ModulePathResolver, fold_path
from app.core.inspect.regions import (  # noqa: F401
    CALLS,
    REGION_OPS,
    REGIONS,
    JaxTraceback,
    inherit,
    region_inputs,
    region_jaxprs,
)
from app.core.inspect.views import HLO, JAXPR, JAXPR_SOURCE, STABLEHLO
from app.core.jax_private import is_literal, is_user_filename, open_jaxpr

if TYPE_CHECKING:
    from jax.extend.core import Jaxpr, JaxprEqn

    from app.core.inspect.ir import StepIR

VIEWS = (JAXPR, JAXPR_SOURCE, STABLEHLO, HLO)
@dataclass
class EquationInfo:
    """One equation of the step's jaxpr (``index`` = position in :attr:`SourceMap.equations`: the top-level
    equations in order, each control-flow equation followed by the equations of its regions).

    ``operands``: producer equation index per non-literal input, or ``-1 - k`` for input ``k`` of the
    jaxpr. ``out_shapes`` like ``f32[1,4,1,16]``; ``flops`` estimated (``app/core/inspect/flops.py``).
    ``file``/``line``/``function``: the user frame (``line`` 0 when none). ``scope``: the name stack.
    ``lines``: ``{"jaxpr": [first, last], "jaxpr_source": [first, last], "stablehlo": [line, …]}`` —
    1-based; a view is missing when its text could not be parsed or nothing was lowered from it.
    ``parent``: index of the control-flow equation whose region holds it (-1 at the top level); ``region``:
    that region, ``"while/body"`` or ``"while/cond"`` (``""`` at the top level). Inside a region, an operand
    that is the region's input is the producer of what the control-flow equation passes in (a loop's carry: its
    initial value), so a weight read inside a loop's body still points at the step's input ``-1 - k``. A
    control-flow equation's own ``flops`` are 0: its regions' equations carry them."""

    index: int
    primitive: str
    out_shapes: list[str]
    flops: float
    module: str
    file: str
    line: int
    function: str
    scope: str
    operands: list[int] = field(default_factory=list)
    lines: dict[str, list[int]] = field(default_factory=dict)
    parent: int = -1
    region: str = ""

    @property
    def location(self) -> SourceLocation:
        return SourceLocation(self.file, self.line, self.function, self.scope)


@dataclass
class OpGroup:
    """Equations sharing (module, file, line, scope). ``primitives``: primitive → count; ``flops``: sum;
    ``stablehlo_lines`` / ``hlo_lines``: linked lines; ``hlo_instructions``/``fusions``: instruction names;
    ``repeats``: how many layers a folded group stands for (1 otherwise)."""

    module: str
    file: str
    line: int
    function: str
    scope: str
    equations: list[int] = field(default_factory=list)
    primitives: dict[str, int] = field(default_factory=dict)
    out_shapes: list[str] = field(default_factory=list)
    flops: float = 0.0
    stablehlo_lines: list[int] = field(default_factory=list)
    hlo_lines: list[int] = field(default_factory=list)
    hlo_instructions: list[str] = field(default_factory=list)
    fusions: list[str] = field(default_factory=list)
    repeats: int = 1

    @property
    def key(self) -> tuple[str, str, int, str]:
        return (self.module, self.file, self.line, self.scope)

    @property
    def location(self) -> SourceLocation:
        return SourceLocation(self.file, self.line, self.function, self.scope)

    @property
    def label(self) -> str:
        """``transformers/models/llama/modeling_llama.py:245`` (:attr:`SourceLocation.label`)."""
        return self.location.label


@dataclass
class SourceMap:
    """Everything above for one step (``step`` = ``prefill``/``decode``), as plain data."""

    step: str
    equations: list[EquationInfo]
    groups: list[OpGroup]
    input_labels: list[str] = field(default_factory=list)
    folded: bool = False
    _reverse: dict[str, dict[int, list[int]]] | None = field(default=None, repr=False, compare=False)

    def group_lines(self, group: OpGroup, view: str) -> list[int]:
        """Sorted line numbers of ``group`` in the text of ``view`` (one of :data:`VIEWS`)."""
        if view == STABLEHLO:
            return sorted(group.stablehlo_lines)
        if view == HLO:
            return sorted(group.hlo_lines)
        out: set[int] = set()
        for i in group.equations:
            r = self.equations[i].lines.get(view)
            if r:
                out.update(range(r[0], r[1] + 1))
        return sorted(out)

    def groups_for_line(self, view: str, line_no: int) -> list[int]:
        """Indexes of the groups linked to ``line_no`` of ``view`` (empty if none)."""
        if self._reverse is None:
            self._reverse = {}
            for v in VIEWS:
                index: dict[int, list[int]] = {}
                for gi, g in enumerate(self.groups):
                    for ln in self.group_lines(g, v):
                        index.setdefault(ln, []).append(gi)
                self._reverse[v] = index
        return list(self._reverse.get(view, {}).get(line_no, []))

    def primitive_counts(self) -> dict[str, int]:
        """Top-level primitive → number of equations (repeats of folded groups included)."""
        c: Counter[str] = Counter()
        for g in self.groups:
            for p, n in g.primitives.items():
                c[p] += n
        return dict(c.most_common())

    @property
    def views(self) -> tuple[str, ...]:
        """The IR views whose line numbers the map holds (:data:`VIEWS`)."""
        return VIEWS

    def total_flops(self) -> float:
        return sum(g.flops for g in self.groups)

    def fold_layers(self) -> SourceMap:
        """A map whose repeated layers (numeric path components) are merged: ``model.layers.*.mlp``.
        Counts and flops are summed over layers; ``repeats`` says how many layers a group stands for."""
        merged: dict[tuple, OpGroup] = {}
        layers: dict[tuple, set[str]] = {}
        for g in self.groups:
            folded = fold_path(g.module)
            key = (folded, g.file, g.line, g.scope)
            m = merged.get(key)
            if m is None:
                m = merged[key] = OpGroup(folded, g.file, g.line, g.function, g.scope)
                layers[key] = set()
            layers[key].add(g.module)
            m.equations += g.equations
            for p, n in g.primitives.items():
                m.primitives[p] = m.primitives.get(p, 0) + n
            m.out_shapes += [s for s in g.out_shapes if s not in m.out_shapes]
            m.flops += g.flops
            m.stablehlo_lines = sorted(set(m.stablehlo_lines) | set(g.stablehlo_lines))
            m.hlo_lines = sorted(set(m.hlo_lines) | set(g.hlo_lines))
            m.hlo_instructions += [s for s in g.hlo_instructions if s not in m.hlo_instructions]
            m.fusions += [s for s in g.fusions if s not in m.fusions]
        for key, m in merged.items():
            m.repeats = len(layers[key])
        return SourceMap(self.step, self.equations, list(merged.values()), self.input_labels, folded=True)


def _shape_str(aval: object) -> str:
    dtype = getattr(aval, "dtype", None)
    short = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "int32": "i32", "int64": "i64",
             "bool": "bool", "uint32": "u32", "int8": "i8", "uint8": "u8", "float64": "f64"}
    name = short.get(str(dtype), str(dtype))
    return f"{name}[{','.join(str(d) for d in getattr(aval, 'shape', ()))}]"


def _frames(tb: JaxTraceback | None) -> tuple[list[Any], list[int], list[int], list[str]]:
    assert tb is not None  # JAX records a traceback with each equation
    codes, lastis = tb.raw_frames()
    frames = tb.frames
    lines = [f.line_num for f in frames] if len(frames) == len(codes) else list(lastis)
    return list(codes), list(lastis), lines, [f.function_name for f in frames]


def _equation(i: int, eqn: JaxprEqn, var_index: dict, resolver: ModulePathResolver) -> EquationInfo:
    codes, lastis, lines, funcs = _frames(eqn.source_info.traceback)
    user = next((j for j, c in enumerate(codes) if is_user_filename(c.co_filename)), None)
    operands = [var_index[id(v)] for v in eqn.invars if not is_literal(v) and id(v) in var_index]
    return EquationInfo(
        index=i, primitive=eqn.primitive.name,
        out_shapes=[_shape_str(v.aval) for v in eqn.outvars], flops=eqn_flops(eqn),
        module=resolver.path(codes, lastis, lines, user),
        file=codes[user].co_filename if user is not None else "",
        line=lines[user] if user is not None else 0,
        function=funcs[user] if user is not None and user < len(funcs) else "",
        scope=str(eqn.source_info.name_stack), operands=operands,
    )


def _align_stablehlo(eqns: list[EquationInfo], ops: list[tx.StableOp], funcs: dict[str, tuple[int, int]],
                     lookahead: int = 64) -> None:
    """Assign each ``main`` op to the next equation (from the last match on) with the same location:
    first (file, line, scope, primitive), then (file, line, scope prefix) for ops a lowering rule added."""
    keys = [(e.file, e.line, e.scope) for e in eqns]
    ptr = 0
    for op in ops:
        if op.func != "main":
            continue
        window = range(ptr, min(ptr + lookahead, len(eqns)))
        if not op.file:  # a region op (``stablehlo.while``): its location is printed after its regions
            region = op.op.rsplit(".", 1)[-1]
            hit = next((j for j in window if eqns[j].primitive in REGION_OPS.get(region, ())), None)
            if hit is not None:
                ptr = hit
                eqns[hit].lines.setdefault(STABLEHLO, []).append(op.text_line)
            continue
        key = (op.file, op.line, op.scope)
        prim = op.primitive.split("(")[0]
        hit = next((j for j in window if keys[j] == key and eqns[j].primitive == prim), None)
        if hit is None:
            hit = next((j for j in window if keys[j][:2] == key[:2] and key[2].startswith(keys[j][2])), None)
        if hit is None:
            continue
        ptr = hit
        target = eqns[hit].lines.setdefault(STABLEHLO, [])
        target.append(op.text_line)
        if op.callee in funcs:
            a, b = funcs[op.callee]
            target.extend(range(a, b + 1))


def _align_private(eqns: list[EquationInfo], ops: list[tx.StableOp], funcs: dict[str, tuple[int, int]]) -> None:
    """The ops of a nested ``jit``'s private function (``func.func private @inner``) aligned with the equations of
    that ``jit``'s body (region ``jit/inner``), as :func:`_align_stablehlo` aligns ``main``'s."""
    by_func: dict[str, list[tx.StableOp]] = {}
    for op in ops:
        if op.func != "main":
            by_func.setdefault(op.func, []).append(op)
    for name, func_ops in by_func.items():
        base = name.rsplit("_", 1)[0] if name.rsplit("_", 1)[-1].isdigit() else name
        body = [e for e in eqns if e.region in (f"jit/{name}", f"jit/{base}", f"pjit/{name}", f"pjit/{base}")]
        if body:
            _align_stablehlo(body, [tx.StableOp(**{**vars(o), "func": "main"}) for o in func_ops], funcs)


def _link_hlo(groups: list[OpGroup], instructions: list[tx.HloInstruction]) -> None:
    by_line: dict[tuple[str, int], list[tx.HloInstruction]] = {}
    for ins in instructions:
        if ins.file:
            by_line.setdefault((ins.file, ins.line), []).append(ins)
    for g in groups:
        hits = [i for i in by_line.get((g.file, g.line), []) if i.scope == g.scope or
                (g.scope and i.scope.startswith(g.scope + "/"))]
        g.hlo_lines = [i.text_line for i in hits]
        g.hlo_instructions = [i.name for i in hits]
        g.fusions = list(dict.fromkeys(i.fusion for i in hits if i.fusion))


def _walk(jaxpr: Jaxpr, var_index: dict, resolver: ModulePathResolver, eqns: list[EquationInfo], parent: int, region: str,
          nested: list[tuple[int, int, str, str, int]]) -> list[int]:
    """Append the equations of ``jaxpr`` (and of the regions of its control-flow equations) to ``eqns``; returns
    the indexes of ``jaxpr``'s own equations. ``nested`` gets ``(control-flow equation, region's first index,
    parameter, region, region's equation count)`` per region walked."""
    own: list[int] = []
    for eqn in jaxpr.eqns:
        i = len(eqns)
        info = _equation(i, eqn, var_index, resolver)
        info.parent, info.region = parent, region
        if parent >= 0 and eqns[parent].primitive in CALLS:
            inherit(info, eqns[parent])
        eqns.append(info)
        own.append(i)
        for sub, param, key, label in region_jaxprs(eqn):
            info.flops = 0.0  # its regions' equations carry them
            for inner, outer in zip(sub.invars, region_inputs(eqn, param)):
                if not is_literal(outer) and id(outer) in var_index:
                    var_index[id(inner)] = var_index[id(outer)]
            first = len(eqns)
            count = len(_walk(sub, var_index, resolver, eqns, i, f"{eqn.primitive.name}/{label}", nested))
            nested.append((i, first, key, label, count))
        for v in eqn.outvars:
            var_index[id(v)] = i
    return own


def _jaxpr_lines(eqns: list[EquationInfo], top: list[int], nested: list[tuple[int, int, str, str, int]],
                 text: str | None, view: str) -> None:
    """Each equation's line range in a jaxpr text (``view``): the top level's, then each region's inside its
    control-flow equation's range (parents are walked before their regions)."""
    spans = tx.jaxpr_equation_lines(text, len(top))
    if not spans or not text:  # (no spans without a text)
        return
    for i, span in zip(top, spans):
        eqns[i].lines[view] = list(span)
    lines = text.split("\n")
    for parent, first, param, _, count in sorted(nested, key=lambda n: n[1]):
        where = eqns[parent].lines.get(view)
        opening = tx.jaxpr_param_block(lines, (where[0], where[1]), param) if where else None
        inner = tx.jaxpr_block_lines(lines, opening, count) if opening is not None else None
        for k, span in enumerate(inner or []):
            eqns[first + k].lines[view] = list(span)


def build_source_map(step_ir: StepIR, step: str = "", model: Any | None = None) -> SourceMap:
    """Build the :class:`SourceMap` of a :class:`app.core.inspect.ir.StepIR` (needs ``traced_jaxpr``).

    ``model``: the traced ``torch.nn.Module`` for exact module paths (``model.layers.3.self_attn``);
    without it paths use attribute names from the call line and ``<Class>.<k>``. Raises ``ValueError`` if
    the step has no jaxpr.
    """
    closed = getattr(step_ir, "traced_jaxpr", None)
    if closed is None:
        raise ValueError("This step has no jaxpr to map (IR capture was off or failed).")
    attribute_to_model_source()
    jaxpr = open_jaxpr(closed)
    var_index = {id(v): -1 - k for k, v in enumerate(jaxpr.invars)}
    resolver = ModulePathResolver(model)
    eqns: list[EquationInfo] = []
    nested: list[tuple[int, int, str, str, int]] = []
    top = _walk(jaxpr, var_index, resolver, eqns, -1, "", nested)
    for view in (JAXPR, JAXPR_SOURCE):
        _jaxpr_lines(eqns, top, nested, getattr(step_ir, view, None), view)
    ops = tx.stablehlo_ops(getattr(step_ir, "stablehlo_debug", None), getattr(step_ir, "stablehlo", None))
    if ops:
        _align_stablehlo(eqns, ops, tx.function_lines(step_ir.stablehlo))
        _align_private(eqns, ops, tx.function_lines(step_ir.stablehlo))
    groups: dict[tuple, OpGroup] = {}
    for e in eqns:
        key = (e.module, e.file, e.line, e.scope)
        g = groups.get(key)
        if g is None:
            g = groups[key] = OpGroup(e.module, e.file, e.line, e.function, e.scope)
        g.equations.append(e.index)
        g.primitives[e.primitive] = g.primitives.get(e.primitive, 0) + 1
        g.out_shapes += [s for s in e.out_shapes if s not in g.out_shapes]
        g.flops += e.flops
        g.stablehlo_lines += e.lines.get(STABLEHLO, [])
    _link_hlo(list(groups.values()), tx.hlo_instructions(getattr(step_ir, "hlo", None)))
    return SourceMap(step, eqns, list(groups.values()), list(getattr(step_ir, "input_labels", []) or []))
