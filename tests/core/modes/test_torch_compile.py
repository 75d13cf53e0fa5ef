"""The torch-compile mode: Inductor over a StaticCache on tiny saved models, offline.

Each cold Inductor compile of a tiny model takes 5-30 s on this machine, so engines are module-scoped and
Inductor's caches live in one temporary directory for the module (cold on every session).
"""

from __future__ import annotations

from typing import ClassVar

import pytest

from app.core.compile_cache.inductor import (
    clear_inductor_disk_cache,
    inductor_cache_dir,
    inductor_cache_size,
    set_inductor_cache,
)
from app.core.engine.engine import load_engine
from app.core.events import CallRecord, FinishedEvent, IREvent, PhaseEvent, TokenEvent
from app.core.mode_catalog import mode_class
from app.core.modes import torch_compile as torch_compile_module
from app.core.modes.torch_compile import TorchCompileMode, clear_torch_compile
from app.core.modes.torch_compile_capture import PHASES, compile_phases
from app.core.settings import GenerationSettings


class RecordedMode(TorchCompileMode):
    """The mode, remembering its instances so tests can read ``ir_texts`` / ``ir_summary``."""

    instances: ClassVar[list[TorchCompileMode]] = []

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        RecordedMode.instances.append(self)


@pytest.fixture(scope="module", autouse=True)
def registered(tmp_path_factory):
    """Make the catalog's torch-compile class the recording subclass, and give Inductor a fresh cache directory."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(torch_compile_module, "TorchCompileMode", RecordedMode)
        assert mode_class("torch-compile") is RecordedMode
        directory = set_inductor_cache(tmp_path_factory.mktemp("inductor"))
        yield directory


def run(engine, mode, prompt="The jit function traces", live=None, **overrides):
    kwargs = {"mode": mode, "max_new_tokens": 16, "stop_at_eos": False, **overrides}
    events = list(engine.generate(prompt, GenerationSettings(**kwargs), on_live_phase=live))
    tokens = [e.token_id for e in events if isinstance(e, TokenEvent)]
    return tokens, [e for e in events if isinstance(e, CallRecord)], events


def last_mode() -> TorchCompileMode:
    return RecordedMode.instances[-1]


@pytest.mark.parametrize("arch", ["llama", "gpt2", "qwen2"])
def test_greedy_tokens_equal_torch_with_two_compiles(engines, arch):
    engine = engines(arch)
    expected, _, _ = run(engine, "torch")
    live: list[PhaseEvent] = []
    tokens, calls, events = run(engine, "torch-compile", live=live.append)
    assert tokens == expected
    compiled = [c for c in calls if c.compiled]
    assert [(c.index, c.step) for c in compiled] == [(0, "prefill"), (1, "decode")]
    assert all(c.compile_reason == "first call" for c in compiled)
    for c in compiled:
        assert set(c.compile_phases) == set(PHASES) and all(v >= 0 for v in c.compile_phases.values())
        assert 0 < sum(c.compile_phases.values()) <= c.compile_ms + 1e-6
        assert c.compile_phases["dynamo"] > 0 and c.wall_ms >= c.compile_ms
        assert c.persistent_cache_hit is False  # a fresh cache directory: every graph is new
    assert all(c.execute_ms > 0 for c in calls)
    finished = events[-1]
    assert isinstance(finished, FinishedEvent) and finished.summary.n_compiles == 2
    mode = last_mode()
    for kind in ("prefill", "decode"):
        assert "class GraphModule" in mode.ir_texts[kind]["fx_graph"]
        assert "async_compile.cpp_pybinding" in mode.ir_texts[kind]["inductor_code"]
        summary = mode.ir_summary[kind]
        assert summary["kernels"] > 0 and summary["graphs"] == 1 and summary["graph_breaks"] == 0
        assert summary["fullgraph"] is True
    irs = [e for e in events if isinstance(e, IREvent)]
    assert [e.step for e in irs] == ["prefill", "decode"]
    assert all(e.ir.compiler == "inductor" and e.ir.n_kernels > 0 and e.ir.inductor_code for e in irs)
    assert any("Dynamo tracing" in e.detail for e in live) and any("AOT autograd" in e.detail for e in live)


def test_second_run_and_prompt_in_same_bucket_compile_nothing(engines):
    engine = engines("llama")
    first, _, _ = run(engine, "torch-compile")  # compiled by the test above (or now)
    again, calls, _ = run(engine, "torch-compile")
    assert again == first and not any(c.compiled for c in calls)
    expected, _, _ = run(engine, "torch", prompt="The jit function traces a Python")
    tokens, calls, _ = run(engine, "torch-compile", prompt="The jit function traces a Python")
    assert calls[0].input_shapes["input_ids"] == [1, 16]
    assert tokens == expected and not any(c.compiled for c in calls)


def test_stop_during_the_first_compile_ends_the_run_after_it_and_the_next_run_is_whole(engines):
    engine = engines("llama")
    clear_torch_compile(engine)
    stop = []
    events = list(engine.generate(
        "The jit function traces",
        GenerationSettings(mode="torch-compile", max_new_tokens=16, stop_at_eos=False),
        should_stop=lambda: bool(stop),
        on_live_phase=lambda e: stop.append(e) if e.phase == "compiling" and e.started else None,
    ))
    assert stop, "no live compiling phase was reported"
    finished = events[-1]
    assert isinstance(finished, FinishedEvent) and finished.reason == "stopped"
    assert len([e for e in events if isinstance(e, TokenEvent)]) <= 1
    assert [c.step for c in events if isinstance(c, CallRecord)] == ["prefill"]  # decode never compiled
    expected, _, _ = run(engine, "torch")
    tokens, calls, _ = run(engine, "torch-compile")
    assert tokens == expected
    assert [c.step for c in calls if c.compiled] == ["decode"]  # the prefill compiled before the stop is kept


def test_changed_cache_length_reports_dynamo_guard_failure(engines):
    # One token, the prefill alone: its recompile names the failed guard (the decode step's would be a second
    # Inductor build of the same kind: 48 s for both on a loaded CI machine, 6 Dec)
    engine = engines("llama")
    run(engine, "torch-compile", max_new_tokens=1)
    expected, _, _ = run(engine, "torch", max_new_tokens=1)
    tokens, calls, _ = run(engine, "torch-compile", max_cache_len=128, max_new_tokens=1)
    assert tokens == expected
    compiled = [c for c in calls if c.compiled]
    assert [c.step for c in compiled] == ["prefill"]
    for c in compiled:
        assert c.compile_reason.startswith("Dynamo guard failed: ")
        assert "size mismatch" in c.compile_reason and "expected 64, actual 128" in c.compile_reason


def test_graph_break_falls_back_to_fullgraph_false_and_reports_it(model_dirs):
    import torch

    engine = load_engine(model_dirs("llama"))
    engine.model.model.layers[0].register_forward_hook(lambda *args: torch._dynamo.graph_break())
    # One token: the prefill's compile shows the fallback (each step's compile falls back alike, and what is read
    # below is the prefill's); the decode step's broken graphs would be a second round of Dynamo and Inductor builds
    expected, _, _ = run(engine, "torch", max_new_tokens=1)
    tokens, calls, _ = run(engine, "torch-compile", max_new_tokens=1)
    assert tokens == expected and [c.step for c in calls] == ["prefill"]
    assert "fullgraph=False after a graph break" in calls[0].compile_reason
    summary = last_mode().ir_summary["prefill"]
    assert summary["fullgraph"] is False and summary["graph_breaks"] >= 1 and summary["graphs"] >= 2
    assert summary["break_reasons"] and summary["kernels"] > 0


def test_cleared_engine_recompiles_from_inductor_disk_cache(engines, registered):
    engine = engines("gpt2")
    run(engine, "torch-compile")
    clear_torch_compile(engine)
    _, calls, _ = run(engine, "torch-compile")
    compiled = [c for c in calls if c.compiled]
    assert len(compiled) == 2
    assert all(c.compile_reason == "first call after caches were cleared" for c in compiled)
    assert all(c.persistent_cache_hit for c in compiled)
    assert inductor_cache_dir() == registered
    files, size = inductor_cache_size(registered)
    assert files > 0 and clear_inductor_disk_cache(registered) == size
    assert inductor_cache_size(registered) == (0, 0)


def test_cache_off_means_no_directory_and_back_on(tmp_path):
    import torch

    try:
        assert set_inductor_cache(None) is None and inductor_cache_dir() is None
        assert torch.compiler.config.force_disable_caches
    finally:
        directory = set_inductor_cache(tmp_path / "inductor")
    assert inductor_cache_dir() == directory and not torch.compiler.config.force_disable_caches


def test_compile_phases_are_exclusive_and_sum_to_the_frame_compile():
    seconds = {"_compile.compile_inner": 10.0, "OutputGraph.call_user_compiler": 8.0, "compile_fx_inner": 6.0,
               "GraphLowering.compile_to_module": 5.0, "PyCodeCache.load_by_key_path": 3.0}
    phases = compile_phases(seconds)
    assert phases == {"dynamo": 2000.0, "aot autograd": 2000.0, "inductor lowering": 1000.0,
                      "inductor codegen": 2000.0, "c++ compile": 3000.0}
    hit = compile_phases({**seconds, "GraphLowering.compile_to_module": 0.0})  # cache hit: load elsewhere
    assert hit["c++ compile"] == 0.0 and sum(hit.values()) == pytest.approx(10000.0)


def test_importing_this_module_first_is_not_circular():
    """The engine looks modes up in the catalog (``mode_class``), which imports a mode's module on first use:
    importing the module first or the catalog first gives one class, subclassing Mode, and listing or using
    other modes never imports torch.compile's machinery."""
    import subprocess
    import sys
    from pathlib import Path

    code = ("import app.core.modes.torch_compile as tc; from app.core.modes.base import Mode; "
            "from app.core.mode_catalog import mode_class; "
            "assert tc.TorchCompileMode is mode_class('torch-compile'); "
            "assert issubclass(tc.TorchCompileMode, Mode)")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120, cwd=Path(__file__).parents[3])
    code = ("import sys; from app.core.mode_catalog import CATALOG, mode_class; mode_class('jit-static'); "
            "assert 'app.core.modes.torch_compile' not in sys.modules; "
            "import app.core.modes.torch_compile as tc; assert mode_class('torch-compile') is tc.TorchCompileMode")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120, cwd=Path(__file__).parents[3])
