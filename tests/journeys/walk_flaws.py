"""Flaws of today's app that the walk finds (issue 29's list where it has them): a failure that matches one
(its invariant, and the regular expression searched in its detail) is reported, but it does not fail the walk's
Hypothesis example, so it is never shrunk; any other failure does. ``tests/journeys/test_walk.py`` xfails on
these and fails on any other. Remove an entry once its flaw is fixed."""

from __future__ import annotations

import re

#: (invariant, regular expression searched in the failure's detail, the flaw)
KNOWN_FLAWS = [
    ("run_labels", r"shown as '.*…( ┄ [^']*)?' in the legend",
     "the plot legend elides run labels ('run 5 · …'): model and mode unreadable from 4 runs on at 1280x720"),
    ("legend_whole", r"legend .* not inside the plot",
     "the run legend is wider than a narrow plot (a smaller window, presentation mode; issue 29, flaw 22)"),
    ("unclipped", r"plot \(\d+, \d+\) smaller than",
     "a window smaller than the 1280x720 the layout is made for (870x475 after a resize) squeezes the plot below "
     "240x150 px: the sidebar and the prompt column keep their widths"),
]


def known(failure: dict) -> str | None:
    """The known flaw ``failure`` (``{"invariant": ..., "detail": ...}``) is, or None."""
    for invariant, pattern, flaw in KNOWN_FLAWS:
        if failure["invariant"] == invariant and re.search(pattern, failure["detail"]):
            return flaw
    return None
