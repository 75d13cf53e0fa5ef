"""jit-loop's decode loop in the source map and the profiler: the equations inside the ``while`` body map to the
model's source lines, and so do its StableHLO ops (inside ``stablehlo.while``) and HLO instructions (inside the
body computation); a hand-written loop module's capture is cut into one step per iteration (the callback is host
time, the ``while``'s own event is left out); a real ``profile --mode jit-loop`` attributes the body's time per
instruction and line, its rows add up to the ops' busy time, and it reports the host share."""

from __future__ import annotations

import argparse
import io
import json

import pytest

from app.core.events import IREvent
from app.core.profile.attrib import attribute
from app.core.profile.build import aggregate, build_profile, split_loop_iterations
from app.core.profile.capture import Capture, OpEvent, StepWindow
from app.core.profile.hlo import parse_hlo
from app.core.settings import GenerationSettings
from tests.model_lines import mlp_line

LLAMA_FILE = "modeling_llama.py"


# ------------------------------------------------------------------------------- the source map of the loop
@pytest.fixture(scope="module")
def loop_ir(llama_engine):
    llama_engine.clear_compiled()  # the shared engine may hold jit-loop's steps from another test: compile anew
    events = llama_engine.generate("The jit function", GenerationSettings(mode="jit-loop", max_new_tokens=3,
                                                                          stop_at_eos=False))
    assert any(isinstance(e, IREvent) and e.step == "decode" for e in events)
    return llama_engine.ir[("jit-loop", "decode")]


@pytest.fixture(scope="module")
def loop_map(loop_ir, llama_engine):
    from app.core.inspect.source_map import build_source_map

    return build_source_map(loop_ir, "decode", llama_engine.loaded.model)


def test_the_source_map_walks_into_the_while_body(loop_map, loop_ir):
    sm = loop_map
    loops = [e for e in sm.equations if e.primitive == "while"]
    assert len(loops) == 1 and loops[0].parent == -1 and loops[0].flops == 0  # its body's equations carry them
    body = [e for e in sm.equations if e.parent == loops[0].index and e.region == "while/body"]
    cond = [e for e in sm.equations if e.region == "while/cond"]
    assert len(body) > 100 and cond
    model_eqns = [e for e in body if e.file.endswith(LLAMA_FILE)]
    assert len(model_eqns) > 50 and all(e.line > 0 for e in model_eqns)
    assert any(e.module.startswith("model.layers.0") for e in model_eqns)
    assert any(e.module.startswith("model.layers.1") for e in model_eqns)
    assert sm.total_flops() > 0
    # every equation has its lines in both jaxpr texts; a body's dot_general is a dot_general line there
    assert all("jaxpr" in e.lines and "jaxpr_source" in e.lines for e in sm.equations)
    jaxpr = loop_ir.jaxpr.split("\n")
    dots = [e for e in body if e.primitive == "dot_general"]
    assert dots and all("dot_general" in jaxpr[e.lines["jaxpr"][0] - 1] for e in dots)
    # a weight read inside the body points at the step's input (through the while's body consts)
    up = "weights['model.layers.0.mlp.up_proj.weight']"
    k = sm.input_labels.index(up)
    readers = [e for e in body if -1 - k in e.operands]
    assert readers and readers[0].primitive == "dot_general" and readers[0].file.endswith(LLAMA_FILE)


def test_body_groups_link_to_stablehlo_inside_the_while_and_to_the_body_computation(loop_map, loop_ir):
    sm = loop_map
    stablehlo = loop_ir.stablehlo.split("\n")
    start = next(i + 1 for i, s in enumerate(stablehlo) if "stablehlo.while" in s)
    (loop,) = [e for e in sm.equations if e.primitive == "while"]
    assert loop.lines["stablehlo"] == [start]
    hlo = parse_hlo(loop_ir.hlo)
    body_comps = set(hlo.loops)
    groups = [g for g in sm.groups if g.file.endswith(LLAMA_FILE)]
    assert groups
    linked = [g for g in groups if g.stablehlo_lines and g.hlo_instructions]
    assert len(linked) > len(groups) // 2
    for g in linked:
        assert all(n > start for n in g.stablehlo_lines)  # inside the while's regions
    projections = [g for g in groups if "dot_general" in g.primitives and g.hlo_instructions]
    assert projections
    outer = {n: f for f, op in hlo.ops.items() if op.top_level and op.opcode == "fusion" for n in op.fused}

    def runs_in(name: str) -> str:  # the computation whose instruction runs ``name`` (itself, or its fusion)
        return hlo.ops[outer.get(name, name)].computation

    assert all(runs_in(n) in body_comps for g in projections for n in g.hlo_instructions)
    # scopes are the equations' own (the name stack's while/body segments are dropped): ATen ops as outside a loop
    assert any(g.scope.startswith("aten::") for g in groups) and not any("while/" in g.scope for g in sm.groups)
    # the reverse links: a body line of each view leads back to a model group
    g = linked[0]
    for view in ("jaxpr", "stablehlo", "hlo"):
        line = sm.group_lines(g, view)[0]
        assert any(sm.groups[i].file.endswith(LLAMA_FILE) for i in sm.groups_for_line(view, line)), view


# --------------------------------------------------------------------- a hand-written loop, cut per iteration
UP = "/site-packages/transformers/models/llama/modeling_llama.py"
LOOP_HLO = f"""HloModule jit_loop, is_scheduled=true

FileNames
1 "{UP}"

FunctionNames
1 "LlamaMLP.forward"

FileLocations
1 {{file_name_id=1 function_name_id=1 line=164 end_line=164 column=0 end_column=8}}

StackFrames
1 {{file_location_id=1 parent_frame_id=1}}

%body (arg: (s32[], f32[4,8], f32[8,16])) -> (s32[], f32[4,8], f32[8,16]) {{
  %arg = (s32[], f32[4,8]{{1,0}}, f32[8,16]{{1,0}}) parameter(0)
  %gte.0 = s32[] get-tuple-element(%arg), index=0
  %gte.1 = f32[4,8]{{1,0}} get-tuple-element(%arg), index=1
  %gte.2 = f32[8,16]{{1,0}} get-tuple-element(%arg), index=2
  %dot.1 = f32[4,16]{{1,0}} dot(%gte.1, %gte.2), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
  %mul.1 = f32[4,8]{{1,0}} multiply(%gte.1, %gte.1), metadata={{op_name="jit(loop)/while/body/aten::mul.Tensor/mul" stack_frame_id=1}}
  %cb = (token[], pred[]) custom-call(%gte.0), custom_call_target="xla_ffi_python_cpu_callback", custom_call_has_side_effect=true, metadata={{op_name="jit(loop)/while/body/io_callback"}}
  %one = s32[] constant(1)
  %add.1 = s32[] add(%gte.0, %one)
  ROOT %t = (s32[], f32[4,8]{{1,0}}, f32[8,16]{{1,0}}) tuple(%add.1, %mul.1, %gte.2)
}}

%cond (arg.1: (s32[], f32[4,8], f32[8,16])) -> pred[] {{
  %arg.1 = (s32[], f32[4,8]{{1,0}}, f32[8,16]{{1,0}}) parameter(0)
  %gte.3 = s32[] get-tuple-element(%arg.1), index=0
  %two = s32[] constant(2)
  ROOT %lt = pred[] compare(%gte.3, %two), direction=LT
}}

ENTRY %main (x: f32[4,8], w: f32[8,16]) -> (s32[], f32[4,8], f32[8,16]) {{
  %x = f32[4,8]{{1,0}} parameter(0), metadata={{op_name="input_ids"}}
  %w = f32[8,16]{{1,0}} parameter(1), metadata={{op_name="weights[\\'model.layers.0.mlp.up_proj.weight\\']"}}
  %zero = s32[] constant(0)
  %init = (s32[], f32[4,8]{{1,0}}, f32[8,16]{{1,0}}) tuple(%zero, %x, %w)
  ROOT %while.1 = (s32[], f32[4,8]{{1,0}}, f32[8,16]{{1,0}}) while(%init), condition=%cond, body=%body
}}
"""


def test_loop_hlo_follows_carried_weights_and_finds_the_callback():
    info = parse_hlo(LOOP_HLO)
    assert info.loops == {"cond": "while.1", "body": "while.1"}
    assert info.ops["while.1"].regions == ("cond", "body")
    assert info.carried_source("gte.2") == "w" and info.carried_source("gte.3") == "zero"
    assert info.parameter_of("gte.2") == "weights['model.layers.0.mlp.up_proj.weight']"
    assert info.loop_callbacks() == ["cb"]
    parts = attribute(info).parts
    (dot,) = parts["dot.1"]  # no metadata: found through the loop's carried weight
    assert dot.via == "weight" and dot.source.module == "model.layers.0.mlp.up_proj"
    (mul,) = parts["mul.1"]
    assert mul.via == "metadata" and mul.source.line == 164 and mul.source.scope == "aten::mul.Tensor"
    assert mul.source.aten == "aten::mul.Tensor"  # the name stack's while/body is not an op


def _loop_capture() -> Capture:
    """One call [0, 100 µs) of two iterations: the while's own event spans both; each iteration runs the
    condition, the dot and the mul, then the callback."""
    us = 1000.0
    ev = [("while.1", 5, 90), ("lt", 6, 1), ("dot.1", 10, 15), ("mul.1", 25, 3), ("cb", 30, 10), ("add.1", 41, 1),
          ("lt", 43, 1), ("dot.1", 45, 15), ("mul.1", 60, 5), ("cb", 65, 15), ("add.1", 81, 1)]
    events = [OpEvent(n, "XLAEigen 1", a * us, d * us, 0) for n, a, d in sorted(ev, key=lambda e: e[1])]
    return Capture("jit_loop", [StepWindow(0, 0.0, 100 * us)], events)


def test_a_loop_call_is_cut_into_one_step_per_iteration():
    info = parse_hlo(LOOP_HLO)
    split = split_loop_iterations(_loop_capture(), info)
    assert [(s.start_ns / 1e3, s.duration_ns / 1e3) for s in split.steps] == [(0, 40), (40, 60)]  # tiles the call
    names = [(e.name, e.step) for e in split.events]
    assert ("while.1", 0) not in names and not any(n == "cb" for n, _ in names)
    assert names == [("lt", 0), ("dot.1", 0), ("mul.1", 0), ("add.1", 1), ("lt", 1), ("dot.1", 1), ("mul.1", 1),
                     ("add.1", 1)]
    p = build_profile(split, info, attribute(info))
    assert p.n_steps == 2 and p.step_ms == pytest.approx(0.050)
    # host: before the first op and after the last one of each iteration, i.e. the dispatch and each callback
    assert p.host_share == pytest.approx((6 + (40 - 28) + 1 + (100 - 82)) / 100)
    assert p.busy_ms * 1e3 == pytest.approx(sum(r.us_per_step for r in p.rows)) == pytest.approx((1 + 15 + 3 + 1 + 1 + 15 + 5 + 1) / 2)
    assert p.host_share + p.between_ops_share + p.attributed_share == pytest.approx(1.0)
    lines = {r.key: r for r in aggregate(p, by="line")}
    assert lines["transformers/models/llama/modeling_llama.py:164"].calls_per_step == pytest.approx(1.0)
    assert {r.key for r in p.rows} == {"lt", "dot.1", "mul.1", "add.1"}
    # a call without callback events stays one step
    plain = Capture("jit_loop", [StepWindow(0, 0.0, 1e5)], [OpEvent("dot.1", "XLAEigen 1", 1e4, 1e4, 0)])
    kept = split_loop_iterations(plain, info)
    assert kept.steps == plain.steps and kept.events == plain.events


# ----------------------------------------------------------------------------------- a real loop profile
@pytest.fixture(scope="module")
def loop_profile(gui_model):
    from app.core.engine.engine import load_engine
    from app.core.profile.step import profile_step

    engine = load_engine(gui_model)
    messages: list[str] = []
    profile = profile_step(engine, "The jit function", step="decode", n_steps=8, warmup=1, mode="jit-loop",
                           on_progress=messages.append)
    return profile, messages, engine


def test_loop_profile_rows_name_source_lines_and_add_up(loop_profile):
    from app.core.profile.step import LOOP_NOTE

    profile, messages, _ = loop_profile
    assert messages[0] == "compiling the jit-loop decode loop"
    assert profile.n_steps == 8 and profile.unmatched == []  # one step per iteration (token)
    assert profile.notes and profile.notes[0].startswith(LOOP_NOTE)
    info = parse_hlo(profile.hlo_text)
    (loop,) = [n for n, op in info.ops.items() if op.opcode == "while"]
    body = info.loop_computations(loop)
    assert not any(r.key == loop or info.ops[r.key].is_callback for r in profile.rows)
    inside = [r for r in profile.rows if info.ops[r.key].computation in body]
    assert len(inside) > 20 and sum(r.us_per_step for r in inside) > 0.5 * profile.busy_ms * 1e3
    body_rows = [r for r in inside if info.ops[r.key].computation == info.ops[loop].regions[1]]
    assert all(r.calls_per_step == pytest.approx(1.0) for r in body_rows)  # once per iteration (token)
    lines = aggregate(profile, by="line")
    named = [r for r in lines if LLAMA_FILE in r.key]
    assert len(named) > 5 and any(r.key.endswith(mlp_line()) for r in named)
    assert sum(r.wall_us_per_step for r in named) > 0.3 * sum(r.wall_us_per_step for r in lines)
    assert any(r.module.startswith("model.layers") for r in named)
    for by in ("line", "op", "fusion", "module"):
        rows = aggregate(profile, by=by)
        assert sum(r.us_per_step for r in rows) == pytest.approx(profile.busy_ms * 1e3, rel=1e-9)
        assert sum(r.share for r in rows) == pytest.approx(profile.attributed_share, abs=1e-9)
    modules = {r.key for r in aggregate(profile, by="module")}
    assert "model.layers.0.mlp.up_proj" in modules or "model.layers.0.mlp" in modules
    sm = profile.source_map
    assert sm is not None and any(e.region == "while/body" and e.file.endswith(LLAMA_FILE) for e in sm.equations)
    print(f"\nloop profile: {len(lines)} line rows, {len(profile.rows)} instructions, busy "
          f"{profile.busy_ms:.3f} ms, step {profile.step_ms:.3f} ms, host share {profile.host_share:.1%}; "
          f"{profile.notes[0]}")


def test_loop_profile_reports_the_host_share(loop_profile):
    from jax.profiler import ProfileData

    from app.core.profile.capture import STEP_ANNOTATION

    profile, _, _ = loop_profile
    assert 0.0 < profile.host_share < 1.0 and 0.0 < profile.attributed_share < 1.0
    assert profile.host_share + profile.between_ops_share == pytest.approx(profile.idle_share)
    assert "host callback (token_to_host)" in profile.notes[0] and "host share" in profile.notes[0]
    # the iterations tile the profiled call: their wall times add up to the call's annotation
    plane = ProfileData.from_file(profile.xplane_path).find_plane_with_name("/host:CPU")
    calls = [ev.duration_ns for line in plane.lines for ev in line.events if ev.name == STEP_ANNOTATION]
    assert len(calls) == 1
    assert profile.step_ms * profile.n_steps == pytest.approx(calls[0] / 1e6, rel=1e-6)
    assert profile.timeline.bars and profile.timeline.step_us > 0


def test_cli_profile_mode_jit_loop(gui_model):
    from app.cli import profile as cli_profile
    from app.core.errors import PlaygroundError

    parser = argparse.ArgumentParser()
    cli_profile.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["profile", "--model", gui_model, "--mode", "jit-loop", "--step", "decode", "--steps",
                              "4", "--warmup", "0", "--json"])
    out, err = io.StringIO(), io.StringIO()
    assert cli_profile.run(args, out, err) == 0
    lines = [json.loads(s) for s in out.getvalue().splitlines()]
    rows, summary = lines[:-1], lines[-1]
    assert summary["event"] == "summary" and summary["n_steps"] == 4
    assert 0 < summary["host_share"] < 1 and summary["notes"][0].startswith("one step = one loop iteration")
    assert any(LLAMA_FILE in r["source"] for r in rows)
    assert sum(r["us_per_step"] for r in rows) == pytest.approx(summary["busy_ms"] * 1e3)
    args = parser.parse_args(["profile", "--model", gui_model, "--mode", "jit-loop", "--steps", "4", "--warmup", "0"])
    out = io.StringIO()
    assert cli_profile.run(args, out, err) == 0
    text = out.getvalue()
    assert "decode step | 4 loop iterations profiled | rows by line" in text
    assert "note: one step = one loop iteration" in text and LLAMA_FILE in text
    with pytest.raises(PlaygroundError):
        cli_profile.run(parser.parse_args(["profile", "--model", gui_model, "--mode", "torch"]), out, err)
