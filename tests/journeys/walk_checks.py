"""The walk's state in the app's process and its invariants (issue 29), checked after every action of
:mod:`walk_actions`; :mod:`walk_machine` chooses the actions (Hypothesis), :mod:`walk` starts it all.

Each ``check_*`` records a failure (``fail``) in ``results["failures"]``; a flaw that holds on from the step
before is not recorded again (it is reported where it appears, and again where it comes back)."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

from walk_rules import WalkRules, shown

ROOT = Path(__file__).resolve().parents[2]
MODEL = "pydoc-llama"  # the walk's model: the built-in one, loaded in every fresh window
STEP_TIMEOUT_S = 180.0  # one action (a race with torchax-eager, a Passes recording) ends within this
STOP_BOUND_S = 5.0  # Stop during a run: the window is idle again within this
SETTLE_S = 0.3  # after an action ends: layouts and deferred fits (ScreenFit's singleShot) settle
MIN_PLOT = (240, 150)  # the plot smaller than this (w, h) cannot be read (issue 29: ~30 px tall after Passes)
RACE_MODES = ("torch", "jit-static", "torchax-eager")
WORKSPACES = ("Run", "Inspect", "Code")
#: Gallery examples the walk opens and runs (fast on a CPU); the sweep uses 02 (argument 0 is an array).
EXAMPLES = ("01_jit_speedup", "02_static_shapes", "03_pytrees", "04_static_argnums", "05_loops",
            "06_transforms", "09_donation")
SWEEPS = ("1:4", "1:6", "2,4,8")
#: Actions after which the layout may differ legitimately (presentation's before/after is not compared).
MESH = re.compile(r"^(\d+ devices?|[a-z]+=\d+(,\s*[a-z]+=\d+)*)$")  # "1 device", "tp=2", "dp=2,tp=2"
MOVES_LAYOUT = {"workspace", "resize", "reset_layout", "example", "sweep"}


def x_title(plot: Any) -> str:
    """The latency plot's x axis title as drawn ("call index   ·   runs 5–9 earlier")."""
    return str(plot.plotItem.getAxis("bottom").labelText)


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


class WalkChecks(WalkRules):
    """What the walk knows of one window (hooked to what it says and to each run it starts) and its invariants.
    ``results`` is the walk's record: ``seed``, ``actions`` (as drawn, appended as they run), ``steps``,
    ``failures``, ``done``."""

    def __init__(self, window, out: Path, seed: int) -> None:
        self.window, self.out, self.seed = window, out, seed
        self.results: dict = {"seed": seed, "actions": [], "steps": [], "failures": [], "done": False}
        self.step = 0
        self.step_name = "start"
        self.expected: dict[int, tuple[str, str]] = {}  # run id -> (model or file:entry, mode)
        self.said = 0  # messages the window said (status line, program panel)
        self.presented_geometry: dict | None = None  # geometries before presentation went on
        self.layout_moved = False  # since presentation went on
        self.resized_to_own_size = False  # the last resize asked for the size the window had (its minimum)
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
        self.check_views()
        self.check_rules()

    def check_views(self) -> None:
        """``views_follow_run``: the stats strip and the plot's key show the current run's kind (a program's
        calls or a model's tokens), live or reopened; ``device_labels``: every run's label names the devices it
        ran on right after its mode ("jit-static · 1 device · …"), live and recorded alike (issue 37)."""
        win = self.window
        run = win.session.current
        if run is not None and not win.session.busy:
            program = bool(run.program)
            shown = {"stats strip": win.ui.stats.is_program(), "plot key": win.ui.plot.is_program()}
            for view, is_program in shown.items():
                if is_program != program:
                    self.fail("views_follow_run", f"the {view} shows {'calls' if is_program else 'tokens'} for "
                                                  f"run {run.run_id} ({'program' if program else 'model'} run)", view)
        for plotted in win.ui.plot._runs:
            parts = plotted.label.split(" · ")
            if len(parts) < 2 or not MESH.match(parts[1]):
                self.fail("device_labels", f"run {plotted.run_id} '{plotted.legend_name()}' does not name its "
                                           f"devices after its mode", f"run {plotted.run_id}")

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
        # a settings race's trade-off in the plot's place (Demo ▸ Trade-off in the plot area): no latency plot
        plot_required = not shown(win.demo.settings_race.stage_card)
        self.unclipped("status line", ui.status_label)
        if where == "Run":
            self.unclipped("Run button", ui.prompt.run_button)
            self.unclipped("Stop button", ui.prompt.stop_button)
            self.unclipped("plot", ui.plot, plot_required)
            self.unclipped("race button", win.demo.controls.race_button, required=False)  # its dock tab may be behind
        elif where == "Code":
            panel = win.programs.panel
            self.unclipped("program Run button", panel.run_button)
            self.unclipped("program Stop button", panel.stop_button)
            self.unclipped("plot", ui.plot, plot_required)
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
            elif not shown_as and in_race_entry(run.run_id, re.findall(r"runs \d+–\d+ earlier", x_title(plot))):
                continue  # earlier runs named under the x axis where the legend's rows hold the newest race alone
            elif not shown_as:
                self.fail("run_labels", f"run {run.run_id} has no legend entry: {names}", f"run {run.run_id}")
            elif (what not in shown_as and what not in plot.shared_label()) or mode not in shown_as:
                self.fail("run_labels", f"run {run.run_id} '{run.legend_name()}' shown as '{shown_as}' in the legend "
                                        f"(cut: its model and mode are not both readable)", f"run {run.run_id} cut")

    def write(self) -> None:
        (self.out / "results.json").write_text(json.dumps(self.results, indent=1))
