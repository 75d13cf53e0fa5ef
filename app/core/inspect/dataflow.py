"""Dataflow graph of a set of jaxpr equations, grouped so it reads at a glance, laid out with grandalf's
Sugiyama (layered) layout. No Qt, no JAX (it runs on the GUI thread).

Grouping (:mod:`app.core.inspect.dataflow_groups`): equations are gathered into collapsible boxes by module path
(``model.layers.0`` → ``self_attn``, ``mlp``, …) and, inside a module, by source statement (the equations
of one Python line, with the calls that line makes: ``modeling_llama.py:244 linear · view · transpose``).
A graph starts as an overview (each box collapsed unless it fits, see :func:`auto_expand`); ``expanded``
opens boxes on demand down to single equations. A selection made only of repeated-layer equations (a
folded group) is drawn for its first layer.

Nodes: ``eqn`` (primitive and output shape), ``line`` (a statement box), ``module`` / ``layer`` (a module
box; ``layer`` for a numbered repeated layer), ``input`` (a jaxpr input such as
``weights['model.layers.0.mlp.up_proj.weight']``, or a value made outside the selection). An expanded box
is drawn as a container (``expanded=True``) around its children (``parent`` = its id). Edges are values
from producer to consumer, drawn between the two sibling boxes that hold them, labelled with the
producer's output shape.

Layout: ``grandalf.layouts.SugiyamaLayout`` (Sugiyama, Tagawa & Toda 1981: layering, crossing reduction by
barycenters, coordinate assignment) per container, innermost first, so a container is one big node of its
parent's layout; connected components are placed side by side. Coordinates are node centres in scene units
(≈ pixels), y growing downwards (inputs on top).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from app.core.inspect.dataflow_groups import Group, auto_expand, build_tree, layer_instance
from app.core.inspect.source_map import SourceMap

NODE_W, NODE_H, CHAR_W, LINE_H = 96.0, 36.0, 7.3, 15.0
INPUT_H = 24.0
HEADER_H, PAD = 24.0, 12.0

__all__ = ["Dataflow", "GraphEdge", "GraphNode", "build_dataflow", "layer_instance", "layout"]


@dataclass
class GraphNode:
    """``kind``: ``eqn``, ``line``, ``module``, ``layer`` or ``input``. ``eqns``: equation indexes it
    stands for. ``parent``: id of the expanded box it is drawn in (``""`` at the top level);
    ``expanded``: drawn as a container of its children. ``x, y`` centre, ``w, h`` size (scene units)."""

    id: str
    label: str
    kind: str
    eqns: list[int] = field(default_factory=list)
    x: float = 0.0
    y: float = 0.0
    w: float = NODE_W
    h: float = NODE_H
    parent: str = ""
    expanded: bool = False
    tooltip: str = ""

    @property
    def is_group(self) -> bool:
        """A box that can be opened or closed (module, layer or a statement of several equations)."""
        return self.kind in ("module", "layer", "call", "line")


@dataclass
class GraphEdge:
    src: str
    dst: str
    label: str = ""
    points: list[tuple[float, float]] = field(default_factory=list)


@dataclass
class Dataflow:
    """``expanded``: ids of the open boxes (pass it back, with a box added or removed, to open or close
    one). ``note``: e.g. ``"showing model.layers.0, 1 of 12 repeated layers"``."""

    nodes: list[GraphNode]
    edges: list[GraphEdge]
    width: float = 0.0
    height: float = 0.0
    truncated: int = 0  # equations left out because of ``max_nodes``
    note: str = ""
    expanded: frozenset[str] = frozenset()

    def node(self, node_id: str) -> GraphNode | None:
        return next((n for n in self.nodes if n.id == node_id), None)

    def children(self, node_id: str) -> list[GraphNode]:
        return [n for n in self.nodes if n.parent == node_id]


def _is_weight(label: str) -> bool:
    """A model parameter (``weights['model.layers.0.mlp.up_proj.weight']``): not drawn as a node (the
    consumer's tooltip names it), so the top row is not a wall of weights."""
    return label.startswith("weights[")


def _short_input(label: str) -> str:
    label = re.sub(r"<flat index (\d+)>", r"\1", label)
    m = re.match(r"^\w+\['(.*)'\]$", label)
    name = m.group(1) if m else label
    parts = name.split(".")
    return ".".join(parts[-3:]) if len(parts) > 3 else name


def build_dataflow(sm: SourceMap, eqn_indices: list[int] | None = None, collapse_layers: bool = True,
                   max_nodes: int = 600, expanded: set[str] | frozenset[str] | None = None) -> Dataflow:
    """Graph of ``eqn_indices`` (all equations when ``None``), not yet laid out (see :func:`layout`).

    ``expanded``: ids of the boxes to draw open; ``None`` gives the overview (:func:`auto_expand`).
    ``collapse_layers=False`` opens every box (one node per equation). At most ``max_nodes`` nodes are
    drawn; equations beyond are counted in ``truncated``.
    """
    chosen = sorted(set(range(len(sm.equations)) if eqn_indices is None else eqn_indices))
    instances = [layer_instance(sm.equations[i].module) for i in chosen]
    layers = set(instances)
    note = ""
    if collapse_layers and chosen and None not in layers and len(layers) > 1:
        # Only repeated-layer equations (e.g. a folded group ``h.*.attn``): draw the first instance.
        first = instances[0]
        chosen = [i for i, inst in zip(chosen, instances) if inst == first]
        note = f"showing {first}, 1 of {len(layers)} repeated layers"
    root = build_tree(sm, chosen)
    if not collapse_layers:
        open_ids = frozenset(g.id for g in root.walk() if g.children)
    elif expanded is None:
        open_ids = auto_expand(root)
    else:
        open_ids = frozenset(expanded)
    return _graph(sm, root, open_ids, max_nodes, note)


def _graph(sm: SourceMap, root: Group, open_ids: frozenset[str], max_nodes: int, note: str) -> Dataflow:
    nodes: dict[str, GraphNode] = {}
    owner: dict[int, str] = {}  # equation → id of the visible node that holds it
    parent_of: dict[str, str] = {}
    truncated = 0

    def visit(group: Group, parent: str) -> None:
        nonlocal truncated
        for child in group.children:
            if len(nodes) >= max_nodes:
                truncated += len(child.eqns)
                continue
            is_open = bool(child.children) and child.id in open_ids
            nodes[child.id] = GraphNode(child.id, child.label, child.kind, list(child.eqns), parent=parent,
                                        expanded=is_open, tooltip=child.tooltip)
            parent_of[child.id] = parent
            if is_open:
                visit(child, child.id)
            else:
                for i in child.eqns:
                    owner[i] = child.id

    visit(root, "")
    edges: dict[tuple[str, str], GraphEdge] = {}
    for i, nid in owner.items():
        for src in sm.equations[i].operands:
            if src >= 0 and src in owner:
                a, b = _siblings(owner[src], nid, parent_of)
                if a != b:
                    edges.setdefault((a, b), GraphEdge(a, b, _shape(sm, src)))
                continue
            if nodes[nid].kind in ("module", "layer"):
                continue  # a closed module's weights and outside values are its own business
            if nodes[nid].kind != "eqn" or not parent_of[nid].startswith("s:") and len(nodes) > 12:
                # values from outside feed boxes and the overview's equations: named in the tooltip,
                # drawn as nodes only next to the equations of an open statement (or in a small graph)
                what = _short_input(sm.input_labels[-1 - src]) if src < 0 and -1 - src < len(sm.input_labels) \
                    else (f"#{src} {sm.equations[src].primitive} from {sm.equations[src].module or '(top)'}"
                          if src >= 0 else f"input {-1 - src}")
                if what not in nodes[nid].tooltip and nodes[nid].tooltip.count("\nreads ") < 6:
                    nodes[nid].tooltip += f"\nreads {what}"
                continue
            if src < 0 and -1 - src < len(sm.input_labels) and _is_weight(sm.input_labels[-1 - src]):
                weight = _short_input(sm.input_labels[-1 - src])
                if weight not in nodes[nid].tooltip:
                    nodes[nid].tooltip += f"\nreads {weight}"
                continue
            sid = f"{'in' if src < 0 else 'x'}{-1 - src if src < 0 else src}@{parent_of[nid]}"
            if sid not in nodes:
                nodes[sid] = _input_node(sm, sid, src, parent_of[nid])
                parent_of[sid] = parent_of[nid]
            edges.setdefault((sid, nid), GraphEdge(sid, nid, _shape(sm, src) if src >= 0 else ""))
    for n in nodes.values():
        _size(n)
    return Dataflow(list(nodes.values()), list(edges.values()), truncated=truncated, note=note,
                    expanded=frozenset(i for i in open_ids if i in nodes))


def _shape(sm: SourceMap, src: int) -> str:
    shapes = sm.equations[src].out_shapes
    return shapes[0] if shapes else ""


def _input_node(sm: SourceMap, sid: str, src: int, parent: str) -> GraphNode:
    if src < 0:
        k = -1 - src
        text = _short_input(sm.input_labels[k]) if k < len(sm.input_labels) else f"input {k}"
        return GraphNode(sid, text, "input", parent=parent, tooltip=sm.input_labels[k] if k < len(sm.input_labels) else text)
    p = sm.equations[src]
    where = p.module or "(top)"
    return GraphNode(sid, f"{p.primitive} from {where.split('.')[-1]}", "input", [src], parent=parent,
                     tooltip=f"#{src} {p.primitive} {_shape(sm, src)} in {where} (outside the selection)")


def _siblings(a: str, b: str, parent_of: dict[str, str]) -> tuple[str, str]:
    """The two nodes under the lowest common container of ``a`` and ``b`` that hold them."""
    chain_a = [a]
    while parent_of.get(chain_a[-1]):
        chain_a.append(parent_of[chain_a[-1]])
    chain_b = [b]
    while parent_of.get(chain_b[-1]):
        chain_b.append(parent_of[chain_b[-1]])
    set_b = {parent_of.get(x, "") for x in chain_b}
    for x in chain_a:
        p = parent_of.get(x, "")
        if p in set_b:
            y = next(y for y in chain_b if parent_of.get(y, "") == p)
            return x, y
    return chain_a[-1], chain_b[-1]


def _size(n: GraphNode) -> None:
    """Box size of a closed node from its label (monospace width per character, one row per line)."""
    rows = n.label.split("\n")
    longest = max(len(s) for s in rows)
    n.w = max(NODE_W if n.kind != "input" else 60.0, longest * CHAR_W + 18)
    n.h = INPUT_H if n.kind == "input" and len(rows) == 1 else max(NODE_H, LINE_H * len(rows) + 10)


class _View:
    def __init__(self, w: float, h: float) -> None:
        self.w, self.h, self.xy = w, h, (0.0, 0.0)


class _EdgeView:
    def __init__(self) -> None:
        self.points: list[tuple[float, float]] = []

    def setpath(self, pts) -> None:  # noqa: ANN001 (grandalf's callback)
        self.points = [(float(x), float(y)) for x, y in pts]


def _layout_level(nodes: list[GraphNode], edges: list[GraphEdge], gap: float = 40.0) -> tuple[float, float]:
    """Lay out ``nodes`` (sizes known) with the ``edges`` among them, top-left at (0, 0): sets each node's
    centre and each edge's points in these coordinates; returns (width, height)."""
    from grandalf.graphs import Edge, Graph, Vertex
    from grandalf.layouts import SugiyamaLayout

    if not nodes:
        return 0.0, 0.0
    # grandalf's layout reads and sets each vertex's and edge's ``view``, an attribute its classes do not declare
    views = {n.id: _View(n.w, n.h) for n in nodes}
    verts = {n.id: Vertex(n.id) for n in nodes}
    for n in nodes:
        verts[n.id].view = views[n.id]  # pyright: ignore[reportAttributeAccessIssue]
    gedges = []
    for e in edges:
        ge = Edge(verts[e.src], verts[e.dst])
        ge.view = _EdgeView()  # pyright: ignore[reportAttributeAccessIssue]
        gedges.append((e, ge))
    graph = Graph(list(verts.values()), [ge for _, ge in gedges])
    x_offset = 0.0
    for comp in sorted(graph.C, key=lambda c: (-len(c.sV), min(v.data for v in c.sV))):
        sug = SugiyamaLayout(comp)
        sug.xspace, sug.yspace = 22, 34
        sug.init_all()
        sug.draw(1)
        left = min(v.view.xy[0] - v.view.w / 2 for v in comp.sV)
        right = max(v.view.xy[0] + v.view.w / 2 for v in comp.sV)
        for v in comp.sV:
            v.view.xy = (v.view.xy[0] - left + x_offset, v.view.xy[1])
        for _, ge in gedges:
            if ge.v[0] in comp.sV and ge.view.points:
                ge.view.points = [(x - left + x_offset, y) for x, y in ge.view.points]
        x_offset += right - left + gap
    top = min(view.xy[1] - view.h / 2 for view in views.values())
    for n in nodes:
        x, y = views[n.id].xy
        n.x, n.y = float(x), float(y - top)
    centre = {n.id: (n.x, n.y) for n in nodes}
    for e, ge in gedges:
        inner = [(x, y - top) for x, y in ge.view.points[1:-1]]
        e.points = [centre[e.src], *inner, centre[e.dst]]
    width = max(n.x + n.w / 2 for n in nodes)
    height = max(n.y + n.h / 2 for n in nodes)
    return width, height


def layout(df: Dataflow, gap: float = 60.0) -> Dataflow:
    """Place nodes (in place), innermost containers first; returns ``df`` with ``width``/``height``."""
    by_parent: dict[str, list[GraphNode]] = {}
    for n in df.nodes:
        by_parent.setdefault(n.parent, []).append(n)
    level_of = {n.id: n.parent for n in df.nodes}
    edges_by_level: dict[str, list[GraphEdge]] = {}
    for e in df.edges:
        edges_by_level.setdefault(level_of.get(e.src, ""), []).append(e)

    def place(container: str) -> tuple[float, float]:
        members = by_parent.get(container, [])
        for n in members:
            if n.expanded:
                w, h = place(n.id)
                n.w = max(w + 2 * PAD, len(n.label.split("\n")[0]) * CHAR_W + 2 * PAD)
                n.h = h + HEADER_H + 2 * PAD
        return _layout_level(members, edges_by_level.get(container, []), gap if not container else gap)

    df.width, df.height = place("")

    def shift(container: str, dx: float, dy: float) -> None:
        for n in by_parent.get(container, []):
            n.x += dx
            n.y += dy
            if n.expanded:
                shift(n.id, n.x - n.w / 2 + PAD, n.y - n.h / 2 + HEADER_H + PAD)
        for e in edges_by_level.get(container, []):
            e.points = [(x + dx, y + dy) for x, y in e.points]

    for n in by_parent.get("", []):
        if n.expanded:
            shift(n.id, n.x - n.w / 2 + PAD, n.y - n.h / 2 + HEADER_H + PAD)
    return df
