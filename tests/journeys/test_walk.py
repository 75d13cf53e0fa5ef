"""A short seeded walk over the user's actions in a real X11 window (Xvfb) at 1280×720, every invariant of
:mod:`tests.journeys.walk_checks` checked after every action (issue 29); Hypothesis chooses the actions and
shrinks a failing walk (issue 37). The long walks are ``bench/journey_walk.py``.

The seed is chosen to reach every kind of action (race, stop, example, sweep, passes, profile, session, replay,
export, resize, presentation, workspaces, reset layout) in 25 actions. It walks the suite's actions
(``walk.py --basic``): the settings race, overlay and mixture-of-experts actions of issue 55 (10–40 s each: a MoE
load, two compiles per setting) are the long walks' only; issue 55's rules (:mod:`walk_rules`) are checked here
too. The test is strict: any failure fails it — one the walk does not know with the walk shrunk (for at most
``SHRINK_S``) to the shortest list of actions that still fails, one listed in :data:`walk_flaws.KNOWN_FLAWS` (not
shrunk; the long walks report those and go on) with the known flaw named. Until issue 55's flaws were fixed it
xfailed on the known ones. Replay the walk with
``python tests/journeys/walk.py --seed 197 --actions 25 --size 1280x720``; screenshots and results in
``tests/artifacts/walk-test-1280x720/``.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import walk  # noqa: E402 - the walk's module, beside this file
from walk_checks import describe  # noqa: E402
from walk_flaws import known  # noqa: E402
from walk_machine import plan  # noqa: E402

SEED, ACTIONS, SIZE = 197, 25, (1280, 720)
SHRINK_S = 120  # a failing walk is shrunk this long at most (bench/journey_walk.py: --shrink-s)
OUT = walk.ROOT / "tests" / "artifacts" / "walk-test-1280x720"

pytestmark = pytest.mark.skipif(shutil.which("Xvfb") is None, reason="needs Debian's xvfb (.ci/run installs it)")


def test_a_short_walk_at_1280x720():
    results = walk.run_walk(SEED, ACTIONS, SIZE, OUT, timeout_s=600, shrink_s=SHRINK_S, full=False)
    text = walk.report(results, OUT)
    print(text)
    drawn = [describe(a) for a in plan(SEED, ACTIONS, full=False)]
    assert results["actions"] == drawn[:len(results["actions"])], f"the seed did not replay its walk:\n{text}"
    unknown = [f for f in results["failures"] if known(f) is None]
    assert not unknown, text
    assert results.get("done"), f"the walk ended early:\n{text}\n{results.get('log', '')[-2000:]}"
    assert len(results["steps"]) == ACTIONS, text
    flaws = sorted({known(f) for f in results["failures"]})
    assert not flaws, "known flaws of the app (tests/journeys/walk_flaws.py) showed:\n" + "\n".join(flaws) + f"\n{text}"
