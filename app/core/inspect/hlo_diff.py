"""A structural diff of two optimized HLO modules: instructions matched by graph, not by text (pure Python).

A textual diff marks every renamed instruction (``%fusion.12`` → ``%fusion.13``) and every reordered line as a
change. Here each module is parsed into computations and instructions (:func:`parse_hlo`), and each instruction
gets a structural hash, bottom-up: its opcode, shape, attributes (metadata, names and called computations' names
left out), its operands' hashes and its called computations' hashes (a computation's: its root's). The two
modules' computations are paired from ``ENTRY`` down through the instructions that call them, and inside a pair
the instructions are matched (:func:`diff_hlo`) in four passes:

1. equal hashes (the same subgraph, whatever its names and order);
2. the same opcode over operands already matched to each other (an instruction whose own attributes, shape or
   called computation changed; one whose own signature is equal is not a change: only its inputs are);
3. the same opcode and shape, in text order (a fall-back by position);
4. another opcode over the same matched operands (an instruction replaced by another: ``sine`` → ``cosine``).

What is left is added (only in B) or removed (only in A). Each change carries the source line of the
instruction's metadata (``source_file`` / ``source_line`` or ``stack_frame_id``) when it has one. A fusion whose
fused computation differs is listed once in :attr:`HloDiff.fusions`, its inner differences as the changes.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

from app.core.inspect.text_index import HLO_INSTRUCTION, HLO_KIND, hlo_instructions
from app.core.inspect.views import HLO, view

#: The field of :meth:`HloDiff.to_dict` naming the fusions that changed (``HloDiff.fusions``).
FUSIONS_FIELD = "fusions"
#: How a diff names the program and its elements by default: the optimized HLO's, as the IR-view catalog does.
_HLO = view(HLO)

_COMP = re.compile(r"^(ENTRY )?%?([\w.\-]+) \(.*\) -> .*\{\s*$")
_META = re.compile(r",?\s*metadata=\{[^}]*\}")
_NAME = re.compile(r"%([\w.\-]+)")


@dataclass(frozen=True)
class HloOp:
    """One instruction: ``name`` (``"fusion.12"``), ``opcode``, ``shape`` (as printed, layout included),
    ``operands`` (names), ``literal`` (the operand text with names blanked: ``parameter(0)``'s ``0``),
    ``attrs`` (the attributes after the operands, metadata and computation names blanked), ``calls`` (called
    computations' names), ``kind`` (a fusion's ``kLoop`` …), ``computation``, ``source`` (``"file.py:12"`` or
    ``""``), ``label``: the name as printed when ``name`` is qualified to be unique in the module (StableHLO)."""

    name: str
    opcode: str
    shape: str
    operands: tuple[str, ...]
    literal: str
    attrs: str
    calls: tuple[str, ...]
    kind: str
    computation: str
    source: str = ""
    label: str = ""

    @property
    def shown(self) -> str:
        """The name to print: ``label`` when the parser qualified ``name`` (StableHLO's ``%0`` of a function)."""
        return self.label or self.name

    def signature(self) -> tuple[str, ...]:
        """What an instruction is by itself, without its inputs."""
        return self.opcode, self.shape, self.literal, self.attrs, self.kind


@dataclass
class HloComputation:
    name: str
    entry: bool
    ops: list[HloOp] = field(default_factory=list)

    @property
    def root(self) -> HloOp | None:
        return self.ops[-1] if self.ops else None


@dataclass
class HloModuleText:
    """A parsed HLO module: its computations by name, in text order; ``entry``: the ``ENTRY`` one's name."""

    name: str
    computations: dict[str, HloComputation]
    entry: str


def _split_operands(rest: str) -> tuple[str, str]:
    """``rest`` (the text after ``opcode(``) split at its matching ``)``: (operands, attributes)."""
    depth, quoted = 1, False
    for i, ch in enumerate(rest):
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch in "({[":
            depth += 1
        elif not quoted and ch in ")}]":
            depth -= 1
            if depth == 0:
                return rest[:i], rest[i + 1:]
    return rest, ""


def parse_hlo(text: str) -> HloModuleText:
    """The computations and instructions of an HLO module's text (``Compiled.as_text()``, an XLA dump)."""
    first = text.split("\n", 1)[0]
    name = first.split()[1].rstrip(",") if first.startswith("HloModule ") else ""
    sources = {(i.computation, i.name): f"{i.file.rsplit('/', 1)[-1]}:{i.line}"
               for i in hlo_instructions(text) if i.file}
    comps: dict[str, HloComputation] = {}
    pending: list[tuple[HloComputation, str, str, str, str, str]] = []
    comp, entry = None, ""
    for line in text.split("\n"):
        if m := _COMP.match(line):
            comp = comps[m.group(2)] = HloComputation(m.group(2), bool(m.group(1)))
            entry = m.group(2) if m.group(1) else entry
        elif comp is not None and (m := HLO_INSTRUCTION.match(line)):
            operands, attrs = _split_operands(m.group(4))
            pending.append((comp, m.group(1), m.group(3), m.group(2).strip(), operands, _META.sub("", attrs)))
    for comp, op_name, opcode, shape, operands, attrs in pending:
        calls = tuple(n for n in _NAME.findall(attrs) if n in comps)
        kind = k.group(1) if (k := HLO_KIND.search(attrs)) else ""
        comp.ops.append(HloOp(op_name, opcode, shape, tuple(_NAME.findall(operands)),
                              _NAME.sub("%", operands), _NAME.sub("%", attrs), calls, kind, comp.name,
                              sources.get((comp.name, op_name), "")))
    if not entry and comps:
        entry = list(comps)[-1]
    return HloModuleText(name, comps, entry)


def _stable_hash(value: object) -> int:
    """A 64-bit hash of ``value`` (nested tuples of str and int) that is the same in every process (Python's
    ``hash`` of a str is salted per process), so a fingerprint can be saved and compared later."""
    return int.from_bytes(hashlib.blake2b(repr(value).encode(), digest_size=8).digest(), "big")


class _Hasher:
    """Structural hashes of one module's instructions and computations (memoised, bottom-up; stable across
    processes)."""

    def __init__(self, module: HloModuleText) -> None:
        self.module = module
        self.by_name = {(c.name, op.name): op for c in module.computations.values() for op in c.ops}
        self.anywhere = {op.name: op for op in self.by_name.values()}  # a value a region uses from outside it
        self.ops: dict[tuple[str, str], int] = {}
        self.comps: dict[str, int] = {}
        for c in module.computations.values():  # text order: operands and callees come first (shallow recursion)
            for op in c.ops:
                self.op(op)
            self.comp(c.name)

    def comp(self, name: str) -> int:
        if name not in self.comps:
            self.comps[name] = 0  # a cycle (none in valid HLO) reads as 0
            c = self.module.computations[name]
            self.comps[name] = _stable_hash(("comp", self.op(c.root) if c.root else 0, len(c.ops)))
        return self.comps[name]

    def op(self, op: HloOp) -> int:
        key = (op.computation, op.name)
        if key not in self.ops:
            self.ops[key] = 0
            inputs = tuple(self.op(o) if (o := self.by_name.get((op.computation, n)) or self.anywhere.get(n))
                           else _stable_hash(n) for n in op.operands)
            self.ops[key] = _stable_hash((op.signature(), inputs, tuple(self.comp(c) for c in op.calls)))
        return self.ops[key]

    def local(self, op: HloOp) -> tuple[Any, ...]:
        """The instruction's own signature with its called computations' hashes."""
        return op.signature(), tuple(self.comp(c) for c in op.calls)


@dataclass(frozen=True)
class HloChange:
    """One difference: ``change`` is ``"added"`` (only in B), ``"removed"`` (only in A) or ``"changed"`` (matched,
    its own signature differs); ``a`` / ``b`` the instruction on each side (None where absent); ``fusion``: the
    fusion instruction (in B, else A) whose fused computation holds it, ``""`` outside fusions."""

    change: str
    a: HloOp | None
    b: HloOp | None
    fusion: str = ""

    @property
    def op(self) -> HloOp:
        return self.b or self.a  # type: ignore[return-value]

    @property
    def source(self) -> str:
        return (self.b.source if self.b else "") or (self.a.source if self.a else "")

    def text(self) -> str:
        """``"changed %fusion.3 (fusion kLoop, f32[4]) → f32[8] · model.py:12"``."""
        op = self.op
        what = f"{self.change} %{op.shown} ({op.opcode}{' ' + op.kind if op.kind else ''}, {op.shape})"
        if self.change == "changed" and self.a and self.b:
            parts = [f"{self.a.opcode} → {self.b.opcode}"] if self.a.opcode != self.b.opcode else []
            parts += [f"shape {self.a.shape} → {self.b.shape}"] if self.a.shape != self.b.shape else []
            parts += ["attributes"] if (self.a.attrs, self.a.literal) != (self.b.attrs, self.b.literal) else []
            parts += [f"kind {self.a.kind} → {self.b.kind}"] if self.a.kind != self.b.kind else []
            what += f" [{', '.join(parts) or 'called computation'}]" + (
                f" (was %{self.a.shown})" if self.a.shown != self.b.shown else "")
        where = f" in fusion %{self.fusion}" if self.fusion else ""
        return what + where + (f" · {self.source}" if self.source else "")

    def to_dict(self) -> dict[str, Any]:
        op = self.op
        return {"change": self.change, "name": op.shown, "opcode": op.opcode, "shape": op.shape, "kind": op.kind,
                "a_name": self.a.shown if self.a else None, "b_name": self.b.shown if self.b else None,
                "a_shape": self.a.shape if self.a else None,
                "a_opcode": self.a.opcode if self.a else None, "computation": op.computation,
                "fusion": self.fusion, "source": self.source}


@dataclass
class HloDiff:
    """The structural diff of modules A and B: ``changes`` (instruction level, fusions' inner ones included),
    ``fusions`` (fusion instruction names, in B else A, whose fusion was added, removed or changed — by itself
    or inside), ``matched`` (instruction pairs found equal or changed), ``n_a`` / ``n_b`` (instructions);
    ``what`` / ``unit``: how the summary names the program and its elements (``"StableHLO"``, ``"ops"``)."""

    changes: list[HloChange] = field(default_factory=list)
    fusions: list[str] = field(default_factory=list)
    matched: int = 0
    n_a: int = 0
    n_b: int = 0
    what: str = _HLO.title
    unit: str = _HLO.unit

    @property
    def same(self) -> bool:
        return not self.changes

    def counts(self) -> dict[str, int]:
        return {k: sum(1 for c in self.changes if c.change == k) for k in ("added", "removed", "changed")}

    def summary(self) -> str:
        """``"the same optimized HLO (412 instructions matched)"`` or ``"3 changes (1 added, 0 removed, 2 changed)
        in 2 fusions"``."""
        if self.same:
            return f"the same {self.what} ({self.matched} {self.unit} matched, names aside)"
        c = self.counts()
        n = len(self.changes)
        text = f"{n} change{'s' * (n != 1)} ({c['added']} added, {c['removed']} removed, {c['changed']} changed)"
        return text + (f" in {len(self.fusions)} fusion{'s' * (len(self.fusions) != 1)}" if self.fusions else "")

    def to_dict(self) -> dict[str, Any]:
        return {"same": self.same, "summary": self.summary(), **self.counts(), "matched": self.matched,
                "n_a": self.n_a, "n_b": self.n_b, FUSIONS_FIELD: list(self.fusions),
                "changes": [c.to_dict() for c in self.changes]}


class _Differ:
    def __init__(self, a: HloModuleText, b: HloModuleText) -> None:
        self.ma, self.mb = a, b
        self.ha, self.hb = _Hasher(a), _Hasher(b)
        self.done: set[str] = set()
        self.mapped: dict[str, str] = {}  # A's name → B's, over every computation paired so far
        self.out = HloDiff(n_a=sum(len(c.ops) for c in a.computations.values()),
                           n_b=sum(len(c.ops) for c in b.computations.values()))

    def computations(self, ca: str, cb: str, fusion: str) -> None:
        """Match the instructions of computation ``ca`` (A) against ``cb`` (B), then their callees' pairs."""
        if ca in self.done:
            return
        self.done.add(ca)
        ops_a, ops_b = self.ma.computations[ca].ops, self.mb.computations[cb].ops
        pairs = self._match(ops_a, ops_b)
        self.out.matched += len(pairs)
        self.mapped.update({x.name: y.name for x, y in pairs.items()})
        mapped = self.mapped
        for x, y in pairs.items():
            if self.ha.op(x) == self.hb.op(y):
                for sa in x.calls:
                    self._count_same(sa)
                continue
            inputs_same = [mapped.get(n) for n in x.operands] == list(y.operands)
            if self.ha.local(x) != self.hb.local(y) or not inputs_same:
                if x.signature() != y.signature() or not inputs_same:
                    self._add(HloChange("changed", x, y, fusion))
                for sa, sb in zip(x.calls, y.calls):
                    self.computations(sa, sb, y.name if y.opcode == "fusion" else fusion)
                if x.opcode == "fusion" or (y.opcode == "fusion" and x.signature() != y.signature()):
                    self._fusion(y.name)
        matched_b = set(map(id, pairs.values()))
        for x in ops_a:
            if x not in pairs:
                self._add(HloChange("removed", x, None, fusion))
        for y in ops_b:
            if id(y) not in matched_b:
                self._add(HloChange("added", None, y, fusion))

    def _count_same(self, ca: str) -> None:
        """Count the instructions of an equal called computation (and its callees) as matched, once."""
        if ca in self.done:
            return
        self.done.add(ca)
        ops = self.ma.computations[ca].ops
        self.out.matched += len(ops)
        for op in ops:
            for sub in op.calls:
                self._count_same(sub)

    def _add(self, change: HloChange) -> None:
        self.out.changes.append(change)
        if change.op.opcode == "fusion" and not change.fusion:
            self._fusion(change.op.name)
        elif change.fusion:
            self._fusion(change.fusion)

    def _fusion(self, name: str) -> None:
        if name not in self.out.fusions:
            self.out.fusions.append(name)

    def _match(self, ops_a: list[HloOp], ops_b: list[HloOp]) -> dict[HloOp, HloOp]:
        pairs: dict[HloOp, HloOp] = {}
        free: dict[Any, list[HloOp]] = {}
        for y in ops_b:
            free.setdefault(self.hb.op(y), []).append(y)
        for x in ops_a:  # 1. the same subgraph
            if candidates := free.get(self.ha.op(x)):
                pairs[x] = candidates.pop(0)
        taken = set(map(id, pairs.values()))
        rest_b = [y for y in ops_b if id(y) not in taken]
        by_position = lambda op, _m: (op.opcode, op.shape)  # noqa: E731
        for key in (self._by_inputs, by_position, self._by_inputs_only):  # 2. inputs; 3. position; 4. replaced
            mapped = {**self.mapped, **{x.name: y.name for x, y in pairs.items()}}
            bucket: dict[Any, list[HloOp]] = {}
            for y in rest_b:
                bucket.setdefault(key(y, None), []).append(y)
            for x in ops_a:
                if x not in pairs and (k := key(x, mapped)) is not None and (candidates := bucket.get(k)):
                    y = candidates.pop(0)
                    pairs[x] = y
                    mapped[x.name] = y.name
                    rest_b.remove(y)
        return pairs

    @staticmethod
    def _by_inputs_only(op: HloOp, mapped: dict[str, str] | None) -> Any:
        """As :meth:`_by_inputs`, the opcode left out (an op replaced by another over the same inputs)."""
        key = _Differ._by_inputs(op, mapped)
        return None if key is None else key[1]

    @staticmethod
    def _by_inputs(op: HloOp, mapped: dict[str, str] | None) -> Any:
        """B's key: its opcode and operands; A's: its opcode and its operands' matches (None if one has none)."""
        if mapped is None:
            return op.opcode, op.operands
        names = tuple(mapped.get(n) for n in op.operands)
        return None if None in names or not names else (op.opcode, names)


def diff_modules(ma: HloModuleText, mb: HloModuleText, what: str = _HLO.title, unit: str = _HLO.unit) -> HloDiff:
    """The structural diff of two parsed modules (HLO's :func:`parse_hlo`, or StableHLO's
    :func:`app.core.inspect.stablehlo_diff.parse_stablehlo`), paired from their entries down."""
    d = _Differ(ma, mb)
    d.out.what, d.out.unit = what, unit
    if ma.entry and mb.entry:
        d.computations(ma.entry, mb.entry, "")
    return d.out


def structural_fingerprint(text: str | HloModuleText) -> str:
    """16 hex digits naming an HLO module's structure as :func:`diff_hlo` matches it: the hash of its ``ENTRY``
    computation over opcodes, shapes, attributes, operands by graph position and called computations — not
    instruction names, their order or metadata. Two modules whose structural diff is empty read the same (the
    settings race marks lanes "same optimized HLO" with it). Stable across processes and saved in session files."""
    module = parse_hlo(text) if isinstance(text, str) else text
    return f"{_Hasher(module).comp(module.entry) if module.entry else 0:016x}"


def diff_hlo(a: str | HloModuleText, b: str | HloModuleText) -> HloDiff:
    """The structural diff of HLO modules ``a`` and ``b`` (texts or :func:`parse_hlo`'s modules); see the module's
    docstring for how instructions are matched. Computations no instruction reaches from ``ENTRY`` are ignored."""
    return diff_modules(parse_hlo(a) if isinstance(a, str) else a, parse_hlo(b) if isinstance(b, str) else b)
