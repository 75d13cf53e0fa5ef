"""Source links inside control flow (issue 41): an editor line inside a ``scan`` body, a ``while`` body, a
``cond`` branch or a nested ``jit`` links to its jaxpr equations, StableHLO ops and HLO instructions, and each of
those lines links back to that editor line, as at the top level."""

from __future__ import annotations

import textwrap

import pytest

from app.core.inspect import text_index as tx
from app.core.inspect.source_map import build_source_map
from app.core.programs.ir import entry_ir
from app.core.programs.loader import load_program

SOURCE = """
import jax
import jax.numpy as jnp


@jax.jit
def inner(v):
    return jnp.sin(v) * 2.0


def main(x):
    def body(c, xi):
        c = c + jnp.tanh(xi)
        return c, c * 3.0
    c, ys = jax.lax.scan(body, x[0], x)
    def cond(s):
        return s[1] < 5
    def wbody(s):
        v, i = s
        return jnp.cos(v) + 1.0, i + 1
    w, _ = jax.lax.while_loop(cond, wbody, (c, 0))
    z = jax.lax.cond(w.sum() > 0, jnp.exp, jnp.negative, w)
    return z + inner(ys).sum(0)


def main_args():
    return (jnp.ones((6, 4), jnp.float32),)
"""
SCAN_LINE, WHILE_LINE, INNER_LINE = 13, 20, 8


@pytest.fixture(scope="module")
def mapped(tmp_path_factory):
    path = tmp_path_factory.mktemp("cf") / "flow.py"
    path.write_text(textwrap.dedent(SOURCE))
    ir = entry_ir(load_program(str(path)).prepare("main"))
    return str(path), ir, build_source_map(ir, "main")


def _group(sm, path: str, line: int):
    hits = [i for i, g in enumerate(sm.groups) if g.file == path and g.line == line]
    assert hits, f"no group for line {line}"
    return hits[0]


@pytest.mark.parametrize("line, region, primitive", [(SCAN_LINE, "scan/body", "tanh"),
                                                      (WHILE_LINE, "while/body", "cos"),
                                                      (INNER_LINE, "jit/inner", "sin")])
def test_editor_line_in_a_body_links_both_ways(mapped, line, region, primitive):
    path, ir, sm = mapped
    gi = _group(sm, path, line)
    g = sm.groups[gi]
    assert primitive in g.primitives
    assert all(sm.equations[i].region == region for i in g.equations)
    for view in ("jaxpr", "jaxpr_source", "stablehlo", "hlo"):
        lines = sm.group_lines(g, view)
        assert lines, view
        for n in lines:  # every linked line leads back to the editor line
            assert gi in sm.groups_for_line(view, n), (view, n)
    jaxpr = ir.jaxpr.split("\n")
    assert any(f" {primitive} " in jaxpr[n - 1] for n in sm.group_lines(g, "jaxpr"))
    stablehlo = ir.stablehlo.split("\n")
    assert any(f"stablehlo.{ {'cos': 'cosine', 'sin': 'sine'}.get(primitive, primitive)}" in stablehlo[n - 1]
               for n in g.stablehlo_lines)


def test_cond_branches_are_walked(mapped):
    _, _, sm = mapped
    regions = {e.region for e in sm.equations if e.region.startswith("cond/")}
    assert regions == {"cond/branch0", "cond/branch1"}
    assert all(e.lines.get("jaxpr") for e in sm.equations if e.region.startswith("cond/"))


def test_hlo_scopes_drop_control_flow_segments():
    assert tx.split_loc_name("jit(main)/while/body/eval_jaxpr/tanh") == ("", "tanh")
    assert tx.split_loc_name("jit(main)/cond/branch_1_fun/exp") == ("", "exp")
    assert tx.split_loc_name("jit(main)/aten::mm/jit(inner)/sin") == ("aten::mm", "sin")
    assert tx.split_loc_name("jit(step)/while/body/aten::mm/dot_general") == ("aten::mm", "dot_general")


def test_a_branch_printed_on_one_line():
    lines = ["    w:f32[4] = cond[", "      branches=(",
             "        { lambda ; x:f32[4]. let y:f32[4] = neg x in (y,) }   # []",
             "        { lambda ; z:f32[4]. let ba:f32[4] = exp z in (ba,) }", "      )", "    ] v k"]
    assert tx.jaxpr_param_block(lines, (1, 6), "branches[1]") == 3
    assert tx.jaxpr_block_lines(lines, 2, 1) == [(3, 3)]


def test_each_loop_links_to_its_own_stablehlo_while(mapped):
    """``scan`` lowers to a ``stablehlo.while`` too: the scan equation takes the first, the ``while`` equation the
    second (before, the while equation took the scan's)."""
    _, ir, sm = mapped
    text = ir.stablehlo.split("\n")
    whiles = [n for n, s in enumerate(text, 1) if "stablehlo.while" in s]
    assert len(whiles) == 2
    scan = next(e for e in sm.equations if e.primitive == "scan")
    loop = next(e for e in sm.equations if e.primitive == "while")
    assert whiles[0] in scan.lines["stablehlo"] and whiles[0] not in loop.lines["stablehlo"]
    assert whiles[1] in loop.lines["stablehlo"]
