"""The device of a run (issue 30) on this CPU-only machine: choosing it, the catalog's mode-on-device rules, a
run placed off JAX's default device (a second simulated CPU device), and the device in every record."""

from __future__ import annotations

import json

import jax
import pytest

from app.core.engine.device import Device, device_copy_bandwidth_gbs, resolve_device
from app.core.errors import InvalidSettingsError
from app.core.events import CallRecord, FinishedEvent
from app.core.mode_catalog import CATALOG, PLATFORMS, check_runs_on, mode_info, modes_on
from app.core.settings import DEVICES, GenerationSettings

PROMPT = "The jit function"


def fake_device(platform: str, torch_device: str | None, label: str) -> Device:
    """A :class:`Device` of another platform, run on this machine's CPU (its rules are what is tested)."""
    return Device(platform, jax.devices()[0], torch_device, label, label if torch_device else None)


def test_default_device_is_jax_default_backend():
    device = resolve_device()
    assert device.platform == jax.default_backend() == "cpu"
    assert device.jax_device == jax.devices()[0] and device.is_default
    assert device.torch_device == "cpu" and device.label == "cpu" and device.torch_label == "cpu"
    assert resolve_device("cpu") == device
    assert DEVICES == PLATFORMS == ("cpu", "gpu", "tpu")


@pytest.mark.parametrize("platform", ["gpu", "tpu"])
def test_a_missing_platform_is_named(platform):
    with pytest.raises(InvalidSettingsError) as info:
        resolve_device(platform)
    text = str(info.value)
    assert f"--device {platform}: JAX has no {platform} platform" in text and "(it has: cpu" in text


def test_jax_platforms_is_named_when_set(monkeypatch):
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")
    with pytest.raises(InvalidSettingsError, match="JAX_PLATFORMS='cpu'"):
        resolve_device("gpu")


def test_unknown_device_name():
    with pytest.raises(InvalidSettingsError, match="Unknown device 'quantum'"):
        resolve_device("quantum")


def test_catalog_rules():
    for info in CATALOG:
        assert info.devices and set(info.devices) <= set(PLATFORMS)
        assert info.framework in ("jax", "torch")
        assert "cpu" in info.devices and "gpu" in info.devices  # every mode runs on a CPU and on a GPU
    assert {i.name for i in CATALOG if i.framework == "torch"} == {"torch", "torch-compile"}
    assert modes_on("tpu") == ("torchax-eager", "jit-dynamic", "jit-static", "jit-loop")
    assert modes_on("gpu") == tuple(i.name for i in CATALOG)
    assert "reduce-overhead" in mode_info("torch-compile").help and "CUDA graphs" in mode_info("torch-compile").help


@pytest.mark.parametrize("mode", ["torch", "torch-compile"])
def test_a_pytorch_mode_is_refused_on_tpu_by_name(mode):
    with pytest.raises(InvalidSettingsError) as info:
        check_runs_on(mode, "tpu")
    text = str(info.value)
    assert f"Mode {mode!r} cannot run on the tpu device" in text and "no TPU device" in text
    assert "jit-static" in text  # what runs there instead
    check_runs_on(mode, "gpu")
    check_runs_on(mode, "cpu")


def test_device_check_refuses_pytorch_modes_without_a_torch_device():
    gpu = fake_device("gpu", None, "NVIDIA H100 80GB HBM3 (gpu:0)")  # a CPU-only torch build beside jax[cuda]
    with pytest.raises(InvalidSettingsError, match=r"Mode 'torch' cannot run on the gpu device.*cuda.is_available"):
        gpu.check("torch")
    gpu.check("jit-static")
    gpu.check("torchax-eager")
    cuda = Device("gpu", jax.devices()[0], "cuda:0", "NVIDIA H100 80GB HBM3 (gpu:0)", "NVIDIA H100 80GB HBM3 (cuda:0)")
    assert cuda.label_for("torch") == "NVIDIA H100 80GB HBM3 (cuda:0)"
    assert cuda.label_for("torch-compile").endswith("(cuda:0)")
    assert cuda.label_for("jit-static") == cuda.label_for("torchax-eager") == "NVIDIA H100 80GB HBM3 (gpu:0)"


def test_engine_refuses_a_mode_its_device_cannot_run(llama_engine, monkeypatch):
    monkeypatch.setattr(llama_engine, "device", fake_device("tpu", None, "TPU v5 lite (tpu:0)"))
    with pytest.raises(InvalidSettingsError, match="Mode 'torch' cannot run on the tpu device"):
        next(llama_engine.generate(PROMPT, GenerationSettings(mode="torch", max_new_tokens=2)))
    events = list(llama_engine.generate(PROMPT, GenerationSettings(mode="jit-static", max_new_tokens=2)))
    records = [e for e in events if isinstance(e, CallRecord)]
    assert records and all(r.device == "TPU v5 lite (tpu:0)" for r in records)


@pytest.mark.parametrize("mode", ["torch", "jit-static"])
def test_records_summary_and_json_carry_the_device(llama_engine, mode):
    events = list(llama_engine.generate(PROMPT, GenerationSettings(mode=mode, max_new_tokens=3, stop_at_eos=False)))
    records = [e for e in events if isinstance(e, CallRecord)]
    finished = events[-1]
    assert isinstance(finished, FinishedEvent)
    assert [r.device for r in records] == ["cpu"] * 3
    assert finished.summary.device == finished.device == "cpu"
    assert json.loads(json.dumps(records[0].to_json()))["device"] == "cpu"
    assert finished.to_json()["summary"]["device"] == "cpu"


def test_old_records_without_a_device_still_load():
    from app.core.events import Summary

    record = CallRecord(0, "prefill", "torch", {}, 1.0, 1.0)
    assert record.device == ""
    assert Summary.from_records("torch", [record], 1, 1.0, 1.0).device == ""


def test_a_run_placed_off_the_default_device(model_dirs, llama_engine):
    """A :class:`Device` that is not JAX's default (what ``--device cpu`` is on a GPU machine): the weights and
    cache live there, every JAX mode runs there, and the tokens are those of the default device."""
    from app.core.engine.engine import Engine
    from app.core.models.sources import load_model, parse_model
    from app.core.parallel.mesh import uncommit_torchax_key

    second = jax.devices()[1]
    device = Device("cpu", second, "cpu", "cpu:1", "cpu", is_default=False)
    engine = Engine(load_model(parse_model(model_dirs("llama"))), device)
    try:
        weights, _ = engine.jax_state()
        assert all(w.devices() == {second} for w in jax.tree.leaves(weights))
        template = engine.static_cache(64)
        assert all(leaf.devices() == {second} for leaf in jax.tree.leaves(template))
        def settings(mode: str, n_new: int) -> GenerationSettings:
            return GenerationSettings(mode=mode, max_new_tokens=n_new, stop_at_eos=False, capture_ir=False)

        # the default device's greedy tokens (greedy tokens are the same in every mode: test_architectures)
        there = list(llama_engine.generate(PROMPT, settings("jit-static", 3)))[-1].token_ids
        # torchax-eager compiles each op of every new shape for its device, none shared with the default device's
        # (59 s of XLA compiles for the prefill and one decode step on a loaded machine, 6 Dec): the prefill shows
        # its ops placed there; jit-static's decode steps show the cache there
        for mode, n_new in (("jit-static", 3), ("torchax-eager", 1)):
            here = list(engine.generate(PROMPT, settings(mode, n_new)))
            assert here[-1].token_ids == there[:n_new]
            assert {e.device for e in here if isinstance(e, CallRecord)} == {"cpu:1"}
        with pytest.raises(InvalidSettingsError, match="mesh"):
            from app.core.parallel.mesh import parse_mesh

            engine.set_mesh(parse_mesh("tp=2"))
    finally:
        uncommit_torchax_key()


def test_random_weights_unchanged_on_the_cpu(model_dirs):
    """``init_device`` (CUDA on a GPU) leaves the seeded CPU init as it was: the same weights with and without
    a CPU init device. Random weights from the tiny Llama's config (the init of a 124 M-parameter preset, twice,
    cost seconds and showed nothing more)."""
    import torch

    from app.core.models.sources import load_model, parse_model

    spec = parse_model("random:" + model_dirs("llama") + "/config.json")
    assert spec.random_weights
    plain = load_model(spec).model.state_dict()
    on_cpu = load_model(spec, init_device="cpu").model.state_dict()
    for name in ("model.layers.0.self_attn.q_proj.weight", "model.embed_tokens.weight"):
        assert torch.equal(plain[name], on_cpu[name]) and plain[name].device.type == "cpu"


def test_device_copy_bandwidth_is_positive():
    gbs = device_copy_bandwidth_gbs(jax.devices()[0], nbytes=1 << 24, repeats=2)
    assert 0.1 < gbs < 10_000
