"""The static KV cache grows in buckets as decoding needs it (issue 38): attention reads what the cache holds, so a
run with room for thousands of tokens decodes its first ones as fast as a short run. jit-static and jit-loop start
at :data:`FIRST_CAPACITY` positions (64 here, so the tiny models cross two buckets), compile once per capacity, name
the growth in the compile reason, and give transformers' greedy tokens across every growth."""

from __future__ import annotations

import pytest

from app.core.events import CallRecord, FinishedEvent
from app.core.runtime import kv_cache
from app.core.settings import GenerationSettings

PROMPT = "The jit function traces"
NEW_TOKENS = 150  # prompt bucket 16 + 150 → a 192-position run: capacities 64 → 128 → 192


@pytest.fixture
def small_buckets(monkeypatch):
    monkeypatch.setattr(kv_cache, "FIRST_CAPACITY", 64)


_REFERENCES: dict[str, list[int]] = {}


def _reference(engine) -> list[int]:
    """PyTorch eager's greedy tokens (the ``torch`` mode: transformers' module on a DynamicCache, EOS ignored), once
    per model of the module (jit-static and jit-loop compare with the same run)."""
    key = engine.spec.source  # the model's folder (model_dirs)
    if key not in _REFERENCES:
        _REFERENCES[key] = list(engine.generate(PROMPT, GenerationSettings(mode="torch", max_new_tokens=NEW_TOKENS,
                                                                           stop_at_eos=False)))[-1].token_ids
    return _REFERENCES[key]


@pytest.mark.parametrize("arch", ["llama", "mistral"])  # mistral: a sliding window of 8 across the growth
@pytest.mark.parametrize("mode", ["jit-static", "jit-loop"])
def test_the_cache_grows_in_buckets_with_greedy_tokens_unchanged(engines, small_buckets, arch, mode):
    engine = engines(arch)
    engine.clear_compiled()  # compiles counted: none left by an earlier test of the session's engine
    events = list(engine.generate(PROMPT, GenerationSettings(mode=mode, max_new_tokens=NEW_TOKENS, stop_at_eos=False)))
    finished = events[-1]
    assert isinstance(finished, FinishedEvent)
    assert finished.token_ids == _reference(engine)
    records = [e for e in events if isinstance(e, CallRecord)]
    widths = [r.input_shapes["attention_mask"][1] for r in records if "attention_mask" in r.input_shapes]
    assert widths[0] == 64 and widths[-1] == 192 and widths == sorted(widths)
    grown = [r.compile_reason for r in records if r.compiled and r.step == "decode"][1:]
    assert grown == ["KV cache grown from 64 to 128 positions (one compile per cache size)",
                     "KV cache grown from 128 to 192 positions (one compile per cache size)"]
    assert finished.summary.cache_len == 192 and finished.summary.n_compiles == 4


def test_a_short_run_keeps_one_capacity(llama_engine):
    llama_engine.clear_compiled()  # compiles counted: none left by an earlier test of the session's engine
    finished = list(llama_engine.generate(PROMPT, GenerationSettings(mode="jit-static", max_new_tokens=20)))[-1]
    assert finished.summary.cache_len == llama_engine.cache_len_for(len(llama_engine.encode(PROMPT)),
                                                                    GenerationSettings(max_new_tokens=20))
    assert finished.summary.n_compiles == 2


def test_capacities():
    assert kv_cache.first_capacity(8192, 16) == kv_cache.FIRST_CAPACITY == 256
    assert kv_cache.first_capacity(8192, 512) == 512 and kv_cache.first_capacity(128, 16) == 128
    assert kv_cache.next_capacity(256, 256, 8192) == 512 and kv_cache.next_capacity(4096, 4096, 4500) == 4500
    assert kv_cache.next_capacity(256, 100, 8192) == 256
    with pytest.raises(ValueError):
        kv_cache.next_capacity(256, 8192, 8192)


def test_grow_pads_every_layer_and_keeps_what_was_written(llama_engine):
    import numpy as np

    from app.core.runtime.pytrees import FlatTree

    cache = llama_engine.static_cache(64)
    for layer in cache.layers:
        layer.keys = layer.keys.at[:, :, 3].set(1.5)
    grown = kv_cache.grow(FlatTree.of(cache), 128).unflatten()
    for layer in grown.layers:
        assert layer.max_cache_len == 128 and layer.keys.shape[2] == layer.values.shape[2] == 128
        assert float(np.asarray(layer.keys[:, :, 3]).min()) == 1.5 and float(np.abs(np.asarray(layer.keys[:, :, 64:])).max()) == 0
