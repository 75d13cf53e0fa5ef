"""The settings race of each model step: jit-static's prefill (several calls, the first compiling) and jit-loop's
whole decode loop, their compile splits adding up to the compiling call's compile time, and an unknown step refused
by name."""

from __future__ import annotations

import pytest

from app.core.compile_settings.figures import SettingLane
from app.core.compile_settings.race import settings_race
from app.core.errors import InvalidSettingsError
from app.core.events import CallRecord, IREvent, LaneEvent
from app.core.settings import GenerationSettings


def _race(engine, step, **kwargs):
    settings = GenerationSettings(max_new_tokens=6, stop_at_eos=False)
    items = list(settings_race(engine, "The jit", ["O0"], settings, step=step, **kwargs))
    lanes = [x for x in items if isinstance(x, SettingLane)]
    assert [x.mode for x in items if isinstance(x, LaneEvent)] == [lane.name for lane in lanes] == ["default", "O0"]
    return items, lanes


def _split_adds_up(lane: SettingLane, record: CallRecord) -> None:
    """trace + lower + compile is the compile total, the call's; XLA's passes + codegen is the compile, within 5 %
    (the call also started and stopped the profiler that split it, which no figure counts)."""
    total, parts = lane.compile_total_ms, (lane.trace_ms, lane.lower_ms, lane.compile_ms)
    assert total is not None and None not in parts and total == pytest.approx(sum(p or 0.0 for p in parts))
    assert total == pytest.approx(record.compile_total_ms) and total <= record.host_ms["compile"] + 1.0
    assert lane.passes_ms and lane.passes_ms + lane.codegen_ms == pytest.approx(lane.compile_ms, rel=0.05)


def test_prefill_lanes_time_warm_prefill_calls(llama_engine):
    items, lanes = _race(llama_engine, "prefill", calls=3, first_lane_ir=True)
    second = next(i for i, x in enumerate(items) if isinstance(x, LaneEvent) and x.index == 1)
    ir_at = [i for i, x in enumerate(items) if isinstance(x, IREvent)]
    assert ir_at and max(ir_at) < second  # only the first lane captured IR (the Lowered the partings compile)
    prefills = [x for x in items if isinstance(x, CallRecord) and x.step == "prefill"]
    assert [r.compiled for r in prefills] == [True, False, False] * 2  # each lane compiles once, from cold
    assert not any(isinstance(x, CallRecord) and x.step == "decode" for x in items)  # one token a call: no decode
    for lane, record in zip(lanes, [r for r in prefills if r.compiled]):
        _split_adds_up(lane, record)
        assert lane.unit == "call" and lane.n_calls == 3 and lane.steady_ms and lane.steady_ms > 0
        assert lane.peak_bytes and lane.peak_bytes > 0 and len(lane.outputs) == 3
    assert lanes[1].outputs_equal


def test_loop_lanes_compile_the_whole_decode_loop(llama_engine):
    items, lanes = _race(llama_engine, "loop")
    decodes = [x for x in items if isinstance(x, CallRecord) and x.step == "decode"]
    assert {r.mode for r in decodes} == {"jit-loop"}
    compiles = [r for r in decodes if r.compiled]
    assert len(compiles) == 2  # the loop, once per lane
    for lane, record in zip(lanes, compiles):
        _split_adds_up(lane, record)
        assert lane.unit == "token" and lane.steady_ms and lane.steady_ms > 0 and len(lane.outputs) == 6
        assert lane.peak_bytes and lane.peak_bytes > 0
    assert lanes[1].outputs_equal
    # the first lane captured IR, so the raced loop's Lowered is there for the partings
    assert llama_engine.ir[("jit-loop", "decode")].lowered is not None


def test_an_unknown_step_is_refused_by_name(llama_engine):
    with pytest.raises(InvalidSettingsError, match="Unknown step 'warmup'.*decode, prefill, loop"):
        next(settings_race(llama_engine, "The jit", ["O3"], GenerationSettings(), step="warmup"))
