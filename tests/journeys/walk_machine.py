"""The walk as a Hypothesis state machine (issue 37): a rule per kind of action, each drawing its parameters; the
walk's invariants after every rule; a failing walk shrinks to the shortest list of actions that still fails.

- A seed is a walk: ``@seed(S)``, no database, ``max_examples=1``: the first walk Hypothesis draws for S is the
  seed's walk, the same every time (the rules draw nothing from the window, so :func:`plan` draws the same list
  without one). Hypothesis first tries its simplest example (every choice at its least: the first rule N
  times): the ``start`` rule skips it (``assume``), so that one walk is one drawn walk. Hypothesis's swarm
  testing leaves some kinds of action out of a walk: the seeds of ``bench/journey_walk.py`` reach them all.
- Each example is a fresh window (a fresh config folder, the built-in ``pydoc-llama``) in this process and on
  this screen, closed at its end; its rules run the actions of :mod:`walk_actions` to their end, pumping Qt's
  events until each condition an action waits for holds (``STEP_TIMEOUT_S`` each).
- A failure not in :data:`walk_flaws.KNOWN_FLAWS` fails the example at once (the walk ends there: the same
  actions must end the same way, or Hypothesis calls the test flaky). While shrinking, only the same failure
  (:func:`signature`: its invariant and the shape of its message) fails a walk: the shrinker cannot slip to
  another. Known flaws are recorded and reported, never shrunk.
- The window may not do the same twice on the same actions (timing): Hypothesis then stops shrinking (a
  ``Flaky`` error); the shortest walk that failed the same way so far is reported.
"""

from __future__ import annotations

import gc
import json
import os
import re
import shutil
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import hypothesis
from hypothesis import HealthCheck, Phase, assume, reject, seed, settings
from hypothesis import strategies as st
from hypothesis.errors import Flaky
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from walk_actions import pump, wait_through
from walk_checks import EXAMPLES, MODEL, RACE_MODES, STEP_TIMEOUT_S, SWEEPS, WORKSPACES
from walk_flaws import known
from walk_more import RACE_TARGETS, SETTING_PAIRS

SHRINK_S = 300  # how long a failing walk is shrunk at most (Hypothesis's own MAX_SHRINKING_SECONDS)
_FAILED: dict[str, type[AssertionError]] = {}


@contextmanager
def seeded_walks(shrink_s: float):
    """Hypothesis as the walk needs it, while it runs (undone after):

    - it also draws, now and then, constants it finds in the source of the local modules loaded at the time
      (here app/ and widgets/): those differ between the window's process and :func:`plan`, between moments of
      a run (modules load lazily) and with every edit of the app, and a seed must be one walk: only its own
      constant pool is left;
    - it stops shrinking after ``MAX_SHRINKING_SECONDS`` (300): a walk is slow to run, so ``shrink_s``."""
    from hypothesis.internal.conjecture import engine, providers
    from hypothesis.internal.constants_ast import Constants

    if not (callable(getattr(providers, "_get_local_constants", None))
            and hasattr(engine, "MAX_SHRINKING_SECONDS")):
        raise RuntimeError(f"hypothesis {hypothesis.__version__}: no providers._get_local_constants or "
                           "engine.MAX_SHRINKING_SECONDS to set (a seed would not replay its walk)")
    before = providers._get_local_constants, engine.MAX_SHRINKING_SECONDS
    providers._get_local_constants, engine.MAX_SHRINKING_SECONDS = Constants, int(shrink_s)
    try:
        yield
    finally:
        providers._get_local_constants, engine.MAX_SHRINKING_SECONDS = before


def failed(invariant_name: str) -> type[AssertionError]:
    """The exception type of a failure of ``invariant_name`` (Hypothesis tells failures apart by type)."""
    if invariant_name not in _FAILED:
        _FAILED[invariant_name] = type(f"WalkFailed_{invariant_name}", (AssertionError,), {})
    return _FAILED[invariant_name]


def signature(failure: dict) -> str:
    """What makes two failures the same: the invariant and its message with the numbers, quoted texts and
    bracketed lists left out (``run _ has no legend entry: _``, ``run _ _ shown as _ in the legend _``)."""
    shape = re.sub(r"'[^']*'|\[[^\]]*\]|\([^)]*\)|\d+(\.\d+)?", "_", failure["detail"].split("\n")[0])
    return f"{failure['invariant']}: {shape[:160]}"


def raise_failure(failure: dict, results: dict) -> None:
    """Fail the example with ``failure`` (raised here, in one place: Hypothesis tells failures apart by their
    type and where they rise)."""
    exc = failed(failure["invariant"])(f"step {failure['step']} {failure['action']}: {failure['invariant']}: "
                                       f"{failure['detail'][:600]}")
    exc.walk = results  # type: ignore[attr-defined]
    raise exc


class WalkDriver:
    """One seed's walk and the shrinker's walks after it: opens and closes their windows, keeps their records.
    ``dry``: no window; each example only lists its actions (:func:`plan`)."""

    def __init__(self, seed_: int, n_actions: int, out: Path, dry: bool = False, shrink_s: float = SHRINK_S,
                 full: bool = True):
        self.seed, self.n_actions, self.out, self.dry, self.shrink_s = seed_, n_actions, out, dry, shrink_s
        self.full = full  # the full walk's actions (FullWalkMachine), else the suite's (WalkMachine)
        self.walks = 0  # examples begun (the first is the seed's walk)
        self.main: dict | None = None  # the seed's walk's record
        self.shortest: dict | None = None  # the record of the shrinker's shortest walk that failed
        self.planned: list[list[dict]] = []  # dry: each example's actions
        self.kept: list = []  # windows whose compute thread did not end (destroying it would abort)
        self.main_ended = 0.0
        self.target: str | None = None  # the seed's walk's failure (its signature): the one shrinking keeps

    def open(self):
        """A fresh window and its walk (None when dry)."""
        self.walks += 1
        if self.dry:
            self.planned.append([])
            return None
        from walk_actions import Walk

        out = self.out if self.walks == 1 else self.out / "shrinking"
        if out != self.out:
            shutil.rmtree(out, ignore_errors=True)
            out.mkdir(parents=True)
        return Walk(self.open_window(), out, self.seed)

    def begin(self, walk) -> None:
        """The window idle (its model loaded): the invariants before the first action."""
        if not self.dry:
            self.broke(walk, wait_through(walk, walk.begin()))

    def act(self, walk, action: dict) -> None:
        if self.dry:
            self.planned[-1].append(action)
            return
        self.broke(walk, wait_through(walk, walk.act(action)))

    def failing(self, results: dict) -> dict | None:
        """The failure that fails the example: in the seed's walk the first that is not a known flaw; in the
        shrinker's, the first that is the same failure (:func:`signature`; another is recorded, but it is not the
        failure being shrunk)."""
        return next((f for f in results["failures"]
                     if known(f) is None and self.target in (None, signature(f))), None)

    def broke(self, walk, failure: dict | None) -> None:
        """A walk that broke (``finished``, ``exception``) ends: it fails the example, or, in the shrinker's
        walks, where it is not the seed's walk's failure, it is no example (``reject``)."""
        if failure is None:
            return
        if self.target not in (None, signature(failure)):
            reject()
        raise_failure(failure, walk.results)

    def end(self, walk) -> None:
        """The walk's record kept (``done``, each known flaw named); its window closed."""
        if walk is None:
            return
        results = walk.results
        results["done"] = len(results["steps"]) == self.n_actions
        for f in results["failures"]:
            if known(f):
                f["known"] = known(f)
        results["out"] = str(walk.out)
        walk.write()
        self.log(results)
        if self.walks == 1:
            self.main, self.main_ended = results, time.monotonic()
            first = self.failing(results)
            self.target = signature(first) if first else None
        elif self.failing(results):
            self.keep_shortest(walk)
        self.close_window(walk.window)

    def log(self, results: dict) -> None:
        """A line a walk in ``OUT/walks.log``: how the shrinker went."""
        first = next((f for f in results["failures"] if known(f) is None), None)
        line = (f"walk {self.walks}: {len(results['actions'])} actions, "
                f"{signature(first) if first else 'no failure'} · " + "; ".join(results["actions"]))
        with open(self.out / "walks.log", "a", encoding="utf-8") as log:
            log.write(line[:2000] + "\n")

    def keep_shortest(self, walk) -> None:
        """The shrinker's walk that failed, kept where it has the fewest actions so far (the later of equals:
        Hypothesis's last replay is its shrunk walk): its record, and its folder copied to ``OUT/shrunk``."""
        results = walk.results
        if self.shortest is not None and len(results["actions"]) > len(self.shortest["actions"]):
            return
        shrunk = self.out / "shrunk"
        shutil.rmtree(shrunk, ignore_errors=True)
        shutil.copytree(walk.out, shrunk)
        for f in results["failures"]:
            if f.get("screenshot"):
                f["screenshot"] = str(shrunk / Path(f["screenshot"]).name)
        results["out"] = str(shrunk)
        (shrunk / "results.json").write_text(json.dumps(results, indent=1))
        self.shortest = results

    def open_window(self):
        from app.core.paths import CONFIG_ENV
        from app.gui.main import QUIT_WAIT_MS
        from app.gui.user_settings import UserSettings
        from app.gui.window import MainWindow

        os.environ[CONFIG_ENV] = tempfile.mkdtemp(prefix="walk-config-")
        user = UserSettings.load()
        user.model = MODEL
        window = MainWindow(settings=user, autoload=True)
        window.quit_wait_ms = QUIT_WAIT_MS
        window.show_first_time()
        return window

    def close_window(self, window) -> None:
        """Close as the user does, wait for the compute thread (the next window must not share the CPUs with a
        compile), free the window on this thread."""
        from app.core.paths import CONFIG_ENV

        window.close()
        if not window.compute.shutdown(int(STEP_TIMEOUT_S * 1000)):
            self.kept.append(window)  # still inside a compile: its QThread must not be destroyed
        else:
            window.deleteLater()
            pump()
        gc.collect()  # a closed window's widgets collected here, never on a compute thread
        shutil.rmtree(os.environ.get(CONFIG_ENV, ""), ignore_errors=True)


def hundredths(lo: int, hi: int):
    """A number ``lo/100 … hi/100`` in steps of 0.01 (it shrinks towards ``lo``)."""
    return st.integers(lo, hi).map(lambda n: n / 100)


class WalkMachine(RuleBasedStateMachine):
    """The user's actions (a rule each, its parameters drawn as the walk always drew them) on a fresh window;
    every invariant of :class:`walk_checks.WalkChecks` after each (:meth:`walk_actions.Walk.act`)."""

    def __init__(self, driver: WalkDriver) -> None:
        super().__init__()
        self.driver = driver
        self.walk = None
        self.drawn: dict[str, int] = {}  # actions drawn so far, by name

    def act(self, name: str, **params) -> None:
        self.driver.act(self.walk, {"name": name, **params})

    @initialize(drawn=st.booleans())
    def start(self, drawn: bool) -> None:
        assume(drawn)  # Hypothesis's simplest example (drawn=False, then the first rule N times) is no walk
        self.walk = self.driver.open()
        self.driver.begin(self.walk)

    @rule(to=st.sampled_from(WORKSPACES))
    def workspace(self, to: str) -> None:
        self.act("workspace", to=to)

    @rule(cycle=st.booleans())  # on and off at once (else toggled: left on for later actions)
    def presentation(self, cycle: bool) -> None:
        self.act("presentation", cycle=cycle)

    @rule(tokens=st.integers(4, 12))
    def run(self, tokens: int) -> None:
        self.act("run", tokens=tokens)

    @rule(modes=st.lists(st.sampled_from(RACE_MODES), min_size=2, max_size=3, unique=True),
          tokens=st.integers(3, 6))
    def race(self, modes: list[str], tokens: int) -> None:
        self.act("race", modes=modes, tokens=tokens)

    @rule(after_s=hundredths(10, 150))
    def stop(self, after_s: float) -> None:
        self.act("stop", after_s=after_s)

    @rule(example=st.sampled_from(EXAMPLES))
    def example(self, example: str) -> None:
        self.act("example", example=example)

    @rule(sweep=st.sampled_from(SWEEPS))
    def sweep(self, sweep: str) -> None:
        self.act("sweep", sweep=sweep)

    @rule()
    def passes(self) -> None:
        self.act("passes")

    @rule()
    def profile(self) -> None:
        self.act("profile")

    @rule()
    def session(self) -> None:
        self.act("session")

    @rule(speed=st.sampled_from((4.0, 8.0)))
    def replay(self, speed: float) -> None:
        self.act("replay", speed=speed)

    @rule(ext=st.sampled_from(("png", "svg")))
    def export(self, ext: str) -> None:
        self.act("export", ext=ext)

    @rule(w=hundredths(60, 100), h=hundredths(60, 100))  # fractions of the screen
    def resize(self, w: float, h: float) -> None:
        self.act("resize", w=w, h=h)

    @rule()
    def layout_reset(self) -> None:
        """View ▸ Reset layout. Named to sort first: the shrinker puts Hypothesis's simplest rule (the first
        without parameters, by name) in place of other steps, and this one takes 0.7 s (passes: 9 s)."""
        self.act("reset_layout")

    @invariant()
    def no_new_failure(self) -> None:
        """A failure not among the known flaws fails the example (while shrinking: the same failure only)."""
        failure = self.walk and self.driver.failing(self.walk.results)
        if failure:
            raise_failure(failure, self.walk.results)

    def teardown(self) -> None:
        self.driver.end(self.walk)


class FullWalkMachine(WalkMachine):
    """The long walks' actions (``bench/journey_walk.py``; issue 55): the suite's and a settings race of two
    compiler settings, a saved session opened as an overlay, a mixture-of-experts run. A machine of its own, so
    that the suite's short walk (:class:`WalkMachine`) draws the same walk for its seed as before, cheap as
    before (a MoE load and a settings race take 10–40 s each). A walk draws at most ``MOST`` of each (Hypothesis's
    swarm testing may leave only a few kinds of action in a walk: 10 MoE loads would take the walk's hour)."""

    MOST = {"settings_race": 4, "overlay": 4, "moe": 2}

    def act(self, name: str, **params) -> None:
        self.drawn[name] = self.drawn.get(name, 0) + 1
        super().act(name, **params)

    def fewer(name: str):  # noqa: N805 - a precondition: fewer than MOST[name] drawn so far
        return precondition(lambda self: self.drawn.get(name, 0) < FullWalkMachine.MOST[name])

    @fewer("settings_race")
    @rule(on=st.sampled_from(RACE_TARGETS), settings=st.sampled_from(SETTING_PAIRS))
    def settings_race(self, on: str, settings: tuple[str, str]) -> None:
        self.act("settings_race", on=on, settings=list(settings))

    @fewer("overlay")
    @rule()
    def overlay(self) -> None:
        self.act("overlay")

    @fewer("moe")
    @rule(tokens=st.integers(3, 6))
    def moe(self, tokens: int) -> None:
        self.act("moe", tokens=tokens)


def walk_settings(n_actions: int) -> settings:
    return settings(
        max_examples=1, stateful_step_count=n_actions + 1,  # + the start rule
        database=None, deadline=None, derandomize=False, print_blob=False, report_multiple_bugs=True,
        phases=(Phase.explicit, Phase.generate, Phase.shrink), suppress_health_check=list(HealthCheck))


def run_machine(driver: WalkDriver) -> BaseException | None:
    """Run the seed's walk (and, where it fails, shrink it); returns what Hypothesis raised, else None."""
    machine = FullWalkMachine if driver.full else WalkMachine

    def factory() -> WalkMachine:
        return machine(driver)

    try:
        with seeded_walks(driver.shrink_s):
            run_state_machine_as_test(seed(driver.seed)(factory), settings=walk_settings(driver.n_actions))
    except Exception as exc:  # noqa: BLE001 - the walk failed: the caller reports it
        return exc
    return None


def plan(seed_: int, n_actions: int, full: bool = True) -> list[dict]:
    """The seed's walk: its actions ``{"name": ..., **params}``, drawn without a window (``full``: the long
    walks' actions, :class:`FullWalkMachine`)."""
    driver = WalkDriver(seed_, n_actions, Path(tempfile.gettempdir()), dry=True, full=full)
    run_machine(driver)
    return driver.planned[-1] if driver.planned else []


def walk_results(driver: WalkDriver) -> dict:
    """Run the walk; its record (results.json): the seed's walk (``seed``, ``actions``, ``steps``, ``failures``,
    ``done``) and, where it failed, ``shrunk_actions`` (the fewest actions found that still fail the same way)
    and ``shrunk`` (that walk's failure, its folder), ``walks`` (how many were run), ``hypothesis`` (what
    Hypothesis said) and ``hypothesis_notes`` (its shrunk walk, as its steps)."""
    raised = run_machine(driver)
    results = driver.main or {"seed": driver.seed, "actions": [], "steps": [], "failures": [], "done": False}
    results["n_actions"], results["walks"] = driver.n_actions, driver.walks
    if raised is None:
        return results
    results["hypothesis"] = f"{type(raised).__name__}: {raised}"[:1000]
    results["hypothesis_notes"] = [str(n) for n in getattr(raised, "__notes__", [])][:200]  # the shrunk steps
    if driver.target is None:  # no walk failed, yet Hypothesis did
        results["failures"].append({"step": len(results["steps"]), "action": "?", "invariant": "exception",
                                    "detail": results["hypothesis"]})
    results["shrink_seconds"] = round(time.monotonic() - driver.main_ended, 1) if driver.main_ended else 0.0
    if isinstance(raised, Flaky):
        results["shrink_note"] = ("the window did not do the same twice on the same actions (Hypothesis: flaky): "
                                  "shrinking stopped; the shortest walk that failed the same way so far is shown")
    if driver.shortest is not None:
        best = driver.shortest
        results["shrunk_actions"] = best["actions"]
        results["shrunk"] = {"steps": len(best["steps"]), "out": best["out"], "failure": driver.failing(best)}
    return results
