"""The user's actions of the walk (issue 29), each a generator: every ``yield`` is a condition to wait for
(:func:`wait_through` pumps Qt's events until it holds, within ``STEP_TIMEOUT_S``). :meth:`Walk.act`
is one step: the action, then idle, then every invariant of :class:`walk_checks.WalkChecks`, then whether the
action did anything at all (``no_silent_noop``)."""

from __future__ import annotations

import html
import time
import traceback

from walk_checks import (
    MOVES_LAYOUT,
    ROOT,
    SETTLE_S,
    STEP_TIMEOUT_S,
    STOP_BOUND_S,
    WORKSPACES,
    WalkChecks,
    describe,
)
from walk_more import MoreActions
from walk_rules import PLOT_FIT_S


def pump(ms: int = 50) -> None:
    """Run Qt's event loop for ``ms`` (as the app's own loop: the GIL released while it waits, so the compute
    thread runs at full speed; QTest.qWait holds it), then free what was deleted later."""
    from PySide6.QtCore import QCoreApplication, QEvent, QEventLoop, QTimer

    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


def wait_until(condition, timeout_s: float, each=None) -> bool:
    """Pump Qt's events until ``condition()`` holds, polled every 50 ms as the walk's timer always did (``each()``
    called at every poll: the rules checked while an action runs); False when ``timeout_s`` passed first."""
    since = time.monotonic()
    while True:
        pump()
        if each is not None:
            each()
        if condition():
            return True
        if time.monotonic() - since > timeout_s:
            return False


def wait_through(walk, steps) -> dict | None:
    """Run the generator ``steps`` (conditions to wait for) to its end; the failure that broke it (a condition
    that did not hold within ``STEP_TIMEOUT_S``, an exception) is recorded with a screenshot and returned."""
    try:
        for condition in steps:
            if not wait_until(condition, STEP_TIMEOUT_S, walk.check_during):
                walk.fail("finished", f"{walk.step_name} did not end within {STEP_TIMEOUT_S:.0f} s "
                                      f"(busy: {walk.window.is_busy()}, status: {walk.window.status.text()!r})")
                name = "timeout"
                break
        else:
            return None
    except Exception as exc:  # noqa: BLE001 - reported in results.json, then the example fails
        walk.fail("exception", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()[-1500:]}")
        name = "exception"
    failure = walk.results["failures"][-1]
    failure["screenshot"] = walk.shot(name)
    walk.write()
    return failure


#: px a dock, the central area or the plot may move after presentation on and off: Qt splits a window at its
#: minimum size with ±1 px rounding (the walk, seed 302 at 1024×600: the plot 284 → 280 px, the central area 1 px)
PRESENT_SLACK_PX = 4

class Walk(MoreActions, WalkChecks):
    # -- the walk --------------------------------------------------------------------------------------------
    def begin(self):
        """The window shown and its model loaded: the invariants before the first action."""
        yield self.idle
        yield self.after(SETTLE_S)
        self.results["screen"] = self.screen().size().toTuple()
        self.check()
        if self.results["failures"]:
            self.results["failures"][-1]["screenshot"] = self.shot("start")
        self.write()

    def act(self, action: dict):
        """One step: ``action`` (``{"name": ..., **params}``), idle, the invariants, ``no_silent_noop``."""
        win = self.window
        self.results["actions"].append(describe(action))
        i = len(self.results["actions"])
        self.step, self.step_name = i, describe(action)
        n_failures = len(self.results["failures"])
        before, said, t0 = self.snapshot(), self.said, time.monotonic()
        self.note_errors()
        name = action["name"]
        if name in MOVES_LAYOUT:
            self.layout_moved = True
        yield from getattr(self, f"do_{name}")(action)
        yield self.idle
        yield self.after(SETTLE_S)
        fit_by = time.monotonic() + PLOT_FIT_S  # not again while the plot stays too short (a known flaw)
        yield lambda: self.drawing_fits() or time.monotonic() > fit_by or ("drawing_area", "drawing area") in self.failing
        t_check = time.monotonic()
        self.check()
        self.check_still(name)
        self.check_errors()
        check_ms = (time.monotonic() - t_check) * 1000
        cycle = name == "presentation" and action.get("cycle")  # on and off: back where it was
        same_size = name == "resize" and self.resized_to_own_size
        if name != "reset_layout" and not cycle and not same_size and self.snapshot() == before and self.said == said:
            self.fail("no_silent_noop", f"{self.step_name} changed nothing and said nothing "
                                        f"(status: {win.status.text()!r})")
        self.results["steps"].append({"step": i, "action": self.step_name,
                                      "seconds": round(time.monotonic() - t0, 2), "check_ms": round(check_ms, 1),
                                      "status": win.status.text()[:300]})
        if len(self.results["failures"]) > n_failures:
            path = self.shot(name)
            for f in self.results["failures"][n_failures:]:
                f["screenshot"] = path
        self.write()

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

        def moved(a, b) -> bool:  # by more than PRESENT_SLACK_PX: Qt's rounding in a window at its minimum
            return a is None or b is None or any(abs(x - y) > PRESENT_SLACK_PX for x, y in zip(a, b, strict=True))

        diff = {k: (before.get(k), after.get(k)) for k in sorted(set(before) | set(after))
                if moved(before.get(k), after.get(k))}
        if diff:
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
        demo.controls.set_steady(False)  # the cold lanes: a walk's race stays seconds long
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
        # the legend the export draws, read in the same event-loop turn (a relayout just after it, e.g. the Code
        # workspace's live compile resizing the IR card, may fold the legend's entries anew: seed 324)
        shown = [label.text for _, label in win.ui.plot.legend.items]
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
            missing = [entry for entry in shown  # an entry may take two lines
                       if any(line not in text for line in entry.split("<br>"))]
            if missing:
                self.fail("export_names_runs", f"{path.name} lacks legend entries {missing}")

    def do_resize(self, a: dict):
        win, screen = self.window, self.screen()
        w, h = int(screen.width() * a["w"]), int(screen.height() * a["h"])
        least = win.minimumSize()  # a window at its minimum asked to be smaller stays as it is: no silent no-op
        # (maximized too, when its minimum is the whole screen: the walk, seed 312 at 1024x600, Code workspace)
        self.resized_to_own_size = (max(w, least.width()), max(h, least.height())) == win.size().toTuple()
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
