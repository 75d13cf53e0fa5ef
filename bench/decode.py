"""Decode benchmark: per mode, first-call ms, steady ms/token, tokens/s, ratio to torch, bandwidth bound.

    .venv/bin/python bench/decode.py [--models pydoc-llama random:gpt2-small-shape] [--json]

The memory-bandwidth bound: decoding one token reads every weight once, so
``bound_ms = weight_bytes / read_bandwidth``; read bandwidth is measured here by summing a 1 GiB float32
array with NumPy (best of 5). Targets for fp32 on a 2-core CPU: jit-static steady decode
>= 2.5x the tokens/s of torch, and within 1.3x of the bound.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
warnings.filterwarnings("ignore")

import numpy as np  # noqa: E402

PROMPT = "The jit function traces a Python function into a jaxpr"


def read_bandwidth_gbs(n_bytes: int = 1 << 30, repeats: int = 5) -> float:
    """Sustained read bandwidth in GB/s (1e9 bytes/s): best of ``repeats`` sums over ``n_bytes``, split
    across one thread per core (NumPy releases the GIL in large reductions), as XLA's CPU runtime reads
    weights from every core."""
    from concurrent.futures import ThreadPoolExecutor

    workers = os.cpu_count() or 1
    chunks = np.array_split(np.ones(n_bytes // 4, dtype=np.float32), workers)
    best = float("inf")
    with ThreadPoolExecutor(workers) as pool:
        for _ in range(repeats):
            t0 = time.perf_counter()
            list(pool.map(np.sum, chunks))
            best = min(best, time.perf_counter() - t0)
    return n_bytes / best / 1e9


def bench_mode(engine, mode: str, n_tokens: int) -> dict:
    from app.core.events import CallRecord, FinishedEvent
    from app.core.settings import GenerationSettings

    engine.clear_compiled()
    settings = GenerationSettings(mode=mode, max_new_tokens=n_tokens, capture_ir=False, stop_at_eos=False)
    records, finished = [], None
    for event in engine.generate(PROMPT, settings):
        if isinstance(event, CallRecord):
            records.append(event)
        elif isinstance(event, FinishedEvent):
            finished = event
    decode = [r for r in records if r.step == "decode"]
    steady = [r.wall_ms for r in decode if not r.compiled]
    first_decode = decode[0].wall_ms if decode else None
    steady_ms = float(np.median(steady)) if steady else (float(np.median([r.wall_ms for r in decode])) if decode else None)
    return {
        "mode": mode,
        "tokens": finished.summary.n_tokens,
        "first_call_ms": records[0].wall_ms,
        "first_decode_ms": first_decode,
        "steady_ms_per_token": steady_ms,
        "tokens_per_s": 1000.0 / steady_ms if steady_ms else None,
        "compiles": finished.summary.n_compiles,
        "token_ids": finished.token_ids,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["pydoc-llama", "random:gpt2-small-shape"])
    parser.add_argument("--modes", nargs="+", default=["torch", "torchax-eager", "jit-dynamic", "jit-static"])
    parser.add_argument("--tokens", type=int, default=48, help="tokens for torch and jit-static")
    parser.add_argument("--slow-tokens", type=int, default=4, help="tokens for torchax-eager and jit-dynamic")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    import transformers

    from app.core.engine import load_engine
    from app.core.units import fmt as f

    transformers.logging.set_verbosity_error()
    bandwidth = read_bandwidth_gbs()
    results = []
    for name in args.models:
        engine = load_engine(name)
        weight_bytes = engine.loaded.param_bytes
        bound_ms = weight_bytes / (bandwidth * 1e9) * 1000
        rows = []
        for mode in args.modes:
            n = args.slow_tokens if mode in ("torchax-eager", "jit-dynamic") else args.tokens
            rows.append(bench_mode(engine, mode, n))
        torch_rate = next((r["tokens_per_s"] for r in rows if r["mode"] == "torch"), None)
        for r in rows:
            r["ratio_to_torch"] = r["tokens_per_s"] / torch_rate if torch_rate and r["tokens_per_s"] else None
            r["ratio_to_bound"] = r["steady_ms_per_token"] / bound_ms if r["steady_ms_per_token"] else None
        results.append({"model": engine.label, "params": engine.loaded.n_params, "weight_bytes": weight_bytes,
                        "bandwidth_gbs": bandwidth, "bound_ms_per_token": bound_ms, "modes": rows})
        del engine
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    for res in results:
        print(f"\n{res['model']}: {res['params'] / 1e6:.1f} M params, {res['weight_bytes'] / 1e6:.0f} MB weights; "
              f"read bandwidth {res['bandwidth_gbs']:.1f} GB/s -> bound {res['bound_ms_per_token']:.2f} ms/token")
        print(f"{'mode':<14} {'tokens':>6} {'first call ms':>14} {'1st decode ms':>14} {'steady ms/tok':>14} "
              f"{'tokens/s':>9} {'x torch':>8} {'x bound':>8} {'compiles':>8}")
        for r in res["modes"]:
            print(f"{r['mode']:<14} {r['tokens']:>6} {f(r['first_call_ms'], ',.1f'):>14} "
                  f"{f(r['first_decode_ms'], ',.1f'):>14} {f(r['steady_ms_per_token'], ',.2f'):>14} "
                  f"{f(r['tokens_per_s'], ',.1f'):>9} {f(r['ratio_to_torch'], '.2f'):>8} "
                  f"{f(r['ratio_to_bound'], '.2f'):>8} {r['compiles']:>8}")
        ids = {r["mode"]: r["token_ids"] for r in res["modes"]}
        same = all(v[: len(w)] == w[: len(v)] for v in ids.values() for w in ids.values())
        print(f"greedy tokens identical across modes (common prefix): {same}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
