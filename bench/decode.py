"""Decode benchmark: per mode, first calls (prefill and decode, split into compile phases), total compile
time, steady ms/token and its ratio to the memory-bandwidth bound, then the modes' speed ratios from paired,
interleaved steady-state rounds with 95 % intervals, in one process.

    .venv/bin/python bench/decode.py [--models smollm2-135m-instruct random:gpt2-small-shape]
        [--modes torch torchax-eager jit-dynamic jit-static jit-loop torch-compile] [--tokens 48]
        [--device cpu|gpu|tpu] [--dtype float32|bfloat16]
        [--inductor-cache cold|warm] [--threads N] [--steady-budget 60] [--steady-rounds 9]
        [--steady-tokens 16] [--steady-block-ms 300] [--no-steady] [--long-tokens 8000] [--json]

``--device gpu`` runs every mode on the GPU: ``torch`` (PyTorch eager) and ``torch-compile`` (Inductor's Triton
kernels, ``torch.compile`` mode ``reduce-overhead``: CUDA graphs) on CUDA, the JAX modes on JAX's GPU device;
its defaults are ``--models random:llama-1b-shape --dtype bfloat16 --modes torch torch-compile jit-static``
(the shape of issue 30's H100 figures). On a TPU the PyTorch modes cannot run (no torch device here).

The memory-bandwidth bound: decoding one token reads every weight once, so
``bound_ms = weight_bytes / read_bandwidth``. ``host %`` is the median host share of the steady decode calls of
a jitted mode: of each call's wall time, what is not waiting for the device (``app.core.events.HOST_PARTS``: the
inputs' transfer, flattening, dispatch, the token to the host); the medians of each part follow the table. On the CPU read bandwidth is the faster of two reads of 1 GiB
of float32, each the best of 5: NumPy sums, one thread per core, and an XLA matrix-vector product (either can be
bound by the CPU rather than the memory; :func:`app.core.profile.capture.read_bandwidth_gbs`, the profiler's
roofline figure); on a GPU or TPU by a device-to-device copy through JAX on that device,
bytes read + written per second (best of 5 over 1 GiB; :func:`app.core.engine.device.device_copy_bandwidth_gbs`;
an H100 80GB read 3.03 TB/s). Compare modes within one run, as ratios: this machine's
speed moves between days (CONTEXT.md).

``--inductor-cache cold`` (default) points Inductor at a fresh temporary directory, so its FX graph and AOT
autograd caches miss and every C++ kernel is built (XLA compiles in-process here: no persistent cache is
configured); ``warm`` uses the app's default Inductor directory, so a second invocation measures a disk hit.

Speed ratios (issue 54) come from paired, interleaved steady-state rounds after every mode has run cold
(:mod:`bench.decode_rounds`, on the race's verdict module :mod:`app.core.verdict`): per round one block of at
least ``--steady-block-ms`` (300; >= 100 ms as pyperf's) per mode (``--modes`` but torchax-eager and
jit-dynamic), jit-static twice (the A/A noise floor), and the model's matrix-vector products alone
(``bench/matvec_only.py``'s chain, same shapes and bytes) as one more lane; the order shuffled per round, at
least ``--steady-rounds`` (9) kept rounds, more until every pair's 95 % interval is within ±3 % or
``--steady-budget`` seconds (60) have passed; preempted rounds dropped and counted. Per model it states
jit-loop ÷ jit-static, jit-static ÷ torch eager, jit-static ÷ torch.compile (when ``--modes`` has
``torch-compile``: its cold compile takes ~84 s on SmolLM2, so it is not in the CPU default) — speed-ups, each
the geometric mean of the rounds' ratios with its 95 % interval — and each jitted step's time ÷ its products
alone (what our code adds above XLA's kernels), with each lane's ``x bound`` (its median block against the bound
of a probe taken just before the rounds; a second probe after them is printed beside it). Targets, PASS/MISS:
jit-loop ÷ jit-static with the interval's low end > 1.0; jit-static ÷ torch eager >= 2.0 with the low end >= 1.8;
jit-loop's step ÷ its products alone <= 1.15 (the geometric mean). Cold goals (issues 13 and 31): jit-static's
compile total <= 0.1x Inductor's, jit-loop's loop compile <= 1.5x jit-static's decode compile. ``--json`` prints
per model ``steady`` (``pairs``: ``name, mode, against, ratio, ci_low, ci_high, rounds, aa_noise, dropped,
noisy, text``; the A/A lane, rounds, dropped rounds, threads, why the rounds stopped, each lane's median ms).

Issue 38, for jit-static and jit-loop (``--long-tokens``, default 8,000; 0 skips it): the first ``--long-first``
(100) tokens of a run with room for ``--long-tokens`` new tokens decode within 1.2x the steady ms/token of a
``--short-tokens`` (128) run, same mode, both warm (the KV cache grows in buckets: ``app.core.runtime.kv_cache``);
each cold row's ``cache`` column is the KV-cache positions its run ended with (``Summary.cache_len``).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import tempfile
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from bench.scratch import use_own_dirs  # noqa: E402

use_own_dirs()  # never the user's settings or caches
warnings.filterwarnings("ignore")

import numpy as np  # noqa: E402

import app  # noqa: E402, F401  (sets OMP_WAIT_POLICY=PASSIVE before torch loads: libgomp reads it at load)
from bench.decode_long import PROMPT, bench_long  # noqa: E402
from bench.decode_report import cold_goals, print_result, targets  # noqa: E402

SLOW_MODES = ("torchax-eager", "jit-dynamic")


def bench_mode(engine, mode: str, n_tokens: int) -> dict:
    """One cold run of ``mode`` (every compiled step of the engine dropped first)."""
    from app.core.events import CallRecord, FinishedEvent, steady_decode_ms, steady_host_ms, steady_host_share
    from app.core.modes.torch_compile import clear_torch_compile
    from app.core.report.text import summary_line
    from app.core.settings import GenerationSettings

    engine.clear_compiled()
    clear_torch_compile(engine)
    settings = GenerationSettings(mode=mode, max_new_tokens=n_tokens, capture_ir=False, stop_at_eos=False)
    records, finished = [], None
    for event in engine.generate(PROMPT, settings):
        if isinstance(event, CallRecord):
            records.append(event)
        elif isinstance(event, FinishedEvent):
            finished = event
    prefill, decode = records[0], [r for r in records if r.step == "decode"]
    steady = steady_decode_ms(records)
    if steady is None and decode:  # every decode step compiled (jit-dynamic: one shape per length)
        steady = float(np.median([r.wall_ms for r in decode]))
    print(f"  {mode}: {summary_line(finished)}", flush=True)
    return {
        "mode": mode,
        "device": finished.device,
        "tokens": finished.summary.n_tokens,
        "first_prefill_ms": prefill.wall_ms,
        "first_decode_ms": decode[0].wall_ms if decode else None,
        "prefill_phases": prefill.compile_phases,
        "decode_phases": decode[0].compile_phases if decode else {},
        "decode_compile_ms": decode[0].compile_total_ms if decode else None,
        "decode_timing": decode[-1].timing if decode else None,
        "compile_total_ms": sum(r.compile_total_ms for r in records if r.compiled),
        "compiles": finished.summary.n_compiles,
        "steady_ms_per_token": steady,
        "decode_tokens_per_s": 1000.0 / steady if steady else None,
        "token_ids": finished.token_ids,
        "host_share": steady_host_share(records),
        "host_ms": steady_host_ms(records),
        "leaves": decode[-1].leaves if decode else None,
        "cache_len": finished.summary.cache_len,
    }


def token_interval_ms(arrivals: list[float], skip: int = 4) -> float | None:
    """Median interval (ms) between consecutive token arrivals on the host (``time.perf_counter`` seconds at each
    ``TokenEvent``), the first ``skip`` tokens left out (the prefill, the first decode's compile): the decode rate a
    reader of the stream sees, everything between two tokens included (the step's call, and for jit-static the
    engine's Python between calls, which the call's ``wall_ms`` leaves out)."""
    gaps = np.diff(arrivals[skip:]) * 1000
    return float(np.median(gaps)) if len(gaps) else None


#: Defaults per platform: models, dtype, modes.
DEFAULTS = {
    "cpu": (["smollm2-135m-instruct", "random:gpt2-small-shape"], "float32",
            ["torch", "torchax-eager", "jit-dynamic", "jit-static", "jit-loop"]),
    "gpu": (["random:llama-1b-shape"], "bfloat16", ["torch", "torch-compile", "jit-static", "jit-loop"]),
    "tpu": (["random:llama-1b-shape"], "bfloat16", ["jit-static", "jit-loop"]),
}


def measure_bandwidth(device, cached: bool = True) -> tuple[float, str]:
    """``(GB/s, how)``: NumPy's read of 1 GiB on the CPU, a JAX device-to-device copy elsewhere; ``cached=False``
    measures the CPU again (its probe is memoised per process; the device copy is measured on every call)."""
    if device.platform == "cpu":
        from app.core.profile.capture import read_bandwidth_gbs

        return read_bandwidth_gbs(1 << 30, repeats=5, cached=cached), "the faster of a NumPy sum and an XLA matrix-vector product over 1 GiB, read"
    from app.core.engine.device import device_copy_bandwidth_gbs

    return device_copy_bandwidth_gbs(device.jax_device, 1 << 30, repeats=5), "JAX device copy of 1 GiB, read + write"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=None, help="default: per device (see the module doc)")
    parser.add_argument("--modes", nargs="+", default=None, help="default: per device (see the module doc)")
    parser.add_argument("--device", choices=("cpu", "gpu", "tpu"), default=None,
                        help="where to run (default: JAX's default backend)")
    parser.add_argument("--dtype", choices=("float32", "bfloat16"), default=None,
                        help="weights dtype (default: float32 on cpu, bfloat16 on gpu / tpu)")
    parser.add_argument("--tokens", type=int, default=48,
                        help="tokens of the cold runs of torch, jit-static, jit-loop and torch-compile")
    parser.add_argument("--slow-tokens", type=int, default=4, help=f"tokens for {' and '.join(SLOW_MODES)}")
    parser.add_argument("--inductor-cache", choices=("cold", "warm"), default="cold")
    parser.add_argument("--threads", type=int, default=None, help="torch.set_num_threads (default: unchanged; the "
                        "rounds give torch XLA:CPU's thread budget)")
    parser.add_argument("--steady-budget", type=float, default=60.0,
                        help="seconds of paired rounds per model, after the minimum rounds (default 60)")
    parser.add_argument("--steady-rounds", type=int, default=9, help="kept rounds at least (default 9)")
    parser.add_argument("--steady-tokens", type=int, default=16, help="tokens per generation in a block")
    parser.add_argument("--steady-block-ms", type=float, default=300.0,
                        help="a block lasts at least this long (default 300: /proc/stat counts stolen time in 10 ms "
                             "ticks, and one tick in a 100 ms block is over the 5 %% that drops a round)")
    parser.add_argument("--no-steady", action="store_true", help="skip the paired rounds")
    parser.add_argument("--long-tokens", type=int, default=8000,
                        help="issue 38: the jit modes' first --long-first tokens of a run of this many new tokens "
                             "against a --short-tokens run (0: skip)")
    parser.add_argument("--long-first", type=int, default=100)
    parser.add_argument("--short-tokens", type=int, default=128)
    parser.add_argument("--json", action="store_true")
    return parser.parse_args(argv)


def steady_rounds(engine, modes: list[str], args: argparse.Namespace, dtype: str, probe) -> dict:
    """The paired rounds of one model (:mod:`bench.decode_rounds`), a read-bandwidth probe before and after:
    ``{"steady", "probes_gbs", "x_bound"}`` (each lane's median block over the bound of the first probe)."""
    from app.core.steady import SteadyPlan
    from bench.decode_rounds import NO_ROUNDS, mode_lane, products_lane, run_rounds

    run = [m for m in dict.fromkeys(modes) if m not in NO_ROUNDS]
    if args.no_steady or not run:
        return {"steady": None, "probes_gbs": [], "x_bound": {}}
    lanes = [mode_lane(engine, m, PROMPT, args.steady_tokens) for m in run]
    weights = dict.fromkeys(run, engine.loaded.param_bytes)
    if dtype == "float32" and {"jit-static", "jit-loop"} & set(run):
        lane, weights[lane.label] = products_lane(engine.loaded.model)
        lanes.append(lane)
    aa = "jit-static" if "jit-static" in run else run[0]
    plan = SteadyPlan(budget_s=args.steady_budget, min_rounds=args.steady_rounds, tokens=args.steady_tokens,
                      block_ms=args.steady_block_ms)
    probes = [probe()]

    def progress(r, v) -> None:
        if not args.json:
            figs = " · ".join(f"{b.label} {b.ms_per_token:.2f}" for b in r.blocks)
            print(f"  round {r.index + 1}: {figs}" + (" (dropped)" if r.index in v.dropped else ""), flush=True)

    steady = run_rounds(lanes, aa, plan, progress)
    probes.append(probe())
    bound_ms = {label: n / (probes[0] * 1e9) * 1000 for label, n in weights.items()}
    x_bound = {label: (ms / bound_ms[label] if ms else None) for label, ms in steady["median_ms"].items()}
    return {"steady": steady, "probes_gbs": probes, "x_bound": x_bound}


def bench_model(name: str, modes: list[str], dtype: str, device, args: argparse.Namespace, bandwidth: float,
                how: str) -> dict:
    """One model: cold runs, the paired rounds, issue 38's long runs, the targets."""
    import torch

    from app.core.engine.engine import load_engine

    engine = load_engine(name, dtype, device=device)
    weight_bytes = engine.loaded.param_bytes
    bound_ms = weight_bytes / (bandwidth * 1e9) * 1000
    rows = [bench_mode(engine, m, args.slow_tokens if m in SLOW_MODES else args.tokens) for m in modes]
    for r in rows:
        r["ratio_to_bound"] = r["steady_ms_per_token"] / bound_ms if r["steady_ms_per_token"] else None
    rounds = steady_rounds(engine, modes, args, dtype, lambda: measure_bandwidth(device, cached=False)[0])
    long_rows = [bench_long(engine, m, args.short_tokens, args.long_tokens, args.long_first)
                 for m in modes if m in ("jit-static", "jit-loop") and args.long_tokens > 0]
    return {"model": engine.label, "dtype": dtype, "params": engine.loaded.n_params, "weight_bytes": weight_bytes,
            "device": device.label, "torch_device": device.torch_label, "bandwidth_method": how,
            "bandwidth_gbs": bandwidth, "bound_ms_per_token": bound_ms, "torch_threads": torch.get_num_threads(),
            "inductor_cache": args.inductor_cache, "modes": rows, "long_runs": long_rows, **rounds,
            "started_utc": args.started_utc, "load_avg": list(os.getloadavg()),
            "goals": targets(rounds["steady"]) + cold_goals({r["mode"]: r for r in rows})}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    import torch
    import transformers

    from app.core.compile_cache.inductor import default_inductor_cache_dir, set_inductor_cache
    from app.core.engine.device import resolve_device
    from app.core.errors import PlaygroundError

    transformers.logging.set_verbosity_error()
    try:
        device = resolve_device(args.device)
        models, dtype, modes = DEFAULTS[device.platform]
        models, dtype, modes = args.models or models, args.dtype or dtype, args.modes or modes
        for mode in modes:
            device.check(mode)
    except PlaygroundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.threads:
        torch.set_num_threads(args.threads)
    cold = args.inductor_cache == "cold"
    set_inductor_cache(tempfile.mkdtemp(prefix="bench-inductor-") if cold else default_inductor_cache_dir())
    args.started_utc = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    bandwidth, how = measure_bandwidth(device)  # 1 GiB, best of 5: the bench's own figure
    print(f"{args.started_utc}: device {device.label} (torch: {device.torch_label or 'none'}); bandwidth "
          f"{bandwidth:,.1f} GB/s ({how}); load average {os.getloadavg()[0]:.2f}", flush=True)
    results = []
    for name in models:
        res = bench_model(name, modes, dtype, device, args, bandwidth, how)
        results.append(res)
        if not args.json:
            print_result(res)
            sys.stdout.flush()
    if args.json:
        print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
