"""Flaws of today's app that the walk finds (issue 29's list where it has them): a failure that matches one
(its invariant, and the regular expression searched in its detail) is reported, but it does not fail the walk's
Hypothesis example, so it is never shrunk; any other failure does. ``tests/journeys/test_walk.py`` xfails on
these and fails on any other. Remove an entry once its flaw is fixed."""

from __future__ import annotations

import re

#: (invariant, regular expression searched in the failure's detail, the flaw)
KNOWN_FLAWS: list[tuple[str, str, str]] = [
    ("still", r"^between settings_race and \w+ in Run .*'Run': ",
     "issue 55: after a settings race at 1280x720 (the trade-off in the plot's place) the Run workspace's left "
     "column is 8 px narrower than after the next run (the latency plot back): Run and Stop move 8 px (walk seed "
     "203). Cause not found yet: the swap itself (DemoKit._show_stage) keeps the split's sizes in an offscreen "
     "probe with points on the plot; the move comes with a real race"),
    ("still", r"^between \w+ and \w+ in Run at \S+ moved \(before, after\): \{'IR tabs': [^}]*\}$",
     "issue 55: in a short window (1024x600) the Run workspace's What JAX sees dock scrolls its IR card, whose "
     "height follows the current view's minimum (IRTabs.size_by_current_tab: 134 px empty, 398 px with text) and "
     "whose figures row (FiguresLabel, minimum 0) takes 0–2 lines: the IR tabs move 30 px between the first run "
     "with IR and the one before it (walk seed 2 at 1024x600: stop, stop)"),
    # none today. Fixed in issue 37: run names cut in a crowded legend (entries keep run, mode and model whole,
    # the oldest runs named together: tests/widgets/plot/test_legend_names.py); a legend wider than a narrow
    # plot and the plot squeezed in small windows (the key never widens the plot, the plot has a minimum size
    # the window keeps: tests/gui/window/test_small_window.py)
]


def known(failure: dict) -> str | None:
    """The known flaw ``failure`` (``{"invariant": ..., "detail": ...}``) is, or None."""
    for invariant, pattern, flaw in KNOWN_FLAWS:
        if failure["invariant"] == invariant and re.search(pattern, failure["detail"]):
            return flaw
    return None
