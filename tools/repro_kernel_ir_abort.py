"""Standalone reproducer: XLA:CPU aborts the process while dumping kernel LLVM IR (``xla_dump_emitter_re``).

No app imports: a small jitted MLP training step (two layers, softmax cross-entropy, SGD with momentum: the
shape of ``app/examples/07_mlp_training.py``) is compiled in a fresh child process (``python THIS --child``)
N times with per-compile XLA debug options::

    compiler_options={"xla_dump_to": tmp, "xla_dump_hlo_pass_re": ".*", "xla_dump_hlo_as_text": True,
                      "xla_dump_emitter_re": ".*"}

and N times without ``xla_dump_emitter_re`` (the pass dumps alone). Prints the jax / jaxlib versions, then per
variant how many runs aborted, with which exit codes, and the distinct stderr lines that name the crash.

Usage: ``python tools/repro_kernel_ir_abort.py [--runs N] [--option NAME=VALUE …]`` (default 8 runs per variant,
~2-3 s a run; ``--option`` adds a compiler option to both variants).

Measured here (2-core x86-64 Linux VM, CPU only, jax 0.12.0.1 / jaxlib 0.12.0.1, Python 3.12.1), two sessions of
8 and 12 runs per variant:

- with ``xla_dump_emitter_re=".*"``: 12 of 20 runs died (6 of 8, then 6 of 12): exit -6 (SIGABRT) 9 times, with
  stderr ``pure virtual method called`` + ``terminate called without an active exception`` (6), ``double free
  or corruption (!prev)`` (2) or ``corrupted size vs. prev_size while consolidating`` (1); exit -11 (SIGSEGV)
  3 times, with no stderr at all. The runs that lived dumped 42 ``.ll`` files.
- without it (pass dumps only): 0 of 20 died.
- ``--option xla_cpu_parallel_codegen_split_count=1`` does not help: 3 of 6 died with the emitter dumps, 0 of 6
  without.

Through the app before the guard (``torchax-playground passes --program app/examples/07_mlp_training.py``, the
kernel-IR compile in the app's own process): 4 of 4 runs aborted (exit 134); the old in-process path measured
alone, 3 of 8.

When a jaxlib release compiles this with the emitter dumps on and never aborts, the guard in
``app/core/passes/record.py`` (the kernel-IR compile runs in a child process; ``app.core.backends.CPU``
``.kernel_ir_options``) can be dropped.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter

DUMP = {"xla_dump_hlo_pass_re": ".*", "xla_dump_hlo_as_text": True}
EMITTER = {"xla_dump_emitter_re": ".*"}
CRASH_MARKERS = ("pure virtual", "terminate called", "double free", "corrupt", "free():", "malloc",
                 "Segmentation", "Check failed", "Fatal Python error", "Aborted")


def child(with_emitter: bool) -> None:
    """Compile the training step once with the dump options (the crash, when it comes, is in this compile)."""
    import jax
    import jax.numpy as jnp

    def init(key, sizes=(32, 64, 10)):
        keys = jax.random.split(key, len(sizes) - 1)
        return [{"w": jax.random.normal(k, (a, b)) / jnp.sqrt(a), "b": jnp.zeros((b,))}
                for k, a, b in zip(keys, sizes[:-1], sizes[1:])]

    def forward(params, x):
        for layer in params[:-1]:
            x = jax.nn.relu(x @ layer["w"] + layer["b"])
        return x @ params[-1]["w"] + params[-1]["b"]

    def loss_fn(params, x, y):
        logits = forward(params, x)
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * jax.nn.one_hot(y, logits.shape[-1]), axis=-1))

    def train_step(params, momentum, x, y, lr=0.1, beta=0.9):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        momentum = jax.tree_util.tree_map(lambda m, g: beta * m + g, momentum, grads)
        params = jax.tree_util.tree_map(lambda p, m: p - lr * m, params, momentum)
        return params, momentum, loss

    params = init(jax.random.key(0))
    momentum = jax.tree_util.tree_map(jnp.zeros_like, params)
    x = jax.random.normal(jax.random.key(1), (64, 32))
    y = jax.random.randint(jax.random.key(2), (64,), 0, 10)
    lowered = jax.jit(train_step).trace(params, momentum, x, y).lower()
    with tempfile.TemporaryDirectory(prefix="repro-kernel-ir-") as tmp:
        extra = json.loads(os.environ.get("REPRO_EXTRA_OPTIONS", "{}"))
        options = {"xla_dump_to": tmp, **DUMP, **(EMITTER if with_emitter else {}), **extra}
        lowered.compile(compiler_options=options)
        n_ll = sum(name.endswith(".ll") for name in os.listdir(tmp))
    print(f"compiled; {n_ll} .ll files dumped", flush=True)


def crash_line(stderr: str) -> str:
    """The first stderr line naming the crash (else the last non-blank line)."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    return next((ln for ln in lines if any(m in ln for m in CRASH_MARKERS)), lines[-1] if lines else "(no stderr)")


def run_variant(with_emitter: bool, runs: int) -> tuple[Counter, Counter]:
    codes: Counter = Counter()
    lines: Counter = Counter()
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "TF_CPP_VMODULE")}
    env["JAX_PLATFORMS"] = "cpu"
    flag = "--child-emitter" if with_emitter else "--child"
    for i in range(runs):
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), flag], capture_output=True, text=True,
                              env=env, timeout=300)
        codes[proc.returncode] += 1
        if proc.returncode != 0:  # every distinct crash line of this run, counted once per run
            lines.update({ln.strip() for ln in proc.stderr.splitlines() if any(m in ln for m in CRASH_MARKERS)}
                         or {crash_line(proc.stderr)})
        print(f"  run {i + 1}: exit {proc.returncode}"
              + (f" ({crash_line(proc.stderr)})" if proc.returncode else f" ({proc.stdout.strip()})"), flush=True)
    return codes, lines


def main() -> int:
    if "--child" in sys.argv[1:] or "--child-emitter" in sys.argv[1:]:
        child("--child-emitter" in sys.argv[1:])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=8, help="child compiles per variant")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                        help="a further compiler option for both variants (JSON value: 1, true, \"text\")")
    args = parser.parse_args()
    extra = {}
    for item in args.option:
        name, _, value = item.partition("=")
        try:
            extra[name] = json.loads(value)
        except ValueError:
            extra[name] = value
    os.environ["REPRO_EXTRA_OPTIONS"] = json.dumps(extra)
    import jax
    import jaxlib

    print(f"jax {jax.__version__}, jaxlib {jaxlib.__version__}, Python {sys.version.split()[0]}, {sys.platform}"
          + (f"; further options {extra}" if extra else ""))
    for with_emitter in (True, False):
        name = "with xla_dump_emitter_re='.*'" if with_emitter else "pass dumps only (no xla_dump_emitter_re)"
        print(f"{name}: {args.runs} runs", flush=True)
        codes, lines = run_variant(with_emitter, args.runs)
        failed = sum(n for code, n in codes.items() if code != 0)
        print(f"=> {failed} of {args.runs} runs failed; exit codes: "
              + ", ".join(f"{code} ×{n}" for code, n in sorted(codes.items())))
        for line, n in lines.most_common():
            print(f"   stderr line in {n} run{'s' if n != 1 else ''}: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
