"""The walk's rules of issue 55, checked after every action (:class:`WalkRules`, a base of
:class:`walk_checks.WalkChecks`); ``live_stop`` also while an action runs (every time the walk polls the window).

- ``drawing_area``: the latency plot's drawing area (its view box) is at least ``MIN_DRAWING_PX`` tall wherever it
  is shown, in every workspace, in a window of 1280×720 or larger (``BIG_WINDOW``), whatever has run;
- ``tradeoff_size``: the trade-off plot (the Demo kit's, or on stage in the plot's place) is at least
  ``MIN_TRADEOFF_PX`` tall wherever it is shown (where the Demo kit has no room it shows a note and a button);
- ``still``: no control (Run, Stop, the program editor, the IR tabs, the plot, the Code workspace's editor/IR
  splitter) moves more than ``MAX_MOVE_PX`` between two runs of the same workspace at the same window size
  (the baseline starts again on a resize, presentation, a layout reset or another workspace);
- ``ir_names``: an IR view that shows a step's IR names its run and step in its header ("run 3 · jit-static ·
  decode"; a live compile, no run: "live: compiled as you type, not run · file.py · entry"), and the step the header names is the checked, visible Step button;
- ``stale_error``: no red error text (the program panel's, the prompt's, a field's note, the model's load error,
  the status line's, the settings race's message) outlives the next successful run of its kind (a model run for
  the model's fields, a program run for the program's);
- ``live_stop``: while a live trace (the Code workspace's live compile) runs, the program's Stop is visible and
  enabled (issue 55: ``while True`` in an entry point traced at 100 % CPU with Stop disabled).
"""

from __future__ import annotations

import re

MIN_DRAWING_PX = 180
PLOT_FIT_S = 1.5  # the plot's deferred fits of legend and key, waited for before the checks
BIG_WINDOW = (1280, 720)
MIN_TRADEOFF_PX = 240
MAX_MOVE_PX = 4
#: Actions that start runs: the layout after each is compared with the one after the run before it (a MoE action
#: compares after its MoE run, before it loads the walk's model again: :meth:`walk_more.MoreActions.do_moe`).
RUNS_ACTIONS = {"run", "race", "stop", "example", "sweep", "replay", "settings_race"}
#: Actions after which the layout may legitimately differ: the ``still`` baseline starts again.
RESETS_STILL = {"resize", "presentation", "reset_layout", "workspace"}
#: Errors of the model's side (cleared by a model run that worked) and of the program's (by a program run).
MODEL_ERRORS = ("prompt", "field note", "model load", "status line", "settings race")
PROGRAM_ERRORS = ("program panel", "status line", "settings race")


def shown(w) -> bool:
    """On screen: visible and not on a tabbed dock's page behind another tab (Qt calls those visible): some of
    it, or of a child covering it, can be painted."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QWidget

    if not w.isVisible():
        return False
    if not w.visibleRegion().isEmpty():
        return True
    return any(shown(c) for c in w.findChildren(QWidget, options=Qt.FindChildOption.FindDirectChildrenOnly))


def worked(run) -> bool:
    return run.finished is not None and run.finished.reason not in ("stopped", "error")


class WalkRules:
    """Issue 55's rules (mixed into :class:`walk_checks.WalkChecks`: ``window``, ``fail``, ``step_name``)."""

    window: object
    #: ((workspace, window size, presenting), the controls' places, the action after which they were read)
    still_base: tuple[tuple, dict, str] | None = None
    errors_before: dict[str, str] = {}
    runs_before = 0  # the highest run number before the action
    during_step = -1  # the step whose live_stop failure is recorded (once a step)
    step = 0

    def fail(self, invariant: str, detail: object, subject: str = "") -> None:  # WalkChecks.fail
        raise NotImplementedError

    def check_rules(self) -> None:
        self.check_drawing_area()
        self.check_tradeoff()
        self.check_ir_names()

    # -- the plots --------------------------------------------------------------------------------------------
    def drawing_height(self) -> float | None:
        """The latency plot's drawing area's height (px) where ``drawing_area`` applies, else None."""
        win = self.window
        plot = win.ui.plot
        if win.width() < BIG_WINDOW[0] or win.height() < BIG_WINDOW[1] or not shown(plot):
            return None
        return plot.plotItem.getViewBox().sceneBoundingRect().height()

    def drawing_fits(self) -> bool:
        """What the walk waits for (at most ``PLOT_FIT_S``) before the checks: the plot fits its legend and key
        after its last point, 50 ms timers later (a loaded machine lags)."""
        height = self.drawing_height()
        return height is None or height >= MIN_DRAWING_PX

    def check_drawing_area(self) -> None:
        win = self.window
        plot = win.ui.plot
        height = self.drawing_height()
        if height is not None and height < MIN_DRAWING_PX:
            self.fail("drawing_area", f"the plot's drawing area is {height:.0f} px tall (< {MIN_DRAWING_PX}) in "
                                      f"{win.workspaces.current()} at {win.width()}x{win.height()} with "
                                      f"{plot.run_count()} runs", "drawing area")

    def check_tradeoff(self) -> None:
        sr = self.window.demo.settings_race
        for name, plot in (("the Demo kit's trade-off plot", sr.plot), ("the trade-off on stage", sr.stage_plot)):
            if shown(plot) and plot.height() < MIN_TRADEOFF_PX:
                self.fail("tradeoff_size", f"{name} is {plot.width()}x{plot.height()} px (< {MIN_TRADEOFF_PX} "
                                           f"tall)", name)

    # -- the IR views -----------------------------------------------------------------------------------------
    def check_ir_names(self) -> None:
        tabs = self.window.ui.ir_tabs
        if not shown(tabs.tabs) or tabs.tabs.currentWidget() not in tabs.panels.values():
            return  # Passes, Profile, …: not an IR view
        step = tabs.current_step()
        if tabs.text_of(step, "jaxpr") is None and tabs.text_of(step, "hlo") is None:
            return  # nothing shown yet for this step (a placeholder)
        header = re.sub(r" \(compiled in (run \d+|an earlier run)\)$", "", tabs.origin_text())  # a warm run's
        if not re.match(r"run \d+\b|live: ", header) or not header.endswith(f" · {step}"):  # live: not a run
            self.fail("ir_names", f"the IR header says {header!r} for step {step!r} (not 'run N · … · {step}')",
                      "header")
        checked = [name for name, b in tabs.step_buttons.items() if b.isChecked()]
        button = tabs.step_buttons.get(step)
        if checked != [step] or button is None or button.isHidden():
            self.fail("ir_names", f"the IR header names step {step!r}, the Step buttons show "
                                  f"{[n for n, b in tabs.step_buttons.items() if not b.isHidden()]} with "
                                  f"{checked} checked", "step")

    # -- the layout between runs ------------------------------------------------------------------------------
    def controls(self) -> dict[str, tuple[int, ...]]:
        """Window-relative rectangles of the current workspace's shown controls (and the Code splitter's sizes)."""
        from PySide6.QtCore import QPoint

        win = self.window
        ui, code = win.ui, win.workspaces.current() == "Code"
        panel = win.programs.panel
        widgets = {"Run": panel.run_button if code else ui.prompt.run_button,
                   "Stop": panel.stop_button if code else ui.prompt.stop_button,
                   "IR tabs": ui.ir_tabs.tabs, "plot": ui.plot}
        if code:
            widgets["editor"] = win.programs.editor
        out: dict[str, tuple[int, ...]] = {}
        for name, w in widgets.items():
            if shown(w):
                p = w.mapTo(win, QPoint(0, 0))
                out[name] = (p.x(), p.y(), w.width(), w.height())
        if code:
            out["editor/IR splitter"] = tuple(win.workspaces.code_split.sizes())
        return out

    def check_still(self, action: str) -> None:
        """``still`` after an action that ran something (baseline kept per workspace, window size, presentation)."""
        win = self.window
        if action in RESETS_STILL:
            self.still_base = None
        if action not in RUNS_ACTIONS and action != "moe run":
            return
        key = (win.workspaces.current(), win.size().toTuple(), win.demo.presentation.is_on())
        now = self.controls()
        if self.still_base is not None and self.still_base[0] == key:
            before, first = self.still_base[1], self.still_base[2]
            moved = {k: (before[k], now[k]) for k in sorted(set(before) & set(now)) if len(before[k]) == len(now[k])
                     and max(abs(a - b) for a, b in zip(before[k], now[k], strict=True)) > MAX_MOVE_PX}
            if moved:
                self.fail("still", f"between {first} and {action} in {key[0]}{' (presenting)' if key[2] else ''} at "
                                   f"{key[1][0]}x{key[1][1]} moved (before, after): {moved}")
        self.still_base = (key, now, action)

    # -- error texts ------------------------------------------------------------------------------------------
    def error_texts(self) -> dict[str, str]:
        """The red texts shown now, by where they are."""
        win = self.window
        ui = win.ui
        out = {"program panel": win.programs.panel.error_text(), "prompt": ui.prompt.error_text(),
               "model load": ui.model_error.text() if ui.model_error.isVisible() else "",
               "status line": win.status.text() if ui.status_label.property("error") else "",
               "settings race": win.demo.settings_race.controls.message_text()}
        notes = [f.note.text() for f in ui.form.limited_fields() if f.note.isVisible()]
        out["field note"] = " | ".join(notes)
        return {k: v for k, v in out.items() if v}

    def note_errors(self) -> None:
        """Before an action: the error texts shown, the highest run number so far."""
        self.errors_before = self.error_texts()
        self.runs_before = max((r.run_id for r in self.window.session.runs), default=0)  # the plot drops old units

    def check_errors(self) -> None:
        """``stale_error`` after an action: an error text shown before it, still shown, after a run of its kind
        that worked."""
        new = [r for r in self.window.session.runs if r.run_id > self.runs_before and not r.origin and not r.replay]
        kinds = set()
        if any(worked(r) and not r.program for r in new):
            kinds.update(MODEL_ERRORS)
        if any(worked(r) and r.program for r in new):
            kinds.update(PROGRAM_ERRORS)
        now = self.error_texts()
        for where in sorted(kinds):
            if where in self.errors_before and now.get(where) == self.errors_before[where]:
                self.fail("stale_error", f"the {where}'s error {now[where][:200]!r} outlived a run that worked "
                                         f"(run {new[-1].run_id})", where)

    # -- while an action runs ---------------------------------------------------------------------------------
    def check_during(self) -> None:
        """``live_stop``: a live trace in flight has a visible, enabled Stop (recorded once per step)."""
        win = self.window
        if not win.programs.live.in_flight() or win.workspaces.current() != "Code":
            return
        stop = win.programs.panel.stop_button
        if not (shown(stop) and stop.isEnabled()) and self.during_step != self.step:
            self.during_step = self.step
            self.fail("live_stop", f"a live trace runs and the program's Stop is "
                                   f"{'disabled' if shown(stop) else 'not visible'}", "live stop")
