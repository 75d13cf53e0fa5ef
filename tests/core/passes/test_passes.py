"""XLA's pass pipeline recorded step by step (app.core.passes): on a 2-layer MLP and on the built-in
pydoc-llama's decode step — ordered snapshots whose last one is the compiled module, pass times from the
profiler for known passes, a non-empty diff across the fusion pass, search for a fusion's first appearance,
the compile split adding up, and (one slower test) the fusion log parsed in a child process."""

from __future__ import annotations

import re

import pytest

from app.core.inspect.text_index import HLO_INSTRUCTION, count_hlo
from app.core.passes import query
from app.core.passes.fusion_log import parse_fusion_log
from app.core.passes.record import RecordingError, RecordingStopped, record_pipeline


def _mlp_lowered():
    import jax
    import jax.numpy as jnp

    def mlp(x, w1, w2):
        return jnp.tanh(jax.nn.relu(x @ w1) @ w2).sum()

    args = [jnp.ones((8, 64)), jnp.ones((64, 128)), jnp.ones((128, 32))]
    return jax.jit(mlp).trace(*args).lower()


def _structure(text: str) -> list[tuple[str, str]]:
    """(name, opcode) of every instruction line: the module modulo printing (backend_config key order; since
    jax 0.11 the dump prints a multi-output fusion's ``get-tuple-element`` as an operand ``%fusion#1`` while
    ``Compiled.as_text()`` keeps the instruction, so those lines are left out)."""
    return [(m.group(1), m.group(3)) for s in text.splitlines()
            if (m := HLO_INSTRUCTION.match(s)) and m.group(3) != "get-tuple-element"]


@pytest.fixture(scope="module")
def mlp():
    lowered = _mlp_lowered()
    return lowered, record_pipeline(lowered, kernel_ir=True), lowered.compile().as_text()


@pytest.fixture(scope="module")
def llama_decode(gui_model):
    from app.core.engine.engine import load_engine
    from app.core.settings import GenerationSettings

    engine = load_engine(gui_model)
    settings = GenerationSettings(mode="jit-static", max_new_tokens=2, stop_at_eos=False).validated()
    for _ in engine.generate("The jit", settings):
        pass
    step_ir = engine.ir[("jit-static", "decode")]
    return step_ir, record_pipeline(step_ir.lowered)


def test_mlp_snapshots_are_ordered_and_end_at_the_compiled_module(mlp):
    _, pipeline, compiled_text = mlp
    assert pipeline.module == "jit_mlp"
    indexes = [s.index for s in pipeline.snapshots]
    assert len(indexes) >= 5 and indexes == sorted(indexes) and len(set(indexes)) == len(indexes)
    assert pipeline.before is not None and pipeline.final is not None
    assert _structure(pipeline.final.text) == _structure(compiled_text)
    n, fusions = count_hlo(compiled_text)
    assert (pipeline.final.n_instructions, pipeline.final.n_fusions) == (n, fusions)
    assert pipeline.final.text == pipeline.final.text  # decompressed lazily, cached
    assert len(pipeline.final.compressed) < pipeline.final.size
    assert pipeline.snapshot("fusion").fusion_kinds.get("kLoop", 0) >= 1
    assert pipeline.snapshot("dot-library-rewriter").fusion_kinds.get("kCustom", 0) == 2  # YNNPACK dots
    assert set(pipeline.fusion_ir) == {"broadcast_maximum_fusion", "tanh_reduce_fusion"}
    assert "define" in pipeline.fusion_ir["tanh_reduce_fusion"].text(optimized=True)


def test_mlp_pass_times_cover_passes_that_changed_nothing(mlp):
    _, pipeline, _ = mlp
    times = {(t.pipeline, t.pass_name): t for t in pipeline.pass_times}
    algsimp = [t for (_, name), t in times.items() if name == "algsimp"]
    assert algsimp and sum(t.count for t in algsimp) >= 2 and all(t.ms > 0 for t in algsimp)
    fusion = times[("HLO passes after layout assignment", "fusion")]
    assert fusion.ms > 0 and fusion.changed == 1
    assert any(t.changed == 0 for t in pipeline.pass_times) and len(pipeline.pass_times) > 50
    rows = query.pass_rows(pipeline)
    fused = next(r for r in rows if r["pass"] == "fusion")
    assert fused["index"] == pipeline.snapshot("fusion").index and fused["n_fusions"] >= 2
    assert all(r["index"] is None for r in rows if r["changed"] == 0)


def test_mlp_diff_search_history(mlp):
    _, pipeline, _ = mlp
    after = pipeline.snapshot("fusion")
    before = query.previous_snapshot(pipeline, after)
    d = query.diff_snapshots(before, after)
    assert d.added > 0 and d.hunks and all(h.lines for h in d.hunks)
    assert any(ln.tag == "+" and "tanh_reduce_fusion" in ln.text for h in d.hunks for ln in h.lines)
    assert d.unified().startswith("--- ") and "@@ -" in d.unified()
    first = query.first_appearance(pipeline, "tanh_reduce_fusion")
    assert first is not None and first.snapshot == after.index and "kind=kLoop" in first.text
    assert query.first_appearance(pipeline, "no_such_instruction") is None
    hits = query.search(pipeline, "tanh_reduce_fusion")
    assert hits[0].snapshot == after.index and hits[-1].snapshot == pipeline.final.index
    history = query.instruction_history(pipeline, "tanh.1")
    assert [e.what for e in history.events] == ["created", "removed"]
    assert history.events[1].pass_name == "fusion"


def test_mlp_compile_split_adds_up(mlp):
    _, pipeline, _ = mlp
    b = query.compile_breakdown(pipeline)
    assert abs(sum(p.ms for p in b.parts) - b.total_ms) <= 0.1 * b.total_ms
    groups = b.by_group()
    assert groups["HLO passes"] > 0 and groups["backend"] > groups["HLO passes"]
    assert b.n_fusion_compiles == 2


def test_bad_input_and_stop():
    with pytest.raises(RecordingError, match="not a jax Lowered"):
        record_pipeline(object())
    with pytest.raises(RecordingStopped):
        record_pipeline(_mlp_lowered(), should_stop=lambda: True)


def test_fusion_log_lines_are_parsed():
    log = """I1125 11:45:04.694500    5834 instruction_fusion.cc:1142] Evaluating fusion: producer 'tanh.1' into consumer 'reduce_sum.7'.
I1125 11:45:04.694504    5834 cpu_instruction_fusion.cc:483] Fusing: consumer is elementwise or fusible.
I1125 11:45:04.694508    5834 instruction_fusion.cc:848] Fusing %tanh.1 = f32[8,32]{1,0} tanh(%y) into %reduce_sum.7 = f32[] reduce(%tanh.1)
I1125 11:45:04.694538    5834 instruction_fusion.cc:855]        created new fusion: %tanh_reduce_fusion = f32[] fusion(%c), kind=kLoop, calls=%f
I1125 11:45:04.694551    5834 instruction_fusion.cc:1142] Evaluating fusion: producer 'constant.3' into consumer 'tanh_reduce_fusion'.
I1125 11:45:04.694557    5834 cpu_instruction_fusion.cc:478] Fusing: consumer is a fusion node.
I1125 11:45:04.694560    5834 instruction_fusion.cc:848] Fusing %constant.3 = f32[] constant(0) into %tanh_reduce_fusion = f32[] fusion(%c)
I1125 11:45:04.694600    5834 instruction_fusion.cc:1142] Evaluating fusion: producer 'transpose.2' into consumer 'dot.1'.
I1125 11:45:04.694601    5834 cpu_instruction_fusion.cc:400] Producer is not loop-fusible.
I1125 11:45:04.694658    5834 instruction_fusion.cc:784] Fusion count: 4
I1125 11:45:04.694658    5834 pjrt_client.cc:579] PjRt-IFRT device count: total=1, addressable=1
"""
    decisions, n = parse_fusion_log(log)
    assert n == 10
    assert [(d.producer, d.consumer, d.fused, d.fusion, d.kind) for d in decisions] == [
        ("tanh.1", "reduce_sum.7", True, "tanh_reduce_fusion", "kLoop"),
        ("constant.3", "tanh_reduce_fusion", True, "tanh_reduce_fusion", "kLoop"),
        ("transpose.2", "dot.1", False, "", ""),
    ]
    assert decisions[2].reason == "Producer is not loop-fusible."


def test_llama_decode_step(llama_decode):
    step_ir, pipeline = llama_decode
    assert len([s for s in pipeline.snapshots if s.changed]) >= 5
    assert _structure(pipeline.final.text) == _structure(step_ir.hlo)
    assert pipeline.final.n_fusions == step_ir.n_fusions > 0
    names = {t.pass_name for t in pipeline.pass_times}
    assert {"algsimp", "fusion", "layout-assignment", "copy-insertion"} <= names
    fusion_snap = pipeline.snapshot("fusion")
    d = query.diff_snapshots(query.previous_snapshot(pipeline, fusion_snap), fusion_snap)
    assert d.added > 0 and d.removed > 0
    fusion_name = next(m.group(1) for s in pipeline.final.text.splitlines()
                       if (m := HLO_INSTRUCTION.match(s)) and m.group(3) == "fusion")
    first = query.first_appearance(pipeline, fusion_name)
    assert first is not None and first.snapshot <= pipeline.final.index
    assert re.search(r"fusion", first.label)
    b = query.compile_breakdown(pipeline)
    assert abs(sum(p.ms for p in b.parts) - b.total_ms) <= 0.1 * b.total_ms
    rows = query.fusion_table(pipeline)
    assert len(rows) == pipeline.final.n_fusions
    assert all(r.created_by for r in rows)  # every fusion traced to the pass that created it
    # ≥ 1 source line for every fusion the fusion pass made (fusion-wrapper's wrapped reduce-windows come from
    # instructions XLA created without metadata)
    made = [r for r in rows if r.created_by == "fusion"]
    assert made and all(r.source or any(where for _, _, where in r.absorbed) for r in made)


def test_llama_decode_fusion_log_in_a_child(llama_decode):
    step_ir, _ = llama_decode
    pipeline = record_pipeline(step_ir.lowered, fusion_log=True)
    assert pipeline.in_child and pipeline.fusion_log
    fused = [d for d in pipeline.fusion_log if d.fused]
    assert fused and all(d.reason for d in fused)
    assert any(d.fusion and d.kind == "kLoop" for d in fused)
    final_fusions = {m.group(1) for s in pipeline.final.text.splitlines()
                     if (m := HLO_INSTRUCTION.match(s)) and m.group(3) == "fusion"}
    assert {d.fusion for d in fused if d.kind} & final_fusions
    rows = query.fusion_table(pipeline)
    assert any(r.decisions for r in rows)


def test_recording_bypasses_the_persistent_cache(tmp_path):
    """Dump flags are not in the persistent cache's key: with the cache on and the module already stored,
    a recording still compiles (and dumps); the cache is back on afterwards."""
    from app.core.compile_cache.xla import persistent_cache_dir, set_persistent_cache

    set_persistent_cache(tmp_path / "cache")
    try:
        lowered = _mlp_lowered()
        lowered.compile()  # stored in the persistent cache
        assert any((tmp_path / "cache").iterdir())
        pipeline = record_pipeline(lowered)
        assert len(pipeline.snapshots) >= 5 and pipeline.pass_times
        assert persistent_cache_dir() == (tmp_path / "cache").resolve()
    finally:
        set_persistent_cache(None)


def test_a_recording_says_each_stage_and_counts_the_whole_wait():
    """Issue 29, flaw 6: the live phase moves (compile with dumps, then reading the dump files) and the seconds
    of the result count from the request's start, not the compile alone."""
    import time

    from app.core.session.compute.passes import record_passes
    from app.core.session.requests import PassesReady, PassesRequest

    phases = []
    started = time.perf_counter() - 5.0  # the request began 5 s ago (e.g. a program was lowered first)
    events = list(record_passes(None, PassesRequest(step="mlp"), lambda: False, phases.append,
                                lowered=("jit", _mlp_lowered()), started=started))
    ready = next(e for e in events if isinstance(e, PassesReady))
    details = [p.detail for p in phases]
    assert any("compiling with XLA's pass dumps" in d for d in details), details
    assert any("reading" in d and "dump files" in d for d in details), details
    assert ready.seconds >= 5.0
