"""app.core.programs.live: IR diffs, unit counts, figure deltas and the generation bookkeeping of live compiles."""

from __future__ import annotations

import pytest

from app.core.programs.live import Counts, FigureDelta, Generations, Snapshot, compare, diff_text, unit_keys

JAXPR_A = """{ lambda ; a:f32[4]. let
    b:f32[4] = sin a
    c:f32[4] = mul b 2.0:f32[]
  in (c,) }"""
# one equation inserted before the others: every later variable is renamed (b → c, c → d) but only one is new
JAXPR_B = """{ lambda ; a:f32[4]. let
    b:f32[4] = exp a
    c:f32[4] = sin b
    d:f32[4] = mul c 2.0:f32[]
  in (d,) }"""
HLO_A = """ENTRY %main.1 (x.1: f32[4]) -> f32[4] {
  %x.1 = f32[4]{0} parameter(0), metadata={op_name="x"}
  %sin.0 = f32[4]{0} sine(%x.1), metadata={op_name="jit(f)/sin" stack_frame_id=2}
  ROOT %mul.0 = f32[4]{0} multiply(%sin.0, %sin.0), metadata={op_name="jit(f)/mul" stack_frame_id=3}
}"""
HLO_B = """ENTRY %main.1 (x.1: f32[4]) -> f32[4] {
  %x.1 = f32[4]{0} parameter(0), metadata={op_name="x"}
  %cosine.3 = f32[4]{0} cosine(%x.1), metadata={op_name="jit(f)/cos" stack_frame_id=5}
  ROOT %mul.1 = f32[4]{0} multiply(%cosine.3, %cosine.3), metadata={op_name="jit(f)/mul" stack_frame_id=6}
}"""


def test_jaxpr_renamed_variables_are_not_changes():
    ch = diff_text("jaxpr", JAXPR_A, JAXPR_B)
    assert ch.added == (2,) and ch.changed == () and ch.removed == ()
    assert ch.units == Counts(added=1)
    assert ch.units.text("eqns") == "+1 −0 ~0 eqns"


def test_jaxpr_changed_and_removed_equations():
    changed = diff_text("jaxpr", JAXPR_A, JAXPR_A.replace("sin a", "cos a"))
    assert changed.changed == (2,) and changed.units == Counts(changed=1)
    removed = diff_text("jaxpr", JAXPR_B, JAXPR_A)
    assert removed.removed == (2,) and removed.n_removed == 1 and removed.units == Counts(removed=1)


def test_one_line_jaxpr_counts_its_equations():
    small = "{ lambda ; a:f32[4]. let b:f32[4] = sin a; c:f32[4] = mul b 2.0:f32[] in (c,) }"
    assert len(unit_keys("jaxpr", small)) == 2
    ch = diff_text("jaxpr", small, small.replace("mul b 2.0", "mul b 3.0"))
    assert ch.changed == (1,) and ch.units == Counts(changed=1)


def test_hlo_instructions_counted_with_names_and_metadata_ignored():
    ch = diff_text("hlo", HLO_A, HLO_B)
    assert ch.changed == (3,)  # sine → cosine; the multiply only renamed its operands and moved its metadata
    assert ch.units == Counts(changed=1)
    assert diff_text("hlo", HLO_A, HLO_A.replace("stack_frame_id=2", "stack_frame_id=9")).any is False


def test_stablehlo_ops():
    a = "  %0 = stablehlo.sine %arg0 : tensor<4xf32>\n  %1 = stablehlo.multiply %0, %0 : tensor<4xf32>\n"
    b = "  %0 = stablehlo.cosine %arg0 : tensor<4xf32>\n  %1 = stablehlo.multiply %0, %0 : tensor<4xf32>\n" \
        "  %2 = stablehlo.add %1, %1 : tensor<4xf32>\n"
    ch = diff_text("stablehlo", a, b)
    assert ch.changed == (1,) and ch.added == (3,) and ch.units == Counts(added=1, changed=1)


def test_compare_gives_the_figures_delta():
    old = Snapshot({"jaxpr": JAXPR_A, "stablehlo": None, "hlo": HLO_A}, {"flops": 4.0, "bytes accessed": 32.0},
                   {"argument": 16, "output": 16, "temp": 0})
    new = Snapshot({"jaxpr": JAXPR_B, "stablehlo": None, "hlo": HLO_A}, {"flops": 8.0, "bytes accessed": 32.0},
                   {"argument": 16, "output": 16, "temp": 16})
    first = compare(None, new)
    assert first.first and first.views == {} and first.changes_text() == ""
    c = compare(old, new)
    assert set(c.views) == {"jaxpr", "hlo"}
    assert c.changes_text() == "jaxpr +1 −0 ~0 eqns"
    flops = next(d for d in c.figures if d.name == "FLOPs")
    assert flops.delta == 4.0 and flops.text() == "FLOPs 4 → 8 (+4)"
    assert c.figures_text() == "FLOPs 4 → 8 (+4) · temp 0 B → 16 B (+16 B)"
    assert "bytes accessed 32 B (=)" in c.figures_text(changed_only=False)
    assert FigureDelta("temp", 16, 0, "bytes").text() == "temp 16 B → 0 B (−16 B)"
    assert compare(old, old).changes_text() == "no change in the IR"


def test_generations_drop_a_superseded_result():
    g = Generations()
    g.edit()
    first = g.send("a")
    assert not g.superseded() and not g.needs_compile("a")
    g.edit()  # typing goes on while the first compile runs
    assert g.superseded() and g.needs_compile("ab")
    second = g.send("ab")
    assert not g.keep(first, "ab", Snapshot({"jaxpr": "old"}))  # the superseded result arrives late: dropped
    assert g.good is None and g.in_flight == second
    assert g.keep(second, "ab", Snapshot({"jaxpr": "new"}))
    assert g.good is not None and g.good.texts["jaxpr"] == "new" and g.in_flight is None
    g.forget()
    assert g.good is None and g.needs_compile("ab")


def test_generations_drop_a_result_for_a_text_edited_since():
    g = Generations()
    g.edit()
    sent = g.send("a")
    g.edit()  # edited while it compiles, the pause not over yet: nothing newer sent
    assert not g.accept(sent, "ab")  # its text is gone: dropped
    assert g.needs_compile("a")  # and the same text again compiles again (its result was never shown)
    g.edit()
    again = g.send("a")
    g.edit()  # an edit and its undo while it compiles: the text is the one compiled
    assert g.accept(again, "a")


@pytest.mark.parametrize("view", ["jaxpr", "stablehlo", "hlo"])
def test_identical_texts_have_no_change(view):
    text = {"jaxpr": JAXPR_A, "stablehlo": "  %0 = stablehlo.sine %arg0 : tensor<4xf32>", "hlo": HLO_A}[view]
    assert not diff_text(view, text, text).any


LIVE_SOURCE = '''import jax.numpy as jnp


def f(x):
    return jnp.sin(x) * 2


def f_args():
    return (jnp.ones(4),)
'''


def test_a_compile_request_compiles_never_runs_and_compares_with_the_previous_good_compile():
    """The compute thread's side: a ProgramCompileRequest yields the IR and a ProgramCompiled comparing it with
    the request's ``previous`` snapshot, and no call record (the program is never run)."""
    from app.core.events import CallRecord, IREvent
    from app.core.programs.compute.requests import ProgramCompiled, ProgramCompileRequest
    from app.core.session.compute.service import ComputeService

    service = ComputeService()

    def compile_(source: str, generation: int, previous):
        request = ProgramCompileRequest(source, name="live.py", generation=generation, previous=previous)
        events = list(service.handle(request))
        assert not [e for e in events if isinstance(e, CallRecord)]
        ir = next(e for e in events if isinstance(e, IREvent))
        done = next(e for e in events if isinstance(e, ProgramCompiled))
        assert done.request.generation == generation and done.step == "f" and ir.step == "f"
        assert set(done.phases) == {"trace", "lower", "compile"}
        return done

    first = compile_(LIVE_SOURCE, 1, None)
    assert first.comparison.first and "sin" in first.snapshot.texts["jaxpr"]
    second = compile_(LIVE_SOURCE.replace("jnp.sin(x) * 2", "jnp.cos(jnp.sin(x)) * 2"), 2, first.snapshot)
    jaxpr = second.comparison.views["jaxpr"]
    assert jaxpr.units.added == 1 and jaxpr.units.removed == 0  # cos
    assert "cos" in second.snapshot.texts["jaxpr"].splitlines()[jaxpr.added[0] - 1]
    assert second.comparison.views["hlo"].units.any
