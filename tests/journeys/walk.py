"""A seeded random walk over the user's actions in the real window (X11 under Xvfb, not offscreen), with the
window's invariants checked after every action (issue 29: journeys that explore).

``python tests/journeys/walk.py --seed S --actions N --size WxH [--out DIR]`` starts an Xvfb screen of that
size, runs the app on it (its own entry point, a fresh config, the built-in ``pydoc-llama``) and drives N actions
chosen by ``random.Random(S)`` from: switch workspace, presentation on/off, run, race, stop during a run, open a
gallery example and run it, sweep, record passes, profile, save a session and open it, replay, export the plot,
resize (within the screen), reset layout. The action list is drawn before the app starts, so a seed replays the
same walk. Each action waits until the window is idle (bounded); then every invariant is checked:

- ``fits_screen``: the window's frame lies on the screen and its minimum size fits the screen;
- ``unclipped``: Run, Stop, the plot, the race button and the status line (where the workspace shows them) are
  visible, inside every parent and the screen, and not squeezed below their minimum size hint; the plot is tall
  enough to read (``MIN_PLOT``);
- ``legend_whole``: the plot's run legend lies whole inside the plot;
- ``presentation_restores``: presentation off puts every dock, the central area and the plot back to the pixel
  (compared with before it was turned on, when nothing else moved the layout meanwhile);
- ``run_labels``: every run on the plot has a unique legend entry naming its mode and its model (or
  ``file:entry`` of a program; or the x axis names it once, for every run) — or, a lane of an older race, its
  race's one entry ("runs 1–6 · race of 6 modes"); the plot shows exactly the session's runs;
- ``export_names_runs``: an SVG export holds every legend entry's text;
- ``no_silent_noop``: an action changes the window's state or says something (status line, program status,
  Passes or Profile status);
- ``finished``: an action ends within its bound (a stop within ``STOP_BOUND_S``).

A failing walk prints its seed, size and action list (to replay it) and each failure with the screenshot of its
step (``OUT/NN-action.png``). ``OUT/results.json`` holds everything. The process exit status is 0 when the walk
passed, 1 when an invariant failed, 2 when the walk could not run.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

DEFAULT_OUT = ROOT / "tests" / "artifacts" / "walk"
STEP_TIMEOUT_S = 180.0  # one action (a race with torchax-eager, a Passes recording) ends within this
STOP_BOUND_S = 5.0  # Stop during a run: the window is idle again within this
SETTLE_S = 0.3  # after an action ends: layouts and deferred fits (ScreenFit's singleShot) settle
MIN_PLOT = (240, 150)  # the plot smaller than this (w, h) cannot be read (issue 29: ~30 px tall after Passes)
RACE_MODES = ("torch", "jit-static", "torchax-eager")
WORKSPACES = ("Run", "Inspect", "Code")
#: Gallery examples the walk opens and runs (fast on a CPU); the sweep uses 02 (argument 0 is an array).
EXAMPLES = ("01_jit_speedup", "02_static_shapes", "03_pytrees", "04_static_argnums", "05_loops",
            "06_transforms", "09_donation")
#: Action name -> weight of its draw.
WEIGHTS = {
    "workspace": 3, "presentation": 3, "run": 3, "race": 2, "stop": 2, "example": 2, "sweep": 1, "passes": 1,
    "profile": 1, "session": 1, "replay": 1, "export": 1, "resize": 1, "reset_layout": 1,
}
#: Actions after which the layout may differ legitimately (presentation's before/after is not compared).
MOVES_LAYOUT = {"workspace", "resize", "reset_layout", "example", "sweep"}


# -- the plan (drawn before the app starts: a seed is a walk) -------------------------------------------------
def plan(seed: int, n: int) -> list[dict]:
    """``n`` actions ``{"name": ..., **params}`` drawn from ``random.Random(seed)``."""
    rng = random.Random(seed)
    names, weights = zip(*WEIGHTS.items())
    out = []
    for _ in range(n):
        name = rng.choices(names, weights)[0]
        a: dict = {"name": name}
        if name == "workspace":
            a["to"] = rng.choice(WORKSPACES)
        elif name == "presentation":
            a["cycle"] = rng.random() < 0.5  # on and off at once (else toggled: left on for later actions)
        elif name == "run":
            a["tokens"] = rng.randint(4, 12)
        elif name == "race":
            a["modes"] = rng.sample(RACE_MODES, rng.choice((2, 3)))
            a["tokens"] = rng.randint(3, 6)
        elif name == "stop":
            a["after_s"] = round(rng.uniform(0.1, 1.5), 2)
        elif name == "example":
            a["example"] = rng.choice(EXAMPLES)
        elif name == "sweep":
            a["sweep"] = rng.choice(("1:4", "1:6", "2,4,8"))
        elif name == "export":
            a["ext"] = rng.choice(("png", "svg"))
        elif name == "resize":
            a["w"], a["h"] = round(rng.uniform(0.6, 1.0), 2), round(rng.uniform(0.6, 1.0), 2)
        elif name == "replay":
            a["speed"] = rng.choice((4.0, 8.0))
        out.append(a)
    return out


def shown(w) -> bool:
    """On screen: visible and not on a tabbed dock's page behind another tab (Qt calls those visible): some of
    it, or of a child covering it, can be painted."""
    from PySide6.QtCore import Qt

    if not w.isVisible():
        return False
    if not w.visibleRegion().isEmpty():
        return True
    from PySide6.QtWidgets import QWidget

    return any(shown(c) for c in w.findChildren(QWidget, options=Qt.FindChildOption.FindDirectChildrenOnly))


def in_race_entry(run_id: int, names: list[str]) -> bool:
    """Whether an older race's one legend entry ("runs 1–6 · race of 6 modes", maybe cut) names ``run_id``."""
    for name in names:
        m = re.match(r"runs (\d+)–(\d+)\b", name)
        if m and int(m.group(1)) <= run_id <= int(m.group(2)):
            return True
    return False


def describe(a: dict) -> str:
    params = ",".join(f"{k}={'+'.join(v) if isinstance(v, list) else v}" for k, v in a.items() if k != "name")
    return f"{a['name']}({params})"


# -- the walk in the app's process ----------------------------------------------------------------------------
class Walk:
    def __init__(self, window, out: Path, seed: int, actions: list[dict]) -> None:
        self.window, self.out, self.seed, self.actions = window, out, seed, actions
        self.results: dict = {"seed": seed, "actions": [describe(a) for a in actions], "steps": [],
                              "failures": [], "done": False}
        self.step = 0
        self.step_name = "start"
        self.expected: dict[int, tuple[str, str]] = {}  # run id -> (model or file:entry, mode)
        self.said = 0  # messages the window said (status line, program panel)
        self.presented_geometry: dict | None = None  # geometries before presentation went on
        self.layout_moved = False  # since presentation went on
        self.failing: set[tuple[str, str]] = set()  # (invariant, subject) failing at this step's checks
        self.failed_before: set[tuple[str, str]] = set()  # ... at the step before
        self._hook()

    # -- hooks: what the window says, what each run is -------------------------------------------------------
    def _hook(self) -> None:
        win = self.window
        status, panel = win.status, win.programs.panel
        set_text, show_message, show_error = status._set_text, panel.show_message, panel.show_error

        def counted(fn):
            def wrapper(*args, **kwargs):
                self.said += 1
                return fn(*args, **kwargs)
            return wrapper

        status._set_text = counted(set_text)
        panel.show_message = counted(show_message)
        panel.show_error = counted(show_error)
        win.session.events.runStarted.connect(self._on_run_started)

    def _on_run_started(self, run) -> None:
        win = self.window
        if run.origin:
            rec = win.sessions.live.recorded_of(run)
            what = rec.model if rec is not None else "?"
        elif run.program:
            what = f"{win.programs.name}:{run.program}"
        else:
            what = win.session.loaded.label if win.session.loaded else "?"
        self.expected[run.run_id] = (what, run.mode)

    # -- helpers ---------------------------------------------------------------------------------------------
    def idle(self) -> bool:
        win = self.window
        return (win.session.loaded is not None and not win.is_busy() and not win.sessions.replay.running
                and win.session.background is None)

    def after(self, seconds: float):
        t = time.monotonic() + seconds
        return lambda: time.monotonic() >= t

    def shot(self, name: str) -> str:
        from PySide6.QtWidgets import QApplication

        for _ in range(3):
            QApplication.processEvents()
        path = self.out / f"{self.step:02d}-{name}.png"
        self.window.screen().grabWindow(0).save(str(path))
        return str(path)

    def fail(self, invariant: str, detail: object, subject: str = "") -> None:
        """Record a failure; one that holds on from the step before (same invariant and ``subject``) is not
        recorded again (a flaw is reported where it appears, and again where it comes back)."""
        if subject:
            self.failing.add((invariant, subject))
            if (invariant, subject) in self.failed_before:
                return
        self.results["failures"].append({"step": self.step, "action": self.step_name, "invariant": invariant,
                                         "detail": str(detail)[:2000]})

    def screen(self):
        return self.window.screen().availableGeometry()

    def snapshot(self) -> tuple:
        """What an action may change (compared to tell a silent no-op)."""
        win = self.window
        from PySide6.QtWidgets import QDockWidget

        return (
            win.workspaces.current(), win.demo.presentation.is_on(), win.geometry().getRect(),
            tuple((r.run_id, r.finished is not None) for r in win.session.runs), tuple(win.ui.plot.run_labels()),
            tuple(sorted(p.name for p in self.out.iterdir())), win.windowTitle(),
            tuple(shown(d) for d in win.findChildren(QDockWidget)), win.ui.ir_tabs.origin_text(),
            win.passes.status.text(), win.profile.summary.text(), win.ui.ir_tabs.tabs.currentIndex(),
        )

    def geometries(self) -> dict[str, tuple]:
        """Window-relative rectangles of every visible dock, the central area and the plot, and the window's."""
        from PySide6.QtWidgets import QDockWidget

        win = self.window
        out = {d.objectName(): d.geometry().getRect() for d in win.findChildren(QDockWidget) if shown(d)}
        out["central"] = win.centralWidget().geometry().getRect()
        out["plot"] = win.ui.plot.geometry().getRect()
        out["window"] = win.geometry().getRect()
        return out

    # -- invariants ------------------------------------------------------------------------------------------
    def check(self) -> None:
        self.failed_before, self.failing = self.failing, set()
        self.check_fits_screen()
        self.check_widgets()
        self.check_labels()

    def check_fits_screen(self) -> None:
        win, screen = self.window, self.screen()
        frame = win.frameGeometry()
        if not screen.contains(frame):
            self.fail("fits_screen", f"window frame {frame.getRect()} is not on the screen {screen.getRect()}",
                      "frame")
        least = win.minimumSize()
        if least.width() > screen.width() or least.height() > screen.height():
            self.fail("fits_screen", f"minimum size {least.toTuple()} larger than the screen "
                                     f"{screen.size().toTuple()}", "minimum")

    def unclipped(self, name: str, w, required: bool = True) -> None:
        from PySide6.QtCore import QPoint, QRect

        win = self.window
        if not shown(w):
            if required:
                self.fail("unclipped", f"{name} is not visible in {win.workspaces.current()}", name)
            return
        rect = QRect(w.mapTo(win, QPoint(0, 0)), w.size())
        parent = w.parentWidget()
        while parent is not None and parent is not win:
            prect = QRect(parent.mapTo(win, QPoint(0, 0)), parent.size())
            if not prect.contains(rect):
                self.fail("unclipped", f"{name} {rect.getRect()} cut by {type(parent).__name__} "
                                       f"'{parent.objectName()}' {prect.getRect()}", name)
                return
            parent = parent.parentWidget()
        glob = QRect(w.mapToGlobal(QPoint(0, 0)), w.size())
        if not self.screen().contains(glob):
            self.fail("unclipped", f"{name} {glob.getRect()} off the screen {self.screen().getRect()}", name)
            return
        least = w.minimumSizeHint()
        if name in ("Run button", "Stop button", "race button", "program Run button", "program Stop button") and (
                w.width() < least.width() or w.height() < least.height()):
            self.fail("unclipped", f"{name} squeezed to {w.size().toTuple()} below its {least.toTuple()}", name)
        if name == "plot" and (w.width() < MIN_PLOT[0] or w.height() < MIN_PLOT[1]):
            self.fail("unclipped", f"plot {w.size().toTuple()} smaller than {MIN_PLOT}", "plot size")

    def check_widgets(self) -> None:
        win = self.window
        ui, where = win.ui, win.workspaces.current()
        self.unclipped("status line", ui.status_label)
        if where == "Run":
            self.unclipped("Run button", ui.prompt.run_button)
            self.unclipped("Stop button", ui.prompt.stop_button)
            self.unclipped("plot", ui.plot)
            self.unclipped("race button", win.demo.controls.race_button, required=False)  # its dock tab may be behind
        elif where == "Code":
            panel = win.programs.panel
            self.unclipped("program Run button", panel.run_button)
            self.unclipped("program Stop button", panel.stop_button)
            self.unclipped("plot", ui.plot)
        if ui.plot.isVisible() and ui.plot.run_count():
            self.check_legend()

    def check_legend(self) -> None:
        plot = self.window.ui.plot
        legend = plot.mapFromScene(plot.legend.sceneBoundingRect()).boundingRect()
        room = plot.viewport().rect().adjusted(-1, -1, 1, 1)
        if not room.contains(legend):
            self.fail("legend_whole", f"legend {legend.getRect()} not inside the plot {room.getRect()} "
                                      f"({len(plot.legend.items)} entries)", "legend")

    def check_labels(self) -> None:
        win = self.window
        plot, session = win.ui.plot, win.session
        names = [label.text for _, label in plot.legend.items]
        if len(set(names)) != len(names):
            self.fail("run_labels", f"legend entries not unique: {names}", "unique")
        ids = [r.run_id for r in plot._runs]
        if ids != [r.run_id for r in session.runs]:
            self.fail("run_labels", f"plot runs {ids} != session runs {[r.run_id for r in session.runs]}", "runs")
        for run in plot._runs:
            what, mode = self.expected.get(run.run_id, ("?", "?"))
            shown_as = next((n for n in names if re.match(rf"run {run.run_id}\b", n)), "")  # maybe elided
            missing = [x for x in (what, mode) if x not in run.label]
            if missing:
                self.fail("run_labels", f"run {run.run_id} '{run.legend_name()}' does not name {missing}",
                          f"run {run.run_id}")
            elif not shown_as and in_race_entry(run.run_id, names):
                continue  # an older race named once ("runs 1–6 · race of 6 modes"): its lanes are one unit
            elif not shown_as:
                self.fail("run_labels", f"run {run.run_id} has no legend entry: {names}", f"run {run.run_id}")
            elif (what not in shown_as and what not in plot.shared_label()) or mode not in shown_as:
                self.fail("run_labels", f"run {run.run_id} '{run.legend_name()}' shown as '{shown_as}' in the legend "
                                        f"(cut: its model and mode are not both readable)", f"run {run.run_id} cut")

    # -- the walk --------------------------------------------------------------------------------------------
    def steps(self):
        win = self.window
        yield self.idle
        yield self.after(SETTLE_S)
        self.results["screen"] = self.screen().size().toTuple()
        self.check()
        if self.results["failures"]:
            self.results["failures"][-1]["screenshot"] = self.shot("start")
        for i, action in enumerate(self.actions, 1):
            self.step, self.step_name = i, describe(action)
            n_failures = len(self.results["failures"])
            before, said, t0 = self.snapshot(), self.said, time.monotonic()
            name = action["name"]
            if name in MOVES_LAYOUT:
                self.layout_moved = True
            yield from getattr(self, f"do_{name}")(action)
            yield self.idle
            yield self.after(SETTLE_S)
            self.check()
            cycle = name == "presentation" and action.get("cycle")  # on and off: back where it was
            if name != "reset_layout" and not cycle and self.snapshot() == before and self.said == said:
                self.fail("no_silent_noop", f"{self.step_name} changed nothing and said nothing "
                                            f"(status: {win.status.text()!r})")
            self.results["steps"].append({"step": i, "action": self.step_name,
                                          "seconds": round(time.monotonic() - t0, 2),
                                          "status": win.status.text()[:300]})
            if len(self.results["failures"]) > n_failures:
                path = self.shot(name)
                for f in self.results["failures"][n_failures:]:
                    f["screenshot"] = path
            self.write()
        self.results["done"] = True

    def wait_busy_then_idle(self, seconds: float = 3.0):
        """After a request: wait until it started (or ``seconds`` passed: refused, said why), then idle."""
        t = time.monotonic() + seconds
        yield lambda: self.window.is_busy() or self.window.sessions.replay.running or time.monotonic() > t
        yield self.idle

    def show(self, workspace: str):
        if self.window.workspaces.current() != workspace:
            self.window.workspaces.show(workspace)
            self.layout_moved = True
            yield self.after(0.1)

    # -- actions (generators: each yield is a condition to wait for) ------------------------------------------
    def do_workspace(self, a: dict):
        to = a["to"]
        if to == self.window.workspaces.current():  # a tab not shown (the walk stays a walk)
            to = WORKSPACES[(WORKSPACES.index(to) + 1) % len(WORKSPACES)]
            self.step_name = f"workspace(to={to})"
        self.window.workspaces.show(to)
        yield self.after(0.1)

    def do_presentation(self, a: dict):
        demo = self.window.demo
        if demo.presentation.is_on():  # off: back to the layout before it, to the pixel
            demo.presentation_action.trigger()
            yield self.after(SETTLE_S)
            self.compare_presented()
            return
        if self.window.workspaces.current() == "Run":
            self.presented_geometry, self.layout_moved = self.geometries(), False
        else:
            self.presented_geometry = None  # presenting switches to Run: no layout before it to compare
        demo.presentation_action.trigger()
        yield self.after(SETTLE_S)
        if not demo.presentation.is_on():
            self.fail("presentation", "presentation mode did not turn on")
        if a.get("cycle"):
            n_failures = len(self.results["failures"])
            self.check()  # presenting: the plot, its legend, Run and Stop
            if len(self.results["failures"]) > n_failures:
                path = self.shot("presenting")
                for f in self.results["failures"][n_failures:]:
                    f["screenshot"], f["action"] = path, f"{self.step_name}, presenting"
            demo.presentation_action.trigger()
            yield self.after(SETTLE_S)
            self.compare_presented()

    def compare_presented(self) -> None:
        before, self.presented_geometry = self.presented_geometry, None
        if before is None or self.layout_moved or self.window.workspaces.current() != "Run":
            return
        after = self.geometries()
        if after != before:
            diff = {k: (before.get(k), after.get(k)) for k in sorted(set(before) | set(after))
                    if before.get(k) != after.get(k)}
            self.fail("presentation_restores", f"presentation off moved {diff}")

    def do_run(self, a: dict):
        win = self.window
        yield from self.show("Run")
        win.ui.form.set_values({"mode": "jit-static", "max_new_tokens": a["tokens"], "stop_at_eos": False})
        win.ui.prompt.run_button.click()
        yield from self.wait_busy_then_idle()

    def do_race(self, a: dict):
        win = self.window
        demo = win.demo
        win.ui.form.set_values({"max_new_tokens": a["tokens"], "stop_at_eos": False})
        demo.controls.set_modes(list(a["modes"]))
        demo.controls.eager_tokens.setValue(3)
        if win.workspaces.current() == "Run" and not demo.presentation.is_on():
            demo.demo_dock.show()
            demo.demo_dock.raise_()  # the Demo kit tab, where the race button is
            yield self.after(0.2)
            self.unclipped("race button", demo.controls.race_button)
            demo.controls.race_button.click()
        else:
            demo.race_action.trigger()  # Ctrl+R: Demo ▸ Race checked modes
        yield from self.wait_busy_then_idle()

    def do_stop(self, a: dict):
        win = self.window
        yield from self.show("Run")
        win.ui.form.set_values({"mode": "jit-static", "max_new_tokens": 1000, "stop_at_eos": False})
        runs = win.session._n_runs
        win.ui.prompt.run_button.click()
        t = time.monotonic() + 3
        yield lambda: win.is_busy() or win.session._n_runs != runs or time.monotonic() > t
        if not win.is_busy() and win.session._n_runs == runs:
            self.fail("finished", f"Run started nothing within 3 s (status: {win.status.text()!r})")
            return
        yield self.after(a["after_s"])
        if not win.is_busy():
            return  # it ended first: nothing to stop
        stop = win.ui.prompt.stop_button
        if not stop.isEnabled():
            if win.session.load_queue or win.session.loaded is None:
                return  # loading: Stop cannot cut a load short
            self.fail("stop", f"Stop disabled during a run (phase {win.ui.busy.phase()!r})")
            return
        stop.click()
        t0 = time.monotonic()
        yield lambda: not win.is_busy() or time.monotonic() - t0 > STOP_BOUND_S
        if win.is_busy():
            self.fail("finished", f"still busy {STOP_BOUND_S} s after Stop (phase {win.ui.busy.phase()!r})")

    def open_example(self, name: str, sweep: str = ""):
        win = self.window
        path = ROOT / "app" / "examples" / f"{name}.py"
        if not win.programs.open_example(str(path)):
            self.fail("example", f"could not open {path}")
            return False
        win.programs.panel.set_values({"sweep": sweep, "n_calls": 5, "mode": "jit", "spec": ""})
        return True

    def do_example(self, a: dict):
        if self.open_example(a["example"]):
            yield self.after(0.2)
            self.window.programs.panel.run_button.click()
            yield from self.wait_busy_then_idle()

    def do_sweep(self, a: dict):
        if self.open_example("02_static_shapes", a["sweep"]):
            yield self.after(0.2)
            self.window.programs.panel.run_button.click()
            yield from self.wait_busy_then_idle()

    def do_passes(self, a: dict):
        self.window.passes.record_shortcut()  # Ctrl+Shift+X: the Passes tab, Record
        yield from self.wait_busy_then_idle()

    def do_profile(self, a: dict):
        win = self.window
        tabs = win.ui.ir_tabs.tabs
        tabs.setCurrentIndex(next(i for i in range(tabs.count()) if tabs.tabText(i) == "Profile"))
        win.profile.button.click()
        yield from self.wait_busy_then_idle()

    def do_session(self, a: dict):
        win = self.window
        path = self.out / f"walk-{self.step:02d}.session"
        if win.sessions.save(path) and path.exists():
            yield self.after(0.1)
            win.sessions.open_paths([path])
        yield self.after(0.1)

    def do_replay(self, a: dict):
        self.window.sessions.replay.start(a["speed"])
        yield from self.wait_busy_then_idle(1.0)

    def do_export(self, a: dict):
        win = self.window
        path = self.out / f"export-{self.step:02d}.{a['ext']}"
        try:
            win.demo._status(win.demo.export_plot(path))  # File ▸ Export ▸ Plot as …, without its dialog
        except (OSError, ValueError) as exc:
            self.fail("export", f"{path.name}: {exc}")
            return
        yield self.after(0.1)
        if not path.exists() or path.stat().st_size == 0:
            self.fail("export", f"{path.name} not written")
        elif a["ext"] == "svg":
            text = html.unescape(path.read_text(encoding="utf-8", errors="replace"))
            missing = [label.text for _, label in win.ui.plot.legend.items if label.text not in text]
            if missing:
                self.fail("export_names_runs", f"{path.name} lacks legend entries {missing}")

    def do_resize(self, a: dict):
        win, screen = self.window, self.screen()
        w, h = int(screen.width() * a["w"]), int(screen.height() * a["h"])
        win.showNormal()
        win.setGeometry(screen.x() + (screen.width() - w) // 2, screen.y() + (screen.height() - h) // 2, w, h)
        yield self.after(SETTLE_S)
        frame = win.frameGeometry()  # the size the window took (its minimum may be larger): moved onto the screen
        x = max(screen.x(), min(frame.x(), screen.right() + 1 - frame.width()))
        y = max(screen.y(), min(frame.y(), screen.bottom() + 1 - frame.height()))
        if (x, y) != (frame.x(), frame.y()):
            win.move(x, y)
            yield self.after(0.1)

    def do_reset_layout(self, a: dict):
        self.window.menus.reset_layout_action.trigger()  # View ▸ Reset layout
        yield self.after(SETTLE_S)

    def write(self) -> None:
        (self.out / "results.json").write_text(json.dumps(self.results, indent=1))


def drive(walk: Walk) -> None:
    """Advance the walk's generator whenever the condition it waits for holds (polled every 50 ms); a condition
    that does not hold within ``STEP_TIMEOUT_S`` ends the walk as failed."""
    from PySide6.QtCore import QTimer

    gen = walk.steps()
    state = {"wait": next(gen), "since": time.monotonic(), "in": False}
    timer = QTimer(walk.window, interval=50)

    def end() -> None:
        timer.stop()
        walk.write()
        walk.window.close()

    def tick() -> None:
        if state["in"]:  # a modal dialog's loop re-entered the timer
            return
        state["in"] = True
        try:
            if not state["wait"]():
                if time.monotonic() - state["since"] > STEP_TIMEOUT_S:
                    walk.fail("finished", f"{walk.step_name} did not end within {STEP_TIMEOUT_S:.0f} s "
                                          f"(busy: {walk.window.is_busy()}, status: {walk.window.status.text()!r})")
                    walk.results["failures"][-1]["screenshot"] = walk.shot("timeout")
                    end()
                return
            state["wait"], state["since"] = next(gen), time.monotonic()
        except StopIteration:
            end()
        except Exception as exc:  # noqa: BLE001 - reported in results.json, then the window closes
            import traceback

            walk.fail("exception", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()[-1500:]}")
            walk.results["failures"][-1]["screenshot"] = walk.shot("exception")
            end()
        finally:
            state["in"] = False

    timer.timeout.connect(tick)
    timer.start()


def child_main(args: argparse.Namespace) -> int:
    """In the app's process (DISPLAY set): start the app and walk."""
    out = Path(args.out)
    from app.gui import main as gui_main
    from app.gui.window import MainWindow

    shown = MainWindow.show_first_time

    def show_and_walk(self) -> None:
        shown(self)
        drive(Walk(self, out, args.seed, plan(args.seed, args.actions)))

    MainWindow.show_first_time = show_and_walk
    return gui_main.main(["--model", "pydoc-llama"])


# -- the launcher: an Xvfb screen, the app in a child process ------------------------------------------------
def free_display() -> int:
    for n in range(91, 200):
        if not Path(f"/tmp/.X11-unix/X{n}").exists() and not Path(f"/tmp/.X{n}-lock").exists():
            return n
    raise RuntimeError("no free X display number")


def run_walk(seed: int, actions: int, size: tuple[int, int], out: Path, timeout_s: float = 1800) -> dict:
    """Walk ``actions`` actions of ``seed`` on a fresh Xvfb screen of ``size``; returns results.json's content
    (``failures`` empty when the walk passed) plus ``seconds`` and, where it broke, ``log`` (the app's last lines)."""
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
                   "--actions", str(actions), "--out", str(out)]
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
        "seed": seed, "actions": [describe(a) for a in plan(seed, actions)], "steps": [], "done": False,
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
    """Pass/fail, how to replay and each failure (with its screenshot)."""
    failures = results["failures"]
    head = (f"walk seed={results['seed']} size={results['size']} actions={len(results['actions'])}: "
            f"{'PASS' if not failures else 'FAIL'} in {results.get('seconds', '?')} s")
    lines = [head]
    if failures:
        lines.append(f"  replay: python tests/journeys/walk.py --seed {results['seed']} --actions "
                     f"{len(results['actions'])} --size {results['size']}")
        lines.append("  actions: " + "; ".join(f"{i}:{a}" for i, a in enumerate(results["actions"], 1)))
        for f in failures:
            lines.append(f"  step {f['step']} {f['action']}: {f['invariant']}: {f['detail']}"
                         + (f"\n    screenshot: {f['screenshot']}" if f.get("screenshot") else ""))
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
    p.add_argument("--plan", action="store_true", help="print the action list and exit")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        return child_main(args)
    if args.plan:
        print("\n".join(f"{i}: {describe(a)}" for i, a in enumerate(plan(args.seed, args.actions), 1)))
        return 0
    if shutil.which("Xvfb") is None:
        print("walk: needs Xvfb (Debian's xvfb)", file=sys.stderr)
        return 2
    size = parse_size(args.size)
    out = Path(args.out) if args.out else Path(f"{DEFAULT_OUT}-{args.seed}-{args.size}")
    results = run_walk(args.seed, args.actions, size, out)
    print(report(results, out))
    return 1 if results["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
