"""Engine behaviour: compile counts, buckets, stop, streaming text, sampling, and every bad input."""

from __future__ import annotations

import pytest

from app.core import errors
from app.core.engine.detok import IncrementalDetokenizer
from app.core.engine.engine import load_engine
from app.core.events import CallRecord, FinishedEvent, IREvent, PhaseEvent, PromptEvent, TokenEvent
from app.core.settings import GenerationSettings


def run(engine, prompt="The jit function", **settings):
    return list(engine.generate(prompt, GenerationSettings(**settings)))


def of(events, cls):
    return [e for e in events if isinstance(e, cls)]


def test_jit_static_compiles_exactly_twice_for_30_tokens(llama_engine):
    llama_engine.clear_compiled()
    events = run(llama_engine, max_new_tokens=30)
    calls = of(events, CallRecord)
    assert len(calls) == 30
    assert [c.index for c in calls if c.compiled] == [0, 1]
    assert calls[0].step == "prefill" and calls[0].compile_reason.startswith("first call")
    assert all(c.trace_ms > 0 and c.lower_ms > 0 and c.compile_ms > 0 for c in calls[:2])
    assert all(c.execute_ms > 0 and c.wall_ms >= c.execute_ms for c in calls)
    finished = events[-1]
    assert isinstance(finished, FinishedEvent) and finished.reason == "max_new_tokens"
    assert finished.summary.n_compiles == 2 and finished.summary.n_tokens == 30
    assert finished.summary.steady_decode_ms > 0 and finished.summary.ttft_ms > 0
    # A second run with the same shapes compiles nothing: the spike vanishes.
    again = of(run(llama_engine, max_new_tokens=30), CallRecord)
    assert not any(c.compiled for c in again)


def test_prompts_in_one_bucket_share_the_prefill_compile(llama_engine):
    llama_engine.clear_compiled()
    first = of(run(llama_engine, prompt="The jit", max_new_tokens=3), CallRecord)
    second = of(run(llama_engine, prompt="The jit function traces code", max_new_tokens=3), CallRecord)
    assert first[0].compiled and not second[0].compiled
    assert first[0].input_shapes["input_ids"] == second[0].input_shapes["input_ids"] == [1, 16]


def test_jit_dynamic_compiles_every_step_with_a_reason(llama_engine):
    calls = of(run(llama_engine, mode="jit-dynamic", max_new_tokens=3), CallRecord)  # prefill, 2 decode steps
    assert len(calls) == 3 and all(c.compiled for c in calls)
    assert "new input shape" in calls[2].compile_reason


def test_ir_captured_for_prefill_and_decode(llama_engine):
    llama_engine.clear_compiled()
    irs = {e.step: e.ir for e in run(llama_engine, max_new_tokens=3) if isinstance(e, IREvent)}
    assert set(irs) == {"prefill", "decode"}
    decode = irs["decode"]
    assert "dot_general" in decode.jaxpr and "aten::" in decode.jaxpr
    assert "modeling_llama.py" in decode.jaxpr_source
    assert "stablehlo.dot_general" in decode.stablehlo
    assert decode.hlo.startswith("HloModule")
    assert decode.cost["flops"] > 0 and decode.memory["argument"] > 0
    assert decode.n_equations > 50
    assert any("embed_tokens" in label for label in decode.input_labels)
    assert any("PRNG key" in label for label in decode.input_labels)


def test_phase_events_name_every_compile_phase(llama_engine):
    llama_engine.clear_compiled()
    phases = {(e.phase, e.started) for e in run(llama_engine, max_new_tokens=2) if isinstance(e, PhaseEvent)}
    for phase in ("tracing", "lowering", "compiling"):
        assert (phase, True) in phases and (phase, False) in phases


def test_stop_mid_run_returns_within_one_step_with_partial_text(llama_engine):
    seen = []
    gen = llama_engine.generate(
        "The jit function", GenerationSettings(max_new_tokens=40), should_stop=lambda: len(seen) >= 3
    )
    events = []
    for event in gen:
        events.append(event)
        if isinstance(event, TokenEvent):
            seen.append(event)
    finished = events[-1]
    assert finished.reason == "stopped"
    assert len(finished.token_ids) == 3
    assert finished.text == "".join(t.text for t in seen)


def test_sampling_is_seeded_and_identical_across_jitted_modes(llama_engine):
    kw = dict(max_new_tokens=3, temperature=0.9, top_k=50, top_p=0.95, seed=7)  # jit-dynamic compiles every step
    static = run(llama_engine, **kw)[-1].token_ids
    assert run(llama_engine, **kw)[-1].token_ids == static
    assert run(llama_engine, mode="jit-dynamic", **kw)[-1].token_ids == static
    assert run(llama_engine, mode="torch", **kw)[-1].token_ids == static
    other_seed = run(llama_engine, **{**kw, "seed": 8})[-1].token_ids
    assert other_seed != static


def test_top_k_one_is_greedy(llama_engine):
    greedy = run(llama_engine, max_new_tokens=6)[-1].token_ids
    assert run(llama_engine, max_new_tokens=6, temperature=1.0, top_k=1)[-1].token_ids == greedy


def test_cache_full_stops_with_its_reason(llama_engine):
    prompt_len = len(llama_engine.encode("The jit function"))
    events = run(llama_engine, max_new_tokens=100, max_cache_len=prompt_len + 4)
    finished = events[-1]
    assert finished.reason == "cache_full"
    assert len(finished.token_ids) == 5  # prefill token + one decode step per free slot
    prompt = next(e for e in events if isinstance(e, PromptEvent))
    assert prompt.new_tokens_cap == 5 and prompt.cache_len == prompt_len + 4  # said before the run
    from app.core.report.text import cap_note

    assert cap_note(prompt).startswith("Capped at 5 new tokens: the KV cache holds") and "asked for 100" in cap_note(prompt)
    fits = next(e for e in run(llama_engine, max_new_tokens=2) if isinstance(e, PromptEvent))
    assert fits.new_tokens_cap is None and cap_note(fits) == ""


def test_multibyte_characters_stream_intact(llama_engine):
    tok = llama_engine.tokenizer
    text = "café 日本語 🎉🚀 naïve"
    ids = tok.encode(text)
    assert len(ids) > len(text.split())  # characters really span several byte-level tokens
    detok = IncrementalDetokenizer(tok)
    deltas = [detok.push(i) for i in ids] + [detok.flush()]
    assert "".join(deltas) == text
    assert not any("\ufffd" in d for d in deltas)


@pytest.mark.parametrize(
    "settings, message",
    [
        (dict(temperature=-1.0), "Temperature"),
        (dict(top_p=0.0), "Top-p"),
        (dict(top_k=-2), "Top-k"),
        (dict(max_new_tokens=0), "Max new tokens"),
        (dict(mode="warp-speed"), "Unknown mode"),
        (dict(max_cache_len=100_000), "exceeds the model"),
    ],
)
def test_invalid_settings_raise_and_change_nothing(llama_engine, settings, message):
    with pytest.raises(errors.InvalidSettingsError, match=message):
        run(llama_engine, **settings)
    assert run(llama_engine, max_new_tokens=2)[-1].reason == "max_new_tokens"


def test_prompt_longer_than_cache(llama_engine):
    with pytest.raises(errors.PromptTooLongError, match="raise the KV cache length .* or shorten the prompt"):
        run(llama_engine, prompt="word " * 80, max_cache_len=32)


def test_model_errors_are_clear():
    with pytest.raises(errors.ModelNotFoundError, match="no-such-org/no-such-model"):
        load_engine("no-such-org/no-such-model")
    with pytest.raises(errors.ModelNotFoundError, match="does not exist"):
        load_engine("./definitely/not/here")
    with pytest.raises(errors.ModelNotFoundError, match="not a built-in model"):
        load_engine("bad id with spaces")


def test_folder_that_is_not_a_model(tmp_path):
    with pytest.raises(errors.ModelNotFoundError, match="not a Hugging Face model folder"):
        load_engine(str(tmp_path))


def test_not_enough_memory(model_dirs, monkeypatch):
    from app.core.models import size as model_size

    monkeypatch.setattr(model_size, "available_memory_bytes", lambda: 1000)
    with pytest.raises(errors.InsufficientMemoryError, match="only 0.0 GiB is free"):
        load_engine(model_dirs("llama"))


def test_missing_aten_lowering_names_the_op(llama_engine, monkeypatch):
    from torchax.tensor import OperatorNotFound

    from app.core.modes import jit as modes  # the default mode's module (jit-static)

    def no_lowering(*args, **kwargs):
        raise OperatorNotFound("Operator with name aten::frobnicate has no lowering")

    llama_engine.clear_compiled()
    monkeypatch.setattr(modes, "forward", no_lowering)
    with pytest.raises(errors.UnsupportedModelError, match="aten::frobnicate"):
        run(llama_engine, max_new_tokens=2)
    monkeypatch.undo()
    assert run(llama_engine, max_new_tokens=2)[-1].reason == "max_new_tokens"


def test_random_weights_from_a_config_are_labelled(model_dirs):
    engine = load_engine("random:" + model_dirs("gpt2") + "/config.json")
    assert engine.label.endswith("(random weights)")
    assert run(engine, max_new_tokens=3)[-1].summary.n_tokens == 3


def test_bfloat16_is_selectable_with_a_cpu_warning(model_dirs):
    engine = load_engine(model_dirs("llama"), dtype="bfloat16")
    assert any("bfloat16" in w for w in engine.warnings)
    assert engine.jax_state()[0]["model.embed_tokens.weight"].dtype.name == "bfloat16"
    assert run(engine, max_new_tokens=3)[-1].summary.n_tokens == 3


def test_ignore_eos_generates_the_requested_count(llama_engine, monkeypatch):
    finished = run(llama_engine, max_new_tokens=40, stop_at_eos=False)[-1]
    assert finished.reason == "max_new_tokens" and len(finished.token_ids) == 40
    eos = finished.token_ids[5]  # make a token this run produces the end token
    monkeypatch.setattr(llama_engine, "eos_ids", [eos])
    assert run(llama_engine, max_new_tokens=40, stop_at_eos=False)[-1].token_ids == finished.token_ids
    stopped = run(llama_engine, max_new_tokens=40)[-1]
    assert stopped.reason == "eos"
    assert stopped.token_ids == finished.token_ids[: finished.token_ids.index(eos) + 1]


def test_unreachable_hub_fails_fast_without_retries(monkeypatch):
    import time

    from app.core.models import sources as models

    monkeypatch.setattr(models, "hub_reachable", lambda timeout_s=3.0: False)
    t0 = time.perf_counter()
    with pytest.raises(errors.ModelNotFoundError, match="hf download someone/some-model"):
        load_engine("someone/some-model")
    assert time.perf_counter() - t0 < 10  # no 23 s of back-off


def test_non_causal_architecture_is_unsupported(tmp_path):
    from transformers import ViTConfig

    ViTConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64).save_pretrained(tmp_path)
    with pytest.raises(errors.UnsupportedModelError, match="not a causal language model"):
        load_engine(str(tmp_path))


def test_random_config_whose_eos_is_outside_its_vocabulary(tmp_path):
    import json

    config = dict(model_type="gpt2", n_layer=1, n_embd=32, n_head=2, n_positions=64, vocab_size=300,
                  eos_token_id=50256, bos_token_id=50256)
    (tmp_path / "config.json").write_text(json.dumps(config))
    engine = load_engine("random:" + str(tmp_path / "config.json"))
    assert engine.eos_ids == [] and engine.pad_id == 0
    assert run(engine, max_new_tokens=3)[-1].summary.n_tokens == 3


@pytest.mark.parametrize("mode", ["torch", "jit-static", "jit-dynamic"])
def test_repetition_penalty_matches_transformers_generate(llama_engine, mode):
    import torch

    # On this prompt the random model's greedy run repeats its first token (not a prompt token) at once, so the
    # penalty of a token the run generated changes the second token: 4 tokens show it (jit-dynamic compiles each)
    prompt = "The jit function traces"
    ids = llama_engine.encode(prompt)
    plain = run(llama_engine, prompt, mode=mode, max_new_tokens=4, stop_at_eos=False)[-1].token_ids
    ref = llama_engine.model.generate(
        torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long), max_new_tokens=4,
        do_sample=False, repetition_penalty=1.5, eos_token_id=None, pad_token_id=0,
    )[0, len(ids):].tolist()
    penalized = run(llama_engine, prompt, mode=mode, max_new_tokens=4, stop_at_eos=False, repetition_penalty=1.5)
    assert penalized[-1].token_ids == ref
    assert plain[1] == plain[0] not in ids and ref[1] != plain[1]  # the penalty of a generated token bit
