"""The host-dispatch meter (issue 31): every call of a jitted mode splits its wall time into transfer, flatten,
compile, dispatch, wait and token; the parts add up to the call's wall time, the leaves count is the executable's
argument count, ``--json`` records carry the breakdown, and the plot's tool tip and the stats strip show it."""

from __future__ import annotations

import io
import json
from dataclasses import replace

import jax
import pytest
from qt_helpers import call_record

from app.core.events import HOST_PARTS, CallRecord, steady_host_ms, steady_host_share
from app.core.runtime.pytrees import FlatTree
from app.core.settings import GenerationSettings

PROMPT = "The jit function traces a Python function"


def records_of(engine, mode, **settings):
    kw = dict(max_new_tokens=10, stop_at_eos=False, capture_ir=False) | settings
    return [e for e in engine.generate(PROMPT, GenerationSettings(mode=mode, **kw)) if isinstance(e, CallRecord)]


@pytest.mark.parametrize("mode", ["jit-static", "jit-loop", "jit-dynamic"])
@pytest.mark.parametrize("cold", [True, False], ids=["compiling", "warm"])
def test_breakdown_adds_up_to_the_wall_time(llama_engine, mode, cold):
    n = 4 if mode == "jit-dynamic" else 10
    if cold:
        llama_engine.clear_compiled()
    else:
        records_of(llama_engine, mode, max_new_tokens=n)  # every step compiled before
    records = records_of(llama_engine, mode, max_new_tokens=n)
    assert records and all(set(r.host_ms) == set(HOST_PARTS) for r in records)
    for r in records:
        assert all(v >= 0 for v in r.host_ms.values()), r.host_ms
        assert sum(r.host_ms.values()) == pytest.approx(r.wall_ms, rel=0.05), (r.index, r.host_ms, r.wall_ms)
        assert (r.host_ms["compile"] > 0) == r.compiled
        if r.compiled:  # the compile part holds the compiler's phases
            assert r.host_ms["compile"] >= r.compile_total_ms
        assert r.host_ms["wait"] > 0
    assert any(r.compiled for r in records) == cold
    if mode == "jit-loop":  # a token of the on-device loop passes no arguments and dispatches nothing
        rest = records[2:]
        assert all(r.leaves == 0 and r.host_ms["dispatch"] == 0 and r.host_ms["flatten"] == 0 for r in rest)
        assert all(r.host_ms["token"] > 0 for r in rest)
    else:
        assert all(r.host_ms["dispatch"] > 0 for r in records)
    if mode == "jit-dynamic" and cold:  # every decode step compiles: no steady call
        return
    share = steady_host_share(records)
    assert share is not None and 0 < share < 1
    assert set(steady_host_ms(records)) == set(HOST_PARTS) - {"compile"}


def test_leaves_count_is_the_executables_argument_count(llama_engine):
    """The tiny Llama of tests/conftest.py (2 layers): 23 weights (embeddings, 9 per layer, the final norm, the
    LM head and the rotary embedding's 2 buffers), a StaticCache of 2 layers (keys, values, cumulative length:
    6 leaves), then input_ids, position_ids, attention mask, PRNG key, seen tokens and the 4 sampling scalars:
    38 leaves per decode call, 39 for the prefill (``true_len``)."""
    weights, _ = llama_engine.jax_state()
    cache = FlatTree.of(llama_engine.static_cache(64)).leaves
    assert (len(weights), len(cache)) == (23, 6)
    records = records_of(llama_engine, "jit-static")
    prefill, *decode = records
    assert prefill.leaves == len(weights) + len(cache) + 10 == 39
    assert {r.leaves for r in decode} == {len(weights) + len(cache) + 9} == {38}
    step = llama_engine.existing_step("jit-static", "decode", True)
    compiled = step.executable(step.last_key)
    assert len(jax.tree_util.tree_leaves(compiled.in_avals)) == 38  # what JAX itself counts
    loop = records_of(llama_engine, "jit-loop")
    assert loop[1].leaves == 23 + 6 + 11  # the loop's arguments: token, position, ..., max_steps, stop_ids


def test_json_records_carry_the_breakdown(model_dirs):
    from app.cli import main

    out, err = io.StringIO(), io.StringIO()
    code = main(["generate", "--model", model_dirs("llama"), "--prompt", "The jit", "--max-new-tokens", "4",
                 "--json", "--mode", "jit-static", "--no-ir"], out=out, err=err)
    assert code == 0, err.getvalue()
    calls = [x for x in map(json.loads, out.getvalue().splitlines()) if x["event"] == "call"]
    assert len(calls) == 4
    for call in calls:
        assert list(call["host_ms"]) == list(HOST_PARTS) and call["leaves"] == (39 if call["step"] == "prefill" else 38)
        assert sum(call["host_ms"].values()) == pytest.approx(call["wall_ms"], rel=0.05)


def test_old_records_load_without_a_breakdown():
    from app.core.recording.model import _known

    old = {k: v for k, v in call_record(3).to_json().items() if k not in ("event", "host_ms", "leaves")}
    record = CallRecord(**_known(CallRecord, old))
    assert record.host_ms == {} and record.leaves is None and record.host_share is None


HOST = {"transfer": 0.05, "flatten": 0.2, "compile": 0.0, "dispatch": 0.3, "wait": 1.2, "token": 0.25}


def test_tooltip_shows_the_breakdown(qtbot):
    from widgets.plot.call_tooltip import describe

    record = replace(call_record(5, wall_ms=2.0), host_ms=HOST, leaves=165)
    text = describe(record, "run 1 · jit-static")
    assert "host breakdown:" in text
    for part in ("transfer", "flatten", "dispatch", "wait", "token"):
        assert f"{part} " in text
    assert "165 leaves" in text and "compile 0" not in text
    assert "host 40 % of the call" in text  # (2.0 - 1.2) / 2.0
    assert "host breakdown" not in describe(call_record(5))  # a record without one: nothing added


def test_stats_strip_shows_the_host_share(qtbot):
    from widgets.run.stats_strip import StatsStrip

    strip = StatsStrip()
    qtbot.addWidget(strip)
    strip.show()
    # no breakdown yet (a torch run never has one): "–", the card in its place (issue 37: it came and went)
    assert not strip.cards["host"].isHidden() and strip.text("host") == "–"
    strip.set_host(HOST, 165)
    assert strip.text("host") == "40 %" and not strip.cards["host"].isHidden()
    tip = strip.cards["host"].toolTip()
    assert "dispatch" in tip and "wait" in tip and "165 argument leaves" in tip
    strip.set_program(True)
    assert strip.cards["host"].isHidden()
    strip.set_program(False)
    strip.reset()
    assert not strip.cards["host"].isHidden() and strip.text("host") == "–"
