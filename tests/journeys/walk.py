"""A seeded random walk over the user's actions in the real window (X11 under Xvfb, not offscreen), with the
window's invariants checked after every action (issue 29: journeys that explore); Hypothesis chooses the actions
and shrinks a failing walk (issue 37).

``python tests/journeys/walk.py --seed S --actions N --size WxH [--out DIR]`` starts an Xvfb screen of that
size and, in a child process on it, the app's window (a fresh config, the built-in ``pydoc-llama``), driven by
the state machine of :mod:`walk_machine`: a rule per action, N actions chosen by Hypothesis with ``@seed(S)``
from: switch workspace, presentation on/off, run, race, stop during a run, open a gallery example and run it,
sweep, record passes, profile, save a session and open it, replay, export the plot, resize (within the screen),
reset layout — and, in the full walk (the default; ``--basic``: the suite's actions only, as
``tests/journeys/test_walk.py`` walks), a settings race of two compiler settings on the model or a program entry,
a saved session opened as an overlay, a mixture-of-experts run (:mod:`walk_more`). A seed replays the same walk
(``--plan`` lists it without a window). Each action waits until the window is idle (bounded); then every
invariant is checked (:mod:`walk_checks`, and issue 55's rules of :mod:`walk_rules`: ``drawing_area``,
``tradeoff_size``, ``still``, ``ir_names``, ``stale_error``, ``live_stop``):

- ``fits_screen``: the window's frame lies on the screen and its minimum size fits the screen;
- ``unclipped``: Run, Stop, the plot, the race button and the status line (where the workspace shows them) are
  visible, inside every parent and the screen, and not squeezed below their minimum size hint; the plot is tall
  enough to read (``MIN_PLOT``);
- ``legend_whole``: the plot's run legend lies whole inside the plot;
- ``presentation_restores``: presentation off puts every dock, the central area and the plot back (within ``PRESENT_SLACK_PX`` = 4 px)
  (compared with before it was turned on, when nothing else moved the layout meanwhile);
- ``run_labels``: every run on the plot has a unique legend entry naming its mode and its model (or
  ``file:entry`` of a program; or the x axis names it once, for every run) — or, a lane of an older race, its
  race's one entry ("runs 1–6 · race of 6 modes"); the plot shows exactly the session's runs;
- ``export_names_runs``: an SVG export holds every legend entry's text;
- ``views_follow_run``: the stats strip and the plot's key show the current run's kind (a program's calls or a
  model's tokens), after model and program runs, live or reopened;
- ``device_labels``: every run's label names its devices right after its mode, live and recorded alike;
- ``no_silent_noop``: an action changes the window's state or says something (status line, program status,
  Passes or Profile status);
- ``finished``: an action ends within its bound (a stop within ``STOP_BOUND_S``).

A failure that is not a known flaw (:mod:`walk_flaws`) ends the walk and Hypothesis shrinks it: it replays
shorter walks (each on a fresh window, in the same process) and keeps the shortest that still fails the same
invariant (for at most ``--shrink-s`` seconds). Known flaws are reported and the walk goes on. A failing walk
prints its seed, size and action list (to replay it), each failure with the screenshot of its step
(``OUT/NN-action.png``) and the shrunk action list (that walk's screenshots in ``OUT/shrunk/``; a line a walk
the shrinker ran in ``OUT/walks.log``).
``OUT/results.json`` holds everything: ``seed``, ``actions`` (as run), ``steps``, ``failures``, ``done`` and,
where it failed, ``shrunk_actions``, ``shrunk``, ``walks``, ``shrink_seconds``. The process exit status is 0 when
the walk passed, 1 when an invariant failed (a known flaw included), 2 when the walk could not run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(Path(__file__).resolve().parent)]

from walk_checks import describe  # noqa: E402
from walk_machine import SHRINK_S, plan  # noqa: E402

DEFAULT_OUT = ROOT / "tests" / "artifacts" / "walk"


def child_main(args: argparse.Namespace) -> int:
    """In the app's process (DISPLAY set): the walk, shrunk where it fails; results.json; then the process ends
    as the app's does (:func:`app.gui.main.end_process`)."""
    from PySide6.QtWidgets import QApplication
    from walk_machine import WalkDriver, walk_results

    from app.gui.main import configure_application, end_process

    out = Path(args.out)
    configure_application(QApplication.instance() or QApplication([sys.argv[0]]))
    results = walk_results(WalkDriver(args.seed, args.actions, out, shrink_s=args.shrink_s, full=not args.basic))
    (out / "results.json").write_text(json.dumps(results, indent=1))
    end_process(0)
    return 0


# -- the launcher: an Xvfb screen, the app in a child process ------------------------------------------------
def free_display() -> int:
    """A display number no X server uses; each pytest-xdist worker (``PYTEST_XDIST_WORKER`` gw0, gw1, …, inherited
    by the processes it starts) looks in its own range of 50, so two workers never pick the same one at once."""
    import os

    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    first = 91 + 50 * (int(worker) if worker.isdigit() else 0)
    for n in range(first, first + 50):
        if not Path(f"/tmp/.X11-unix/X{n}").exists() and not Path(f"/tmp/.X{n}-lock").exists():
            return n
    raise RuntimeError("no free X display number")


def run_walk(seed: int, actions: int, size: tuple[int, int], out: Path, timeout_s: float = 1800,
             shrink_s: float = SHRINK_S, full: bool = True) -> dict:
    """Walk ``actions`` actions of ``seed`` on a fresh Xvfb screen of ``size`` (shrunk for at most ``shrink_s``
    where it fails; the child process is killed after ``timeout_s`` + that; ``full``: the long walks' actions,
    else the suite's); returns results.json's content
    (``failures`` empty when the walk passed) plus ``seconds`` and, where it failed, ``log`` (the app's last
    lines)."""
    timeout_s += shrink_s + 120  # + the shrinker's last walk, begun before its bound, and its replay
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    n = free_display()
    server = subprocess.Popen(["Xvfb", f":{n}", "-screen", "0", f"{size[0]}x{size[1]}x24", "-nolisten", "tcp"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t0 = time.monotonic()
    try:
        deadline = time.monotonic() + 10
        while not Path(f"/tmp/.X11-unix/X{n}").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        with tempfile.TemporaryDirectory(prefix="walk-config-") as config:
            env = {**os.environ, "DISPLAY": f":{n}", "QT_QPA_PLATFORM": "xcb", "HF_HUB_OFFLINE": "1",
                   "TORCHAX_PLAYGROUND_CONFIG_DIR": config}
            env.pop("TORCHAX_PLAYGROUND_TEST_COMPILE_DELAY_S", None)
            cmd = [sys.executable, str(Path(__file__).resolve()), "--child", "--seed", str(seed),
                   "--actions", str(actions), "--out", str(out), "--shrink-s", str(shrink_s)] + ([] if full else ["--basic"])
            proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    text=True)
            try:
                log, _ = proc.communicate(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                proc.kill()
                log, _ = proc.communicate()
                log += f"\n[walk] killed after {timeout_s:.0f} s"
    finally:
        server.terminate()
        server.wait(timeout=10)
    (out / "app.log").write_text(log)
    results_file = out / "results.json"
    results = json.loads(results_file.read_text()) if results_file.exists() else {
        "seed": seed, "actions": [describe(a) for a in plan(seed, actions, full)], "steps": [], "done": False,
        "failures": [{"step": 0, "action": "start", "invariant": "finished", "detail": "no results.json"}]}
    if not results.get("done") and not results["failures"]:
        results["failures"].append({"step": len(results["steps"]), "action": "?", "invariant": "finished",
                                    "detail": "the app ended before the walk did"})
    if results["failures"]:
        results["log"] = log[-3000:]
    results["size"] = f"{size[0]}x{size[1]}"
    results["seconds"] = round(time.monotonic() - t0, 1)
    return results


def report(results: dict, out: Path) -> str:
    """Pass/fail, how to replay, each failure (with its screenshot, a known flaw marked) and the shrunk walk."""
    failures = results["failures"]
    n = results.get("n_actions", len(results["actions"]))
    head = (f"walk seed={results['seed']} size={results['size']} actions={len(results['actions'])}/{n}: "
            f"{'PASS' if not failures else 'FAIL'} in {results.get('seconds', '?')} s")
    lines = [head]
    if failures:
        lines.append(f"  replay: python tests/journeys/walk.py --seed {results['seed']} --actions {n} "
                     f"--size {results['size']}")
        lines.append("  actions: " + "; ".join(f"{i}:{a}" for i, a in enumerate(results["actions"], 1)))
        for f in failures:
            known = " (known flaw)" if f.get("known") else ""
            shot = f"\n    screenshot: {f['screenshot']}" if f.get("screenshot") else ""
            lines.append(f"  step {f['step']} {f['action']}: {f['invariant']}{known}: {f['detail']}{shot}")
        if "shrunk_actions" in results:
            shrunk = "; ".join(f"{i}:{a}" for i, a in enumerate(results["shrunk_actions"], 1))
            lines.append(f"  shrunk to {len(results['shrunk_actions'])} of {len(results['actions'])} actions in "
                         f"{results.get('shrink_seconds', '?')} s ({results.get('walks', '?')} walks): "
                         + (shrunk or "(none: the window at start)"))
            f = results["shrunk"]["failure"] or {"invariant": "?", "detail": "?"}
            lines.append(f"    it fails: {f['invariant']}: {f['detail'][:300]} ({results['shrunk']['out']})")
        elif results.get("shrink_note"):
            lines.append(f"  not shrunk: {results['shrink_note']}")
        lines.append(f"  artifacts: {out}")
    return "\n".join(lines)


def parse_size(text: str) -> tuple[int, int]:
    w, h = text.lower().split("x")
    return int(w), int(h)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--actions", type=int, default=25)
    p.add_argument("--size", default="1280x720", help="the Xvfb screen, WxH")
    p.add_argument("--out", default="", help=f"artifacts folder (default {DEFAULT_OUT}-SEED-WxH)")
    p.add_argument("--shrink-s", type=float, default=SHRINK_S, help="how long a failing walk is shrunk at most")
    p.add_argument("--plan", action="store_true", help="print the action list (no window) and exit")
    p.add_argument("--basic", action="store_true",
                   help="the suite's actions only (no settings race, overlay or mixture-of-experts run)")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        return child_main(args)
    if args.plan:
        print("\n".join(f"{i}: {describe(a)}" for i, a in enumerate(plan(args.seed, args.actions, not args.basic), 1)))
        return 0
    if shutil.which("Xvfb") is None:
        print("walk: needs Xvfb (Debian's xvfb)", file=sys.stderr)
        return 2
    size = parse_size(args.size)
    out = Path(args.out) if args.out else Path(f"{DEFAULT_OUT}-{args.seed}-{args.size}")
    results = run_walk(args.seed, args.actions, size, out, shrink_s=args.shrink_s, full=not args.basic)
    print(report(results, out))
    return 1 if results["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
