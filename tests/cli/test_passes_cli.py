"""``torchax-playground passes``: the snapshot list with the compile split, --list as JSON lines, --diff
of the fusion pass, --search, --fusion-log, and a refusal for a mode XLA does not compile."""

from __future__ import annotations

import io
import json

import pytest

from app.cli import main


def run_cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def model(gui_model):
    return gui_model


def test_passes_summary_and_list(model):
    code, out, err = run_cli("passes", "--model", model, "--mode", "jit-static", "--step", "decode")
    assert code == 0, err
    assert "after-optimizations" in out and "HLO passes" in out and "LLVM" in out and "[passes]" in err
    code, out, err = run_cli("passes", "--model", model, "--list", "--json")
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    assert {"pipeline", "pass", "index", "changed", "ms", "n_instructions", "n_fusions", "fusion_kinds"} <= set(rows[0])
    fusion = next(r for r in rows if r["pass"] == "fusion")
    assert fusion["changed"] >= 1 and fusion["ms"] > 0 and fusion["n_fusions"] > 0
    code, out, err = run_cli("passes", "--model", model, "--fusions", "--json")
    assert code == 0, err
    fusions = [json.loads(line) for line in out.splitlines()]
    assert fusions and {f["created_by"] for f in fusions} >= {"fusion"}


def test_passes_diff_search_and_fusion_log(model):
    code, out, err = run_cli("passes", "--model", model, "--step", "prefill", "--diff", "fusion")
    assert code == 0, err
    assert out.startswith("--- ") and any(line.startswith("+") and "fusion" in line for line in out.splitlines())
    code, out, err = run_cli("passes", "--model", model, "--search", "kind=kLoop")
    assert code == 0, err
    assert "snapshots contain 'kind=kLoop'" in out
    code, out, err = run_cli("passes", "--model", model, "--fusion-log", "--json")
    assert code == 0, err
    decisions = [json.loads(line) for line in out.splitlines()]
    assert any(d["fused"] and d["reason"] for d in decisions)


def test_passes_refuses_torch_compile(model):
    code, _, err = run_cli("passes", "--model", model, "--mode", "torch-compile")
    assert code == 2 and "not compiled by XLA" in err
