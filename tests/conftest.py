"""Shared fixtures: headless Qt, an offline config dir, and tiny Hugging Face models written to disk.

Every model here is built from a small config with random weights and saved with ``save_pretrained``, so
the engine loads it through the real ``from_pretrained`` path with no network.
"""

from __future__ import annotations

import os
import warnings

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Four simulated CPU devices for the mesh tests; must be set before JAX starts. Single-device runs use
# device 0 as before.
if "xla_force_host_platform_device_count" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4").strip()

import pytest  # noqa: E402

warnings.filterwarnings("ignore", category=FutureWarning)

CORPUS = [
    "The jit function traces a Python function into a jaxpr and compiles it with XLA.",
    "Returns the array of values along the given axis, with the same shape as the input.",
    "This module provides the attention layers, the cache and the decoding loop.",
    "Unicode text such as café, naïve, 日本語 and emoji 🎉🚀 must stream intact.",
] * 4

# Small configs, one per architecture family the engine promises (issue #2). Vocab 320 fits the tokenizer.
ARCH_CONFIGS = {
    "llama": dict(model_type="llama", hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256),
    "gpt2": dict(model_type="gpt2", n_embd=64, n_layer=2, n_head=4, n_positions=256),
    "qwen2": dict(model_type="qwen2", hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256),
    "mistral": dict(model_type="mistral", hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                    num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                    sliding_window=8),
    "gemma2": dict(model_type="gemma2", hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                   num_attention_heads=4, num_key_value_heads=2, head_dim=16, max_position_embeddings=256,
                   sliding_window=8),
    "opt": dict(model_type="opt", hidden_size=64, ffn_dim=128, num_hidden_layers=2, num_attention_heads=4,
                max_position_embeddings=256, word_embed_proj_dim=64),
    "phi3": dict(model_type="phi3", hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                 num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                 pad_token_id=0),
}


def build_tokenizer(path):
    """A byte-level BPE tokenizer (vocab 320) trained on CORPUS, saved as a HF fast tokenizer."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=320, special_tokens=["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(CORPUS, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>", bos_token="<|endoftext|>")
    fast.save_pretrained(path)
    return fast


def build_model_dir(path, arch: str, seed: int = 0, **overrides):
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    tok = build_tokenizer(path)
    kwargs = {**ARCH_CONFIGS[arch], **overrides}
    model_type = kwargs.pop("model_type")
    eos = tok.eos_token_id
    config = AutoConfig.for_model(model_type, vocab_size=320, bos_token_id=eos, eos_token_id=eos, **kwargs)
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config).eval()
    model.save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def model_dirs(tmp_path_factory):
    """``model_dirs(arch)`` → path of a saved tiny model of that architecture (built once per session)."""
    cache = {}

    def get(arch: str = "llama"):
        if arch not in cache:
            cache[arch] = build_model_dir(tmp_path_factory.mktemp(f"model-{arch}"), arch)
        return str(cache[arch])

    return get


@pytest.fixture(scope="session")
def llama_engine(model_dirs):
    """A loaded engine on the tiny Llama, shared by tests (compiled steps persist across them)."""
    from app.core.engine import load_engine

    return load_engine(model_dirs("llama"))
