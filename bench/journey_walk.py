"""Long seeded walks over the user's actions in a real X11 window (Xvfb), every invariant checked after every
action (issue 29): run before stopping work on the window.

Usage: ``python bench/journey_walk.py --seeds 10 --actions 60 --sizes 1280x720 1920x1080 [--first-seed 1]
[--shrink-s 300]``. Each seed and size is one walk of ``tests/journeys/walk.py`` (its own Xvfb screen, a fresh
config, the built-in ``pydoc-llama``; Hypothesis draws the seed's actions from the full set: the suite's and a
settings race, a session opened as an overlay, a mixture-of-experts run), run in a child process; prints per
walk pass or fail, the failure that ended it (or the first known flaw), the shortest walk Hypothesis shrank it to
and the command that replays it, and at the end a table of every failure by invariant (known flaws apart). A walk
ends at its first failure that is not a known flaw (``tests/journeys/walk_flaws.py``). Artifacts (a screenshot
per failing step, ``results.json``, the app's log, the shrunk walk's in ``shrunk/``) in
``tests/artifacts/walk-SEED-WxH/``. Exit status 1 when any walk failed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.scratch import use_own_dirs  # noqa: E402

use_own_dirs()  # never the user's settings or caches

ROOT = Path(__file__).resolve().parents[1]
WALK = ROOT / "tests" / "journeys" / "walk.py"
ARTIFACTS = ROOT / "tests" / "artifacts"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=10, help="how many seeds (first-seed, first-seed + 1, …)")
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--actions", type=int, default=60)
    p.add_argument("--sizes", nargs="+", default=["1280x720", "1920x1080"], help="Xvfb screens, WxH")
    p.add_argument("--timeout", type=float, default=1800, help="seconds per walk (its shrinking apart)")
    p.add_argument("--shrink-s", type=float, default=300, help="how long a failing walk is shrunk at most")
    return p.parse_args(argv)


def one_walk(seed: int, actions: int, size: str, timeout: float, shrink_s: float) -> dict:
    """Run one walk in a child process; returns its results.json (``failures``, ``steps``, ``done``, where it
    failed ``shrunk_actions``)."""
    out = ARTIFACTS / f"walk-{seed}-{size}"
    cmd = [sys.executable, str(WALK), "--seed", str(seed), "--actions", str(actions), "--size", size,
           "--out", str(out), "--shrink-s", str(shrink_s)]
    t0 = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout + shrink_s + 180)
        printed = proc.stdout
    except subprocess.TimeoutExpired:
        printed = f"walk killed after {timeout + shrink_s + 180:.0f} s"
    results_file = out / "results.json"
    results = json.loads(results_file.read_text()) if results_file.exists() else {"failures": [], "steps": []}
    if not results["failures"] and not results.get("done"):
        results["failures"].append({"step": len(results["steps"]), "action": "?", "invariant": "finished",
                                    "detail": printed[-500:] or "the walk ended early"})
    results["seconds"] = round(time.monotonic() - t0, 1)
    results["printed"] = printed
    return results


def print_failure(r: dict, seed: int, actions: int, size: str) -> None:
    """The failure that ended the walk (else its first known flaw), its shrunk walk, how to replay it."""
    f = next((f for f in r["failures"] if not f.get("known")), r["failures"][0])
    what = "known flaw" if f.get("known") else "failed"
    print(f"    {what}: step {f['step']} {f['action']}: {f['invariant']}: {f['detail'][:400]}")
    if f.get("screenshot"):
        print(f"    screenshot: {f['screenshot']}")
    if "shrunk_actions" in r:
        print(f"    shrunk to {len(r['shrunk_actions'])} actions ({r.get('walks', '?')} walks, "
              f"{r.get('shrink_seconds', '?')} s): " + "; ".join(r["shrunk_actions"]))
    elif r.get("shrink_note"):
        print(f"    not shrunk: {r['shrink_note']}")
    print(f"    replay: python tests/journeys/walk.py --seed {seed} --actions {actions} --size {size}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if shutil.which("Xvfb") is None:
        print("journey_walk: needs Xvfb (Debian's xvfb)", file=sys.stderr)
        return 2
    by_invariant: Counter[str] = Counter()
    failed = 0
    for size in args.sizes:
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            r = one_walk(seed, args.actions, size, args.timeout, args.shrink_s)
            failures = r["failures"]
            by_invariant.update(f["invariant"] + (" (known)" if f.get("known") else "") for f in failures)
            verdict = "PASS" if not failures else f"FAIL ({len(failures)} failures)"
            print(f"seed {seed:3d} {size:>9}: {verdict} · {len(r['steps'])}/{args.actions} actions in "
                  f"{r['seconds']} s", flush=True)
            if failures:
                failed += 1
                print_failure(r, seed, args.actions, size)
    total = args.seeds * len(args.sizes)
    print(f"\n{total - failed} of {total} walks passed")
    for invariant, n in by_invariant.most_common():
        print(f"  {invariant:32} {n} failures")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
