"""Dataflow graph of a set of jaxpr equations, laid out with grandalf's Sugiyama (layered) layout. No Qt.

Nodes are equations (primitive and output shape), external inputs (jaxpr inputs such as
``weights['model.layers.0.mlp.up_proj.weight']``, or values made outside the selection) and, when the
selection spans several instances of a repeated layer (``model.layers.3``) plus other equations, one
collapsed node per layer instance, so a whole-model graph stays small (~N layers + the equations around
them). A selection made only of repeated-layer equations (a folded group) is drawn for its first layer. Edges are variables
from producer to consumer, labelled with the producer's output shape.

Layout: ``grandalf.layouts.SugiyamaLayout`` (Sugiyama, Tagawa & Toda 1981: layering, crossing reduction by
barycenters, coordinate assignment) per connected component; components are placed side by side.
Coordinates are node centres in scene units (≈ pixels), y growing downwards (inputs on top).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from app.core.source_map import SourceMap

NODE_W, NODE_H, CHAR_W = 120.0, 34.0, 6.5
_LAYER = re.compile(r"^(.*?\.\d+)(?:\.|$)")


@dataclass
class GraphNode:
    """``kind``: ``eqn``, ``input`` or ``layer`` (collapsed). ``eqns``: equation indexes it stands for."""

    id: str
    label: str
    kind: str
    eqns: list[int] = field(default_factory=list)
    x: float = 0.0
    y: float = 0.0
    w: float = NODE_W
    h: float = NODE_H


@dataclass
class GraphEdge:
    src: str
    dst: str
    label: str = ""
    points: list[tuple[float, float]] = field(default_factory=list)


@dataclass
class Dataflow:
    nodes: list[GraphNode]
    edges: list[GraphEdge]
    width: float = 0.0
    height: float = 0.0
    truncated: int = 0  # equations left out because of ``max_nodes``
    note: str = ""  # e.g. "showing model.layers.0, 1 of 12 repeated layers"

    def node(self, node_id: str) -> GraphNode | None:
        return next((n for n in self.nodes if n.id == node_id), None)


def layer_instance(module: str) -> str | None:
    """``model.layers.3.self_attn`` → ``model.layers.3``; ``None`` outside numbered layers."""
    m = _LAYER.match(module)
    return m.group(1) if m else None


def _short_input(label: str) -> str:
    m = re.match(r"^\w+\['(.*)'\]$", label)
    return m.group(1) if m else label


def build_dataflow(sm: SourceMap, eqn_indices: list[int] | None = None, collapse_layers: bool = True,
                   max_nodes: int = 600) -> Dataflow:
    """Graph of ``eqn_indices`` (all equations when ``None``), not yet laid out (see :func:`layout`)."""
    chosen = sorted(set(range(len(sm.equations)) if eqn_indices is None else eqn_indices))
    instances = [layer_instance(sm.equations[i].module) for i in chosen]
    layers = set(instances)
    note = ""
    if collapse_layers and None not in layers and len(layers) > 1:
        # Only repeated-layer equations (e.g. a folded group ``h.*.attn``): draw the first instance.
        first = instances[0]
        chosen = [i for i, inst in zip(chosen, instances) if inst == first]
        note = f"showing {first}, 1 of {len(layers)} repeated layers"
        layers = {first}
    collapse = collapse_layers and len(layers - {None}) > 1
    owner: dict[int, str] = {}
    nodes: dict[str, GraphNode] = {}
    truncated = 0
    for i in chosen:
        e = sm.equations[i]
        inst = layer_instance(e.module) if collapse else None
        nid = f"L:{inst}" if inst else f"e{i}"
        if nid not in nodes:
            if len(nodes) >= max_nodes:
                truncated += 1
                continue
            if inst:
                nodes[nid] = GraphNode(nid, inst, "layer")
            else:
                shape = e.out_shapes[0] if e.out_shapes else ""
                nodes[nid] = GraphNode(nid, f"{e.primitive}\n{shape}", "eqn")
        nodes[nid].eqns.append(i)
        owner[i] = nid
    for n in nodes.values():
        if n.kind == "layer":
            n.label = f"{n.label}\n{len(n.eqns)} equations"
    edges: dict[tuple[str, str], GraphEdge] = {}
    for i, nid in owner.items():
        for src in sm.equations[i].operands:
            if src >= 0 and src in owner:
                sid = owner[src]
                label = sm.equations[src].out_shapes[0] if sm.equations[src].out_shapes else ""
            elif src < 0:
                k = -1 - src
                sid = f"in{k}"
                if sid not in nodes:
                    text = _short_input(sm.input_labels[k]) if k < len(sm.input_labels) else f"input {k}"
                    nodes[sid] = GraphNode(sid, text, "input")
                label = ""
            else:
                sid = f"x{src}"
                if sid not in nodes:
                    p = sm.equations[src]
                    nodes[sid] = GraphNode(sid, f"{p.primitive} (outside)\n{p.module}", "input", [src])
                label = sm.equations[src].out_shapes[0] if sm.equations[src].out_shapes else ""
            if sid != nid:
                edges.setdefault((sid, nid), GraphEdge(sid, nid, label))
    for n in nodes.values():
        _size(n)
    return Dataflow(list(nodes.values()), list(edges.values()), truncated=truncated, note=note)


def _size(n: GraphNode) -> None:
    """Box size of a node from its label (monospace width per character, one text line per label line)."""
    longest = max(len(s) for s in n.label.split("\n"))
    n.w = max(NODE_W, longest * CHAR_W + 16)
    n.h = NODE_H if n.label.count("\n") <= 1 else NODE_H + 14 * (n.label.count("\n") - 1)


class _View:
    def __init__(self, w: float, h: float) -> None:
        self.w, self.h, self.xy = w, h, (0.0, 0.0)


class _EdgeView:
    def __init__(self) -> None:
        self.points: list[tuple[float, float]] = []

    def setpath(self, pts) -> None:
        self.points = [(float(x), float(y)) for x, y in pts]


def layout(df: Dataflow, gap: float = 60.0) -> Dataflow:
    """Place nodes (in place) with grandalf's Sugiyama layout; returns ``df`` with ``width``/``height``."""
    from grandalf.graphs import Edge, Graph, Vertex
    from grandalf.layouts import SugiyamaLayout

    verts = {n.id: Vertex(n.id) for n in df.nodes}
    for n in df.nodes:
        verts[n.id].view = _View(n.w, n.h)
    gedges = []
    for e in df.edges:
        ge = Edge(verts[e.src], verts[e.dst])
        ge.view = _EdgeView()
        gedges.append((e, ge))
    graph = Graph(list(verts.values()), [ge for _, ge in gedges])
    x_offset = 0.0
    for comp in sorted(graph.C, key=lambda c: -len(c.sV)):
        sug = SugiyamaLayout(comp)
        sug.xspace, sug.yspace = 24, 40
        sug.init_all()
        sug.draw(1)
        xs = [v.view.xy[0] - v.view.w / 2 for v in comp.sV]
        left = min(xs) if xs else 0.0
        right = max((v.view.xy[0] + v.view.w / 2 for v in comp.sV), default=0.0)
        for v in comp.sV:
            v.view.xy = (v.view.xy[0] - left + x_offset, v.view.xy[1])
        for e, ge in gedges:
            if ge.v[0] in comp.sV and ge.view.points:
                ge.view.points = [(x - left + x_offset, y) for x, y in ge.view.points]
        x_offset += right - left + gap
    top = min((v.view.xy[1] - v.view.h / 2 for v in verts.values()), default=0.0)
    for n in df.nodes:
        x, y = verts[n.id].view.xy
        n.x, n.y = float(x), float(y - top)
    centre = {n.id: (n.x, n.y) for n in df.nodes}
    for e, ge in gedges:
        a, b = centre[e.src], centre[e.dst]
        inner = [(x, y - top) for x, y in ge.view.points[1:-1]]
        e.points = [a, *inner, b]
    df.width = max((n.x + n.w / 2 for n in df.nodes), default=0.0)
    df.height = max((n.y + n.h / 2 for n in df.nodes), default=0.0)
    return df
