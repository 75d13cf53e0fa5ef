"""XLA:GPU's pass pipeline read from real dumps and compile captures of an NVIDIA H200 (jax 0.11.2, CUDA 13;
``tests/fixtures/gpu/passes/``, trimmed from the project's shared GPU fixtures): the backend told from the dump
names, the nvptx pipelines with their profiler times, autotuning as its own phase (what was tuned, the chosen
Triton tiling, candidates compiled and run), the thunk sequence, ptxas, and a compile split that adds up.
No GPU is needed: only files are read."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.backends import CPU, GPU, dumps_backend
from app.core.passes import query
from app.core.passes.dumps import DumpsError, open_dumps
from app.core.passes.parse import config_text, parse_autotune_results, parse_thunk_sequence

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "gpu" / "passes"


@pytest.fixture(scope="module")
def mlp():
    return open_dumps(FIXTURES / "mlp-training")


@pytest.fixture(scope="module")
def llama():
    return open_dumps(FIXTURES / "llama-decode")


def test_backend_told_from_dump_names():
    assert dumps_backend(["module_1.jit_f.sm_9.0a_gpu_after_optimizations.txt"]) is GPU
    assert dumps_backend(["module_1.jit_f.cpu_after_optimizations.txt"]) is CPU
    assert dumps_backend(["module_1.jit_f.0001.simplification.after_algsimp.txt"]) is CPU
    # the CPU row keeps the names measured on jax 0.12 / 0.10.2
    assert CPU.client_compile_events == ("CompileCpuExecutable", "PjRtCpuClient::Compile")
    assert CPU.run_backend_event == "CpuCompiler::RunBackend" and CPU.final_dump == "cpu_after_optimizations"


def test_gpu_dumps_open_with_their_final_module(llama, mlp):
    assert llama.platform == "gpu" and llama.module == "jit_step" and llama.has_capture
    assert llama.final is not None and llama.final.file.endswith(".sm_9.0a_gpu_after_optimizations.txt")
    assert llama.extras.arch == "sm_9.0a"
    assert llama.final.fusion_kinds == {"kCustom": 8, "kInput": 32, "kLoop": 34}
    assert mlp.module == "jit_entry" and mlp.before is not None
    # snapshots take the profiler's spelling of a pipeline (file names write its spaces as underscores)
    assert any(s.pipeline == "nvptx post-layout_assignment part 1" for s in llama.snapshots)


def test_nvptx_pipelines_and_pass_times(llama):
    rows = {r["pipeline"]: r for r in query.pipeline_rows(llama)}
    for name in ("nvptx post-layout_assignment part 1", "nvptx post-layout_assignment part 2", "fusion",
                 "layout assignment", "config-assigner", "post-scheduling-passes"):
        assert name in rows and rows[name]["ms"] > 0
    assert rows["fusion"]["ms"] == pytest.approx(130.70, abs=0.01)
    assert rows["post-scheduling-passes"]["in_backend"] and not rows["fusion"]["in_backend"]
    assert rows["config-assigner"]["autotune"]
    times = {(t.pipeline, t.pass_name): t for t in llama.pass_times}
    assert times[("fusion", "priority-fusion")].ms == pytest.approx(119.60, abs=0.01)
    assert times[("simplification", "algsimp")].count == 7
    # the autotuner pass itself is a pass of its pipeline (a pass named like its pipeline, not wrapping it)
    assert ("config-assigner", "config-assigner") in times
    # sub-compiles of other modules (triton softmax) and phases are not passes
    assert not any("triton_softmax_computation" in t.pipeline or "(" in t.pass_name for t in llama.pass_times)
    assert not any(t.pass_name in GPU.backend_plain_events for t in llama.pass_times)
    assert llama.passes_ms < llama.client_compile_ms


def test_autotune_phase_of_the_mlp(mlp):
    a = mlp.extras.autotune
    assert a.ms == pytest.approx(417.51, abs=0.01)
    assert a.results_file.endswith("autotune_results.pbtxt") and a.results == []  # "version: 3" only
    tuned = {c.fusion: c for c in a.choices}
    gemm = tuned["gemm_fusion_dot_general.5"]
    assert gemm.before == "__triton_gemm" and gemm.kind == "__triton_nested_gemm_fusion"
    assert gemm.config == "tile 64x16, 4 warps, 1 stage, 1 CTA"
    assert gemm.candidates == 14 and gemm.runs == 28 and gemm.compile_ms > 0
    assert tuned["gemm_fusion_dot_general.8"].config == "tile 16x8, 2 warps, 1 stage, 1 CTA"
    assert sum(c.kind == "__triton_nested_gemm_fusion" for c in a.choices) == 5
    assert a.n_candidate_compiles == 76 and a.device_events == 1748
    rows = {f.name: f for f in query.fusion_table(mlp)}
    assert rows["gemm_fusion_dot"].autotuned and rows["gemm_fusion_dot"].config.startswith("__triton_nested")


def test_llama_decode_tuned_nothing(llama):
    a = llama.extras.autotune
    assert a.ms == pytest.approx(4.96, abs=0.01) and a.choices == [] and a.n_candidate_compiles == 0


def test_thunk_sequence(llama):
    g = llama.extras
    assert len(g.thunks) == 74 and all(t.kind == "kCustomKernel" for t in g.thunks)
    assert g.thunks[2].name == "input_reduce_fusion_34" and g.thunks[2].grid == "32,1,1"
    assert g.thunks[2].threads == "256,1,1"
    after = g.thunks_after_passes
    assert after[0].kind == "kCommandBuffer" and after[0].depth == 0
    assert len(after) == 75 and all(t.depth == 1 for t in after[1:])
    parsed = parse_thunk_sequence("012: kCustomKernel [prev=011 (1)  | next=013 (1)] fusion_42 grid: [32, 1, 1] "
                                  "threads: [64, 1, 1]  shared_memory: 256 bytes")
    assert parsed[0].shared_memory == 256 and parsed[0].name == "fusion_42"


def test_ptx_not_dumped_and_codegen(llama):
    g = llama.extras
    assert g.kernel_ir_files == 0 and llama.fusion_ir == {}
    assert g.n_ptxas == 39 and g.n_kernel_compiles == 39 and g.threads == 16
    assert g.ptxas_ms == pytest.approx(666.71, abs=0.01)
    assert 0 < g.ptxas_wall_ms < g.codegen_ms == pytest.approx(123.89, abs=0.01)


@pytest.mark.parametrize("which", ["llama", "mlp"])
def test_gpu_compile_split_adds_up(which, request):
    pipeline = request.getfixturevalue(which)
    b = query.compile_breakdown(pipeline)
    assert b.total_ms == pytest.approx(pipeline.client_compile_ms)
    assert sum(p.ms for p in b.parts) == pytest.approx(b.total_ms, rel=1e-6)
    groups = b.by_group()
    assert set(groups) == {"HLO passes", "autotune", "backend", "codegen", "ptxas", "other"}
    assert all(p.ms >= 0 for p in b.parts)
    assert b.kernel_compile_event == "CompileSingleModule" and b.n_ptxas > 0
    if which == "mlp":
        assert groups["autotune"] > groups["HLO passes"]  # 417.5 ms of 713 ms tuning five gemms


def test_config_text_and_results_parsing():
    assert config_text({"gemm_backend_config": {"selected_algorithm": "-1"}}) == ("cublas", "algorithm -1")
    assert config_text({"fusion_backend_config": {"kind": "__triton_gemm"}}) == ("__triton_gemm", "")
    results = parse_autotune_results('version: 3\nresults {\n  device: "CUDA: 9.0"\n  hlo: "{...}"\n'
                                     '  result {\n    gemm {\n      algorithm: 13\n    }\n  }\n}\n')
    assert results == [{"device": "CUDA: 9.0", "hlo": "{...}", "result": "gemm { algorithm: 13 }"}]


def test_dumps_without_a_capture_and_bad_folders(tmp_path):
    for f in (FIXTURES / "llama-decode" / "dump").iterdir():
        (tmp_path / f.name).write_bytes(f.read_bytes())
    p = open_dumps(tmp_path)
    assert not p.has_capture and p.pass_times == [] and p.extras.autotune.ms is None
    assert len(p.extras.thunks) == 74 and query.compile_breakdown(p).parts == []
    with pytest.raises(DumpsError, match="No XLA dump files"):
        open_dumps(tmp_path / "profile") if (tmp_path / "profile").mkdir() is None else None
    with pytest.raises(DumpsError, match="No folder"):
        open_dumps(tmp_path / "missing")
