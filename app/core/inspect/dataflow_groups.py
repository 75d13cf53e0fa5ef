"""Groups of jaxpr equations for the dataflow graph: module boxes and source-statement boxes. No Qt.

A selection's equations form a tree: below the modules every equation shares (their longest common module
path is the root), one box per child module (``self_attn``, ``mlp``; a numbered layer ``layers.3`` is one
box), and for the equations a module runs itself, one box per *statement*: the consecutive equations of one
source line, together with the equations of the functions that line calls (``rotate_half`` inside
``q_embed = (q * cos) + (rotate_half(q) * sin)``), which land between two runs of that line in trace
order. A statement of one equation is the equation itself.
"""

from __future__ import annotations

import linecache
import re
from dataclasses import dataclass, field
from typing import Literal

from app.core.inspect.source_map import EquationInfo, SourceMap
from app.core.units import short_file

_LAYER = re.compile(r"^(.*?\.\d+)(?:\.|$)")
#: The overview opens the largest box while it shows fewer boxes than this, and any box holding more than
#: this share of the equations.
FEW_BOXES, DOMINANT = 4, 0.8
#: A statement absorbs the calls it makes when it comes back within this many runs.
_CALL_WINDOW = 12


@dataclass
class Group:
    """A box of the graph. ``kind``: ``root``, ``module``, ``layer``, ``call``, ``line`` or ``eqn``."""

    id: str
    kind: str
    label: str
    eqns: list[int] = field(default_factory=list)
    children: list[Group] = field(default_factory=list)
    tooltip: str = ""

    def walk(self):  # noqa: ANN201 (a generator of Group)
        yield self
        for c in self.children:
            yield from c.walk()


def layer_instance(module: str) -> str | None:
    """``model.layers.3.self_attn`` → ``model.layers.3``; ``None`` outside numbered layers."""
    m = _LAYER.match(module)
    return m.group(1) if m else None


def module_chain(module: str) -> list[str]:
    """``model.layers.0.self_attn`` → ``["model", "model.layers.0", "model.layers.0.self_attn"]`` (a numeric
    component stays with its parent: one box per layer instance)."""
    out: list[str] = []
    cur = ""
    for part in module.split(".") if module else []:
        cur = f"{cur}.{part}" if cur else part
        if part.isdigit() and out:
            out[-1] = cur
        else:
            out.append(cur)
    return out


def statements(eqns: list[EquationInfo]) -> list[list[EquationInfo]]:
    """Split one module's own equations (trace order) into statements (see the module docstring)."""
    runs: list[list[EquationInfo]] = []
    for e in eqns:
        if runs and (runs[-1][0].file, runs[-1][0].line) == (e.file, e.line):
            runs[-1].append(e)
        else:
            runs.append([e])
    merged: list[list[EquationInfo]] = []
    for run in runs:
        head = run[0]
        back = None
        for j in range(len(merged) - 1, max(-1, len(merged) - 1 - _CALL_WINDOW), -1):
            first = merged[j][0]
            if (first.file, first.line) == (head.file, head.line):
                back = j
                break
            if any(e.function == head.function for e in merged[j]):
                break  # another statement of the same function came in between: not a call
        if back is not None:
            for extra in merged[back + 1:]:
                merged[back].extend(extra)
            del merged[back + 1:]
            merged[back].extend(run)
        else:
            merged.append(list(run))
    return merged


_TARGET = re.compile(r"^\s*(?:return\s+)?([A-Za-z_][\w.]*)\s*(?:,[^=]*)?(?::[^=]*)?=(?!=)")
_CALL = re.compile(r"([A-Za-z_][\w.]*)\s*\(")


def statement_name(file: str, line: int, max_len: int = 18) -> str:
    """What a source line computes, for a box title: the name it assigns (``key_states``), else the
    first call it makes (``keys.index_copy_``); ``""`` when the file cannot be read."""
    text = linecache.getline(file, line).strip() if file and line else ""
    m = _TARGET.match(text) or _CALL.search(text)
    if not m:
        return ""
    name = m.group(1).removeprefix("self.")
    return name if len(name) <= max_len else name[: max_len - 1] + "…"


def helper_calls(stmts: list[list[EquationInfo]]) -> list[list[list[EquationInfo]]]:
    """Gather consecutive statements of one helper function (not a module's ``forward``): the
    statements of ``apply_rotary_pos_emb`` or ``StaticLayer.update`` become one call."""
    out: list[list[list[EquationInfo]]] = []
    for stmt in stmts:
        fn = stmt[0].function
        helper = bool(fn) and not fn.endswith(".forward")
        if out and helper and out[-1][0][0].function == fn:
            out[-1].append(stmt)
        else:
            out.append([stmt])
    return out


def _call_group(module: str, call: list[list[EquationInfo]]) -> Group:
    if len(call) == 1:
        return _statement_group(module, call[0])
    head = call[0][0]
    eqns = [e for stmt in call for e in stmt]
    stem = short_file(head.file).split("/")[-1].removesuffix(".py").removeprefix("modeling_")
    group = Group(f"c:{module}:{head.index}", "call", f"{head.function.split('.')[-1]}()\n{stem}:{head.line}",
                  [e.index for e in eqns],
                  tooltip=f"{head.function} ({short_file(head.file)}): {len(call)} statements, "
                          f"{len(eqns)} equations\nATen ops: {_ops(eqns)}")
    group.children = [_statement_group(module, stmt) for stmt in call]
    return group


def _ops(eqns: list[EquationInfo]) -> str:
    """``linear · view · transpose``: the ATen ops (first name-scope component) of a statement, in order."""
    names: list[str] = []
    for e in eqns:
        op = e.scope.split("/")[0].removeprefix("aten::").split(".")[0] if e.scope else e.primitive
        if op not in names:
            names.append(op)
    text = " · ".join(names[:3])
    return text + (" …" if len(names) > 3 else "")


def _statement_group(module: str, stmt: list[EquationInfo]) -> Group:
    head = stmt[0]
    if len(stmt) == 1:
        shape = head.out_shapes[0] if head.out_shapes else ""
        return Group(f"e{head.index}", "eqn", f"{head.primitive}\n{shape}", [head.index],
                     tooltip=f"#{head.index} {head.primitive} {shape}\n{head.location.label} "
                             f"{head.function}\n{head.scope}")
    ops = _ops(stmt)
    op = ops.split(" · ")[0]
    op = op if len(op) <= 12 else op[:11] + "…"
    title = statement_name(head.file, head.line) or op
    group = Group(f"s:{module}:{head.index}", "line", f"{title}\n:{head.line} {op}",
                  [e.index for e in stmt],
                  tooltip=f"{head.location.label} {head.function}\n"
                          f"{linecache.getline(head.file, head.line).strip()}\nATen ops: {ops}\n"
                          f"{len(stmt)} equations: " + ", ".join(sorted({e.primitive for e in stmt})))
    group.children = [_statement_group(module, [e]) for e in stmt]
    return group


def build_tree(sm: SourceMap, chosen: list[int]) -> Group:
    """The box tree of equations ``chosen`` (indexes into ``sm.equations``, trace order)."""
    chains = {i: module_chain(sm.equations[i].module) for i in chosen}
    prefix: list[str] = []
    if chosen:
        prefix = chains[chosen[0]]
        for chain in chains.values():
            n = 0
            while n < min(len(prefix), len(chain)) and prefix[n] == chain[n]:
                n += 1
            prefix = prefix[:n]
    root_module = prefix[-1] if prefix else ""
    root = Group(f"m:{root_module}", "root", root_module or "(top)", list(chosen))
    _fill(sm, root, root_module, [(i, chains[i][len(prefix):]) for i in chosen])
    return root


def _fill(sm: SourceMap, group: Group, module: str, items: list[tuple[int, list[str]]]) -> None:
    """Children of ``group`` (module ``module``): ``items`` are (equation, module chain below it)."""
    own: list[EquationInfo] = []
    sub: dict[str, list[tuple[int, list[str]]]] = {}
    # child modules and own statements in trace order
    order: list[tuple[Literal["module"], str] | tuple[Literal["call"], int]] = []
    for i, rest in items:
        if rest:
            if rest[0] not in sub:
                order.append(("module", rest[0]))
            sub.setdefault(rest[0], []).append((i, rest[1:]))
        else:
            own.append(sm.equations[i])
    calls = {c[0][0].index: c for c in helper_calls(statements(own))}
    order.extend(("call", k) for k in calls)
    order.sort(key=lambda o: sub[o[1]][0][0] if o[0] == "module" else o[1])
    for entry in order:
        if entry[0] == "call":
            group.children.append(_call_group(module, calls[entry[1]]))
            continue
        name = entry[1]
        members = sub[name]
        short = name[len(module) + 1:] if module and name.startswith(module + ".") else name
        child = Group(f"m:{name}", "layer" if short.split(".")[-1].isdigit() else "module",
                      f"{short}\n{len(members)} equation{'s' if len(members) != 1 else ''}", [i for i, _ in members], tooltip=name)
        _fill(sm, child, name, members)
        if len(child.children) == 1 and child.children[0].kind != "eqn":  # nothing to open: skip a level
            only = child.children[0]
            child.children = only.children
        group.children.append(child)


def auto_expand(root: Group, few: int = FEW_BOXES, dominant: float = DOMINANT) -> frozenset[str]:
    """Ids of the boxes the overview opens: a box that holds more than ``dominant`` of the graph's
    equations (a whole-model selection opens ``model``), and the largest box while fewer than ``few``
    boxes are shown. Everything else stays closed until the user opens it."""
    opened: set[str] = set()
    shown = list(root.children)
    total = max(1, len(root.eqns))
    while True:
        closed = sorted((g for g in shown if g.children and g.id not in opened), key=lambda g: -len(g.eqns))
        if not closed or not (len(closed[0].eqns) > dominant * total or len(shown) < few):
            break
        pick = closed[0]
        opened.add(pick.id)
        shown.remove(pick)
        shown += pick.children
    return frozenset(opened)
