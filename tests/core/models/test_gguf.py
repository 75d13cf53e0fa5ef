"""GGUF model source, conversion cache, model-kind refusals, chat helpers and the repetition penalty.

The GGUF files are written here by gguf-py's ``GGUFWriter`` from a tiny random Llama, with the key and tensor
names transformers' GGUF loader reads (transformers/integrations/ggml.py ``GGUF_CONFIG_MAPPING["llama"]``,
gguf-py's ``TensorNameMap``) and llama.cpp's Q/K row permutation, which transformers reverses
(``LlamaTensorProcessor`` in transformers/modeling_gguf_pytorch_utils.py). Nothing touches the network.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import build_tokenizer

from app.core import errors
from app.core.engine import chat
from app.core.engine.engine import load_engine
from app.core.events import PhaseEvent, TokenEvent
from app.core.models import gguf as gguf_lib
from app.core.models.sources import (
    check_model_kind,
    gguf_path,
    load_config,
    load_model,
    parameter_count,
    parse_model,
)
from app.core.settings import GenerationSettings

HIDDEN, FFN, LAYERS, HEADS, KV_HEADS, VOCAB = 64, 128, 2, 4, 2, 320
CHATML = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + "
    "'<|im_end|>\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
PROMPT = "The jit function traces"


def _permute(w: np.ndarray, n_head: int) -> np.ndarray:
    """llama.cpp's convert_hf_to_gguf.py ``LlamaModel.permute`` of Q/K rows (rotary halves interleaved)."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def _gguf_tensors(model, layer_types):
    """``(gguf name, float32 array in HF layout, ggml type, heads to permute or None)`` for each weight."""
    import gguf

    sd = {k: v.detach().float().numpy() for k, v in model.state_dict().items()}
    q8, f32 = gguf.GGMLQuantizationType.Q8_0, gguf.GGMLQuantizationType.F32
    out = [("token_embd.weight", sd["model.embed_tokens.weight"], q8, None)]
    for i in range(LAYERS):
        p = f"model.layers.{i}."
        out += [
            (f"blk.{i}.attn_norm.weight", sd[p + "input_layernorm.weight"], f32, None),
            (f"blk.{i}.attn_q.weight", sd[p + "self_attn.q_proj.weight"], layer_types["attn"], HEADS),
            (f"blk.{i}.attn_k.weight", sd[p + "self_attn.k_proj.weight"], layer_types["attn"], KV_HEADS),
            (f"blk.{i}.attn_v.weight", sd[p + "self_attn.v_proj.weight"], layer_types["attn"], None),
            (f"blk.{i}.attn_output.weight", sd[p + "self_attn.o_proj.weight"], layer_types["attn"], None),
            (f"blk.{i}.ffn_norm.weight", sd[p + "post_attention_layernorm.weight"], f32, None),
            (f"blk.{i}.ffn_gate.weight", sd[p + "mlp.gate_proj.weight"], layer_types["ffn"], None),
            (f"blk.{i}.ffn_up.weight", sd[p + "mlp.up_proj.weight"], layer_types["ffn"], None),
            (f"blk.{i}.ffn_down.weight", sd[p + "mlp.down_proj.weight"], layer_types["ffn"], None),
        ]
    out.append(("output_norm.weight", sd["model.norm.weight"], f32, None))
    if not model.config.tie_word_embeddings:
        out.append(("output.weight", sd["lm_head.weight"], q8, None))
    return out


def write_tiny_gguf(path: Path, tokenizer_dir: Path, arch: str = "llama", extra_tensor=None):
    """Write a tiny random Llama as GGUF (Q8_0 attention and embeddings, F16 MLP, F32 norms, untied head).

    Returns the reference ``LlamaForCausalLM`` holding exactly the dequantized weights the file stores."""
    import gguf
    from transformers import AutoConfig, AutoModelForCausalLM

    tok = build_tokenizer(tokenizer_dir)
    config = AutoConfig.for_model(
        "llama", vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=FFN, num_hidden_layers=LAYERS,
        num_attention_heads=HEADS, num_key_value_heads=KV_HEADS, max_position_embeddings=256, rms_norm_eps=1e-6,
        rope_theta=10000.0, tie_word_embeddings=False, bos_token_id=0, eos_token_id=0,
    )
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config).eval()
    w = gguf.GGUFWriter(str(path), arch)
    w.add_name("Tiny Llama Test")
    w.add_context_length(256)
    w.add_embedding_length(HIDDEN)
    w.add_block_count(LAYERS)
    w.add_feed_forward_length(FFN)
    w.add_head_count(HEADS)
    w.add_head_count_kv(KV_HEADS)
    w.add_rope_dimension_count(HIDDEN // HEADS)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_vocab_size(VOCAB)
    _add_tokenizer(w, tok)
    reference = {}
    types = {"attn": gguf.GGMLQuantizationType.Q8_0, "ffn": gguf.GGMLQuantizationType.F16}
    for name, array, qtype, heads in _gguf_tensors(model, types):
        stored = _permute(array, heads) if heads else array
        data = _encode(stored, qtype)
        w.add_tensor(name, data, raw_dtype=qtype if qtype.name.startswith("Q") else None)
        reference[name] = _decode(data, qtype, array.shape, heads)
    if extra_tensor is not None:
        w.add_tensor(*extra_tensor[:2], raw_dtype=extra_tensor[2])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    _load_reference(model, reference)
    return model


def _add_tokenizer(w, tok) -> None:
    vocab = tok.convert_ids_to_tokens(list(range(len(tok))))
    merges = json.loads(tok.backend_tokenizer.to_str())["model"]["merges"]
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt2")
    w.add_token_list(vocab)
    w.add_token_types([3 if t == "<|endoftext|>" else 1 for t in vocab])  # 3 = CONTROL
    w.add_token_merges([m if isinstance(m, str) else " ".join(m) for m in merges])
    w.add_bos_token_id(0)
    w.add_eos_token_id(0)
    w.add_chat_template(CHATML)


def _encode(array: np.ndarray, qtype):
    import gguf

    if qtype == gguf.GGMLQuantizationType.F16:
        return array.astype(np.float16)
    if qtype == gguf.GGMLQuantizationType.F32:
        return array.astype(np.float32)
    return gguf.quantize(array.astype(np.float32), qtype)


def _decode(data: np.ndarray, qtype, shape, heads) -> np.ndarray:
    """What the file holds, back in HF layout (permutation and quantization are both per row)."""
    import gguf

    values = gguf.dequantize(data, qtype).reshape(shape).astype(np.float32)
    if heads:  # undo the permutation: the inverse of llama.cpp's permute
        values = values.reshape(heads, values.shape[0] // heads // 2, 2, *shape[1:]).swapaxes(1, 2).reshape(shape)
    return values


def _load_reference(model, reference: dict[str, np.ndarray]) -> None:
    names = {"token_embd.weight": "model.embed_tokens.weight", "output_norm.weight": "model.norm.weight",
             "output.weight": "lm_head.weight"}
    parts = {"attn_norm": "input_layernorm", "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj",
             "attn_v": "self_attn.v_proj", "attn_output": "self_attn.o_proj", "ffn_norm": "post_attention_layernorm",
             "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj", "ffn_down": "mlp.down_proj"}
    state = {}
    for name, values in reference.items():
        if name.startswith("blk."):
            _, i, part, _ = name.split(".")
            state[f"model.layers.{i}.{parts[part]}.weight"] = torch.from_numpy(values)
        else:
            state[names[name]] = torch.from_numpy(values)
    missing, unexpected = model.load_state_dict(state, strict=False)
    assert not unexpected and all("rotary" in k for k in missing), (missing, unexpected)


def reference_greedy(model, ids: list[int], n: int) -> list[int]:
    """Greedy tokens of the PyTorch HF model, full forward per step (no cache)."""
    out = list(ids)
    with torch.no_grad():
        for _ in range(n):
            logits = model(torch.tensor([out])).logits[0, -1]
            out.append(int(torch.argmax(logits)))
    return out[len(ids):]


def greedy_tokens(engine, prompt: str, mode: str, n: int = 8) -> list[int]:
    settings = GenerationSettings(mode=mode, max_new_tokens=n, stop_at_eos=False)
    return [e.token_id for e in engine.generate(prompt, settings) if isinstance(e, TokenEvent)]


# -- fixtures ----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """``(gguf path, reference model, cache root)`` with the conversion cache in a module temp dir."""
    folder = tmp_path_factory.mktemp("tiny-gguf")
    path = folder / "tiny-llama.Q8_0.gguf"
    reference = write_tiny_gguf(path, tmp_path_factory.mktemp("tok"))
    cache = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(gguf_lib.CACHE_ENV, str(cache))
        yield path, reference, cache


@pytest.fixture(scope="module")
def tiny_engine(tiny):
    """The engine on the tiny GGUF (first load: converts) and the progress messages it reported."""
    messages: list[str] = []
    engine = load_engine(str(tiny[0]), on_event=lambda e: messages.append(e.detail) if isinstance(e, PhaseEvent) else None)
    return engine, messages


# -- header, sources, support checks ------------------------------------------------------------------------
def test_header_reader_agrees_with_gguf_reader(tiny):
    import gguf

    info = gguf_lib.read_info(tiny[0])
    reader = gguf.GGUFReader(tiny[0])
    assert info.data_start == reader.data_offset
    assert info.architecture == "llama" and info.general_name == "Tiny Llama Test" and info.tokenizer_pre == "gpt2"
    counts = {}
    for t in reader.tensors:
        counts[t.tensor_type.name] = counts.get(t.tensor_type.name, 0) + 1
    assert {name: n for name, n, _ in info.tensor_types} == counts == {"Q8_0": 10, "F16": 6, "F32": 5}
    assert info.quant == "Q8_0" and info.name == "tiny-llama"
    assert parse_model(str(tiny[0])).label == "tiny-llama · Q8_0 → float32"
    assert parse_model(str(tiny[0]), "bfloat16").label == "tiny-llama · Q8_0 → bfloat16"


def test_parse_model_accepts_gguf_files_folders_and_hub_files(tiny, tmp_path):
    path = tiny[0]
    spec = parse_model(str(path))
    assert spec.kind == "gguf" and spec.source == str(path.resolve()) and spec.is_gguf
    assert hash(spec) == hash(parse_model(str(path)))  # frozen and hashable, usable as a dict key
    assert parse_model(str(path.parent)) == spec  # a folder holding one .gguf and no config.json
    for i in range(2):
        (tmp_path / f"m{i}.gguf").write_bytes(b"")
    with pytest.raises(errors.ModelNotFoundError, match="2 GGUF files"):
        parse_model(str(tmp_path))
    with pytest.raises(errors.ModelNotFoundError, match="does not exist"):
        parse_model(str(tmp_path / "missing.gguf"))
    hub = parse_model("someone/tiny-GGUF:tiny.Q8_0.gguf")
    assert hub.kind == "gguf" and hub.label == "tiny · GGUF → float32"  # not downloaded: named after the file


def test_hub_gguf_resolves_from_the_local_hf_cache_and_fails_offline_with_a_hint(tiny, tmp_path, monkeypatch):
    from huggingface_hub import constants

    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hub" / "models--someone--tiny-GGUF"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    (repo / "snapshots" / commit).mkdir(parents=True)
    (repo / "blobs").mkdir()
    shutil.copy(tiny[0], repo / "blobs" / "5eedb10b")  # the hub cache's layout: a snapshot links to a blob
    os.symlink("../../blobs/5eedb10b", repo / "snapshots" / commit / "tiny.Q8_0.gguf")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    spec = parse_model("someone/tiny-GGUF:tiny.Q8_0.gguf")
    assert gguf_path(spec) == repo / "snapshots" / commit / "tiny.Q8_0.gguf"
    assert spec.label == "tiny · Q8_0 → float32"  # named after the hub file, not the blob
    assert load_config(spec).num_hidden_layers == LAYERS
    with pytest.raises(errors.ModelNotFoundError, match="hf download someone/tiny-GGUF other.gguf"):
        load_config(parse_model("someone/tiny-GGUF:other.gguf"))


def test_unsupported_architecture_and_quant_type_are_refused_by_name(tmp_path):
    import gguf

    arch_file = tmp_path / "fancy.gguf"
    write_tiny_gguf(arch_file, tmp_path / "t1", arch="fancyarch")
    with pytest.raises(errors.UnsupportedModelError, match="architecture 'fancyarch'"):
        load_config(parse_model(str(arch_file)))
    q81 = gguf.GGMLQuantizationType.Q8_1  # gguf-py has no dequantizer for it
    odd = tmp_path / "odd.gguf"
    block = np.zeros((2, gguf.GGML_QUANT_SIZES[q81][1]), np.uint8)
    write_tiny_gguf(odd, tmp_path / "t2", extra_tensor=("blk.0.odd.weight", block, q81))
    with pytest.raises(errors.UnsupportedModelError, match=r"type Q8_1 \(1 tensors\)"):
        load_model(parse_model(str(odd)))
    not_gguf = tmp_path / "x.gguf"
    not_gguf.write_bytes(b"not a gguf file at all, just text" * 4)
    with pytest.raises(errors.ModelNotFoundError, match="not a readable GGUF"):
        load_config(parse_model(str(not_gguf)))


# -- loading, the conversion cache, tokens -----------------------------------------------------------------
def test_tiny_gguf_greedy_tokens_equal_torch_jit_static_and_hf(tiny, tiny_engine):
    engine, messages = tiny_engine
    _, reference, _ = tiny
    assert any(m.startswith("dequantizing 21/21 tensors") for m in messages), messages
    assert "loading from conversion cache" in messages
    converted = engine.model.state_dict()
    for name, value in reference.state_dict().items():  # dequantized, Q/K un-permuted: bit for bit
        torch.testing.assert_close(converted[name], value, rtol=0, atol=0)
    ids = engine.encode(PROMPT)
    expected = reference_greedy(reference, ids, 8)
    assert greedy_tokens(engine, PROMPT, "torch") == expected
    assert greedy_tokens(engine, PROMPT, "jit-static") == expected
    assert engine.label == "tiny-llama · Q8_0 → float32"


def test_conversion_cache_is_a_plain_hf_folder_and_the_second_load_hits_it(tiny, tiny_engine):
    from safetensors import safe_open

    path, _, cache = tiny
    folders = [p for p in (cache / "gguf").iterdir()]
    assert [p.name.split("-")[0] for p in folders] == ["tiny"] and not any(p.name.startswith(".tmp") for p in folders)
    folder = folders[0]
    names = {p.name for p in folder.iterdir()}
    assert {"model.safetensors", "config.json", "generation_config.json", "tokenizer.json", "chat_template.jinja",
            "gguf_source.json"} <= names
    with safe_open(str(folder / "model.safetensors"), "pt") as f:
        assert "lm_head.weight" in f.keys()  # untied head: kept
    assert "quantization_config" not in json.loads((folder / "config.json").read_text())
    messages: list[str] = []
    loaded = load_model(parse_model(str(path)), on_progress=messages.append)
    assert messages[-1] == "loading from conversion cache"
    assert not any("dequantizing" in m for m in messages)
    torch.testing.assert_close(loaded.model.state_dict(), tiny_engine[0].model.state_dict(), rtol=0, atol=0)


def test_shared_parsing_parses_a_files_metadata_once_and_hands_each_caller_its_own_copy(tiny, monkeypatch):
    """Within ``shared_parsing`` the config's and the tokenizer's ``load_gguf_checkpoint(return_tensors=False)``
    parse the file once; each gets a copy (transformers pops keys from it); the block restores the original."""
    from transformers import modeling_gguf_pytorch_utils as hf_gguf

    calls: list[bool] = []
    original = hf_gguf.load_gguf_checkpoint

    def counting(path, return_tensors=False, *args, **kwargs):
        calls.append(return_tensors)
        return original(path, return_tensors, *args, **kwargs)

    monkeypatch.setattr(hf_gguf, "load_gguf_checkpoint", counting)
    with gguf_lib.shared_parsing():
        first = hf_gguf.load_gguf_checkpoint(str(tiny[0]), return_tensors=False)
        first["config"].pop("model_type")
        second = hf_gguf.load_gguf_checkpoint(tiny[0], return_tensors=False)
    assert calls == [False]
    assert second["config"]["model_type"] == "llama" and second["tokenizer"]["tokens"] == first["tokenizer"]["tokens"]
    assert hf_gguf.load_gguf_checkpoint is counting


def test_a_failed_conversion_leaves_no_folder_and_stale_temps_are_removed(tmp_path, monkeypatch):
    import safetensors.torch

    path = tmp_path / "m.gguf"
    write_tiny_gguf(path, tmp_path / "tok")
    monkeypatch.setenv(gguf_lib.CACHE_ENV, str(tmp_path / "cache"))
    root = tmp_path / "cache" / "gguf"
    stale = root / ".tmp-m-0123-999999999-abcdef12"  # a pid that cannot exist: a killed conversion
    stale.mkdir(parents=True)

    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(safetensors.torch, "save_file", disk_full)
    with pytest.raises(errors.ModelNotFoundError, match=f"No space left.*{gguf_lib.CACHE_ENV}"):
        load_model(parse_model(str(path)))
    assert list(root.iterdir()) == []


# -- model kinds --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "model_type, kind",
    [("bert", "encoder with a language-modelling head"), ("roberta", "encoder with a language-modelling head"),
     ("t5", "encoder-decoder"), ("bart", "encoder-decoder"), ("llava", "multimodal"), ("qwen2_vl", "multimodal"),
     ("gemma3", "multimodal model .* Gemma3ForConditionalGeneration")],
)
def test_non_decoder_models_are_refused_before_loading_weights(tmp_path, model_type, kind):
    from transformers import AutoConfig

    config = AutoConfig.for_model(model_type)
    config.save_pretrained(tmp_path)
    with pytest.raises(errors.UnsupportedModelError, match=kind):
        load_config(parse_model(str(tmp_path)))  # a folder: no weights in it at all
    with pytest.raises(errors.UnsupportedModelError, match=kind):
        load_config(parse_model(f"random:{tmp_path / 'config.json'}"))
    with pytest.raises(errors.UnsupportedModelError, match=kind):
        parameter_count(config)


def test_decoder_only_configs_pass_the_kind_check():
    from transformers import AutoConfig

    for model_type in ("llama", "gpt2", "qwen2", "gemma3_text", "mistral", "phi3"):
        check_model_kind(AutoConfig.for_model(model_type))


# -- chat helpers and repetition penalty ---------------------------------------------------------------------
def test_chat_helpers_on_a_templated_and_a_plain_tokenizer(tiny_engine, tmp_path):
    tok = tiny_engine[0].tokenizer
    assert chat.has_chat_template(tok)
    assert chat.format_chat(tok, "Hi") == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    assert chat.format_chat(tok, "Hi", system="Be brief.").startswith("<|im_start|>system\nBe brief.<|im_end|>\n")
    assert chat.end_of_turn_ids(tok, tiny_engine[0].config, tiny_engine[0].model.generation_config) == [0]
    plain = build_tokenizer(tmp_path)
    assert not chat.has_chat_template(plain) and not chat.is_instruct("Qwen2.5-0.5B-Instruct", plain)
    with pytest.raises(errors.InvalidSettingsError, match="no chat template"):
        chat.format_chat(plain, "Hi")
    assert chat.is_instruct("smollm2-135m-instruct") and chat.is_instruct("google/gemma-2-2b-it")
    assert chat.is_instruct("SmolLM2-135M-Instruct · Q4_1 → float32", tok)
    assert not chat.is_instruct("gpt2") and not chat.is_instruct("pydoc-llama") and not chat.is_instruct("tiny-llama", tok)


@pytest.mark.parametrize("penalty", [1.0, 1.3, 0.7])
def test_repetition_penalty_matches_transformers(penalty):
    import jax
    import jax.numpy as jnp
    from transformers import RepetitionPenaltyLogitsProcessor

    from app.core.runtime.sampling import apply_repetition_penalty

    rng = np.random.default_rng(0)
    logits = rng.normal(0, 3, size=(3, 50)).astype(np.float32)
    ids = rng.integers(0, 50, size=(3, 7))
    seen = np.zeros((3, 50), bool)
    np.put_along_axis(seen, ids, True, axis=1)
    expected = RepetitionPenaltyLogitsProcessor(penalty)(torch.from_numpy(ids), torch.from_numpy(logits.copy()))
    got = jax.jit(apply_repetition_penalty)(jnp.asarray(logits), jnp.asarray(seen), jnp.float32(penalty))
    np.testing.assert_array_equal(np.asarray(got), expected.numpy())
    if penalty == 1.0:
        np.testing.assert_array_equal(np.asarray(got), logits)
