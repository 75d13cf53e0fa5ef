"""GGUF load time: the first load (dequantize and fill the conversion cache) vs a load from that cache.

    .venv/bin/python bench/load_time.py [--model smollm2-135m-instruct] [--json]

Each load runs ``app.core.models.sources.load_model`` in a fresh process (as when the app starts again) with
``TORCHAX_PLAYGROUND_CACHE_DIR`` pointing at an empty temporary dir: load 1 converts the GGUF, loads 2 and
3 read the stored Hugging Face folder. Times exclude the interpreter start and the torch/transformers
imports (measured separately as ``import_s``); ``cpu_s`` is the process's CPU time over the load (all its
threads: the first load dequantizes on a second one), steadier than the wall time when other work shares the
cores. Target: a cached load under 5 s.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench.scratch import use_own_dirs  # noqa: E402

use_own_dirs()  # never the user's settings or caches
ROOT = os.path.join(os.path.dirname(__file__), "..")
CHILD = """
import json, sys, time
t0 = time.perf_counter()
import torch, transformers  # noqa: F401
t1, c1 = time.perf_counter(), time.process_time()
from app.core.models.sources import load_model, parse_model
messages = []
loaded = load_model(parse_model(sys.argv[1]), on_progress=messages.append)
t2, c2 = time.perf_counter(), time.process_time()
print(json.dumps({"import_s": t1 - t0, "load_s": t2 - t1, "cpu_s": c2 - c1, "converted": any("dequantizing" in m for m in messages),
                  "label": loaded.spec.label, "n_params": loaded.n_params}))
"""


def load_once(model: str, cache_dir: str) -> dict:
    env = {**os.environ, "TORCHAX_PLAYGROUND_CACHE_DIR": cache_dir, "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, "-c", CHILD, model], cwd=ROOT, env=env, capture_output=True, text=True,
                         check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m-instruct", help="a GGUF model: built-in name or path")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache_dir:
        runs = [load_once(args.model, cache_dir) for _ in range(3)]
    first, cached = runs[0], min(r["load_s"] for r in runs[1:])
    ratio = first["load_s"] / cached
    if args.json:
        print(json.dumps({"model": args.model, "runs": runs, "first_s": first["load_s"], "cached_s": cached,
                          "ratio": ratio}, indent=2))
        return 0
    print(f"model {first['label']} ({first['n_params'] / 1e6:.1f} M parameters)")
    print(f"{'load':<14} {'seconds':>8} {'CPU s':>6} {'imports s':>10} {'converted':>10}")
    for name, r in zip(("1 (cold)", "2 (cache)", "3 (cache)"), runs):
        print(f"{name:<14} {r['load_s']:>8.2f} {r['cpu_s']:>6.2f} {r['import_s']:>10.2f} {str(r['converted']):>10}")
    print(f"first load {first['load_s']:.1f} s ({first['cpu_s']:.1f} CPU s), cached load {cached:.2f} s: {ratio:.1f}x "
          f"faster (target < 5 s); load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
