"""Line indexes over the IR texts of a step: which lines of the jaxpr, StableHLO and optimized HLO texts
belong to which equation or source location. Pure text parsing; no JAX import.

Formats parsed (jax 0.10.2, XLA bundled with jaxlib 0.10.2):

- jaxpr (``ClosedJaxpr.pretty_print``): shared sub-jaxprs first (``let name = { lambda … } in``), then the
  main ``{ lambda ; binders. let`` block whose top-level equations start at a 4-space indent; continuation
  lines are indented deeper or start with ``]`` (closing parameters). ``in (…) }`` ends the block.
- StableHLO with ``as_text(debug_info=True)``: every op line ends with ``loc(#locN)``; ``#locN = loc(…)``
  alias lines (name locations ``"jit(step)/<name stack>/<primitive>"(#child)``, ``callsite(#callee at
  #caller)``, file locations ``"file":line:col``) come before and after the module. Removing them leaves
  the lines of the plain ``as_text()`` in order, so a line number maps across the two texts.
- optimized HLO: instructions carry ``metadata={op_name="…" stack_frame_id=K}`` (or the older
  ``source_file="…" source_line=N``); the module header holds ``FileNames``, ``FunctionNames``,
  ``FileLocations`` and ``StackFrames`` tables; a frame's ``file_location_id`` is the innermost user frame.

All line numbers are 1-based.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.core.inspect.location import SourceLocation

_LOC_DEF = re.compile(r"^#loc(\d*) = loc\((.*)\)\s*$")
_LOC_REF = re.compile(r"loc\(#loc(\d*)\)\s*$")
_NAME_LOC = re.compile(r'^"((?:[^"\\]|\\.)*)"(?:\(#loc(\d*)\))?$')
_FILE_LOC = re.compile(r'^"((?:[^"\\]|\\.)*)":(\d+):\d+')
_CALLSITE = re.compile(r"^callsite\(#loc(\d*) at #loc(\d*)\)$")
_FUNC = re.compile(r"^\s*func\.func (?:public |private )?@([\w.$\-]+)\(")
_CALL = re.compile(r"\bcall @([\w.$\-]+)\(")
#: One StableHLO op line; group 1: the op (``stablehlo.dot_general``, ``func.return``, ``call``). The one
#: StableHLO line pattern of the app (IR counts, the source map).
STABLEHLO_OP = re.compile(r"^\s*(?:%[\w#:, ]+ = )?\"?((?:stablehlo|chlo|func|sdy|mhlo)\.[\w.]+|call)\b")

_HLO_COMP = re.compile(r"^(ENTRY )?%?([\w.\-]+) \(.*\) -> .*\{\s*$")
#: One HLO instruction line; groups: name, output shape, opcode, the rest of the line after ``opcode(``. The
#: one HLO line pattern of the app (IR counts, the source map, the profile's HLO parse, collectives).
HLO_INSTRUCTION = re.compile(r"^\s+(?:ROOT )?%?([\w.\-]+) = (.*?) ([a-z][\w\-]*)\((.*)$")
#: ``calls=%computation`` of a fusion or call; ``kind=kLoop`` of a fusion.
HLO_CALLS = re.compile(r"\bcalls=%?([\w.\-]+)")
HLO_KIND = re.compile(r"\bkind=(k\w+)")
_HLO_META = re.compile(r"metadata=\{([^}]*)\}")
_META_FIELD = re.compile(r'(\w+)=(?:"((?:[^"\\]|\\.)*)"|(\S+))')
_TABLE_ROW = re.compile(r"^(\d+) (.*)$")


def split_loc_name(name: str) -> tuple[str, str]:
    """``"jit(step)/scaled_dot_product_attention/aten::bmm/dot_general"`` → (scope, primitive)
    = ``("scaled_dot_product_attention/aten::bmm", "dot_general")``; the leading ``jit(…)`` is dropped."""
    parts = name.split("/")
    if parts and parts[0].startswith("jit"):
        parts = parts[1:]
    parts = _without_regions(parts)
    if not parts:
        return "", ""
    return "/".join(parts[:-1]), parts[-1]


#: Name-stack segments a control-flow primitive's lowering adds around its regions (``jax.lax.while_loop`` and
#: ``scan``: ``while/cond/…``, ``while/body/…``; ``jax.lax.cond``: ``cond/branch_1_fun/…``). :func:`split_loc_name`
#: drops them, so that an op inside a loop's body has the scope of its jaxpr equation (``aten::mm``), the scope the
#: same op has outside a loop.
REGION_SEGMENTS = {"while": ("body", "cond")}
#: Segments dropped alone: a scan body's call (``eval_jaxpr``, jax ≥ 0.11), a nested ``jit(inner)``, a cond
#: branch's function (``branch_0_fun``, after its ``cond``).
_LONE_SEGMENT = re.compile(r"^(?:eval_jaxpr|jit\(.*\)|pjit\(.*\)|branch_\d+_fun)$")


def _without_regions(parts: list[str]) -> list[str]:
    out, i = [], 0
    while i < len(parts):
        if i + 2 < len(parts) and (parts[i + 1] in REGION_SEGMENTS.get(parts[i], ())
                                   or parts[i] == "cond" and _LONE_SEGMENT.match(parts[i + 1])):
            i += 2
            continue
        if i + 1 < len(parts) and _LONE_SEGMENT.match(parts[i]):
            i += 1
            continue
        out.append(parts[i])
        i += 1
    return out


# ---------------------------------------------------------------------------------------------- jaxpr
def jaxpr_equation_lines(text: str | None, n_eqns: int) -> list[tuple[int, int]] | None:
    """(first, last) line of each top-level equation of the main jaxpr, in equation order.

    ``None`` when the text cannot be parsed into exactly ``n_eqns`` equations (an unexpected format).
    """
    if not text:
        return None
    lines = text.split("\n")
    main = max((i for i, s in enumerate(lines) if s.startswith("{ lambda")), default=None)
    if main is None:
        return None
    return jaxpr_block_lines(lines, main, n_eqns)


def jaxpr_block_lines(lines: list[str], opening: int, n_eqns: int) -> list[tuple[int, int]] | None:
    """(first, last) 1-based line of each equation of the jaxpr block that opens on ``lines[opening]`` (0-based;
    the line holding ``{ lambda``: the main block, a shared ``let name = { lambda`` block, or an inline parameter
    ``body_jaxpr={ lambda``). Its equations start at the opening line's indent + 4, its ``in (…)`` at indent + 2; a
    block printed on one line (``{ lambda ; x:f32[4]. let y:f32[4] = neg x in (y,) }``) gives that line to each
    equation. ``None`` when the block does not hold exactly ``n_eqns`` equations."""
    head = re.sub(r"\s+#.*$", "", lines[opening]).rstrip()
    if " let " in head and head.endswith("}"):  # a short block printed on one line (a cond branch)
        return [(opening + 1, opening + 1)] * n_eqns
    indent = len(lines[opening]) - len(lines[opening].lstrip())
    start = re.compile("^" + " " * (indent + 4) + r"[^ \])}#]")
    close = " " * (indent + 2) + "in"
    i = opening
    while i < len(lines) and not lines[i].rstrip().endswith("let"):
        i += 1
    starts: list[int] = []
    end = len(lines)
    for j in range(i + 1, len(lines)):
        s = lines[j]
        if s.startswith(close + " ") or s.startswith(close + "("):
            end = j
            break
        if start.match(s):
            starts.append(j)
    if len(starts) != n_eqns:
        return None
    bounds = starts[1:] + [end]
    return [(a + 1, b) for a, b in zip(starts, bounds)]


def jaxpr_param_block(lines: list[str], span: tuple[int, int], param: str) -> int | None:
    """0-based line where the sub-jaxpr that parameter ``param`` (``body_jaxpr``) of the equation printed on
    1-based lines ``span`` opens: inline (``body_jaxpr={ lambda``, inside the span) or a shared block the
    parameter names (``body_jaxpr=jaxpr`` → the ``let jaxpr = { lambda`` line); ``branches[k]``: the ``k``-th
    jaxpr of a tuple parameter (``cond``'s ``branches=(`` … ``)``). None when not found."""
    indexed = re.match(r"^(\w+)\[(\d+)\]$", param)
    if indexed:
        return _branch_block(lines, span, indexed.group(1), int(indexed.group(2)))
    key = re.compile(r"^\s*" + re.escape(param) + r"=(.*)$")
    for i in range(span[0] - 1, min(span[1], len(lines))):
        m = key.match(lines[i])
        if m is None:
            continue
        value = m.group(1).strip()
        if value.startswith("{ lambda"):
            return i
        name = value.split()[0] if value else ""
        head = f"let {name} = {{ lambda"
        return next((j for j, s in enumerate(lines) if s.startswith(head)), None)
    return None


def _branch_block(lines: list[str], span: tuple[int, int], param: str, k: int) -> int | None:
    """0-based line of the ``k``-th jaxpr in tuple parameter ``param`` (``branches=(``) of the equation on ``span``."""
    for i in range(span[0] - 1, min(span[1], len(lines))):
        if lines[i].strip() != f"{param}=(":
            continue
        indent = len(lines[i]) - len(lines[i].lstrip()) + 2
        found = -1
        for j in range(i + 1, min(span[1], len(lines))):
            s = lines[j]
            if s.strip() == ")" or len(s) - len(s.lstrip()) < indent:
                return None
            if len(s) - len(s.lstrip()) == indent:
                found += 1
                if found == k:
                    value = s.strip()
                    if value.startswith("{ lambda"):
                        return j
                    head = f"let {value.split()[0]} = {{ lambda"
                    return next((n for n, t in enumerate(lines) if t.startswith(head)), None)
    return None


# ------------------------------------------------------------------------------------------ StableHLO
@dataclass
class StableOp:
    """One StableHLO op line: ``text_line`` in the plain text, ``func`` the StableHLO function holding it, and
    where it came from (``file``, ``line``, ``scope``; :attr:`location`)."""

    text_line: int
    func: str
    op: str
    scope: str = ""
    primitive: str = ""
    file: str = ""
    line: int = 0
    callee: str | None = None
    function: str = ""

    @property
    def location(self) -> SourceLocation:
        return SourceLocation(self.file, self.line, self.function, self.scope)


class _LocTable:
    def __init__(self, defs: dict[str, str]):
        self.defs = defs
        self.memo: dict[str, tuple[str, str, int]] = {}

    def resolve(self, ref: str, depth: int = 0) -> tuple[str, str, int]:
        """(name, file, line) of ``#loc<ref>``: the outermost name and the innermost (callee) file."""
        if ref in self.memo:
            return self.memo[ref]
        body = self.defs.get(ref, "unknown")
        out = ("", "", 0)
        if depth < 64:
            if m := _CALLSITE.match(body):
                callee = self.resolve(m.group(1), depth + 1)
                out = callee if callee[1] else (callee[0], *self.resolve(m.group(2), depth + 1)[1:])
            elif m := _NAME_LOC.match(body):
                child = self.resolve(m.group(2), depth + 1) if m.group(2) is not None else ("", "", 0)
                out = (m.group(1), child[1], child[2])
            elif m := _FILE_LOC.match(body):
                out = ("", m.group(1), int(m.group(2)))
        self.memo[ref] = out
        return out


def stablehlo_ops(debug_text: str | None, plain_text: str | None) -> list[StableOp] | None:
    """Every op of the module with its source, numbered by lines of ``plain_text``.

    ``None`` when the debug text is missing or its non-``#loc`` lines do not line up with ``plain_text``.
    """
    if not debug_text or not plain_text:
        return None
    defs: dict[str, str] = {}
    body: list[str] = []
    for s in debug_text.split("\n"):
        if s.startswith("#loc"):
            if m := _LOC_DEF.match(s):
                defs[m.group(1)] = m.group(2)
        else:
            body.append(s)
    plain = plain_text.split("\n")
    while body and not body[-1].strip():
        body.pop()
    while plain and not plain[-1].strip():
        plain.pop()
    if len(body) != len(plain):
        return None
    table = _LocTable(defs)
    ops: list[StableOp] = []
    func = ""
    for i, s in enumerate(body):
        if m := _FUNC.match(s):
            func = m.group(1)
            continue
        m = STABLEHLO_OP.match(s)
        if not m or m.group(1).startswith("func.return"):
            continue
        op = StableOp(text_line=i + 1, func=func, op=m.group(1))
        if c := _CALL.search(s):
            op.callee = c.group(1)
        if r := _LOC_REF.search(s):
            name, op.file, op.line = table.resolve(r.group(1))
            op.scope, op.primitive = split_loc_name(name)
        ops.append(op)
    return ops


def function_lines(plain_text: str | None) -> dict[str, tuple[int, int]]:
    """``{function name: (first, last) line}`` of each ``func.func`` in a StableHLO text."""
    out: dict[str, tuple[int, int]] = {}
    if not plain_text:
        return out
    lines = plain_text.split("\n")
    for i, s in enumerate(lines):
        if m := _FUNC.match(s):
            indent = len(s) - len(s.lstrip())
            j = i + 1
            while j < len(lines) and not (lines[j].startswith(" " * indent + "}") and
                                          len(lines[j]) - len(lines[j].lstrip()) == indent):
                j += 1
            out[m.group(1)] = (i + 1, min(j + 1, len(lines)))
    return out


# ------------------------------------------------------------------------------------- optimized HLO
@dataclass
class HloInstruction:
    """One optimized-HLO instruction: ``text_line`` in the HLO text, its computation and the fusion
    instruction that calls that computation (``None`` outside fusions); where it came from (``file``,
    ``line``, ``function``, ``scope``; :attr:`location`) from its metadata."""

    text_line: int
    name: str
    opcode: str
    computation: str
    fusion: str | None = None
    scope: str = ""
    primitive: str = ""
    file: str = ""
    line: int = 0
    function: str = ""

    @property
    def location(self) -> SourceLocation:
        return SourceLocation(self.file, self.line, self.function, self.scope)


def _tables(lines: list[str]) -> tuple[dict[str, dict[int, str]], int]:
    """The header tables (``FileNames`` …) as ``{table: {id: row text}}`` and the first line after them."""
    tables: dict[str, dict[int, str]] = {}
    current: dict[int, str] | None = None
    i = 0
    for i, s in enumerate(lines):  # noqa: B007 (i is returned: where the tables end)
        if s in ("FileNames", "FunctionNames", "FileLocations", "StackFrames"):
            current = tables.setdefault(s, {})
        elif current is not None and (m := _TABLE_ROW.match(s)):
            current[int(m.group(1))] = m.group(2)
        elif s.startswith("%") or s.startswith("ENTRY"):
            break
    return tables, i


def _fields(row: str) -> dict[str, str]:
    return {m.group(1): (m.group(2) if m.group(2) is not None else m.group(3)) for m in _META_FIELD.finditer(row)}


def _frame_resolver(tables: dict[str, dict[int, str]]):
    files = {k: v.strip('"') for k, v in tables.get("FileNames", {}).items()}
    funcs = {k: v.strip('"') for k, v in tables.get("FunctionNames", {}).items()}
    locs = {k: _fields(v) for k, v in tables.get("FileLocations", {}).items()}
    frames = {k: _fields(v) for k, v in tables.get("StackFrames", {}).items()}

    def resolve(frame_id: int) -> tuple[str, int, str]:
        loc = locs.get(int(frames.get(frame_id, {}).get("file_location_id", -1)), {})
        return (files.get(int(loc.get("file_name_id", -1)), ""), int(loc.get("line", 0)),
                funcs.get(int(loc.get("function_name_id", -1)), ""))

    return resolve


def hlo_instructions(text: str | None) -> list[HloInstruction]:
    """Every instruction of an optimized HLO module with the source recorded in its metadata."""
    if not text:
        return []
    lines = text.split("\n")
    tables, start = _tables(lines)
    resolve = _frame_resolver(tables)
    out: list[HloInstruction] = []
    comp = ""
    fusion_of: dict[str, str] = {}
    for i in range(start, len(lines)):
        s = lines[i]
        if m := _HLO_COMP.match(s):
            comp = m.group(2)
            continue
        m = HLO_INSTRUCTION.match(s)
        if not m:
            continue
        ins = HloInstruction(text_line=i + 1, name=m.group(1), opcode=m.group(3), computation=comp)
        if ins.opcode == "fusion" and (c := HLO_CALLS.search(s)):
            fusion_of[c.group(1)] = ins.name
        if meta := _HLO_META.search(s):
            f = _fields(meta.group(1))
            ins.scope, ins.primitive = split_loc_name(f.get("op_name", ""))
            if "stack_frame_id" in f:
                ins.file, ins.line, ins.function = resolve(int(f["stack_frame_id"]))
            if "source_file" in f:
                ins.file, ins.line = f["source_file"], int(f.get("source_line", 0))
        out.append(ins)
    for ins in out:  # fused computations are printed before the fusion that calls them
        ins.fusion = fusion_of.get(ins.computation)
    return out


def count_stablehlo_ops(text: str) -> int:
    """StableHLO ops in a module's text (``call`` lines excepted: they name another function's ops)."""
    return sum(1 for s in text.splitlines() if (m := STABLEHLO_OP.match(s)) and m.group(1) != "call")


def count_hlo(text: str) -> tuple[int, int]:
    """``(instructions, fusions)`` in an HLO module's text (fused computations' instructions included)."""
    n = fusions = 0
    for s in text.splitlines():
        if m := HLO_INSTRUCTION.match(s):
            n += 1
            fusions += m.group(3) == "fusion" and HLO_KIND.search(m.group(4)) is not None
    return n, fusions
