"""Issue 34, item 1: a recording with kernel IR compiles in a child process, because jax 0.12.0.1's XLA:CPU
aborts the process that dumps kernel IR (``tools/repro_kernel_ir_abort.py``); when that child dies the step is
recorded again without kernel IR and ``PassPipeline.kernel_ir`` says so in one line.

Five recordings of ``app/examples/07_mlp_training.py`` through the window's path (``ComputeService.handle`` of a
program's ``PassesRequest``, which aborted ~3 runs in 4 when it compiled in process): this process survives
each, and each says whether its kernel IR is in it. Then a child made to abort on purpose (deterministic):
the pipeline still comes back, without kernel IR, with the note; a failing (not aborting) child, a step on a
device mesh and a child past its time limit."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from app.core.passes import record
from app.core.passes.model import KERNEL_IR_DUMPED, kernel_ir_line, kernel_ir_lost
from app.core.passes.record import RecordingError, failure_line, record_pipeline
from app.core.programs.compute.requests import ProgramRequest
from app.core.requests import Notice, RequestFailed

EXAMPLE = Path(__file__).resolve().parents[3] / "app" / "examples" / "07_mlp_training.py"

#: A child that aborts like XLA:CPU did, but only when asked for kernel IR; otherwise the real child.
ABORTING_CHILD = r"""
import json, os, sys
work = sys.argv[2]
with open(os.path.join(work, "options.json")) as f:
    options = json.load(f)
if "xla_dump_emitter_re" in options:
    print("I0000 00:00:1.0 12 cpu_compiler.cc:1] an info line", file=sys.stderr)
    print("pure virtual method called", file=sys.stderr)
    print("terminate called without an active exception", file=sys.stderr, flush=True)
    os.abort()
from app.core.passes._child import main
sys.exit(main(sys.argv[1], work))
"""
#: A child that fails with a Python exception when asked for kernel IR.
FAILING_CHILD = r"""
import sys
print("Traceback (most recent call last):", file=sys.stderr)
print('  File "x.py", line 1, in <module>', file=sys.stderr)
print("RuntimeError: no kernel for you", file=sys.stderr)
sys.exit(3)
"""


def _mlp_lowered():
    import jax
    import jax.numpy as jnp

    def mlp(x, w1, w2):
        return jnp.tanh(jax.nn.relu(x @ w1) @ w2).sum()

    return jax.jit(mlp).trace(jnp.ones((8, 64)), jnp.ones((64, 128)), jnp.ones((128, 32))).lower()


def _use_child(monkeypatch, script: str) -> list[list[str]]:
    """Replace the compiling child's command by ``python -c script MODULE WORK``; returns the commands run."""
    runs: list[list[str]] = []

    def command(module_path, work):
        runs.append([str(module_path), str(work)])
        return [sys.executable, "-c", script, str(module_path), str(work)]

    monkeypatch.setattr(record, "_child_command", command)
    return runs


def _assert_says_kernel_ir(pipeline) -> str:
    """The pipeline either has its kernels' IR, or a one-line note saying it was lost."""
    assert pipeline.snapshots and pipeline.final is not None and pipeline.pass_times
    if pipeline.kernel_ir == KERNEL_IR_DUMPED:
        assert pipeline.fusion_ir and all(ir.text(optimized=True) for ir in pipeline.fusion_ir.values())
        assert kernel_ir_line(pipeline).startswith("kernel IR: dumped (")
        return "dumped"
    assert kernel_ir_lost(pipeline) and "kernel IR" in pipeline.kernel_ir and "\n" not in pipeline.kernel_ir
    assert "exit " in pipeline.kernel_ir and "jax " in pipeline.kernel_ir
    assert pipeline.fusion_ir == {}
    return "lost"


def test_the_window_records_07_mlp_training_with_kernel_ir_five_times():
    """The window's path for a program (ComputeService → session.compute.passes.record_passes): the process survives
    every recording, and each says whether its kernel IR is in it (a lost one also as a Notice first)."""
    from app.core.session import requests as rq
    from app.core.session.compute.service import ComputeService

    service = ComputeService()
    program = ProgramRequest(EXAMPLE.read_text(), path=str(EXAMPLE), name=EXAMPLE.name, entry="train_step")
    outcomes = []
    for _ in range(5):
        events = list(service.handle(rq.PassesRequest(step="train_step", program=program), lambda: False))
        failed = [e for e in events if isinstance(e, RequestFailed)]
        assert not failed, failed[0].message
        ready = next(e for e in events if isinstance(e, rq.PassesReady))
        pipeline = ready.pipeline
        outcomes.append(_assert_says_kernel_ir(pipeline))
        notices = [e.text for e in events if isinstance(e, Notice)]
        if outcomes[-1] == "dumped":
            assert any(f["has_llvm_ir"] for f in ready.fusions) and not notices
        else:
            assert notices == [pipeline.kernel_ir] and not any(f["has_llvm_ir"] for f in ready.fusions)
            assert events.index(next(e for e in events if isinstance(e, Notice))) < events.index(ready)
    assert len(outcomes) == 5  # this process is still here


def test_an_aborting_child_leaves_a_pipeline_without_kernel_ir(monkeypatch, tmp_path):
    runs = _use_child(monkeypatch, ABORTING_CHILD)
    pipeline = record_pipeline(_mlp_lowered(), kernel_ir=True, keep_dir=tmp_path)
    assert len(runs) == record.KERNEL_IR_TRIES  # the kernel-IR children; the retry compiled in this process
    import jax

    assert pipeline.kernel_ir == (f"XLA:CPU aborted while dumping kernel IR (jax {jax.__version__}, exit -6: pure "
                                  "virtual method called) (2 tries); the pass pipeline is shown without kernel IR")
    assert kernel_ir_lost(pipeline) and kernel_ir_line(pipeline) == pipeline.kernel_ir
    assert pipeline.fusion_ir == {} and not pipeline.in_child
    assert pipeline.module == "jit_mlp" and len(pipeline.snapshots) >= 5 and pipeline.pass_times
    assert pipeline.final.n_fusions >= 2
    assert "pure virtual method called" in (tmp_path / "kernel-ir-child.log").read_text()
    assert not list((tmp_path / "dump").glob("*.ll"))  # nothing left of the aborted child's dumps


def test_with_the_fusion_log_the_retry_runs_in_a_child_again(monkeypatch):
    runs = _use_child(monkeypatch, ABORTING_CHILD)
    pipeline = record_pipeline(_mlp_lowered(), kernel_ir=True, fusion_log=True)
    assert len(runs) == record.KERNEL_IR_TRIES + 1  # the kernel-IR tries, then the fusion log without it
    assert pipeline.in_child and pipeline.fusion_log and pipeline.log_lines
    assert kernel_ir_lost(pipeline) and "exit -6" in pipeline.kernel_ir and pipeline.fusion_ir == {}


def test_the_window_path_says_so_with_a_notice(monkeypatch):
    from app.core.session import requests as rq
    from app.core.session.compute.passes import record_passes

    _use_child(monkeypatch, ABORTING_CHILD)
    request = rq.PassesRequest(step="mlp")
    events = list(record_passes(None, request, lambda: False, None, lowered=("jit", _mlp_lowered())))
    assert [type(e) for e in events] == [Notice, rq.PassesReady]
    assert events[0].text == events[1].pipeline.kernel_ir and "aborted while dumping kernel IR" in events[0].text
    assert events[1].rows and not any(f["has_llvm_ir"] for f in events[1].fusions)


def test_a_failing_child_and_a_child_past_its_limit(monkeypatch):
    _use_child(monkeypatch, FAILING_CHILD)
    pipeline = record_pipeline(_mlp_lowered(), kernel_ir=True)
    assert pipeline.kernel_ir.startswith("The compile that dumps kernel IR failed in its child process (jax ")
    assert "exit 3: RuntimeError: no kernel for you) (2 tries); the pass pipeline is shown without kernel IR" in \
        pipeline.kernel_ir
    assert pipeline.snapshots and pipeline.fusion_ir == {}
    _use_child(monkeypatch, "import time; time.sleep(30)")
    with pytest.raises(RecordingError, match="took over"):  # a time limit is not retried: the wait would double
        record_pipeline(_mlp_lowered(), kernel_ir=True, timeout_s=0.5)


def test_kernel_ir_is_not_asked_for_in_process_and_a_mesh_step_says_why(monkeypatch):
    import jax
    import jax.numpy as jnp
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    runs = _use_child(monkeypatch, ABORTING_CHILD)
    plain = record_pipeline(_mlp_lowered())
    assert plain.kernel_ir == "not requested" and kernel_ir_line(plain) == "kernel IR: not requested" and not runs
    if len(jax.devices()) < 2:
        pytest.skip("needs two devices (tests/conftest.py asks XLA for four)")
    mesh = Mesh(jax.devices()[:2], ("x",))
    sharded = jax.device_put(jnp.ones((8, 64)), NamedSharding(mesh, PartitionSpec("x")))
    lowered = jax.jit(lambda x: jnp.tanh(x * 2.0).sum(axis=1)).trace(sharded).lower()
    assert record._num_partitions(lowered.as_text()) == 2
    pipeline = record_pipeline(lowered, kernel_ir=True)
    assert not runs and kernel_ir_lost(pipeline) and "device mesh (2 partitions)" in pipeline.kernel_ir
    assert "kernel IR" in pipeline.kernel_ir and pipeline.snapshots


def test_failure_line_names_the_crash():
    assert failure_line("I0101 log\npure virtual method called\nterminate called without an active exception\n") \
        == "pure virtual method called"
    assert failure_line("x\ndouble free or corruption (!prev)\n") == "double free or corruption (!prev)"
    assert failure_line('Traceback (most recent call last):\n  File "a.py", line 1\nValueError: bad\n') \
        == "ValueError: bad"
    assert failure_line("") == "" and len(failure_line("e" * 500)) == 160
