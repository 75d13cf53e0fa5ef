"""The settings race on a model's decode step: lanes from cold under each setting, the baseline first, compile
splits that add up, tokens compared, peak memory, Stop between lanes."""

from __future__ import annotations

import pytest

from app.core.compile_settings.figures import SettingLane
from app.core.compile_settings.race import settings_race
from app.core.events import CallRecord, LaneEvent
from app.core.settings import GenerationSettings


def test_each_setting_compiles_its_decode_step_and_the_split_adds_up(llama_engine):
    settings = GenerationSettings(max_new_tokens=6, stop_at_eos=False)
    items = list(settings_race(llama_engine, "The jit", ["O0", "--xla_cpu_enable_fast_math=true"], settings))
    lanes = [x for x in items if isinstance(x, SettingLane)]
    assert [x.mode for x in items if isinstance(x, LaneEvent)] == [lane.name for lane in lanes]
    assert [lane.name for lane in lanes] == ["default", "O0", "--xla_cpu_enable_fast_math=true"]
    decode_compiles = [x for x in items if isinstance(x, CallRecord) and x.step == "decode" and x.compiled]
    assert len(decode_compiles) == 3  # each lane compiled from cold, none from a cache
    for lane, record in zip(lanes, decode_compiles):
        assert lane.compile_ms == record.compile_ms and not lane.persistent_cache_hit
        # the split (trace + lower + compile) is the call's; the call also started and stopped the profiler that
        # split its compile into XLA's passes and codegen, which no figure counts
        assert lane.compile_total_ms == pytest.approx(record.compile_total_ms)
        assert lane.compile_total_ms <= record.host_ms["compile"] + 1.0
        assert 0 < lane.passes_ms < lane.compile_ms and lane.codegen_ms > 0
        assert lane.passes_ms + lane.codegen_ms == pytest.approx(lane.compile_ms, rel=0.05)
        assert lane.autotune_ms is None and lane.ptxas_ms is None  # XLA:GPU's only
        assert lane.steady_ms and lane.steady_ms > 0 and lane.n_calls == 5 and lane.unit == "token"
        assert lane.peak_bytes and lane.peak_bytes > 0
    assert lanes[0].outputs_equal and lanes[1].outputs_equal  # O0 keeps greedy tokens
    assert lanes[2].changes_results and len(lanes[2].outputs) == 6


def test_stop_between_lanes(llama_engine):
    seen: list[SettingLane] = []

    def stop() -> bool:
        return bool(seen)

    for item in settings_race(llama_engine, "The jit", ["O3"], GenerationSettings(max_new_tokens=3), stop):
        if isinstance(item, SettingLane):
            seen.append(item)
    assert [lane.name for lane in seen] == ["default"]
