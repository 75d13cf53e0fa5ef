"""Tensor parallelism on simulated CPU devices: first-call and steady ms/token for tp=1/2/4, bytes per device.

    .venv/bin/python bench/mesh.py [--model random:gpt2-small-shape] [--tokens 32] [--json]

Simulated devices share this machine's cores, so a speed-up is reported, not promised: with 2 cores, 4
"devices" mostly add collective overhead. Bytes per device show the real saving.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from bench.scratch import use_own_dirs  # noqa: E402

use_own_dirs()  # never the user's settings or caches


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="random:gpt2-small-shape")
    parser.add_argument("--tps", nargs="+", type=int, default=[1, 2, 4])
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from app.core.parallel.mesh import simulate_cpu_devices

    simulate_cpu_devices(max(args.tps))
    import warnings

    import transformers

    from app.core.engine.engine import load_engine
    from app.core.events import CallRecord, IREvent
    from app.core.parallel.mesh import MeshSpec, collectives
    from app.core.settings import GenerationSettings

    warnings.filterwarnings("ignore")
    transformers.logging.set_verbosity_error()
    engine = load_engine(args.model)
    rows = []
    for tp in args.tps:
        engine.set_mesh(MeshSpec((("tp", tp),)))
        records, decode_ir = [], None
        for e in engine.generate("The jit function traces a Python function",
                                 GenerationSettings(max_new_tokens=args.tokens)):
            if isinstance(e, CallRecord):
                records.append(e)
            elif isinstance(e, IREvent) and e.step == "decode":
                decode_ir = e.ir
        steady = [r.wall_ms for r in records if r.step == "decode" and not r.compiled]
        per_device = engine.device_bytes()
        kinds = [c.kind for c in collectives(decode_ir.hlo)] if decode_ir else []
        rows.append({
            "tp": tp,
            "first_prefill_ms": records[0].wall_ms,
            "first_decode_ms": next(r.wall_ms for r in records if r.step == "decode"),
            "steady_ms_per_token": statistics.median(steady),
            "weight_bytes_per_device": max(per_device["weights"].values()),
            "cache_bytes_per_device": max(per_device.get("kv_cache", {"-": 0}).values()),
            "all_reduces": kinds.count("all-reduce"),
            "collectives": len(kinds),
        })
    if args.json:
        print(json.dumps({"model": engine.label, "rows": rows}, indent=2))
        return 0
    print(f"{engine.label}: tensor parallel on simulated CPU devices ({os.cpu_count()} cores shared)")
    print(f"{'tp':>3} {'1st prefill ms':>15} {'1st decode ms':>14} {'steady ms/tok':>14} "
          f"{'weights MB/dev':>15} {'cache MB/dev':>13} {'all-reduces':>12} {'collectives':>12}")
    for r in rows:
        print(f"{r['tp']:>3} {r['first_prefill_ms']:>15,.0f} {r['first_decode_ms']:>14,.0f} "
              f"{r['steady_ms_per_token']:>14,.2f} {r['weight_bytes_per_device'] / 1e6:>15,.1f} "
              f"{r['cache_bytes_per_device'] / 1e6:>13,.2f} {r['all_reduces']:>12} {r['collectives']:>12}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
