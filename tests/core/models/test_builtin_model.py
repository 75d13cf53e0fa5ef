"""The built-in model in assets/models/pydoc-llama loads offline, predicts held-out text, and speaks words.

The held-out text and the training vocabulary are read from a fixed sample of the corpus
(tests/fixtures/pydoc_llama_sample.json, written by ``python tools/pydoc_corpus.py --write-test-sample``
from the pinned packages) instead of rebuilding the corpus (35-75 s): the same first held-out documents and
the same training words the model was trained and measured on.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

MODEL_DIR = Path(__file__).resolve().parents[3] / "assets" / "models" / "pydoc-llama"
# Measured on the shipped weights: 4.591 nats/token on the first 4,096 held-out tokens with Python 3.11's
# stdlib and jax 0.10.2 installed (see the model card), 4.677 with Python 3.12.1's and jax 0.12.0.1's: the
# held-out text is built from the installed packages' docstrings (tools/pydoc_corpus.py), so it moves with
# them. The margin absorbs that and numeric noise across CPUs / thread counts; uniform guessing is ln(vocab).
HELDOUT_SLICE_TOKENS = 4096
HELDOUT_LOSS_THRESHOLD = 4.75
PROMPTS = ("The jit function", "This module provides", "Returns the")
WORD_RE = re.compile(r"[a-z]+(?:'[a-z]+)?")


@pytest.fixture(scope="module")
def offline():
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("TRANSFORMERS_OFFLINE", "1")
        yield


@pytest.fixture(scope="module")
def model_and_tokenizer(offline):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(MODEL_DIR)
    tokenizer = AutoTokenizer.from_pretrained(MODEL_DIR)
    model.eval()
    return model, tokenizer


@pytest.fixture(scope="module")
def sample():
    """``{"heldout": [document text, ...], "train_words": [word, ...]}``: :data:`tools.pydoc_corpus.TEST_SAMPLE`."""
    import json

    from tools.pydoc_corpus import TEST_SAMPLE

    return json.loads(TEST_SAMPLE.read_text())


def test_folder_loads_offline_as_standard_llama(model_and_tokenizer):
    model, tokenizer = model_and_tokenizer
    assert model.config.model_type == "llama"
    assert type(model).__name__ == "LlamaForCausalLM"
    assert 2e6 <= sum(p.numel() for p in model.parameters()) <= 30e6
    assert next(model.parameters()).dtype == torch.float32
    assert tokenizer.eos_token == tokenizer.bos_token == "<|endoftext|>"
    assert model.config.eos_token_id == model.generation_config.eos_token_id == tokenizer.eos_token_id
    assert tokenizer.decode(tokenizer("Returns the sum.")["input_ids"], skip_special_tokens=True) == "Returns the sum."
    size = sum(p.stat().st_size for p in MODEL_DIR.iterdir() if p.is_file())
    assert size <= 30 * 1024 * 1024
    for name in ("config.json", "model.safetensors", "generation_config.json", "tokenizer.json",
                 "tokenizer_config.json", "README.md"):
        assert (MODEL_DIR / name).is_file(), name


def test_heldout_loss_below_threshold(model_and_tokenizer, sample):
    from tools.pydoc_corpus import Document
    from tools.train_builtin import heldout_ids, heldout_loss

    model, tokenizer = model_and_tokenizer
    ids = heldout_ids(tokenizer, [Document(f"heldout-{i}", "sample", text) for i, text in enumerate(sample["heldout"])])
    assert len(ids) > HELDOUT_SLICE_TOKENS, "the fixed sample is shorter than the slice the loss is measured on"
    loss = heldout_loss(model, ids, max_tokens=HELDOUT_SLICE_TOKENS)
    assert loss < HELDOUT_LOSS_THRESHOLD, f"held-out loss {loss:.3f} (ppl {torch.tensor(loss).exp():.1f})"


def test_generated_words_come_from_the_corpus(model_and_tokenizer, sample):
    from tools.train_builtin import generate

    model, tokenizer = model_and_tokenizer
    vocab = set(sample["train_words"])
    texts = []
    for prompt in PROMPTS:
        texts.append(generate(model, tokenizer, prompt, sample=False))
        texts.extend(generate(model, tokenizer, prompt, sample=True, seed=seed) for seed in (0, 1))
    words = [w for t in texts for w in WORD_RE.findall(t.lower())]
    assert len(words) >= 60, texts
    unknown = [w for w in words if w not in vocab]
    assert len(unknown) <= 0.1 * len(words), (unknown, texts)
