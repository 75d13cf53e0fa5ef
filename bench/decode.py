"""Decode benchmark: per mode, first calls (prefill and decode, split into compile phases), total compile
time, steady ms/token, tokens/s, ratio to ``torch`` and to the memory-bandwidth bound, in one process.

    .venv/bin/python bench/decode.py [--models smollm2-135m-instruct random:gpt2-small-shape]
        [--modes torch torchax-eager jit-dynamic jit-static jit-loop torch-compile] [--tokens 48]
        [--device cpu|gpu|tpu] [--dtype float32|bfloat16]
        [--inductor-cache cold|warm] [--threads N] [--json]

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

Goals (issues 12, 13 and 38), printed as PASS/MISS: jit-static's steady decode >= 2x the tokens/s of torch and
within 1.3x of the bound; jit-static >= 1.1x the tokens/s of torch-compile, with a total compile time <= 0.1x
Inductor's. For jit-loop (the decode loop as one compiled ``while_loop``; its steady ms/token is the median
host-side interval between its token callbacks): >= 1.05x jit-static's tokens/s (``--pairs``, default 5: both
warm, run in turn, each run's figure the median interval between token arrivals on the host, the goal the median
pair's ratio; the cold runs' steady figures leave jit-static's engine Python between calls out), <= 1.2x the bound
(with ``--pairs``, both bound goals read each mode's median warm run against the bound of a bandwidth probe taken
just before its pair: the machine's bandwidth moves between minutes, 29.5 and 42.1 GB/s a minute apart), its loop's
compile <= 1.5x jit-static's decode compile (issue 31). Issue 38, for jit-static and jit-loop
(``--long-tokens``, default 8,000; 0 skips it): the first ``--long-first`` (100) tokens of a run with room for
``--long-tokens`` new tokens decode within 1.2x the steady ms/token of a ``--short-tokens`` (128) run, same mode, both
warm (the KV cache starts small and grows in buckets as decoding needs it: ``app.core.runtime.kv_cache``); each
row's ``cache`` column is the KV-cache positions its run ended with (``Summary.cache_len``).
"""

from __future__ import annotations

import argparse
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

PROMPT = "The jit function traces a Python function into a jaxpr"
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


def bench_long(engine, mode: str, short_tokens: int, long_tokens: int, first: int, pairs: int = 3) -> dict:
    """Issue 38: the first ``first`` tokens of a run with room for ``long_tokens`` against a ``short_tokens`` run,
    same mode, warm (each run after one of its own shape, so neither pays a compile in its steady figure), ``pairs``
    pairs run in turn: steady ms/token of each (medians), the median pair's ratio, and the KV-cache positions each
    decoded with (``Summary.cache_len``)."""
    from app.core.events import CallRecord, FinishedEvent, TokenEvent, steady_decode_ms
    from app.core.settings import GenerationSettings

    def run(n_new: int, stop_after: int | None) -> tuple[float | None, int | None, int]:
        settings = GenerationSettings(mode=mode, max_new_tokens=n_new, capture_ir=False, stop_at_eos=False)
        records, tokens, finished = [], [], None
        full = engine.cache_len_for(len(engine.encode(PROMPT)), settings)
        limit = stop_after or n_new
        for event in engine.generate(PROMPT, settings, should_stop=lambda: len(tokens) >= limit):
            if isinstance(event, CallRecord):
                records.append(event)
            elif isinstance(event, TokenEvent):
                tokens.append(event)
            elif isinstance(event, FinishedEvent):
                finished = event
        return steady_decode_ms(records), finished.summary.cache_len if finished else None, full

    run(short_tokens, None)  # compiles the short run's steps
    run(long_tokens, first)  # compiles the long run's first bucket
    shorts, longs = [], []
    for _ in range(pairs):  # in turn, so that the machine's drift moves both alike; the median pair's ratio
        shorts.append(run(short_tokens, None))
        longs.append(run(long_tokens, first))
    ratios = [lg[0] / sh[0] for sh, lg in zip(shorts, longs) if lg[0] and sh[0]]
    ratio = float(np.median(ratios)) if ratios else None
    short_ms, short_cache, _ = shorts[-1]
    long_ms, long_cache, long_full = longs[-1]
    short_ms = float(np.median([sh[0] for sh in shorts if sh[0]]))
    long_ms = float(np.median([lg[0] for lg in longs if lg[0]]))
    print(f"  {mode}: first {first} tokens of a {long_tokens:,}-token run ({long_cache} of {long_full:,} cache "
          f"positions) {long_ms:.2f} ms/token vs a {short_tokens}-token run ({short_cache} positions) "
          f"{short_ms:.2f} ms/token (medians of {pairs}): median pair ratio {ratio:.2f} "
          f"[{min(ratios):.2f}-{max(ratios):.2f}] (target <= 1.2)", flush=True)
    return {"mode": mode, "short_tokens": short_tokens, "short_ms_per_token": short_ms, "short_cache_len": short_cache,
            "long_tokens": long_tokens, "first": first, "long_ms_per_token": long_ms, "long_cache_len": long_cache,
            "long_full_cache_len": long_full, "ratio": ratio, "pair_ratios": ratios}


def token_interval_ms(arrivals: list[float], skip: int = 4) -> float | None:
    """Median interval (ms) between consecutive token arrivals on the host (``time.perf_counter`` seconds at each
    ``TokenEvent``), the first ``skip`` tokens left out (the prefill, the first decode's compile): the decode rate a
    reader of the stream sees, everything between two tokens included (the step's call, and for jit-static the
    engine's Python between calls, which the call's ``wall_ms`` leaves out)."""
    gaps = np.diff(arrivals[skip:]) * 1000
    return float(np.median(gaps)) if len(gaps) else None


def bench_pairs(engine, n_tokens: int, weight_bytes: int, probe, pairs: int = 5,
                modes: tuple[str, str] = ("jit-static", "jit-loop")) -> dict:
    """Issue 38: the two modes warm, run in turn ``pairs`` times (so the machine's drift, 16-54 GB/s between weeks
    and +-10 % between minutes here, moves both alike), each run's figure its :func:`token_interval_ms`. Before
    each pair ``probe()`` measures the read bandwidth (GB/s) again, and each run's ratio to the bound is its
    interval over that pair's bound (``weight_bytes / bandwidth``): the bound of the minute the run ran in, not of
    the bench's start (two probes a minute apart read 29.5 and 42.1 GB/s here). Returns each mode's median interval
    and median ratio to the bound, the per-pair ratios ``first / second`` (the second's tokens/s over the first's)
    and their median, the figure the loop-over-step goal reads."""
    import time

    from app.core.events import TokenEvent
    from app.core.settings import GenerationSettings

    def run(mode: str) -> float | None:
        settings = GenerationSettings(mode=mode, max_new_tokens=n_tokens, capture_ir=False, stop_at_eos=False)
        arrivals = [time.perf_counter() for event in engine.generate(PROMPT, settings) if isinstance(event, TokenEvent)]
        return token_interval_ms(arrivals)

    intervals: dict[str, list[float]] = {m: [] for m in modes}
    to_bound: dict[str, list[float]] = {m: [] for m in modes}
    bandwidths = []
    for _ in range(pairs):
        bandwidths.append(probe())
        bound_ms = weight_bytes / (bandwidths[-1] * 1e9) * 1000
        for mode in modes:
            intervals[mode].append(run(mode) or float("nan"))
            to_bound[mode].append(intervals[mode][-1] / bound_ms)
    ratios = [a / b for a, b in zip(*intervals.values())]
    ratio = float(np.nanmedian(ratios))
    first, second = (float(np.nanmedian(intervals[m])) for m in modes)
    first_b, second_b = (float(np.nanmedian(to_bound[m])) for m in modes)
    print(f"  {modes[1]} against {modes[0]}, warm, {pairs} pairs in turn, median token interval: {second:.2f} against "
          f"{first:.2f} ms/token ({second_b:.2f}x and {first_b:.2f}x the bound of each pair's probe, "
          f"{min(bandwidths):.1f}-{max(bandwidths):.1f} GB/s); pair ratios "
          f"{', '.join(f'{r:.2f}' for r in ratios)} (median {ratio:.2f})", flush=True)
    return {"modes": list(modes), "tokens": n_tokens, "intervals_ms": intervals, "median_ms": [first, second],
            "bandwidths_gbs": bandwidths, "ratios_to_bound": to_bound, "ratio_to_bound": [first_b, second_b],
            "pair_ratios": ratios, "ratio": ratio}


def goals(rows: dict[str, dict], bound_ms: float, pair: dict | None = None) -> list[tuple[str, float | None, str, bool | None]]:
    """(goal, measured value, target, met) for the rows present."""
    js, t, tc = rows.get("jit-static"), rows.get("torch"), rows.get("torch-compile")
    out = []

    def to_bound(mode: str, row: dict, limit: float) -> tuple[str, float, str, bool]:
        """``mode``'s ms/token over the bound: its median warm run against its pair's probe (bench_pairs), else its
        cold run against the bench's first probe."""
        if pair is not None:
            v, what = pair["ratio_to_bound"][pair["modes"].index(mode)], f"{mode} ms/token / bound (warm pairs)"
        else:
            v, what = row["steady_ms_per_token"] / bound_ms, f"{mode} ms/token / bound"
        return what, v, f"<= {limit}", v <= limit

    if js and js["steady_ms_per_token"]:
        if t:
            v = t["steady_ms_per_token"] / js["steady_ms_per_token"]
            out.append(("jit-static tokens/s / torch", v, ">= 2", v >= 2.0))
        out.append(to_bound("jit-static", js, 1.3))
        if tc and tc["steady_ms_per_token"]:
            v = tc["steady_ms_per_token"] / js["steady_ms_per_token"]
            out.append(("jit-static tokens/s / torch-compile", v, ">= 1.1", v >= 1.1))
            if tc["compile_total_ms"]:
                v = js["compile_total_ms"] / tc["compile_total_ms"]
                out.append(("jit-static compile total / Inductor's", v, "<= 0.1", v <= 0.1))
    loop = rows.get("jit-loop")
    if loop and loop["steady_ms_per_token"]:
        if pair is not None:  # warm pairs in turn, token intervals: the fair figure (bench_pairs)
            v = pair["ratio"]
            out.append(("jit-loop tokens/s / jit-static (warm pairs)", v, ">= 1.05", v >= 1.05))
        elif js and js["steady_ms_per_token"]:
            v = js["steady_ms_per_token"] / loop["steady_ms_per_token"]
            out.append(("jit-loop tokens/s / jit-static", v, ">= 1.05", v >= 1.05))
            if js["decode_compile_ms"] and loop["decode_compile_ms"]:
                v = loop["decode_compile_ms"] / js["decode_compile_ms"]
                out.append(("jit-loop loop compile / jit-static decode compile", v, "<= 1.5", v <= 1.5))
        out.append(to_bound("jit-loop", loop, 1.2))
    return out


def first_difference(a: list[int], b: list[int]) -> int | None:
    """Index of the first token where ``a`` and ``b`` differ over their common length (None: identical)."""
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), None)


def _phases(phases: dict[str, float]) -> str:
    return ", ".join(f"{name} {ms:,.0f}" for name, ms in phases.items())


def print_result(res: dict) -> None:
    from app.core.units import fmt as f

    print(f"\n{res['model']} ({res['dtype']}) on {res['device']} (torch modes on {res['torch_device'] or '-'}): "
          f"{res['params'] / 1e6:.1f} M params, {res['weight_bytes'] / 1e6:.0f} MB weights; "
          f"bandwidth {res['bandwidth_gbs']:,.1f} GB/s ({res['bandwidth_method']}) -> bound "
          f"{res['bound_ms_per_token']:.2f} ms/token; "
          f"torch threads {res['torch_threads']}, Inductor cache {res['inductor_cache']}")
    print(f"{'mode':<14} {'device':<28} {'tokens':>6} {'1st prefill ms':>14} {'1st decode ms':>14} {'compile ms':>11} "
          f"{'compiles':>8} {'steady ms/tok':>14} {'tokens/s':>9} {'x torch':>8} {'x bound':>8} {'host %':>7} "
          f"{'cache':>6}")
    for r in res["modes"]:
        print(f"{r['mode']:<14} {r['device'][:28]:<28} {r['tokens']:>6} {f(r['first_prefill_ms'], ',.1f'):>14} "
              f"{f(r['first_decode_ms'], ',.1f'):>14} {f(r['compile_total_ms'], ',.0f'):>11} {r['compiles']:>8} "
              f"{f(r['steady_ms_per_token'], ',.2f'):>14} {f(r['decode_tokens_per_s'], ',.1f'):>9} "
              f"{f(r['ratio_to_torch'], '.2f'):>8} {f(r['ratio_to_bound'], '.2f'):>8} "
              f"{f(r['host_share'] and r['host_share'] * 100, '.1f'):>7} {f(r['cache_len'], 'd'):>6}")
    for r in res["modes"]:
        if r["decode_timing"] and r["decode_timing"] != "call":
            print(f"  {r['mode']} steady ms/token is the median {r['decode_timing']} (one call runs every token)")
    for r in res["modes"]:
        if r["host_ms"]:
            parts = " · ".join(f"{k} {v:.3f}" for k, v in r["host_ms"].items())
            print(f"  {r['mode']} steady decode call on the host (medians, ms): {parts}; {r['leaves']} argument leaves")
    for r in res["modes"]:
        for kind in ("prefill", "decode"):
            if r[f"{kind}_phases"]:
                print(f"  {r['mode']} first {kind} compile phases (ms): {_phases(r[f'{kind}_phases'])}")
    ids = {r["mode"]: r["token_ids"] for r in res["modes"]}
    same = all(v[: len(w)] == w[: len(v)] for v in ids.values() for w in ids.values())
    print(f"greedy tokens identical across modes (common prefix): {same}")
    ref = next(iter(ids), None)
    for mode, tokens in ids.items():
        if mode != ref:
            at = first_difference(ids[ref], tokens)
            n = min(len(ids[ref]), len(tokens))
            print(f"  {mode} vs {ref}: " + (f"identical over {n} tokens" if at is None else
                                           f"first differs at token {at} ({ids[ref][at]} vs {tokens[at]})"))
    for name, value, target, met in res["goals"]:
        print(f"goal {name}: {value:.2f} (target {target}) {'PASS' if met else 'MISS'}")
    for r in res["long_runs"]:
        if r["ratio"] is not None:
            print(f"goal {r['mode']} first {r['first']} tokens of {r['long_tokens']:,} / a {r['short_tokens']}-token "
                  f"run: {r['ratio']:.2f} (target <= 1.2) {'PASS' if r['ratio'] <= 1.2 else 'MISS'}")


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=None, help="default: per device (see the module doc)")
    parser.add_argument("--modes", nargs="+", default=None, help="default: per device (see the module doc)")
    parser.add_argument("--device", choices=("cpu", "gpu", "tpu"), default=None,
                        help="where to run (default: JAX's default backend)")
    parser.add_argument("--dtype", choices=("float32", "bfloat16"), default=None,
                        help="weights dtype (default: float32 on cpu, bfloat16 on gpu / tpu)")
    parser.add_argument("--tokens", type=int, default=48,
                        help="tokens for torch, jit-static, jit-loop and torch-compile")
    parser.add_argument("--slow-tokens", type=int, default=4, help=f"tokens for {' and '.join(SLOW_MODES)}")
    parser.add_argument("--inductor-cache", choices=("cold", "warm"), default="cold")
    parser.add_argument("--threads", type=int, default=None, help="torch.set_num_threads (default: unchanged)")
    parser.add_argument("--long-tokens", type=int, default=8000,
                        help="issue 38: the jit modes' first --long-first tokens of a run of this many new tokens "
                             "against a --short-tokens run (0: skip)")
    parser.add_argument("--long-first", type=int, default=100)
    parser.add_argument("--short-tokens", type=int, default=128)
    parser.add_argument("--pairs", type=int, default=5,
                        help="issue 38: jit-static and jit-loop warm, run in turn this many times, the read bandwidth "
                             "probed again before each pair; the loop-over-step goal reads the median pair's ratio of "
                             "token intervals, the bound goals each mode's median ratio to its pair's bound (0: the "
                             "cold runs' figures against the bench's first probe)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    import torch
    import transformers

    from app.core.compile_cache.inductor import default_inductor_cache_dir, set_inductor_cache
    from app.core.engine.device import resolve_device
    from app.core.engine.engine import load_engine
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
    bandwidth, how = measure_bandwidth(device)  # 1 GiB, best of 5: the bench's own figure
    print(f"device {device.label} (torch: {device.torch_label or 'none'}); bandwidth {bandwidth:,.1f} GB/s ({how})",
          flush=True)
    results = []
    for name in models:
        engine = load_engine(name, dtype, device=device)
        weight_bytes = engine.loaded.param_bytes
        bound_ms = weight_bytes / (bandwidth * 1e9) * 1000
        rows = [bench_mode(engine, m, args.slow_tokens if m in SLOW_MODES else args.tokens) for m in modes]
        torch_rate = next((r["decode_tokens_per_s"] for r in rows if r["mode"] == "torch"), None)
        for r in rows:
            r["ratio_to_torch"] = r["decode_tokens_per_s"] / torch_rate if torch_rate and r["decode_tokens_per_s"] else None
            r["ratio_to_bound"] = r["steady_ms_per_token"] / bound_ms if r["steady_ms_per_token"] else None
        pair = (bench_pairs(engine, args.tokens, weight_bytes, lambda: measure_bandwidth(device, cached=False)[0], args.pairs)
                if args.pairs > 0
                and {"jit-static", "jit-loop"} <= set(modes) else None)
        long_rows = [bench_long(engine, m, args.short_tokens, args.long_tokens, args.long_first)
                     for m in modes if m in ("jit-static", "jit-loop") and args.long_tokens > 0]
        res = {"model": engine.label, "dtype": dtype, "params": engine.loaded.n_params, "weight_bytes": weight_bytes,
               "device": device.label, "torch_device": device.torch_label, "bandwidth_method": how,
               "bandwidth_gbs": bandwidth, "bound_ms_per_token": bound_ms, "torch_threads": torch.get_num_threads(),
               "inductor_cache": args.inductor_cache, "modes": rows, "long_runs": long_rows,
               "loop_pairs": pair, "goals": goals({r["mode"]: r for r in rows}, bound_ms, pair)}
        results.append(res)
        if not args.json:
            print_result(res)
            sys.stdout.flush()
        del engine
    if args.json:
        print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
