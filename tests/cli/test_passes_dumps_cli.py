"""``torchax-playground passes --dumps DIR``: XLA:GPU dumps and the capture of that compile recorded on an
H200 opened without a GPU and without loading a model — the nvptx pipelines with times, the autotune phase,
the compile split, --list, --fusions, --thunks, --autotune, --json; refusals of options that need a compile."""

from __future__ import annotations

import io
import json
from pathlib import Path

from app.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "gpu" / "passes"
LLAMA = str(FIXTURES / "llama-decode")
MLP = str(FIXTURES / "mlp-training")


def run_cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_dumps_summary_lists_nvptx_pipelines_and_autotune():
    code, out, err = run_cli("passes", "--dumps", LLAMA)
    assert code == 0, err
    assert "XLA:GPU module jit_step, with a capture" in err
    lines = out.splitlines()
    nvptx = [ln for ln in lines if ln.strip().startswith("nvptx post-layout_assignment part")]
    assert len(nvptx) == 2 and all(" ms " in ln for ln in nvptx)
    assert any(ln.strip().startswith("config-assigner") and "← autotune" in ln for ln in lines)
    assert "autotune (config-assigner): 5.0 ms" in out
    assert "PTX per fusion: not dumped" in out and "after the thunk passes 75" in out
    assert "ptxas" in out and "39 × CompileSingleModule" in out and "compile 552.5 ms" in out


def test_dumps_json_events():
    code, out, err = run_cli("passes", "--dumps", MLP, "--json")
    assert code == 0, err
    events = [json.loads(ln) for ln in out.splitlines()]
    kinds = {e["event"] for e in events}
    assert {"snapshot", "pipeline", "autotune", "thunks", "kernel_ir", "compile_phases"} <= kinds
    autotune = next(e for e in events if e["event"] == "autotune")
    assert autotune["ms"] == 417.511 and autotune["candidate_compiles"] == 76
    assert {c["config"] for c in autotune["choices"] if c["kind"] == "__triton_nested_gemm_fusion"} == {
        "tile 64x16, 4 warps, 1 stage, 1 CTA", "tile 16x8, 2 warps, 1 stage, 1 CTA",
        "tile 16x64, 4 warps, 1 stage, 1 CTA"}
    phases = next(e for e in events if e["event"] == "compile_phases")
    assert phases["platform"] == "gpu" and set(phases["groups"]) >= {"HLO passes", "autotune", "codegen", "ptxas"}
    assert abs(sum(p["ms"] for p in phases["parts"]) - phases["total_ms"]) < 0.05
    nvptx = [e for e in events if e["event"] == "pipeline" and e["pipeline"].startswith("nvptx")]
    assert len(nvptx) == 2 and all(e["ms"] > 0 for e in nvptx)
    assert next(e for e in events if e["event"] == "kernel_ir") == {
        "event": "kernel_ir", "kind": "PTX", "files": 0, "dumped": False, "arch": "sm_9.0a"}


def test_dumps_list_fusions_thunks_autotune():
    code, out, err = run_cli("passes", "--dumps", LLAMA, "--list", "--json")
    assert code == 0, err
    rows = [json.loads(ln) for ln in out.splitlines()]
    prio = next(r for r in rows if r["pass"] == "priority-fusion")
    assert prio["pipeline"] == "fusion" and prio["ms"] > 100
    code, out, err = run_cli("passes", "--dumps", MLP, "--fusions")
    assert code == 0, err
    assert "gemm_fusion_dot_general.5" in out and "autotuned" in out and "tile 64x16" in out
    assert "PTX per fusion: not dumped" in out
    code, out, err = run_cli("passes", "--dumps", LLAMA, "--thunks")
    assert code == 0, err
    assert out.startswith("000 kCommandBuffer") and "    003 kCustomKernel    input_reduce_fusion_34 " in out
    code, out, err = run_cli("passes", "--dumps", MLP, "--autotune", "--json")
    assert code == 0, err
    assert json.loads(out)["choices"][0]["fusion"] == "gemm_fusion_dot_general.5"


def test_dumps_refusals(tmp_path):
    code, out, err = run_cli("passes", "--dumps", LLAMA, "--compare", "prefill,decode")
    assert code != 0 and "--compare" in err
    code, out, err = run_cli("passes", "--dumps", str(tmp_path))
    assert code != 0 and "No XLA dump files" in err
