"""Several hosts, for real (issue 39): two processes of the CLI on 127.0.0.1, joined by
``jax.distributed.initialize()`` (a free port, one CPU device each, Gloo's CPU collectives), decode with
``--mesh tp=2`` across them; each prints the tokens one process prints. A peer that never arrives, an
out-of-range ``--process-id`` and a peer that fails each end both processes with one line. Every process is
reaped, even when an assertion fails."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
PROMPT = "The jit function traces"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run_processes(argvs: list[list[str]], tmp_path: Path, timeout: float = 150) -> list[tuple[int, str, str]]:
    """Start one ``python -m app`` per argument list (one CPU device each: ``XLA_FLAGS`` replaces the suite's 4),
    wait for all, and return ``(status, stdout, stderr)`` of each. Whatever is still running at the deadline or
    when this raises is killed and waited for."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "JAX_PLATFORMS": "cpu",
           "XLA_FLAGS": "--xla_force_host_platform_device_count=1"}
    procs, files = [], []
    try:
        for i, argv in enumerate(argvs):
            out, err = open(tmp_path / f"out{i}.txt", "w+"), open(tmp_path / f"err{i}.txt", "w+")  # noqa: SIM115
            files += [out, err]
            procs.append(subprocess.Popen([sys.executable, "-m", "app", *argv], cwd=ROOT, env=env, stdout=out,
                                          stderr=err, text=True))
        deadline = time.monotonic() + timeout
        for proc in procs:
            proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=30)
        for f in files:
            f.close()
    return [(p.returncode, (tmp_path / f"out{i}.txt").read_text(), (tmp_path / f"err{i}.txt").read_text())
            for i, p in enumerate(procs)]


def _two(command: list[str], tmp_path: Path, per_process: list[list[str]] | None = None, **kw):
    port = _free_port()
    per_process = per_process or [[], []]
    return _run_processes([[*command, "--coordinator", f"127.0.0.1:{port}", "--num-processes", "2",
                            "--process-id", str(i), *extra] for i, extra in enumerate(per_process)], tmp_path, **kw)


def _one_process_tokens(model: str, mode: str, n: int) -> list[int]:
    """The greedy tokens of one process on one device (this pytest process)."""
    from app.core.engine.engine import load_engine
    from app.core.settings import GenerationSettings

    engine = load_engine(model)
    events = list(engine.generate(PROMPT, GenerationSettings(mode=mode, max_new_tokens=n, stop_at_eos=False,
                                                             capture_ir=False)))
    return events[-1].token_ids


def _summary(stdout: str) -> dict:
    lines = [json.loads(line) for line in stdout.splitlines()]  # every stdout line is JSON (no Gloo banner)
    return next(r for r in lines if r.get("event") == "summary")


@pytest.mark.parametrize("model, mode", [("pydoc-llama", "jit-static"), ("gpt2", "jit-loop")],
                         ids=["pydoc-llama-jit-static", "built-gpt2-jit-loop"])
def test_both_processes_print_the_tokens_of_one_process(model, mode, model_dirs, tmp_path):
    """The built-in Llama through jit-static, a test-built GPT-2 (Conv1D weights: other split dims) through
    jit-loop (its token callback reaches each process's host): ``--json`` on both, each its own summary."""
    path = model if model == "pydoc-llama" else model_dirs(model)
    n = 6
    results = _two(["generate", "--model", path, "--mode", mode, "--mesh", "tp=2", "--prompt", PROMPT,
                    "--max-new-tokens", str(n), "--ignore-eos", "--no-ir", "--json"], tmp_path)
    for index, (status, out, err) in enumerate(results):
        assert status == 0, f"process {index}: {err[-3000:]}"
        summary = _summary(out)
        assert summary["process_index"] == index and summary["process_count"] == 2
        assert summary["mesh"] == "tp=2 across 2 processes" and summary["mode"] == mode
        assert summary["mesh_devices"] == ["cpu:0@0", "cpu:2048@1"]
    tokens = [_summary(out)["token_ids"] for _, out, _ in results]
    assert len(tokens[0]) == n and tokens[0] == tokens[1] == _one_process_tokens(path, mode, n)


def test_text_mode_process_0_prints_the_run_the_other_one_line(model_dirs, tmp_path):
    path = model_dirs("qwen2")
    results = _two(["generate", "--model", path, "--mesh", "tp=2", "--prompt", PROMPT, "--max-new-tokens", "4",
                    "--ignore-eos", "--no-ir"], tmp_path)
    (s0, out0, err0), (s1, out1, err1) = results
    assert s0 == 0 and s1 == 0, err0[-2000:] + err1[-2000:]
    assert "mesh tp=2 across 2 processes" not in out1 and out1 == ""
    assert err1.splitlines() == [err1.splitlines()[0]] and err1.startswith("process 1 of 2 (cpu:2048) joined via")
    assert "which prints the run" in err1
    assert "[mesh] tp=2 across 2 processes" in err0 and "4 tokens, stopped by max_new_tokens" in out0


def test_a_peer_that_never_arrives_and_an_out_of_range_id_each_give_one_line(tmp_path):
    """Process 1 names id 2 of 2: it stops at once; process 0 waits the timeout the user set for it, then
    stops. Each says so in one line, and exits with status 2."""
    started = time.monotonic()
    results = _two(["generate", "--model", "pydoc-llama", "--mesh", "tp=2", "--distributed-timeout", "4"], tmp_path,
                   per_process=[[], ["--process-id", "2"]], timeout=60)
    (s0, out0, err0), (s1, out1, err1) = results
    assert time.monotonic() - started < 45
    assert s1 == 2 and err1.splitlines() == [
        "error: --process-id 2 is out of range: with --num-processes 2 the ids are 0 … 1 (0 is the coordinator's host)."]
    assert s0 == 2 and len(err0.splitlines()) == 1, err0
    assert err0.startswith("error: not every process joined at 127.0.0.1:") and "within 4 s" in err0
    assert "--distributed-timeout" in err0 and out0 == out1 == ""


def test_a_peer_that_fails_after_joining_stops_the_other(tmp_path):
    results = _two(["generate", "--mesh", "tp=2", "--max-new-tokens", "2", "--json"], tmp_path,
                   per_process=[["--model", "pydoc-llama"], ["--model", str(tmp_path / "no-such-model")]], timeout=90)
    (s0, _, err0), (s1, _, err1) = results
    assert s1 == 2 and err1.splitlines()[-1].startswith("error: Folder ") and "does not exist" in err1
    assert s0 == 2 and len(err0.splitlines()) == 1, err0
    assert err0.startswith("error: process 1 of 2 failed, so this one stops: Folder ")
