"""Flaws of today's app that the walk finds (issue 29's list where it has them): a failure that matches one
(its invariant, and the regular expression searched in its detail) is reported, but it does not fail the walk's
Hypothesis example, so it is never shrunk; any other failure does. The long walks (``bench/journey_walk.py``)
report these and go on; the suite's short walk (``tests/journeys/test_walk.py``) fails on any failure, these too
(it xfailed on them until issue 55's were fixed). Remove an entry once its flaw is fixed."""

from __future__ import annotations

import re

#: (invariant, regular expression searched in the failure's detail, the flaw)
KNOWN_FLAWS: list[tuple[str, str, str]] = [
    # none today. Fixed in issue 55: Run and Stop moving 7–8 px between runs (the stats strip's reserved figure
    # widths: tests/widgets/run/test_run_widgets.py), presentation's left column following its race summary's
    # values (tests/widgets/demo/test_race_table_width.py), the IR header's figures row taking 0–2 lines and moving
    # the IR tabs 14–30 px (tests/widgets/ir/test_ir_header_height.py), a legend of three rows leaving 172–173 px
    # of drawing area (tests/widgets/plot/test_legend_names.py). Fixed in issue 37: run names cut in a crowded legend (entries keep run, mode and model whole,
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
