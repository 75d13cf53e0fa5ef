"""Source map on the tiny Llama: source line ↔ ATen op ↔ jaxpr ↔ StableHLO ↔ HLO, module paths, flops,
folding, CSV/JSON round trips, prefill/decode diff and the ``inspect --source-map`` CLI."""

from __future__ import annotations

import io
import json
import os
import re

import pytest

from app.core.events import IREvent
from app.core.inspect import source_map_io
from app.core.inspect.source_diff import line_diff, primitive_diff
from app.core.inspect.source_map import SourceMap, build_source_map
from app.core.settings import GenerationSettings


def _sdpa_call_line() -> tuple[str, int]:
    """File and first line of the ``scaled_dot_product_attention(`` call that computes attention scores
    in transformers' SDPA integration (the line the attention equations are attributed to)."""
    import transformers.integrations.sdpa_attention as sdpa

    lines = open(sdpa.__file__, encoding="utf-8").read().split("\n")
    hits = [i + 1 for i, s in enumerate(lines) if "torch.nn.functional.scaled_dot_product_attention(" in s]
    assert hits, "transformers' SDPA integration changed"
    return sdpa.__file__, hits[-1]


@pytest.fixture(scope="module")
def step_irs(llama_engine):
    llama_engine.clear_compiled()
    events = llama_engine.generate("The jit function", GenerationSettings(max_new_tokens=3))
    irs = {e.step: e.ir for e in events if isinstance(e, IREvent)}
    assert set(irs) == {"prefill", "decode"}
    assert all(ir.traced_jaxpr is None for ir in irs.values())  # events carry plain data only
    return {step: llama_engine.ir[("jit-static", step)] for step in irs}


@pytest.fixture(scope="module")
def maps(step_irs, llama_engine) -> dict[str, SourceMap]:
    model = llama_engine.loaded.model
    return {step: build_source_map(ir, step, model) for step, ir in step_irs.items()}


def _attention_groups(sm: SourceMap):
    file, line = _sdpa_call_line()
    return [g for g in sm.groups if os.path.samefile(g.file, file) and g.line == line]


def test_attention_line_maps_to_dot_general_and_back_from_hlo(maps, step_irs):
    sm, ir = maps["decode"], step_irs["decode"]
    groups = _attention_groups(sm)
    assert {g.module for g in groups} == {"model.layers.0.self_attn", "model.layers.1.self_attn"}
    scores = [g for g in groups if g.scope.endswith("aten::bmm")]
    assert len(scores) == 2 and all(g.primitives == {"dot_general": 2} for g in scores)
    g = scores[0]
    jaxpr_lines = ir.jaxpr.split("\n")
    assert sum("dot_general" in jaxpr_lines[n - 1] for n in sm.group_lines(g, "jaxpr")) == 2
    shlo = ir.stablehlo.split("\n")
    assert [n for n in g.stablehlo_lines if "stablehlo.dot_general" in shlo[n - 1]]
    assert set(g.stablehlo_lines).isdisjoint(scores[1].stablehlo_lines), "each layer has its own ops"
    # HLO: the linked instructions include dots whose metadata names the same scope, file and line.
    hlo = ir.hlo.split("\n")
    dots = [hlo[n - 1] for n in g.hlo_lines if " dot(" in hlo[n - 1]]
    assert dots and all('aten::bmm/dot_general"' in s for s in dots)
    file, line = _sdpa_call_line()
    frame_ids = {int(m) for s in dots for m in re.findall(r"stack_frame_id=(\d+)", s)}
    table = "\n".join(hlo[: next(i for i, s in enumerate(hlo) if s.startswith("%"))])
    file_id = re.search(r'^(\d+) "' + re.escape(file) + '"', table, re.M).group(1)
    locs = re.findall(r"^(\d+) \{file_name_id=(\d+) function_name_id=\d+ line=(\d+)", table, re.M)
    frames = dict(re.findall(r"^(\d+) \{file_location_id=(\d+)", table, re.M))
    by_loc = {loc: (f, int(ln)) for loc, f, ln in locs}
    assert {by_loc[frames[str(i)]] for i in frame_ids} == {(file_id, line)}
    assert g.fusions, "the dots are fused"
    assert g.flops > 0


def test_module_paths_flops_and_folding(maps, step_irs):
    sm = maps["decode"]
    modules = {g.module for g in sm.groups}
    assert {"model.layers.0.mlp", "model.layers.1.mlp.act_fn", "model.norm", "model.rotary_emb"} <= modules
    linear = [g for g in sm.groups if g.module == "model.layers.0.mlp" and g.scope.startswith("linear")]
    # gate/up (64→128) and down (128→64) projections of one token: 3 · 2·64·128 flops.
    assert linear and linear[0].flops == 3 * 2 * 64 * 128
    xla = step_irs["decode"].cost["flops"]
    assert 0.8 * xla < sm.total_flops() < 1.2 * xla
    folded = sm.fold_layers()
    mlp = [g for g in folded.groups if g.module == "model.layers.*.mlp" and g.scope.startswith("linear")]
    assert mlp[0].repeats == 2 and mlp[0].flops == 2 * linear[0].flops
    assert sum(len(g.equations) for g in folded.groups) == len(sm.equations)
    assert len(folded.groups) < len(sm.groups)


def test_every_line_links_back_to_its_group(maps, step_irs):
    sm = maps["decode"]
    g = [g for g in _attention_groups(sm) if g.scope.endswith("aten::bmm")][0]
    gi = sm.groups.index(g)
    for view in ("jaxpr", "jaxpr_source", "stablehlo", "hlo"):
        lines = sm.group_lines(g, view)
        assert lines, view
        assert gi in sm.groups_for_line(view, lines[0]), view
    assert sm.groups_for_line("jaxpr", 1) == []
    spans = [e.lines["jaxpr"] for e in sm.equations]
    assert len(spans) == len(step_irs["decode"].traced_jaxpr.jaxpr.eqns)


def test_model_free_paths_still_split_layers(step_irs):
    sm = build_source_map(step_irs["decode"], "decode")
    assert {"model.LlamaDecoderLayer.0.self_attn", "model.LlamaDecoderLayer.1.self_attn"} <= {
        g.module for g in sm.groups}


def test_json_and_csv_round_trip(maps, tmp_path):
    sm = maps["decode"]
    again = source_map_io.from_json(source_map_io.to_json(sm))
    assert again == sm
    assert source_map_io.groups_from_csv(source_map_io.to_csv(sm)) == sm.groups
    assert source_map_io.write(sm, tmp_path / "m.json") == "json"
    assert source_map_io.from_json((tmp_path / "m.json").read_text()) == sm


def test_prefill_decode_diff(maps):
    prims = {r.key: r for r in primitive_diff(maps["prefill"], maps["decode"])}
    assert prims["dot_general"].a_count == prims["dot_general"].b_count > 0
    assert prims["dot_general"].a_flops > prims["dot_general"].b_flops
    rows = line_diff(maps["prefill"], maps["decode"])
    mlp = [r for r in rows if r.module == "model.layers.*.mlp" and r.scope.startswith("linear")][0]
    # the MLP does the same work on one position: only the sequence axis differs
    assert mlp.status == "seq" and mlp.a_shapes != mlp.b_shapes and not mlp.structural
    seq = mlp.seq
    assert seq[1] == 1 and seq[0] > 1
    for r in rows:  # each status names what differs, and only that
        if r.status == "same":
            assert r.a_count == r.b_count and r.a_shapes == r.b_shapes
        elif r.status in ("seq", "shape"):
            assert r.a_count == r.b_count and r.a_prims == r.b_prims and r.a_shapes != r.b_shapes
    assert sum(r.status == "seq" for r in rows) > sum(r.structural for r in rows) > 0
    # decode runs one token: every matmul line's shapes differ from prefill's, none vanishes
    assert not [r for r in rows if r.scope.startswith("linear") and r.status in ("only a", "only b")]


def test_cli_inspect_source_map(model_dirs, tmp_path):
    from app.cli import main

    out, err = io.StringIO(), io.StringIO()
    path = tmp_path / "map.csv"
    argv = ["inspect", "--model", model_dirs("llama"), "--step", "decode", "--source-map"]
    assert main(argv + ["-o", str(path)], out, err) == 0, err.getvalue()
    groups = source_map_io.groups_from_csv(path.read_text())
    assert any(g.module == "model.layers.1.self_attn" and "dot_general" in g.primitives for g in groups)
    out = io.StringIO()
    assert main(argv + ["--json", "--fold-layers"], out, err) == 0, err.getvalue()
    data = json.loads(out.getvalue())
    assert data["folded"] and any(g["module"] == "model.layers.*.self_attn" for g in data["groups"])


def test_diff_tells_sequence_length_from_structure():
    from app.core.inspect.source_diff import DiffRow, sequence_pair

    seq = DiffRow("mlp", 3, 3, ["f32[1,16,688]", "f32[1,16,256]"], ["f32[1,1,688]", "f32[1,1,256]"],
                  a_prims={"dot_general": 3}, b_prims={"dot_general": 3})
    other = DiffRow("attn", 2, 2, ["f32[1,8,16,64]"], ["f32[1,8,1,32]"],
                    a_prims={"dot_general": 2}, b_prims={"dot_general": 2})
    ops = DiffRow("pick", 2, 2, ["f32[1,8192]"], ["f32[1,8192]"], a_prims={"sub": 1, "jit": 1},
                  b_prims={"squeeze": 2})
    rows = [seq, other, ops, DiffRow("same", 1, 1, ["i32[]"], ["i32[]"])]
    assert sequence_pair(rows) == (16, 1)
    for r in rows:
        r.seq = (16, 1)
    assert [r.status for r in rows] == ["seq", "shape", "ops", "same"]
    assert [r.structural for r in rows] == [False, True, True, False]
    assert ops.primitive_change() == "−1 jit, +2 squeeze, −1 sub"


def test_attention_graph_overview_is_grouped_and_opens_on_demand(maps):
    from app.core.inspect.dataflow import build_dataflow, layout

    sm = maps["decode"]
    attn = [e.index for e in sm.equations if e.module == "model.layers.0.self_attn"]
    df = layout(build_dataflow(sm, attn))
    boxes = [n for n in df.nodes if n.kind != "input"]
    assert len(boxes) <= 10 < len(attn), "the overview groups the equations"
    assert not any("app/core/runtime/cache_update" in e.file for e in sm.equations), \
        "our own ATen lowering is excluded from attribution: the KV write maps to the model's cache line"
    titles = {n.label.split("\n")[0] for n in boxes}
    assert {"query_states", "key_states", "value_states", "apply_rotary_pos_emb()"} <= titles
    held = sorted(i for n in boxes for i in n.eqns)
    assert held == sorted(attn), "every equation is in exactly one box"
    rotary = next(n for n in boxes if n.label.startswith("apply_rotary_pos_emb"))
    opened = layout(build_dataflow(sm, attn, expanded={rotary.id}))
    inside = opened.children(rotary.id)
    box = opened.node(rotary.id)
    assert box.expanded and len(inside) > 1
    assert sorted(i for n in inside for i in n.eqns) == sorted(rotary.eqns)
    for n in inside:  # children are drawn inside their open box
        assert box.x - box.w / 2 <= n.x - n.w / 2 and n.x + n.w / 2 <= box.x + box.w / 2
        assert box.y - box.h / 2 <= n.y - n.h / 2 and n.y + n.h / 2 <= box.y + box.h / 2
    top = [n for n in opened.nodes if not n.parent]
    for i, a in enumerate(top):  # siblings never overlap
        for b in top[i + 1:]:
            assert abs(a.x - b.x) * 2 >= a.w + b.w - 1 or abs(a.y - b.y) * 2 >= a.h + b.h - 1
