"""The host share measured, not inferred (issue 55): a step whose program calls the host (a mixture-of-experts
model's routing callback) runs inside its call on XLA:CPU, so its dispatch is the device's run and its host time is
what was measured outside the call and inside the callbacks; jit-loop's host work per token is its callbacks' time,
from timestamps taken in them. Before, the MoE step read ~99 % (the device's run counted as dispatch) and
jit-loop's share printed "0 %".

The tiny Mixtral-style model of :mod:`test_moe_models` with one layer, and the session's tiny Llama."""

from __future__ import annotations

from dataclasses import replace

import pytest
from qt_helpers import call_record
from test_moe_models import PROMPT, build_moe_dir

from app.core.engine.engine import load_engine
from app.core.events import DECODE, CallRecord, steady_host_ms, steady_host_share, steady_synchronous
from app.core.runtime import callback_clock
from app.core.settings import GenerationSettings


def run(engine, mode: str, n: int = 8) -> tuple[list[CallRecord], float, int]:
    """The run's call records, and the callback clock's ms and calls during it."""
    ms0, calls0 = callback_clock.reading()
    settings = GenerationSettings(mode=mode, max_new_tokens=n, stop_at_eos=False, capture_ir=False)
    records = [e for e in engine.generate(PROMPT, settings) if isinstance(e, CallRecord)]
    ms1, calls1 = callback_clock.reading()
    return records, ms1 - ms0, calls1 - calls0


def measured_share(r: CallRecord) -> float:
    """The host's share from the record's own measured parts: outside the call, and inside its callbacks."""
    p = r.host_ms
    host = p["transfer"] + p["flatten"] + p["callback"] + p["token"]
    return host / (sum(p.values()) - p["compile"])


@pytest.fixture(scope="module")
def moe_engine(tmp_path_factory):
    """The tiniest Mixtral (one layer): a program with a host callback is never served by the persistent
    compilation cache (JAX does not cache one), so its compiles are cold in every test."""
    return load_engine(build_moe_dir(tmp_path_factory.mktemp("host-share-mixtral"), "mixtral", num_hidden_layers=1))


def test_a_moe_step_is_synchronous_and_its_host_share_is_its_callbacks(moe_engine, llama_engine):
    records, clock_ms, clock_calls = run(moe_engine, "jit-static")
    assert clock_calls == len(records) == 8  # one routing callback per call (prefill, 7 decode steps), each timed
    assert all(r.synchronous for r in records)  # read from the compiled program (it holds a host callback)
    assert all(r.host_ms["callback"] > 0 for r in records)
    # every callback ran inside a call: the records hold all of the clock's time, each in its own call
    assert sum(r.host_ms["callback"] for r in records) == pytest.approx(clock_ms, rel=1e-9, abs=1e-9)
    steady = [r for r in records if r.step == DECODE and not r.compiled]
    assert steady
    for r in steady:
        assert sum(r.host_ms.values()) == pytest.approx(r.wall_ms, rel=1e-6)
        assert r.host_share == pytest.approx(measured_share(r), rel=1e-9)
        inferred = 1 - r.host_ms["wait"] / (r.wall_ms - r.host_ms["compile"])  # the old rule: dispatch as host
        assert r.host_share < inferred - r.host_ms["dispatch"] / r.wall_ms + 1e-9
    share = steady_host_share(steady)
    assert share is not None and 0 < share < 0.9, share  # well below the ~99 % the old rule printed
    assert steady_synchronous(records)
    dense, dense_ms, dense_calls = run(llama_engine, "jit-static")
    assert not any(r.synchronous for r in dense) and not steady_synchronous(dense)
    assert dense_calls == 0 and all(r.host_ms["callback"] == 0 for r in dense)


@pytest.mark.parametrize("model", ["llama", "mixtral"])
def test_jit_loop_host_share_comes_from_the_callbacks(model, moe_engine, llama_engine):
    engine = moe_engine if model == "mixtral" else llama_engine
    records, clock_ms, _ = run(engine, "jit-loop", n=10)
    tokens = [r for r in records[2:] if r.timing == "callback interval"]  # the loop's tokens after its first
    assert len(tokens) == 8
    for r in tokens:
        p = r.host_ms
        assert p["token"] > 0  # the hand-over's own time, timestamps taken inside its callback
        assert p["wait"] + p["callback"] + p["token"] == pytest.approx(r.wall_ms, rel=1e-6)
        assert r.host_share == pytest.approx((p["token"] + p["callback"]) / r.wall_ms, rel=1e-9)
        assert r.host_share > 0 and not r.synchronous
    routed = sum(r.host_ms["callback"] for r in records)
    if model == "mixtral":  # each iteration's routing callback, on the clock, carved out of the wait
        assert all(r.host_ms["callback"] > 0 for r in tokens)
        assert 0 < routed <= clock_ms + 1e-9
    else:
        assert routed == 0
    parts = steady_host_ms(records)
    assert parts["token"] > 0 and steady_host_share(records) > 0


HOST = {"transfer": 0.01, "flatten": 0.01, "compile": 0.0, "dispatch": 0.9, "callback": 0.33, "wait": 0.01,
        "token": 0.03}


def test_the_window_shows_the_measured_share(qtbot):
    from widgets.plot.call_tooltip import describe, share_text
    from widgets.run.stats_strip import StatsStrip

    strip = StatsStrip()
    qtbot.addWidget(strip)
    strip.set_host(HOST, 40, synchronous=True)
    assert strip.text("host") == "29 %"  # (0.01 + 0.01 + 0.33 + 0.03) / 1.29
    tip = strip.cards["host"].toolTip()
    assert "synchronous call" in tip and "callback" in tip and "the device's run inside it" in tip
    strip.set_host(HOST, 40)  # the same figures read as an asynchronous call: dispatch is the host's
    assert strip.text("host") == "99 %"
    strip.set_host({"wait": 0.31, "callback": 0.0, "token": 0.004})  # a jit-loop token: its callback's time
    assert strip.text("host") == "1.3 %"
    strip.set_host(None)
    assert strip.text("host") == "–" and "jitted modes" in strip.cards["host"].toolTip()
    assert (share_text(0.0004), share_text(0.012), share_text(0.29)) == ("<0.1 %", "1.2 %", "29 %")
    text = describe(replace(call_record(3, wall_ms=1.29), host_ms=HOST, synchronous=True))
    assert "callback 0.3 ms" in text and "host 29 % of the call" in text and "synchronous call" in text
