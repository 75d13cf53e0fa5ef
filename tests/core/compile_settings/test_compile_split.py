"""A raced step's XLA compile split into XLA's HLO passes and code generation from a profiler capture of that one
compile, and on XLA:GPU the autotuner and ptxas inside them (issue 40): read from a real H200 capture
(``tests/fixtures/gpu/passes/``) and from a live CPU race; a busy profiler leaves the split unknown, nothing else."""

from __future__ import annotations

from pathlib import Path

import jax
import pytest

from app.core.compile_settings.figures import SettingLane
from app.core.compile_settings.race import settings_race
from app.core.compile_settings.split import compile_split
from app.core.events import CallRecord
from app.core.passes.dumps import find_capture
from app.core.settings import GenerationSettings

H200 = Path(__file__).resolve().parents[2] / "fixtures" / "gpu" / "passes" / "llama-decode"


def test_an_h200_compile_splits_into_passes_autotune_codegen_and_ptxas():
    capture = find_capture(H200)
    split = compile_split(capture, "jit_step", "gpu", 560.0)
    # H200, pydoc-llama's decode step: HLO Transforms 282 ms of a 552 ms client compile; 39 PTX->CUBIN in parallel
    assert 150 < split["passes_ms"] < 400
    assert split["passes_ms"] + split["codegen_ms"] == pytest.approx(560.0)
    assert split["ptxas_ms"] is not None and 0 < split["ptxas_ms"] < split["codegen_ms"]
    assert split["autotune_ms"] is not None and split["autotune_ms"] < split["passes_ms"]
    with pytest.raises(ValueError, match="jit_other"):
        compile_split(capture, "jit_other", "gpu", 560.0)


def test_a_cpu_lanes_compile_splits_and_a_busy_profiler_leaves_it_unknown(llama_engine, tmp_path):
    settings = GenerationSettings(max_new_tokens=4, stop_at_eos=False)
    lanes = [x for x in settings_race(llama_engine, "The jit", ["O1"], settings) if isinstance(x, SettingLane)]
    for lane in lanes:
        assert 0 < lane.passes_ms < lane.codegen_ms  # XLA:CPU: LLVM is most of it
        assert lane.passes_ms + lane.codegen_ms == pytest.approx(lane.compile_ms, rel=0.05)
    jax.profiler.start_trace(str(tmp_path))  # a profile in progress: the race runs, without the split
    try:  # the baseline's lane alone: every lane captures alike (above), one shows the busy profiler
        items = list(settings_race(llama_engine, "The jit", ["default"], settings))
    finally:
        jax.profiler.stop_trace()
    lanes = [x for x in items if isinstance(x, SettingLane)]
    assert [lane.passes_ms for lane in lanes] == [None] and all(lane.steady_ms for lane in lanes)
    compiled = [x for x in items if isinstance(x, CallRecord) and x.compiled and x.step == "decode"]
    assert [lane.compile_ms for lane in lanes] == [r.compile_ms for r in compiled]
