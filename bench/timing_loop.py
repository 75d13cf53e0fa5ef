"""The suite's timing tests (Stop, Quit, first paint), run again and again while busy loops keep the cores busy:
do they hold on a loaded machine (issue 53)?

    .venv/bin/python bench/timing_loop.py [--runs 10] [--busy 2] [--tests FILE_OR_NODE ...] [--json OUT]

Each run is one fresh pytest process over :data:`TIMING_TESTS` (the same files ``make test`` runs, headless, with
the suite's own scratch folders and compile cache, which the first run fills); ``--busy N`` starts N processes
that spin on the CPU for the whole loop (``os.cpu_count()`` by default: every core busy) at the loop's own
priority. Prints each run's result, its failures and the load average at its end, then how many runs passed and
each test's slowest call; exit status 1 when any run failed. Timings from a loaded machine are not speed
figures: what this answers is whether a threshold holds under load, not how fast anything is.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: The tests that assert a time: Stop (a jit-loop run, any run, before a compile, by Esc, a settings race), Quit in
#: every state, the first paint of a real X11 window.
TIMING_TESTS = ("tests/gui/lifecycle/test_stop_quit.py", "tests/gui/lifecycle/test_quit_states.py",
                "tests/gui/lifecycle/test_jit_loop_stop.py", "tests/gui/lifecycle/test_escape_stops.py",
                "tests/gui/lifecycle/test_stop_before_compile.py", "tests/journeys/test_first_paint.py",
                "tests/gui/demo/test_settings_race_window.py::test_stop_ends_the_settings_race_within_two_seconds")
_DURATION = re.compile(r"^\s*([\d.]+)s (call|setup|teardown)\s+(\S+)")
_FAILED = re.compile(r"^(FAILED|ERROR) (\S+)")
_GATE = "SLOW TEST GATE:"
_PASSED = re.compile(r"^\d+ passed(, [\d]+ (skipped|warnings?|xfailed|deselected))*.* in [\d.]+s", re.M)
HISTORY = Path(tempfile.gettempdir()) / "timing-loop-file-durations.json"


def _spin() -> None:  # pragma: no cover - a busy loop until terminated
    while True:
        pass


def one_run(tests: list[str]) -> dict:
    """One pytest process over ``tests``: :func:`read_run` of its output, with ``wall_s`` and ``load`` (the 1-minute
    load average at its end)."""
    # the loaded machine's times stay out of the file-time history that orders the suite's files (tests/suite_budget.py)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HF_HUB_OFFLINE": "1",
           "TORCHAX_PLAYGROUND_TEST_HISTORY": str(HISTORY)}
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--durations=0",
                           *tests], cwd=ROOT, env=env, capture_output=True, text=True)
    return {**read_run(proc.stdout, proc.returncode), "wall_s": round(time.monotonic() - start, 1),
            "load": os.getloadavg()[0]}


def read_run(stdout: str, returncode: int) -> dict:
    """What one pytest run's ``stdout`` (``-q --durations=0``) and exit status say: ``passed``, ``failed`` (node ids
    of FAILED / ERROR lines), ``why`` (those lines whole: pytest's short summary says why), ``gate`` (the suite's slow-test gate lines), ``calls`` (node id → call seconds),
    ``tail`` (the output's end when it did not pass). The slow-test gate (an unlisted test over 45 s) is about the
    suite's budget on a quiet machine, not about a threshold a test asserts: a run whose every test passed and whose
    exit status comes from the gate alone passed."""
    calls, failed, gate, said = {}, [], [], []
    for line in stdout.splitlines():
        if (m := _DURATION.match(line)) and m.group(2) == "call":
            calls[m.group(3)] = float(m.group(1))
        if m := _FAILED.match(line):
            failed.append(m.group(2))
            said.append(line)  # "FAILED node - AssertionError: …": why, in pytest's short summary
        if line.startswith(_GATE):
            gate.append(line.removeprefix(_GATE).strip())
    passed = returncode == 0 or (not failed and bool(gate) and _PASSED.search(stdout) is not None)
    return {"passed": passed, "failed": failed, "gate": gate, "calls": calls, "why": said,
            "tail": "" if passed else stdout[-3000:]}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--busy", type=int, default=os.cpu_count() or 2, help="busy-loop processes (0: none)")
    p.add_argument("--tests", nargs="*", default=list(TIMING_TESTS))
    p.add_argument("--json", type=Path, help="write every run's result here")
    args = p.parse_args(argv)
    spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(args.busy)]
    for s in spinners:
        s.start()
    runs = []
    try:
        for i in range(args.runs):
            r = one_run(args.tests)
            runs.append(r)
            word = "passed" if r["passed"] else "FAILED " + ", ".join(r["failed"])
            print(f"run {i + 1}/{args.runs}: {word} in {r['wall_s']:.0f} s (load {r['load']:.1f})", flush=True)
            for line in r["gate"]:
                print(f"  slow-test gate (not a failure here): {line}", flush=True)
            if not r["passed"]:
                print("\n".join(r["why"]) or r["tail"], flush=True)
            if args.json:
                args.json.write_text(json.dumps({"busy": args.busy, "tests": args.tests, "runs": runs}, indent=1))
    finally:
        for s in spinners:
            s.terminate()
    slowest: dict[str, float] = {}
    for r in runs:
        for node, s in r["calls"].items():
            slowest[node] = max(slowest.get(node, 0.0), s)
    print(f"\n{sum(r['passed'] for r in runs)} of {len(runs)} runs passed with {args.busy} busy loops")
    for node, s in sorted(slowest.items(), key=lambda kv: -kv[1]):
        print(f"  slowest call {s:6.1f} s  {node}")
    return 0 if all(r["passed"] for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
