"""The optimized HLO module as the profiler needs it: every instruction with its shape, operands, estimated
FLOPs, bytes accessed and source metadata. Pure text parsing of ``Compiled.as_text()``; no JAX import.

Source metadata (``op_name``, ``stack_frame_id`` resolved through the ``FileNames`` / ``FunctionNames`` /
``FileLocations`` / ``StackFrames`` tables) comes from :func:`app.core.inspect.text_index.hlo_instructions`;
this module adds what a cost model needs, read from the same instruction lines.

Estimates follow XLA's ``HloCostAnalysis`` (``xla/service/hlo_cost_analysis.cc``), as
:mod:`app.core.inspect.flops` does for jaxpr equations:

- FLOPs: ``dot`` ``2 · prod(output) · prod(lhs contracting dims)``; element-wise arithmetic and comparisons
  ``prod(output)``; ``reduce`` ``prod(operand 0)``; ``reduce-window`` ``prod(output) · prod(window)``; a
  fusion the sum of its fused instructions; data movement (copy, bitcast, slice, gather, …),
  ``custom-call`` and ``convolution`` 0 (no convolution in the decoders profiled here).
- bytes accessed (top-level instructions): bytes of every operand plus bytes of the output, i.e. each
  buffer is read or written once. A fusion's or instruction's ``dynamic-update-slice`` root writes in
  place: its buffer operand and its output count as the update's size (``HandleDynamicUpdateSlice``);
  a fused parameter used only through ``gather`` / ``dynamic-slice`` / ``slice`` counts as the slices'
  size (an embedding lookup reads one row, not the table).
  Nothing is known of caches: bytes are what the op touches, not what comes from DRAM.

Loops (jit-loop's decode loop: one ``while`` whose ``body`` computation is the decode step): the body's and
condition's instructions are top-level instructions of their own computations (on XLA:CPU each one is a
profiler event per iteration); :attr:`HloModuleInfo.loops` names the ``while`` of each such computation and
:meth:`HloModuleInfo.carried_source` follows a ``get-tuple-element`` of the body's parameter back to the
instruction the loop was given for that element (a weight read inside the body is the entry parameter's).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from app.core.inspect.text_index import HLO_CALLS, HLO_INSTRUCTION, HLO_KIND, hlo_instructions

#: Bytes per element of each HLO primitive type (``xla/primitive_util.h``).
DTYPE_BYTES = {
    "pred": 1, "s8": 1, "u8": 1, "f8e4m3fn": 1, "f8e5m2": 1, "f8e4m3": 1, "f8e5m2fnuz": 1, "f8e4m3fnuz": 1,
    "s16": 2, "u16": 2, "f16": 2, "bf16": 2, "s32": 4, "u32": 4, "f32": 4, "s64": 8, "u64": 8, "f64": 8,
    "c64": 8, "c128": 16, "s4": 0.5, "u4": 0.5, "token": 0,
}
ELEMENTWISE = frozenset({
    "add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum", "power", "atan2", "negate",
    "abs", "sign", "exponential", "exponential-minus-one", "log", "log-plus-one", "logistic", "tanh", "sqrt",
    "rsqrt", "cbrt", "cosine", "sine", "tan", "floor", "ceil", "round-nearest-afz", "round-nearest-even",
    "compare", "select", "clamp", "and", "or", "xor", "not", "shift-left", "shift-right-logical",
    "shift-right-arithmetic", "is-finite", "erf", "real", "imag", "popcnt", "count-leading-zeros",
})
#: Instructions that run no code of their own (no profiler event, no bytes): aliases and bookkeeping.
NO_WORK = frozenset({"parameter", "constant", "bitcast", "tuple", "get-tuple-element", "after-all"})

_SHAPE = re.compile(r"\b([a-z]+\d*(?:e\d+m\d+(?:fnuz|fn)?)?)\[([\d,]*)\]")
_OPERAND = re.compile(r"%([\w.\-]+)")
_CONTRACT = re.compile(r"\blhs_contracting_dims=\{([\d,]*)\}")
_WINDOW = re.compile(r"\bwindow=\{size=([\dx]+)")
_ENTRY = re.compile(r"^ENTRY %?([\w.\-]+) ", re.M)
_OP_NAME = re.compile(r'op_name="((?:[^"\\]|\\.)*)"')
_CUSTOM_KIND = re.compile(r'"kind":"(\w+)"')
_TUPLE_INDEX = re.compile(r"\bindex=(\d+)")
_WHILE = re.compile(r"\bcondition=%?([\w.\-]+), body=%?([\w.\-]+)")
_TARGET = re.compile(r'\bcustom_call_target="([^"]*)"')
#: Substring of the ``custom_call_target`` of a host callback (``jax.experimental.io_callback``,
#: ``jax.pure_callback``, ``jax.debug.callback``: ``xla_ffi_python_cpu_callback`` / ``…_gpu_callback``).
CALLBACK_TARGET = "callback"
#: Opcodes whose work is other computations' instructions (each with its own events on XLA:CPU).
CONTAINERS = frozenset({"while", "conditional", "call"})


def shape_dims(shape: str) -> list[tuple[str, tuple[int, ...]]]:
    """``"(f32[1,256]{1,0}, s32[])"`` → ``[("f32", (1, 256)), ("s32", ())]`` (every array in a shape)."""
    return [(m.group(1), tuple(int(d) for d in m.group(2).split(",") if d)) for m in _SHAPE.finditer(shape)]


def shape_bytes(shape: str) -> float:
    """Bytes of all arrays in an HLO shape text (layouts and tuple nesting ignored)."""
    return float(sum(DTYPE_BYTES.get(t, 4) * math.prod(d) for t, d in shape_dims(shape)))


def shape_elements(shape: str) -> int:
    """Elements of the first array of an HLO shape text (1 for a scalar, 0 for no array)."""
    dims = shape_dims(shape)
    return math.prod(dims[0][1]) if dims else 0


@dataclass
class HloOp:
    """One instruction of an optimized HLO module.

    ``kind``: the fusion kind (``kLoop``, ``kInput``, ``kOutput``, ``kCustom``; ``__ynn_fusion`` when a
    custom fusion names its backend) or, for other instructions, the opcode. ``shape``: the output shape text
    (``f32[1,256]{1,0}``). ``operands``: operand instruction names. ``fused``: for a fusion, the names of its
    fused instructions (nested fusions flattened), else empty. ``flops`` and ``bytes_accessed``: estimates
    (module docstring). ``file``/``line``/``function``/``scope``/``primitive``: from its metadata (:attr:`location`)
    (empty/0 when it has none). ``param_label``/``param_index``: a parameter's ``op_name`` (``weights['lm_head.weight']``) and number.
    ``order``: position in its computation (a scheduled module prints instructions in execution order);
    ``text_line``: 1-based line in the HLO text; ``top_level``: outside fused computations (can be an event).
    ``tuple_index``: a ``get-tuple-element``'s ``index`` (-1 otherwise); ``target``: a ``custom-call``'s
    ``custom_call_target`` (``""`` otherwise); ``regions``: a ``while``'s ``(condition, body)`` computations.
    """

    name: str
    opcode: str
    kind: str
    computation: str
    shape: str
    operands: list[str] = field(default_factory=list)
    fused: list[str] = field(default_factory=list)
    flops: float = 0.0
    bytes_accessed: float = 0.0
    file: str = ""
    line: int = 0
    function: str = ""
    scope: str = ""
    primitive: str = ""
    param_label: str = ""
    param_index: int = -1
    order: int = 0
    text_line: int = 0
    top_level: bool = True
    tuple_index: int = -1
    target: str = ""
    regions: tuple[str, ...] = ()

    @property
    def is_callback(self) -> bool:
        """A host callback (:data:`CALLBACK_TARGET`): its time is the host's, not the device's."""
        return self.opcode == "custom-call" and CALLBACK_TARGET in self.target


@dataclass
class HloModuleInfo:
    """A parsed module: ``name`` (``HloModule jit_step`` → ``jit_step``, the ``hlo_module`` stat of profiler
    events), ``ops`` by instruction name, ``entry``: top-level instruction names of the entry computation in
    schedule order, ``roots`` of each computation and ``loops``: the ``while`` instruction of each condition or
    body computation."""

    name: str
    ops: dict[str, HloOp]
    entry: list[str]
    roots: dict[str, str] = field(default_factory=dict)
    loops: dict[str, str] = field(default_factory=dict)

    def parameter_of(self, name: str) -> str:
        """``param_label`` of instruction ``name`` if it is an entry parameter (or a loop body's element the loop
        was given an entry parameter for, :meth:`carried_source`), else ``""``."""
        op = self.ops.get(name)
        if op is not None and op.opcode == "get-tuple-element" and (outer := self.carried_source(name)):
            return self.parameter_of(outer)
        return op.param_label if op is not None and op.opcode == "parameter" else ""

    def carried_source(self, name: str) -> str | None:
        """For a ``get-tuple-element`` of the parameter of a ``while``'s condition or body: the instruction the
        ``while`` was given for that element (the operand of its initial tuple), else None."""
        op = self.ops.get(name)
        if op is None or op.opcode != "get-tuple-element" or not op.operands or op.tuple_index < 0:
            return None
        param = self.ops.get(op.operands[0])
        loop = self.ops.get(self.loops.get(param.computation, "")) if param is not None else None
        if param is None or param.opcode != "parameter" or loop is None or not loop.operands:
            return None
        init = self.ops.get(loop.operands[0])
        if init is None or init.opcode != "tuple" or op.tuple_index >= len(init.operands):
            return None
        return init.operands[op.tuple_index]

    def loop_computations(self, while_name: str) -> set[str]:
        """The computations a ``while`` runs (its condition and body, and the loops nested in them)."""
        out: set[str] = set()
        todo = list(self.ops[while_name].regions) if while_name in self.ops else []
        while todo:
            comp = todo.pop()
            if comp in out:
                continue
            out.add(comp)
            todo += [r for op in self.ops.values() if op.computation == comp for r in op.regions]
        return out

    def loop_callbacks(self) -> list[str]:
        """Host callbacks (:attr:`HloOp.is_callback`) inside a loop's condition or body: one per iteration (jit-loop
        streams each token through one)."""
        inside = {c for name, op in self.ops.items() if op.opcode == "while" for c in self.loop_computations(name)}
        return [name for name, op in self.ops.items() if op.is_callback and op.computation in inside]


def _operand_text(rest: str) -> str:
    """The text inside the opcode's parentheses (``rest`` starts just after ``opcode(``)."""
    depth = 1
    for i, ch in enumerate(rest):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0:
            return rest[:i]
    return rest


def _parse_lines(text: str) -> tuple[dict[str, HloOp], dict[str, str], dict[str, str], str]:
    """Instructions (shape, operands, attributes, metadata), fused-computation → fusion map, roots, entry."""
    lines = text.split("\n")
    meta = {ins.name: ins for ins in hlo_instructions(text)}
    ops: dict[str, HloOp] = {}
    calls: dict[str, str] = {}
    roots: dict[str, str] = {}
    counters: dict[str, int] = {}
    for ins in meta.values():
        s = lines[ins.text_line - 1]
        m = HLO_INSTRUCTION.match(s)
        if not m:
            continue
        rest = m.group(4)
        op = HloOp(ins.name, ins.opcode, ins.opcode, ins.computation, m.group(2),
                   operands=_OPERAND.findall(_operand_text(rest)), file=ins.file, line=ins.line,
                   function=ins.function, scope=ins.scope, primitive=ins.primitive, text_line=ins.text_line)
        op.order = counters[ins.computation] = counters.get(ins.computation, -1) + 1
        if op.opcode == "fusion":
            kind = HLO_KIND.search(rest)
            custom = _CUSTOM_KIND.search(rest)
            op.kind = custom.group(1) if custom and kind and kind.group(1) == "kCustom" else (
                kind.group(1) if kind else "fusion")
            if c := HLO_CALLS.search(rest):
                calls[c.group(1)] = ins.name
        if op.opcode == "get-tuple-element" and (t := _TUPLE_INDEX.search(rest)):
            op.tuple_index = int(t.group(1))
        elif op.opcode == "custom-call" and (t := _TARGET.search(rest)):
            op.target = t.group(1)
        elif op.opcode == "while" and (w := _WHILE.search(rest)):
            op.regions = (w.group(1), w.group(2))
        if op.opcode == "parameter":
            op.param_index = int(rest.split(")", 1)[0] or -1)
            if n := _OP_NAME.search(rest):
                op.param_label = n.group(1).replace("\\'", "'").replace('\\"', '"')
        op.flops = _own_flops(op, ops, rest)
        if s.lstrip().startswith("ROOT "):
            roots[ins.computation] = ins.name
        ops[ins.name] = op
    entry = _ENTRY.search(text)
    return ops, calls, roots, entry.group(1) if entry else ""


def _own_flops(op: HloOp, ops: dict[str, HloOp], rest: str) -> float:
    if op.opcode == "dot":
        lhs = ops.get(op.operands[0]) if op.operands else None
        dims = shape_dims(lhs.shape)[0][1] if lhs is not None and shape_dims(lhs.shape) else ()
        m = _CONTRACT.search(rest)
        k = math.prod(dims[int(d)] for d in m.group(1).split(",") if d and int(d) < len(dims)) if m else 1
        return 2.0 * shape_elements(op.shape) * k
    if op.opcode in ELEMENTWISE:
        return float(shape_elements(op.shape))
    if op.opcode == "reduce":
        first = ops.get(op.operands[0]) if op.operands else None
        return float(shape_elements(first.shape)) if first is not None else 0.0
    if op.opcode == "reduce-window" and (w := _WINDOW.search(rest)):
        return float(shape_elements(op.shape) * math.prod(int(x) for x in w.group(1).split("x")))
    return 0.0


def _in_place_update(op: HloOp, info: HloModuleInfo) -> tuple[int | None, float]:
    """``(buffer operand index, update bytes)`` when ``op`` (or its fused root) is a dynamic-update-slice
    whose buffer is one of ``op``'s operands; ``(None, 0)`` otherwise."""
    root = op
    if op.opcode == "fusion" and op.fused:
        root = info.ops.get(info.roots.get(info.ops[op.fused[0]].computation, ""), op)
    if root.opcode != "dynamic-update-slice" or len(root.operands) < 2:
        return None, 0.0
    update = info.ops.get(root.operands[1])
    buffer = info.ops.get(root.operands[0])
    if update is None or buffer is None:
        return None, 0.0
    if root is op:
        return 0, shape_bytes(update.shape)
    if buffer.opcode == "parameter" and buffer.param_index >= 0:
        return buffer.param_index, shape_bytes(update.shape)
    return None, 0.0


def parse_hlo(text: str) -> HloModuleInfo:
    """Parse an optimized HLO module text (``Compiled.as_text()``) into :class:`HloModuleInfo`.

    Raises ``ValueError`` when the text holds no ``HloModule`` header or no instruction."""
    head = re.match(r"\s*HloModule ([\w.\-]+)", text or "")
    if head is None:
        raise ValueError("Not an HLO module text: it does not start with 'HloModule <name>'.")
    ops, calls, roots, entry = _parse_lines(text)
    if not ops:
        raise ValueError(f"HLO module {head.group(1)} has no instruction.")
    info = HloModuleInfo(head.group(1), ops, [], roots)
    _finish(info, calls, entry)
    return info


def _finish(info: HloModuleInfo, calls: dict[str, str], entry: str) -> None:
    ops = info.ops
    fused_comp = set(calls)
    by_comp: dict[str, list[HloOp]] = {}
    for op in ops.values():
        by_comp.setdefault(op.computation, []).append(op)
        op.top_level = op.computation not in fused_comp
    # nested fusions: an outer fusion's fused list includes the inner fusion's instructions
    for comp in sorted(fused_comp, key=lambda c: -_depth(c, calls, ops)):
        fusion = ops[calls[comp]]
        members: list[str] = []
        for inner in by_comp.get(comp, []):
            members.append(inner.name)
            members += inner.fused
        fusion.fused = members
        fusion.flops = sum(ops[n].flops for n in members if ops[n].opcode != "fusion")
    for op in ops.values():
        if op.top_level and op.opcode not in NO_WORK:
            op.bytes_accessed = _bytes(op, info)
    info.entry = [op.name for op in sorted(by_comp.get(entry, []), key=lambda o: o.order)]
    info.loops = {comp: op.name for op in ops.values() for comp in op.regions}


def _depth(comp: str, calls: dict[str, str], ops: dict[str, HloOp]) -> int:
    depth, seen = 0, set()
    while comp in calls and comp not in seen:
        seen.add(comp)
        comp = ops[calls[comp]].computation
        depth += 1
    return depth


_SLICING = frozenset({"gather", "dynamic-slice", "slice"})


def _read_bytes(param: HloOp, users: dict[str, list[HloOp]]) -> float | None:
    """Bytes a fused parameter is read for when every use (through bitcasts) slices it as operand 0
    (``gather``, ``dynamic-slice``, ``slice``): the slices' sizes. ``None`` when it is read whole."""
    total, frontier, seen = 0.0, [param], set()
    while frontier:
        node = frontier.pop()
        for user in users.get(node.name, []):
            if user.name in seen:
                continue
            seen.add(user.name)
            if user.opcode == "bitcast":
                frontier.append(user)
            elif user.opcode in _SLICING and user.operands and user.operands[0] == node.name:
                total += shape_bytes(user.shape)
            else:
                return None
    return total if seen else None


def _bytes(op: HloOp, info: HloModuleInfo) -> float:
    in_place, update = _in_place_update(op, info)
    reads: dict[int, float] = {}
    if op.opcode == "fusion":
        inner = [info.ops[n] for n in op.fused]
        users: dict[str, list[HloOp]] = {}
        for u in inner:
            for name in u.operands:
                users.setdefault(name, []).append(u)
        for p in inner:
            if p.opcode == "parameter" and p.param_index >= 0 and (r := _read_bytes(p, users)) is not None:
                reads[p.param_index] = r
    total = 0.0
    for i, name in enumerate(op.operands):
        src = info.ops.get(name)
        if src is not None:
            total += update if i == in_place else reads.get(i, shape_bytes(src.shape))
    return total + (update if in_place is not None else shape_bytes(op.shape))
