"""``--device`` on the command line (issue 30), on this CPU-only machine: a missing platform is one clear
line with exit status 2, a mode its device cannot run is refused by name before the model loads, and the
device is in the text and the ``--json`` lines."""

from __future__ import annotations

import io
import json

import jax
import pytest

from app.cli import main
from app.cli.parser import build_parser


def run_cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("command", ["generate", "race", "inspect", "profile", "passes"])
def test_every_model_command_takes_device(command):
    args = build_parser().parse_args([command, "--device", "cpu"])
    assert args.device == "cpu"
    assert build_parser().parse_args([command]).device is None  # JAX's default backend


def test_unknown_device_is_a_usage_error():
    with pytest.raises(SystemExit) as info:
        build_parser().parse_args(["generate", "--device", "quantum"])
    assert info.value.code == 2


@pytest.mark.parametrize("command", ["generate", "race", "profile"])
def test_device_gpu_without_a_gpu_is_one_clear_line(command, model_dirs):
    code, out, err = run_cli(command, "--model", model_dirs("llama"), "--device", "gpu", "--max-new-tokens", "2")
    assert code == 2 and out == ""
    assert err.startswith("error: --device gpu: JAX has no gpu platform on this machine (it has: cpu")
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "[loading]" not in err  # refused before the slow load


def _fake_tpu(monkeypatch):
    from app.core.engine import device as device_lib

    tpu = device_lib.Device("tpu", jax.devices()[0], None, "TPU v5 lite (tpu:0)", None)
    monkeypatch.setattr(device_lib, "resolve_device", lambda platform=None: tpu)
    monkeypatch.setattr("app.cli.common.resolve_device", lambda platform=None: tpu)  # the CLI's own name for it
    return tpu


@pytest.mark.parametrize("argv", [["generate", "--mode", "torch"], ["race", "--modes", "jit-static", "torch-compile"]])
def test_a_mode_the_device_cannot_run_is_refused_by_name(monkeypatch, model_dirs, argv):
    _fake_tpu(monkeypatch)
    code, _, err = run_cli(*argv, "--model", model_dirs("llama"), "--device", "tpu", "--max-new-tokens", "2")
    mode = argv[-1]
    assert code == 2 and "Traceback" not in err
    assert f"error: Mode {mode!r} cannot run on the tpu device (PyTorch has no TPU device" in err
    assert "[loading]" not in err


def test_race_defaults_to_the_modes_of_the_device(monkeypatch, model_dirs):
    _fake_tpu(monkeypatch)
    code, out, err = run_cli("race", "--model", model_dirs("llama"), "--device", "tpu", "--max-new-tokens", "2",
                             "--eager-tokens", "1", "--json", "--no-steady")  # torchax-eager: its prefill alone
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    from app.core.mode_catalog import modes_on

    assert [r["mode"] for r in rows] == list(modes_on("tpu"))  # the JAX modes: no PyTorch device on a TPU
    assert "torch" not in [r["mode"] for r in rows] and "jit-static" in [r["mode"] for r in rows]
    assert {r["device"] for r in rows} == {"TPU v5 lite (tpu:0)"}


def test_generate_names_the_device(model_dirs):
    code, out, err = run_cli("generate", "--model", model_dirs("llama"), "--device", "cpu", "--max-new-tokens", "3",
                             "--mode", "torch")
    assert code == 0, err
    assert "[device] device cpu" in err
    assert out.rstrip().endswith("device cpu")


def test_generate_json_lines_carry_the_device(model_dirs):
    code, out, err = run_cli("generate", "--model", model_dirs("llama"), "--device", "cpu", "--max-new-tokens", "3",
                             "--json", "--ignore-eos")
    assert code == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    calls = [x for x in lines if x["event"] == "call"]
    assert len(calls) == 3 and {c["device"] for c in calls} == {"cpu"}
    assert lines[-1]["event"] == "summary" and lines[-1]["device"] == "cpu"
