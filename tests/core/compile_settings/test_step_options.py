"""A model's decode step and decode loop compile with their own XLA options on the CPU (YNNPACK off for dots,
issue 38); prefill keeps XLA's defaults; a settings race's lane replaces them (its ``default`` lane is XLA's
defaults); the options are kept on the step's IR and its pass recording, and named as the views name them."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from app.core.compile_settings.catalog import options_label
from app.core.compile_settings.options import DECODE_CPU, compile_lowered, compiled_with, compiling_with
from app.core.settings import GenerationSettings


def _run(engine, mode: str) -> None:
    engine.clear_compiled()
    for _ in engine.generate("The jit", GenerationSettings(mode=mode, max_new_tokens=4, stop_at_eos=False)):
        pass


def test_decode_steps_compile_without_ynnpack_prefill_with_xla_defaults(llama_engine):
    for mode in ("jit-static", "jit-loop"):
        _run(llama_engine, mode)
        assert llama_engine.ir[(mode, "decode")].compile_options == DECODE_CPU, mode
        assert llama_engine.ir[(mode, "prefill")].compile_options == {}, mode


def test_a_race_lane_replaces_the_steps_options(llama_engine):
    with compiling_with({}):  # a race's default lane: XLA's own defaults
        _run(llama_engine, "jit-static")
    assert llama_engine.ir[("jit-static", "decode")].compile_options == {}
    with compiling_with({"optimization_level": "O1"}):
        _run(llama_engine, "jit-static")
    assert llama_engine.ir[("jit-static", "decode")].compile_options == {"optimization_level": "O1"}
    _run(llama_engine, "jit-static")  # outside a race: the step's own again
    assert llama_engine.ir[("jit-static", "decode")].compile_options == DECODE_CPU


def test_the_options_reach_the_compiler():
    """A small matrix product: XLA:CPU hands it to YNNPACK by default, not with the decode step's options."""
    x, w = jnp.ones((4, 256)), jnp.ones((256, 512))
    lowered = jax.jit(lambda x, w: x @ w).lower(x, w)
    default_hlo = compile_lowered(lowered).as_text()
    assert compiled_with(lowered) == {}
    decode_hlo = compile_lowered(lowered, DECODE_CPU).as_text()
    assert compiled_with(lowered) == DECODE_CPU
    assert "ynn" in default_hlo.lower() and "ynn" not in decode_hlo.lower()


def test_a_decode_steps_pass_recording_compiles_it_as_it_ran(llama_engine):
    from app.core.passes.record import record_pipeline

    _run(llama_engine, "jit-static")
    lowered = llama_engine.ir[("jit-static", "decode")].lowered
    assert record_pipeline(lowered).compiler_options == DECODE_CPU
    assert record_pipeline(lowered, as_compiled=False).compiler_options == {}


def test_options_are_named_in_words():
    assert options_label({}) == ""
    assert options_label(DECODE_CPU) == "YNNPACK off for dots"
    assert options_label({"optimization_level": "O3"}) == "O3"
    assert options_label({"xla_cpu_use_onednn": True, "xla_cpu_max_isa": "AVX2"}) == \
        "--xla_cpu_use_onednn=true --xla_cpu_max_isa=AVX2"
