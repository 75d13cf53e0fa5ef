"""The presentation's race summary (:class:`widgets.demo.race_table.RaceTable` with ``fit_rows(True)``) keeps its
width whatever its values are (issue 55: a longer value, "jit-static (stopped)", widened presentation mode's left
column and Run, Stop and the plot moved 5–9 px between two runs), and still shows every value uncut."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtGui import QFont, QFontMetrics  # noqa: E402

from app.core.report.columns import RACE_COLUMNS  # noqa: E402
from widgets.demo.race_table import RaceTable  # noqa: E402

STAGE_KEYS = ("ttft_ms", "compile_ms", "steady_ms_per_token", "speedup_vs_torch", "speedup_ci")


def row(mode: str, reason: str = "done", **values: object) -> dict:
    return {"mode": mode, "reason": reason, **{k: values.get(k) for k in STAGE_KEYS}}


def test_the_fitted_summary_keeps_its_width_whatever_the_values(qtbot):
    table = RaceTable([c for c in RACE_COLUMNS if c.key in STAGE_KEYS])
    qtbot.addWidget(table)
    widths = []
    for rows in ([row("jit-static", ttft_ms=69.2, compile_ms=0.0)],
                 [row("jit-static", "stopped", ttft_ms=69.2, compile_ms=0.0)],
                 [row("jit-static", ttft_ms=12345.6, compile_ms=123456.7, steady_ms_per_token=123.4,
                      speedup_vs_torch=12.34, speedup_ci=(11.11, 13.57))]):
        table.set_rows(rows)
        table.fit_rows(True)
        assert table.minimumWidth() >= table.content_width()  # every value uncut
        widths.append(table.minimumWidth())
    assert len(set(widths)) == 1, f"the summary's width followed its values: {widths} px"
    race = [row("torch", ttft_ms=35.3, steady_ms_per_token=7.81), row("torchax-eager", ttft_ms=2270.0),
            row("jit-static", ttft_ms=3390.0, steady_ms_per_token=3.52)]
    table.set_rows(race)
    table.fit_rows(True)
    assert table.minimumWidth() > widths[0]  # columns more: wider
    # Stop ends a race: one lane at most is stopped, and the room of one "(stopped)" is kept, not one a lane (a
    # six-lane race in presentation at 1920x1080 left the plot a strip)
    raced = table.minimumWidth()
    table.set_rows([*race[:2], {**race[2], "reason": "stopped"}])
    table.fit_rows(True)
    assert table.minimumWidth() == raced
    six = [row(mode, ttft_ms=35.3, steady_ms_per_token=7.81)
           for mode in ("torch", "torchax-eager", "jit-dynamic", "jit-static", "jit-loop", "torch-compile")]
    table.set_rows(six)
    table.fit_rows(True)
    bold = QFont(table.font())
    bold.setBold(True)
    assert table.minimumWidth() - table.content_width() < 2 * QFontMetrics(bold).horizontalAdvance(" (stopped)")
    table.fit_rows(False)
    assert table.minimumWidth() == 0


def test_the_reserve_gives_way_to_the_room_it_is_given(qtbot):
    """The presentation's column gives the summary at most ``most`` px for values it may show (the plot keeps the
    rest: a two-lane race at 1280x720 left the plot under half the window); the content's width always fits."""
    table = RaceTable([c for c in RACE_COLUMNS if c.key in STAGE_KEYS])
    qtbot.addWidget(table)
    table.set_rows([row("torch", ttft_ms=35.3), row("jit-static", ttft_ms=3390.0)])
    content, reserved = table.content_width(), table.reserved_width()
    assert reserved > content
    table.fit_rows(True, content + 1)
    assert table.minimumWidth() == content + 1
    table.fit_rows(True, content - 50)
    assert table.minimumWidth() == content


def test_more_lanes_than_the_limit_holds_shrink_then_scroll_sideways_under_every_row(qtbot):
    """Lanes a little wider than ``limit``: their font shrinks until every value fits (issue 55: the plot beside
    it keeps its share); far wider (six lanes in half their width): the font stops at SMALLEST_FONT of the
    window's, the table takes ``limit`` px and its height keeps every row above the horizontal scroll bar; off,
    the window's font again."""
    from widgets.demo.race_table import SMALLEST_FONT

    table = RaceTable([c for c in RACE_COLUMNS if c.key in STAGE_KEYS])
    qtbot.addWidget(table)
    full = table.font().pointSizeF()
    two = [row(mode, ttft_ms=35.3, steady_ms_per_token=7.81) for mode in ("torch", "jit-static")]
    table.set_rows(two)
    table.fit_rows(True, 10_000, table.content_width() + 10)
    assert table.minimumWidth() == table.content_width() + 10 and table.font().pointSizeF() == full
    assert table.minimumHeight() == table.content_height()
    limit = int(table.content_width() * 0.85)
    table.fit_rows(True, 10_000, limit)
    assert table.font().pointSizeF() < full and table.content_width() <= limit == table.minimumWidth()
    assert table.minimumHeight() == table.content_height()  # no scroll bar
    table.set_rows(two * 3)
    limit = table.content_width() // 2
    table.fit_rows(True, 10_000, limit)
    assert table.minimumWidth() == limit and table.font().pointSizeF() >= SMALLEST_FONT * full - 0.01
    assert table.minimumHeight() == table.content_height() + table.horizontalScrollBar().sizeHint().height()
    table.fit_rows(False)
    assert table.font().pointSizeF() == full and table.minimumWidth() == 0
