"""jit-loop: the decode loop as one compiled ``while_loop`` streaming tokens through an ordered host callback
(``app/core/runtime/host_token.py``).

Greedy tokens equal PyTorch's on every suite architecture; seeded sampling is reproducible (and equal to
jit-static's: the same key sequence through the same ``pick_token``); Stop ends the loop within one iteration;
EOS ends it on the device; its events and records have the documented shape; its jaxpr holds a ``while``.
"""

from __future__ import annotations

import threading
import time

import pytest
from conftest import ARCH_CONFIGS

from app.core.events import CALLBACK_INTERVAL, CallRecord, FinishedEvent, IREvent, TokenEvent
from app.core.mode_catalog import mode_info
from app.core.settings import GenerationSettings

PROMPT = "The jit function traces a Python function"
NEW_TOKENS = 12  # prompt + 12 > the sliding window of 8 in mistral and gemma2


def run(engine, prompt=PROMPT, should_stop=lambda: False, **settings):
    return list(engine.generate(prompt, GenerationSettings(**settings), should_stop=should_stop))


def of(events, cls):
    return [e for e in events if isinstance(e, cls)]


@pytest.mark.parametrize("arch", sorted(ARCH_CONFIGS))
def test_greedy_tokens_equal_torch(engines, arch):
    engine = engines(arch)
    settings = dict(max_new_tokens=NEW_TOKENS, stop_at_eos=False)
    reference = run(engine, mode="torch", **settings)[-1].token_ids
    finished = run(engine, mode="jit-loop", **settings)[-1]
    assert finished.token_ids == reference
    assert finished.summary.n_compiles == 2  # prefill, then the loop: one compile for every token after it


def test_one_compile_whatever_max_new_tokens(llama_engine):
    llama_engine.clear_compiled()
    first = of(run(llama_engine, mode="jit-loop", max_new_tokens=5, stop_at_eos=False), CallRecord)
    longer = of(run(llama_engine, mode="jit-loop", max_new_tokens=20, stop_at_eos=False), CallRecord)
    assert [r.step for r in first if r.compiled] == ["prefill", "decode"]
    assert not any(r.compiled for r in longer) and len(longer) == 20  # the step limit is an operand


def test_seeded_sampling_is_reproducible_and_equals_jit_static(llama_engine):
    kw = dict(max_new_tokens=10, temperature=0.9, top_k=50, top_p=0.95, repetition_penalty=1.3, seed=7,
              stop_at_eos=False)
    loop = run(llama_engine, mode="jit-loop", **kw)[-1].token_ids
    assert run(llama_engine, mode="jit-loop", **kw)[-1].token_ids == loop
    assert run(llama_engine, mode="jit-static", **kw)[-1].token_ids == loop  # the same pick_token, key by key
    assert run(llama_engine, mode="jit-loop", **{**kw, "seed": 8})[-1].token_ids != loop


def test_events_and_records_have_the_documented_shape(llama_engine):
    llama_engine.clear_compiled()
    events = run(llama_engine, mode="jit-loop", max_new_tokens=8, stop_at_eos=False)
    records, tokens = of(events, CallRecord), of(events, TokenEvent)
    assert [r.index for r in records] == list(range(8)) and [t.index for t in tokens] == list(range(8))
    assert [t.call_index for t in tokens] == [r.index for r in records]  # one token per record, as in every mode
    prefill, loop_first, *rest = records
    assert prefill.step == "prefill" and prefill.timing == "call" and prefill.compiled
    assert loop_first.step == "decode" and loop_first.compiled and loop_first.timing == CALLBACK_INTERVAL
    assert set(loop_first.compile_phases) == {"trace", "lower", "compile"} and loop_first.compile_ms > 0
    assert loop_first.wall_ms >= loop_first.compile_total_ms
    assert all(r.step == "decode" and not r.compiled and r.timing == CALLBACK_INTERVAL and r.wall_ms > 0
               for r in rest)
    assert all(r.mode == "jit-loop" for r in records)
    assert records[1].to_json()["timing"] == "callback interval"  # what --json writes per record
    assert [t.elapsed_ms for t in tokens] == sorted(t.elapsed_ms for t in tokens)
    finished = events[-1]
    assert finished.reason == "max_new_tokens" and finished.summary.steady_decode_ms > 0
    assert finished.text == "".join(t.text for t in tokens)


def test_the_loop_jaxpr_holds_a_while_and_streams_through_a_callback(llama_engine):
    llama_engine.clear_compiled()
    irs = {e.step: e.ir for e in run(llama_engine, mode="jit-loop", max_new_tokens=3) if isinstance(e, IREvent)}
    assert set(irs) == {"prefill", "decode"}
    loop = irs["decode"]
    assert "while[" in loop.jaxpr and "body_jaxpr" in loop.jaxpr and "cond_jaxpr" in loop.jaxpr
    assert "token_to_host" in loop.jaxpr and "aten::" in loop.jaxpr
    assert "stablehlo.while" in loop.stablehlo
    assert "while(" in loop.hlo
    assert "while[" not in irs["prefill"].jaxpr
    assert any("max_steps" in label for label in loop.input_labels)


def test_stop_during_the_loop_ends_it_within_one_iteration(llama_engine, monkeypatch):
    from app.core.modes import loop as loop_mod

    slow = loop_mod._LoopRun._on_token

    def on_token(self, token, count):  # a slower device: the loop cannot finish before Stop reaches it
        time.sleep(0.05)
        return slow(self, token, count)

    monkeypatch.setattr(loop_mod._LoopRun, "_on_token", on_token)
    stop, seen = threading.Event(), []
    events, steps_at_stop = [], None
    for event in llama_engine.generate(PROMPT, GenerationSettings(mode="jit-loop", max_new_tokens=100,
                                                                   stop_at_eos=False), should_stop=stop.is_set):
        events.append(event)
        if isinstance(event, TokenEvent):
            seen.append(event)
            if len(seen) == 4:
                # How far the device had run when Stop was pressed: the host may lag it by any number of tokens
                # on a busy machine (the first loop token's IR capture, a loaded CI host), so the bound below
                # counts from here, not from the tokens the host had taken.
                steps_at_stop = llama_engine.mode_state("jit-loop")["last_loop"].steps
                stop.set()
    finished = events[-1]
    assert isinstance(finished, FinishedEvent) and finished.reason == "stopped"
    assert len(finished.token_ids) == 4
    stats = llama_engine.mode_state("jit-loop")["last_loop"]
    assert stats.stopped and stats.after_stop == 1  # the one iteration whose callback saw Stop, then the exit
    assert stats.steps < stats.limit == 99
    # The iteration in flight when Stop was pressed, then at most one more: the one whose callback saw it.
    assert steps_at_stop is not None and stats.steps <= steps_at_stop + 2


def test_eos_ends_the_loop_on_the_device(llama_engine, monkeypatch):
    plain = run(llama_engine, mode="jit-loop", max_new_tokens=12, stop_at_eos=False)[-1].token_ids
    at = next(i for i in range(2, len(plain)) if plain[i] not in plain[:i])  # a token first seen in the loop
    monkeypatch.setattr(llama_engine, "eos_ids", [plain[at]])
    finished = run(llama_engine, mode="jit-loop", max_new_tokens=12)[-1]
    assert finished.reason == "eos" and finished.token_ids == plain[: at + 1]
    stats = llama_engine.mode_state("jit-loop")["last_loop"]
    assert stats.steps == at and not stats.stopped  # the device stopped itself at the EOS token


def test_cache_full_and_a_one_token_run(llama_engine):
    prompt_len = len(llama_engine.encode(PROMPT))
    full = run(llama_engine, mode="jit-loop", max_new_tokens=100, max_cache_len=prompt_len + 4)[-1]
    assert full.reason == "cache_full" and len(full.token_ids) == 5
    one = run(llama_engine, mode="jit-loop", max_new_tokens=1)
    assert len(of(one, CallRecord)) == 1 and one[-1].summary.n_tokens == 1  # no loop for the prefill's token


def test_catalog_row():
    info = mode_info("jit-loop")
    assert info.compiler == "xla" and info.framework == "jax" and {"cpu", "gpu"} <= set(info.devices)
    assert "while_loop" in info.help and "long generations" in info.help and "not when" in info.help
