"""Persistent compilation cache: the first decode call of a cold process vs a process with a warm disk cache.

    .venv/bin/python bench/persistent_cache.py [--model pydoc-llama] [--json]

Runs ``torchax-playground generate --json --persistent-cache DIR`` three times in fresh processes on an
empty temporary DIR: run 1 fills the cache (cold), runs 2 and 3 are served from it. Target: the
second process's first decode call is at least 40% faster than the cold one.
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


def first_calls(model: str, cache_dir: str) -> dict:
    cmd = [sys.executable, "-m", "app", "generate", "--model", model, "--max-new-tokens", "4", "--json",
           "--no-ir", "--persistent-cache", cache_dir]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=True).stdout
    calls = [json.loads(line) for line in out.splitlines() if line.startswith('{"event": "call"')]
    prefill = next(c for c in calls if c["step"] == "prefill")
    decode = next(c for c in calls if c["step"] == "decode")
    return {"prefill_ms": prefill["wall_ms"], "decode_ms": decode["wall_ms"],
            "decode_compile_ms": decode["compile_ms"], "decode_cache_hit": decode["persistent_cache_hit"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="pydoc-llama")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache_dir:
        runs = [first_calls(args.model, cache_dir) for _ in range(3)]
    cold, warm = runs[0], runs[1]
    gain = 1 - warm["decode_ms"] / cold["decode_ms"]
    if args.json:
        print(json.dumps({"model": args.model, "runs": runs, "first_decode_gain": gain}, indent=2))
        return 0
    print(f"model {args.model}")
    print(f"{'process':<10} {'prefill ms':>11} {'1st decode ms':>14} {'decode compile ms':>18} {'disk hit':>9}")
    for name, r in zip(("cold", "warm #1", "warm #2"), runs):
        print(f"{name:<10} {r['prefill_ms']:>11,.1f} {r['decode_ms']:>14,.1f} {r['decode_compile_ms']:>18,.1f} "
              f"{str(r['decode_cache_hit']):>9}")
    print(f"first decode call {gain:.0%} faster with a warm persistent cache (target >= 40%)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
