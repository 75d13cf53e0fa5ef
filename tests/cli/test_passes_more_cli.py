"""``inspect --what passes|fusions|pass-hlo|compile-phases``, ``passes --program`` / ``program --what passes``
on a gallery example, ``passes --compare`` and ``--xla-flags`` (unknown flags refused by name)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from app.cli import main

EXAMPLE = str(Path(__file__).resolve().parents[2] / "app" / "examples" / "01_jit_speedup.py")


def run_cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def model(gui_model):
    return gui_model


def test_inspect_passes_fusions_pass_hlo_and_compile_phases(model):
    code, out, err = run_cli("inspect", "--model", model, "--what", "passes", "--json")
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    keys = {"pipeline", "pass", "index", "changed", "ms", "n_instructions", "n_fusions", "fusion_kinds"}
    assert rows and all(keys <= set(r) for r in rows)
    assert sum(1 for r in rows if r["changed"]) >= 5
    code, out, err = run_cli("inspect", "--model", model, "--what", "fusions", "--json")
    assert code == 0, err
    fusions = [json.loads(line) for line in out.splitlines()]
    assert fusions and all({"fusion", "kind", "created_by", "absorbed"} <= set(f) for f in fusions)
    code, out, err = run_cli("inspect", "--model", model, "--what", "pass-hlo", "--pass", "fusion")
    assert code == 0, err
    assert out.startswith("HloModule") and "kind=kLoop" in out
    code, out, err = run_cli("inspect", "--model", model, "--what", "compile-phases", "--json")
    assert code == 0, err
    phases = json.loads(out)
    assert phases["event"] == "compile_phases" and {"HLO passes", "backend", "other"} <= set(phases["groups"])
    assert abs(sum(p["ms"] for p in phases["parts"]) - phases["total_ms"]) <= 0.1 * phases["total_ms"]
    code, out, err = run_cli("inspect", "--model", model, "--what", "compile-phases")
    assert code == 0 and "HLO passes" in out and "LLVM" in out


def test_inspect_pass_hlo_needs_pass(model):
    code, _, err = run_cli("inspect", "--model", model, "--what", "pass-hlo")
    assert code == 2 and "--pass" in err


def test_passes_on_a_program_carries_its_lines():
    code, out, err = run_cli("passes", "--program", f"{EXAMPLE}:selu", "--args", "f32[32,32]", "--json")
    assert code == 0, err
    assert "MB compressed, recorded in" in err
    snaps = [json.loads(line) for line in out.splitlines()]
    assert sum(1 for s in snaps if s.get("event") == "snapshot" and s["changed"]) >= 5
    code, out, err = run_cli("passes", "--program", f"{EXAMPLE}:selu", "--args", "f32[32,32]", "--pass-hlo", "fusion")
    assert code == 0, err
    assert "01_jit_speedup.py" in out.split("StackFrames")[0]  # the module's FileNames table: the program
    assert "stack_frame_id=" in out
    code, out, err = run_cli("passes", "--program", f"{EXAMPLE}:selu", "--args", "f32[32,32]", "--fusions", "--json")
    assert code == 0, err
    fusions = [json.loads(line) for line in out.splitlines()]
    assert fusions and all(any(w.startswith("01_jit_speedup.py:") for _, _, w in f["absorbed"]) for f in fusions)
    code, out, err = run_cli("program", EXAMPLE, "--what", "passes", "--json")
    assert code == 0, err
    assert any(json.loads(line)["pass"] == "fusion" for line in out.splitlines())
    code, out, err = run_cli("program", EXAMPLE, "--what", "compile-phases")
    assert code == 0, err
    assert "HLO passes" in out and "compile" in out


def test_xla_flags_unknown_refused_by_name_and_known_recorded():
    code, _, err = run_cli("passes", "--program", EXAMPLE, "--xla-flags=--xla_no_such_thing=1")
    assert code == 2 and "xla_no_such_thing" in err
    code, _, err = run_cli("passes", "--program", EXAMPLE, "--xla-flags=--xla_cpu_enable_fast_math=maybe")
    assert code == 2 and "xla_cpu_enable_fast_math" in err
    code, out, err = run_cli("passes", "--program", EXAMPLE, "--xla-flags=--xla_disable_hlo_passes=algsimp",
                             "--list", "--json")
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    assert not any(r["pass"] == "algsimp" for r in rows)  # the flag reached XLA: algsimp never ran


def test_passes_compare_prefill_decode(model):
    code, out, err = run_cli("passes", "--model", model, "--compare", "prefill,decode")
    assert code == 0, err
    assert "prefill" in out.splitlines()[0] and "decode" in out.splitlines()[0]
    assert "instructions (final)" in out and "final modules:" in out and "+++ " in out
    code, out, err = run_cli("passes", "--model", model, "--compare", "decode,flags",
                             "--xla-flags=--xla_disable_hlo_passes=fusion", "--json")
    assert code == 0, err
    c = json.loads(out)
    assert c["labels"] == ["decode", "decode + flags"] and c["options"][1] == {"xla_disable_hlo_passes": "fusion"}
    fusions = dict((r[0], r[1:]) for r in c["counts"])["fusions (final)"]
    assert fusions[0] != fusions[1]
    code, _, err = run_cli("passes", "--model", model, "--compare", "decode,train")
    assert code == 2 and "train" in err
