"""Inductor's ``torch.compile`` modes race beside XLA's settings (issue 40): a lane runs the model's decode step in
the torch-compile mode under that mode, from cold, with its compile split adding up and its tokens compared with
the baseline's; a decode loop or a program has nothing for Inductor and refuses it by name; no XLA pass is looked
for."""

from __future__ import annotations

import pytest

from app.core.compile_options import torch_compile_mode
from app.core.compile_settings.catalog import parse_setting
from app.core.compile_settings.figures import SettingLane
from app.core.compile_settings.parting import where_settings_part
from app.core.compile_settings.race import settings_race
from app.core.errors import InvalidSettingsError
from app.core.events import CallRecord, LaneEvent
from app.core.settings import GenerationSettings


def test_an_inductor_lane_races_the_decode_step_in_torch_compile(llama_engine, monkeypatch):
    import app.core.modes.torch_compile as tc

    seen_modes = []
    real = tc.compile_mode
    monkeypatch.setattr(tc, "compile_mode", lambda device: seen_modes.append(real(device)) or seen_modes[-1])
    settings = GenerationSettings(max_new_tokens=6, stop_at_eos=False)
    # reduce-overhead: a mode other than the CPU's own ("default"), so the lane's mode is seen reaching
    # torch.compile; on a CPU it compiles as "default" does (CUDA graphs only on CUDA), while max-autotune would
    # also build and benchmark Inductor's C++ GEMM templates for every matmul (the catalog's rows of each mode:
    # tests/cli/test_settings_race_cli.py::test_list_settings)
    items = list(settings_race(llama_engine, "The jit", ["inductor-reduce-overhead"], settings))
    lanes = [x for x in items if isinstance(x, SettingLane)]
    assert [lane.name for lane in lanes] == ["default", "inductor-reduce-overhead"]
    second = next(i for i, x in enumerate(items) if isinstance(x, LaneEvent) and x.index == 1)
    xla = [x for x in items[:second] if isinstance(x, CallRecord)]
    inductor = [x for x in items[second:] if isinstance(x, CallRecord)]
    assert {r.mode for r in xla} == {"jit-static"} and {r.mode for r in inductor} == {"torch-compile"}
    assert seen_modes and set(seen_modes) == {"reduce-overhead"} and torch_compile_mode() is None  # only in the lane
    lane = lanes[1]
    compiled = next(r for r in inductor if r.step == "decode" and r.compiled)
    assert not compiled.persistent_cache_hit  # Inductor's disk caches were off: every kernel built
    assert lane.compile_total_ms == pytest.approx(compiled.compile_ms, rel=0.05)  # the split adds up
    assert min(lane.trace_ms, lane.lower_ms, lane.compile_ms) > 0
    assert lane.steady_ms and lane.steady_ms > 0 and lane.unit == "token" and lane.peak_bytes is None
    assert lane.outputs_equal is True and len(lane.outputs) == 6  # greedy: PyTorch's tokens are XLA's


@pytest.mark.parametrize("step", ["loop"])
def test_a_decode_loop_has_nothing_for_inductor(llama_engine, step):
    settings = GenerationSettings(max_new_tokens=4, stop_at_eos=False)
    with pytest.raises(InvalidSettingsError, match="inductor-default is an Inductor setting.*no decode loop"):
        list(settings_race(llama_engine, "The jit", ["inductor-default"], settings, step=step))


def test_inductor_settings_have_no_xla_pass_and_no_tpu():
    with pytest.raises(InvalidSettingsError, match="no pass where it parts"):
        where_settings_part(object(), "default", "inductor-default")
    with pytest.raises(InvalidSettingsError, match="inductor-default is an Inductor setting .* TPU: PyTorch has no device"):
        parse_setting("inductor-default", "tpu")
    assert parse_setting("inductor-reduce-overhead", "cpu").compiler == "Inductor"
