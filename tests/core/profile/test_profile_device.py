"""The profiler reads a GPU's device plane, without a GPU: a real capture of 5 jit-static decode steps of
pydoc-llama on an NVIDIA H200 (jax 0.11.2, CUDA 13 plugin; ``tests/fixtures/gpu/``, gzipped copies of
``h200-pydoc-llama-decode-profile.xplane.pb`` and ``h200-pydoc-llama-decode.hlo.txt`` from the project's shared
GPU fixtures, recorded with ``profile --step decode --steps 5`` and ``inspect --what hlo``).

In that capture XLA ran the step as a command buffer (a CUDA graph): every kernel's ``hlo_op`` is
``command_buffer_1``, and identical fusions share one kernel name, so the kernels are joined to the HLO by
schedule order (:mod:`app.core.profile.device`). The figures are checked against the device plane read
independently here with ``jax.profiler.ProfileData``.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from app.core.profile.build import aggregate
from app.core.profile.capture import Capture, OpEvent, StepWindow, merge, stream_label
from app.core.profile.device import (
    COMMAND_BUFFER_FLAG,
    align,
    device_schedule,
    join_kernels,
    kernel_instruction,
)
from app.core.profile.hlo import parse_hlo
from app.core.profile.step import profile_from_capture

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "gpu"
CAPTURE = FIXTURES / "h200-pydoc-llama-decode-profile.xplane.pb.gz"
HLO = FIXTURES / "h200-pydoc-llama-decode.hlo.txt.gz"


@pytest.fixture(scope="module")
def xspace() -> bytes:
    return gzip.decompress(CAPTURE.read_bytes())


@pytest.fixture(scope="module")
def hlo_text() -> str:
    return gzip.decompress(HLO.read_bytes()).decode("utf-8")


@pytest.fixture(scope="module")
def profile(xspace, hlo_text):
    return profile_from_capture(xspace, hlo_text, model="h200")


@pytest.fixture(scope="module")
def device_truth(xspace):
    """Straight from the capture: the step windows and every device-plane event (start, end) inside them."""
    from jax.profiler import ProfileData

    data = ProfileData.from_serialized_xspace(xspace)
    windows = sorted((e.start_ns, e.start_ns + e.duration_ns) for line in data.find_plane_with_name("/host:CPU").lines
                     for e in line.events if e.name == "torchax_playground_step")
    events = [(e.start_ns, e.start_ns + e.duration_ns) for line in data.find_plane_with_name("/device:GPU:0").lines
              for e in line.events if any(a <= e.start_ns < b for a, b in windows)]
    return windows, events


def test_device_plane_read_and_every_device_event_is_a_row(profile, device_truth):
    windows, events = device_truth
    assert profile.device == "/device:GPU:0" and profile.n_steps == len(windows) == 5
    assert len(events) == 400  # 370 kernels, 10 memcpy nodes in the graph, 20 transfers / other programs' copies
    busy_sum_us = sum(b - a for a, b in events) / 1e3 / 5
    union_us = sum(b - a for a, b in merge(events)) / 1e3 / 5
    rows = profile.rows
    assert sum(r.us_per_step for r in rows) == pytest.approx(busy_sum_us, rel=1e-9)
    # the device's busy time (any event running): the rows' charged wall time adds up to it (done-when: ±5 %)
    assert sum(r.wall_us_per_step for r in rows) == pytest.approx(union_us, rel=0.05)
    assert profile.op_ms * 1e3 == pytest.approx(union_us, rel=1e-9)
    assert profile.launch_gaps["device_busy_ms"] == pytest.approx(profile.op_ms)
    split = sum(profile.launch_gaps.values())
    assert split == pytest.approx(profile.step_ms, rel=1e-6)  # busy + launch gaps + host = the step's wall time
    assert profile.launch_gaps["launch_gap_ms"] > 10 * profile.op_ms  # this tiny model's step is host-bound


def test_kernels_are_joined_to_every_instruction_of_the_schedule(profile, hlo_text):
    info = parse_hlo(hlo_text)
    schedule = device_schedule(info)
    assert len(schedule) == 76
    by_key = {r.key: r for r in profile.rows}
    for name in schedule:  # each instruction once per step, though 38 kernel names cover them
        assert by_key[name].calls_per_step == pytest.approx(1.0), name
    # a shared kernel: input_reduce_fusion_34 runs for input_reduce_fusion.33 as well, in its own schedule slot
    assert by_key["input_reduce_fusion.33"].kind == by_key["input_reduce_fusion.34"].kind == "kInput"
    assert by_key["copy.37"].calls_per_step == pytest.approx(1.0)  # the graph's memcpy32_post node
    assert by_key["memcpy H2D"].kind == by_key["memcpy D2H"].kind == "memcpy"
    assert by_key["memcpy H2D"].calls_per_step == pytest.approx(2.0)
    assert by_key["jit_squeeze:copy.1"].kind == "other module"
    assert set(by_key) == set(schedule) | {"memcpy H2D", "memcpy D2H", "jit_squeeze:copy.1"}
    assert profile.unmatched == []


def test_command_buffer_note_names_the_flag(profile):
    assert len(profile.notes) == 1
    note = profile.notes[0]
    assert "command buffer" in note and "command_buffer_1" in note and COMMAND_BUFFER_FLAG in note
    assert "380 of 380" in note
    assert profile.summary()["notes"] == profile.notes and profile.summary()["device"] == "/device:GPU:0"


def test_rows_name_modeling_llama_lines(profile):
    lines = aggregate(profile, "line")
    llama = [r for r in lines if "modeling_llama.py:" in r.key]
    assert len(llama) >= 10
    assert sum(r.share for r in lines) == pytest.approx(profile.attributed_share, rel=1e-6)
    top = lines[0]
    assert top.key.endswith("modeling_llama.py:164")  # the MLP's projections (Triton gemv fusions)
    for by in ("op", "fusion", "module"):
        rows = aggregate(profile, by)
        assert sum(r.us_per_step for r in rows) == pytest.approx(profile.busy_ms * 1e3, rel=1e-6), by


def test_timeline_has_the_host_track_beside_the_streams(profile):
    t = profile.timeline
    assert t.threads[0] == "GPU:0 stream 14 (Compute,MemcpyD2D)" and t.threads[-1] == "host python3"
    host = [b for b in t.bars if b.thread == "host python3"]
    assert {"PjitFunction(jit(step))", "shard_args", "np.asarray(jax.Array)"} <= {b.name for b in host}
    assert all(b.kind == "host" for b in host)
    device = [b for b in t.bars if b.thread != "host python3"]
    assert len(device) == 80  # one step: 76 of jit_step + jit_squeeze's copy, 2 H2D, the token's D2H
    iv = [(b.start_us, b.start_us + b.duration_us) for b in device]
    busy = sum(b - a for a, b in merge(iv))
    assert t.gap_us + busy == pytest.approx(t.step_us, rel=1e-6)


def test_roofline_only_with_the_devices_figures(xspace, hlo_text, profile):
    assert profile.bandwidth_gbs is None and profile.bound_ms is None and profile.compute_bound_ms is None
    assert all(r.bandwidth_share is None for r in profile.rows)
    p = profile_from_capture(xspace, hlo_text, bandwidth_gbs=3000.0, peak_tflops=900.0)
    assert p.bound_ms == pytest.approx(p.bytes_per_step / 3000.0 / 1e6)
    assert p.compute_bound_ms == pytest.approx(p.flops_per_step / 900.0 / 1e9)
    assert any(r.bandwidth_share for r in p.rows)


def test_kernel_names_and_stream_labels():
    info = parse_hlo(_TINY)
    assert kernel_instruction("loop_add_fusion_2", info) == "loop_add_fusion.2"
    assert kernel_instruction("loop_add_fusion", info) == "loop_add_fusion"
    assert kernel_instruction("sm90_xmma_gemm", info) is None
    assert stream_label("/device:GPU:0", "Stream #15(MemcpyH2D)") == "GPU:0 stream 15 (MemcpyH2D)"


def test_align_follows_the_schedule_through_shared_kernels_and_repeated_runs():
    info = parse_hlo(_TINY)
    schedule = device_schedule(info)
    assert schedule == ["loop_add_fusion", "loop_add_fusion.2", "copy.1"]
    # both fusions launch the kernel named after the first; the copy is a memcpy node; then a second run
    kernels = ["loop_add_fusion", "loop_add_fusion", "memcpy32_post"] * 2
    assert align(kernels, schedule, info) == schedule * 2


def test_hlo_op_stat_wins_without_command_buffers():
    info = parse_hlo(_TINY)
    events = [OpEvent("loop_add_fusion", "GPU:0 stream 7", 10.0, 5.0, 0, "loop_add_fusion", "loop_add_fusion.2")]
    capture = Capture("jit_f", [StepWindow(0, 0.0, 100.0)], events, device="/device:GPU:0")
    join = join_kernels(capture, info)
    assert events[0].name == "loop_add_fusion.2" and join.by_rule == {"hlo_op": 1} and capture.notes == []


_TINY = """HloModule jit_f, entry_computation_layout={(f32[8]{0})->f32[8]{0}}

%fused_add (param_0: f32[8]) -> f32[8] {
  %param_0 = f32[8]{0} parameter(0)
  ROOT %add.0 = f32[8]{0} add(%param_0, %param_0)
}

%fused_add.2 (param_0.1: f32[8]) -> f32[8] {
  %param_0.1 = f32[8]{0} parameter(0)
  ROOT %add.1 = f32[8]{0} add(%param_0.1, %param_0.1)
}

ENTRY %main (x: f32[8]) -> f32[8] {
  %x = f32[8]{0} parameter(0)
  %loop_add_fusion = f32[8]{0} fusion(%x), kind=kLoop, calls=%fused_add
  %loop_add_fusion.2 = f32[8]{0} fusion(%loop_add_fusion), kind=kLoop, calls=%fused_add.2
  ROOT %copy.1 = f32[8]{0} copy(%loop_add_fusion.2)
}
"""


def test_device_roofline_figures_are_measured_on_the_device():
    """The live device profile's roofline: bandwidth from a jitted x + 1 (bytes read + written) and the matmul
    ceiling from a jitted (n, n) @ (n, n); measured here on the CPU device with small sizes."""
    import jax

    from app.core.profile.capture import read_device_bandwidth_gbs, read_device_peak_tflops

    device = jax.devices()[0]
    gbs = read_device_bandwidth_gbs(device, n_bytes=1 << 22, repeats=2, cached=False)
    tflops = read_device_peak_tflops(device, n=256, dtype="float32", repeats=2, cached=False)
    assert 0.1 < gbs < 10_000 and 1e-4 < tflops < 10_000
