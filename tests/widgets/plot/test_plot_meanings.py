"""One meaning per mark on the latency plot (issue 37: jit-loop's decode points were green squares while the key
said squares are prefill and green is a disk-cache compile; a run colour and a machine colour were that green,
another machine's the compile stars' orange): no run, mode or machine colour near the compile or disk-cache
colour, and no mode's decode marker one of the key's own (prefill square, disk-cache diamond, compile star)."""

from __future__ import annotations

from app.core.mode_catalog import CATALOG
from app.gui.panels.sessions.views import MACHINE_COLOURS
from widgets.plot.call_tooltip import COMPILE_COLOUR, DISK_COLOUR
from widgets.plot.latency_plot import RUN_COLOURS

KEY_MARKERS = {"s", "d", "star"}  # prefill, disk-cache compile, compiling call
LEAST_DISTANCE = 55  # RGB distance: #16a34a (a run colour) was 38 from the disk-cache #059669; red is 58 from orange


def rgb(colour: str) -> tuple[int, int, int]:
    return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)


def distance(a: str, b: str) -> float:
    return sum((x - y) ** 2 for x, y in zip(rgb(a), rgb(b), strict=True)) ** 0.5


def test_no_curve_colour_means_a_compile_or_the_disk_cache():
    colours = {**{f"run {i}": c for i, c in enumerate(RUN_COLOURS)},
               **{f"mode {m.name}": m.colour for m in CATALOG},
               **{f"machine {i}": c for i, c in enumerate(MACHINE_COLOURS)}}
    near = {name: (c, round(min(distance(c, COMPILE_COLOUR), distance(c, DISK_COLOUR))))
            for name, c in colours.items() if min(distance(c, COMPILE_COLOUR), distance(c, DISK_COLOUR)) < LEAST_DISTANCE}
    assert not near, near


def test_no_mode_marker_is_one_of_the_keys():
    assert not {m.name: m.marker for m in CATALOG if m.marker in KEY_MARKERS}
    assert len({m.marker for m in CATALOG}) == len(CATALOG)  # lanes stay apart where their lines overlap
