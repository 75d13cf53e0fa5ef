"""A structural diff of two StableHLO modules (MLIR text): ops matched by graph, not by text (pure Python).

The same idea as :mod:`app.core.inspect.hlo_diff`, on the lowered module (``Lowered.as_text()``): each function
and each region of an op (a ``while``'s ``cond`` / ``do``, a ``reduce``'s body, a generic op's ``({ … })``) is
read as a computation, each op line as an instruction — its op name, result types, attributes and constants
(SSA names blanked), its operands, and the functions (``call @f``) and regions it holds as called computations.
Function and block arguments are parameters by position. SSA names are qualified by their computation, so
``%0`` of two functions are two values, and a region's use of a value from outside it resolves to that value.
:func:`diff_stablehlo` then matches them with :func:`app.core.inspect.hlo_diff.diff_modules` (equal subgraphs,
then the same op over matched operands, then by position): renamed or reordered ops are not changes. Each op
carries its source line (``file.py:12``) when the debug text (``as_text(debug_info=True)``) is given.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from app.core.inspect.hlo_diff import HloComputation, HloDiff, HloModuleText, HloOp, diff_modules
from app.core.inspect.text_index import stablehlo_ops
from app.core.inspect.views import STABLEHLO, view

_FUNC = re.compile(r"^func\.func (?:public |private )?@([\w.$\-]+)\((.*)$")
_RESULTS = re.compile(r"^((?:%[\w$.\-]+(?::\d+)?)(?:, %[\w$.\-]+(?::\d+)?)*) = (.*)$")
_OPCODE = re.compile(r'^"?([a-z_][\w]*\.[\w.]+|call|return)"?(.*)$')
_VALUE = re.compile(r"%([\w$.\-]+)")
_ARG = re.compile(r"%([\w$.\-]+): ")
_ITER = re.compile(r"%([\w$.\-]+) = (?=%)")
_SYMBOL = re.compile(r"@([\w.$\-]+)")
_LOC = re.compile(r"\s+loc\(.*\)$")


@dataclass
class _Op:
    comp: str
    name: str
    label: str
    opcode: str
    body: str
    operands: list[str]
    line: int
    regions: list[str] = field(default_factory=list)
    iter_args: list[str] = field(default_factory=list)


@dataclass
class _Frame:
    comp: str
    scope: dict[str, str]
    func: str
    owner: _Op | None = None
    params: int = 0


def _top_split(text: str, sep: str) -> list[str]:
    """``text`` split at ``sep`` outside brackets (``->`` does not count as a closing ``>``)."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        if text.startswith("->", i):
            i += 2
            continue
        ch = text[i]
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        elif depth == 0 and text.startswith(sep, i):
            parts.append(text[start:i])
            start = i + len(sep)
            i += len(sep)
            continue
        i += 1
    return [*parts, text[start:]]


def _result_type(body: str) -> str:
    """The op's result type(s): the text after its last top-level `` : ``, after ``->`` when it has one."""
    parts = _top_split(body, " : ")
    if len(parts) < 2:
        return ""
    kind = parts[-1].strip()
    return kind.split(" -> ", 1)[1].strip() if " -> " in kind else kind


class _Parser:
    def __init__(self, text: str) -> None:
        self.comps: dict[str, HloComputation] = {}
        self.ops: list[_Op] = []
        self.funcs: dict[str, str] = {}  # function name → its computation (the same name)
        self.public: list[str] = []
        self.stack: list[_Frame] = []
        for n, raw in enumerate(text.split("\n"), start=1):
            self.line(_LOC.sub("", raw.rstrip()).strip(), n)

    def lookup(self, raw: str) -> str:
        for frame in reversed(self.stack):
            if raw in frame.scope:
                return frame.scope[raw]
            if frame.owner is None:
                break  # a function sees no values outside it
        return raw

    def open(self, comp: str, func: str, owner: _Op | None, args: list[tuple[str, str]]) -> None:
        self.comps[comp] = HloComputation(comp, False)
        frame = _Frame(comp, {}, func, owner)
        self.stack.append(frame)
        self.params(frame, args, 0)

    def params(self, frame: _Frame, args: list[tuple[str, str]], line: int) -> None:
        for raw, kind in args:
            op = _Op(frame.comp, f"{frame.comp}:{raw}", raw, "parameter", f"{frame.params} : {kind}", [], line)
            frame.scope[raw] = op.name
            frame.params += 1
            self.ops.append(op)

    @staticmethod
    def args(text: str) -> list[tuple[str, str]]:
        """Every ``%name: type {attrs}`` of ``text`` (a function's or a block's arguments) in order."""
        out = []
        for m in _ARG.finditer(text):
            depth, i = 0, m.end()
            while i < len(text):
                if text.startswith("->", i):
                    i += 2
                    continue
                ch = text[i]
                if depth == 0 and ch in ",)":
                    break
                depth += (ch in "([{<") - (ch in ")]}>")
                i += 1
            out.append((m.group(1), text[m.end():i].strip()))
        return out

    def region(self, owner: _Op, args: list[tuple[str, str]]) -> None:
        comp = f"{owner.name}#{len(owner.regions)}"
        owner.regions.append(comp)
        self.open(comp, self.stack[-1].func, owner, [(a, "") for a in owner.iter_args] + args)

    def line(self, s: str, n: int) -> None:  # noqa: C901 — one branch per kind of line
        if not s or s.startswith("#loc") or s.startswith("module ") or s.startswith("//"):
            return
        if m := _FUNC.match(s):
            name = m.group(1)
            self.funcs[name] = name
            if " private " not in f" {s} ":
                self.public.append(name)
            self.open(name, name, None, self.args(_top_split("(" + m.group(2), " -> ")[0]))
            return
        if s.startswith("}"):
            if not self.stack:
                return  # the module's closing brace
            frame = self.stack.pop()
            rest = s[1:].strip().lstrip(",").strip()
            if frame.owner is not None and rest.startswith(")"):
                frame.owner.body += " " + rest[1:].strip()
            elif frame.owner is not None and rest.endswith("{"):
                self.region(frame.owner, [])
            return
        if not self.stack:
            return
        frame = self.stack[-1]
        if s.startswith("^"):
            self.params(frame, self.args(s[s.find("(") + 1:]), n)
            return
        results, rest = ("", s)
        if m := _RESULTS.match(s):
            results, rest = m.group(1), m.group(2)
        m = _OPCODE.match(rest)
        if m is None:
            owner = next((o for o in reversed(self.ops) if o.comp == frame.comp and o.opcode != "parameter"), None)
            if s.endswith("{") and owner is not None:  # ``cond {``, ``reducer(%a: …) (%b: …) {``
                self.region(owner, self.args(s))
            return
        opcode, body = m.group(1), m.group(2).strip()
        iters = _ITER.findall(body)
        body = _ITER.sub("", body)
        opens = body.count("{") > body.count("}")
        if opens:
            body = body[:body.rfind("{")].rstrip().removesuffix("(").rstrip()
        names = [r.split(":")[0].lstrip("%") for r in results.split(", ")] if results else []
        raw = names[0] if names else f"~{n}"
        qualified = f"{frame.comp}:{raw}"
        operands = [self.lookup(v) for v in _VALUE.findall(body)]
        label = (raw if names else opcode) if frame.func == "main" or not names else f"{raw} in @{frame.func}"
        op = _Op(frame.comp, qualified, label, opcode, body, operands, n, iter_args=iters)
        self.ops.append(op)
        for r in names:
            frame.scope[r] = qualified
        if opens:
            self.region(op, [])

    def module(self, sources: dict[int, str]) -> HloModuleText:
        for op in self.ops:
            calls = [f for f in _SYMBOL.findall(op.body) if f in self.funcs]
            literal = _SYMBOL.sub(lambda m: "@" if m.group(1) in self.funcs else m.group(0),
                                  _VALUE.sub("%", op.body))
            shape = op.body.split(" : ", 1)[1].strip() if op.opcode == "parameter" else _result_type(op.body)
            self.comps[op.comp].ops.append(HloOp(
                op.name, op.opcode, shape, tuple(op.operands), literal, "", (*calls, *op.regions), "", op.comp,
                sources.get(op.line, ""), op.label))
        entry = "main" if "main" in self.funcs else (self.public or list(self.funcs) or [""])[0]
        if entry in self.comps:
            self.comps[entry].entry = True
        return HloModuleText("", self.comps, entry)


def parse_stablehlo(text: str, debug_text: str | None = None) -> HloModuleText:
    """The functions, regions and ops of a StableHLO module's text as computations and instructions
    (:class:`app.core.inspect.hlo_diff.HloModuleText`; an op's ``name`` is qualified by its computation,
    ``label`` is its SSA name as printed). ``debug_text``: the same module with locations, for each op's source
    line (ignored when its lines do not line up with ``text``)."""
    sources = {o.text_line: f"{o.file.rsplit('/', 1)[-1]}:{o.line}"
               for o in stablehlo_ops(debug_text, text) or [] if o.file}
    return _Parser(text).module(sources)


def diff_stablehlo(a: str | HloModuleText, b: str | HloModuleText) -> HloDiff:
    """The structural diff of StableHLO modules ``a`` and ``b`` (texts or :func:`parse_stablehlo`'s modules),
    from ``main`` down: :class:`app.core.inspect.hlo_diff.HloDiff` with ``what`` ``"StableHLO"``, in ops."""
    ma = parse_stablehlo(a) if isinstance(a, str) else a
    mb = parse_stablehlo(b) if isinstance(b, str) else b
    return diff_modules(ma, mb, view(STABLEHLO).title, view(STABLEHLO).unit)
