"""How long Quit takes: the app's process gone after File ▸ Quit, ten quits per state, on the default model.

    .venv/bin/python bench/quit_times.py [--model smollm2-135m-instruct] [--states idle,compiling] [--n 10] [--json]

Each quit starts the app's own entry point in a fresh process (:data:`tests.quit_driver.QUIT_DRIVER`: offscreen,
its own config folder), drives it into the state, closes the window the way File ▸ Quit does and times the
process's end from outside (the driver prints the wall clock just before the close). The states run interleaved
(idle, compiling, idle, compiling, …) so a slow minute of this shared machine falls on both. Targets (issue 55):
idle ≤ 0.7 s, compiling ≤ 1.5 s. Prints the median, the slowest and every figure per state; exit status 1 when a
quit failed (no close printed, or the process still running 60 s after it).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.scratch import use_own_dirs  # noqa: E402
from tests.quit_driver import QUIT_DRIVER  # noqa: E402

TARGET_S = {"idle": 0.7, "compiling": 1.5, "decoding": 1.5, "replaying": 1.5, "passes": 1.5}


def one_quit(model: str, state: str) -> float:
    """Seconds from the close to the process's end, for one fresh process; RuntimeError when it did not quit."""
    with tempfile.TemporaryDirectory() as config:
        env = {**os.environ, "TORCHAX_PLAYGROUND_CONFIG_DIR": config, "HF_HUB_OFFLINE": "1"}
        proc = subprocess.Popen([sys.executable, "-c", QUIT_DRIVER, model, state], cwd=ROOT, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        closing = None
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("closing "):
                closing = float(line.split()[1])
                break
        if closing is None:
            proc.kill()
            raise RuntimeError(f"{state}: the window never closed: {proc.stderr.read()[-1500:] if proc.stderr else ''}")
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise RuntimeError(f"{state}: the process still ran 60 s after the close") from None
        return time.time() - closing


def main(argv: list[str] | None = None) -> int:
    from app.core.models.sources import DEFAULT_MODEL

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--states", default="idle,compiling", help="comma-separated: " + ", ".join(TARGET_S))
    parser.add_argument("--n", type=int, default=10, help="quits per state (default 10)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    use_own_dirs()
    states = [s.strip() for s in args.states.split(",") if s.strip()]
    unknown = [s for s in states if s not in TARGET_S]
    if unknown or args.n < 1:
        parser.error(f"unknown state {unknown[0]!r}" if unknown else "--n must be at least 1")
    figures: dict[str, list[float]] = {s: [] for s in states}
    failed: list[str] = []
    for i in range(args.n):
        for state in states:
            try:
                figures[state].append(one_quit(args.model, state))
            except RuntimeError as exc:
                failed.append(str(exc))
            print(f"[{i + 1}/{args.n}] {state}: {figures[state][-1]:.2f} s" if figures[state] else state,
                  file=sys.stderr, flush=True)
    rows = {s: {"median_s": statistics.median(v), "max_s": max(v), "target_s": TARGET_S[s], "n": len(v),
                "all_s": [round(x, 3) for x in v]} for s, v in figures.items() if v}
    if args.json:
        print(json.dumps({"model": args.model, "states": rows, "failed": failed}))
    else:
        for state, row in rows.items():
            verdict = "within" if row["max_s"] <= row["target_s"] else "OVER"
            print(f"{state:10s} median {row['median_s']:.2f} s, slowest {row['max_s']:.2f} s over {row['n']} quits "
                  f"({verdict} the {row['target_s']:g} s target): {', '.join(f'{x:.2f}' for x in row['all_s'])}")
        for line in failed:
            print("failed:", line)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
