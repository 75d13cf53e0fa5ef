"""The data behind :class:`widgets.plot.latency_plot.LatencyPlot`: one plotted call, one overlaid run, a compile
note."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pyqtgraph as pg  # noqa: TID253 - a heavy module: its users import it inside functions
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetricsF

from app.core.inspect.views import DECODE, PREFILL
from widgets.plot.call_tooltip import COMPILE_COLOUR, DISK_COLOUR

#: A label part that does not tell runs apart, left out of a legend entry before its mode or model is cut: the
#: devices (``"1 device"``, ``"tp=2"``, ``"dp=2,tp=2"``: ``Engine.mesh_label``), the machine of a recorded run.
SECONDARY = re.compile(r"^(\d+ devices?|recorded on .*|KV [\d,]+|[a-z]+=\d+(,\s*[a-z]+=\d+)*)$")


@dataclass
class PlotPoint:
    """One plotted call; ``record`` is the original record object (read by attribute)."""

    x: int
    wall_ms: float
    step: str
    compiled: bool
    record: Any


class CompileNote(pg.TextItem):
    """The note beside a compiling call's point: ``full_text`` (the compile's split, as many lines as it
    takes), ``short_text`` (one line, shown where the plot is cramped) and the call it describes (``call_x``)."""

    def __init__(self, text: str, short_text: str, call_x: int, **kwargs: Any) -> None:
        super().__init__(text, **kwargs)
        self.full_text = text
        self.short_text = short_text
        self.call_x = call_x
        self.retired = False  # an earlier run's note, hidden for good (the newest runs' notes are placed)


@dataclass
class PlotRun:
    run_id: int
    label: str
    colour: str
    line: pg.PlotDataItem
    dots: dict[str, pg.PlotDataItem]
    key: pg.PlotDataItem  # the legend's sample (line + decode marker), not in the plot
    points: list[PlotPoint] = field(default_factory=list)
    notes: list[CompileNote] = field(default_factory=list)
    dirty: bool = False
    annotate: bool = True
    dot_counts: dict[str, int] = field(default_factory=dict)  # markers drawn per kind
    symbol: str = "o"  # the decode marker
    group: int | None = None  # runs drawn together (a race's lanes) share a group
    steady_ms: float | None = None  # a race lane's steady decode median, drawn as its own dashed line
    steady_line: pg.InfiniteLine | None = None
    lane: str = ""  # what a race's lane ran with when it is not a mode (a setting, jit / no-jit): its race's entry names it

    def legend_name(self) -> str:
        return f"run {self.run_id} · {self.label}"


def point_kind(p: PlotPoint) -> str:
    if p.compiled:
        return "disk" if getattr(p.record, "persistent_cache_hit", None) else "compiled"
    return PREFILL if p.step == PREFILL else DECODE  # a program's calls (step = its entry point) as decode


def set_antialias(item: pg.PlotDataItem, on: bool) -> None:
    """Switch a line's antialiasing off while it streams and back on once it settles: software-rendered
    antialiasing takes CPU from XLA on a 2-core machine (bench/gui_responsiveness.py, pydoc-llama: the
    window's warm tokens/s went from 0.63 to about 0.71 of the CLI's)."""
    if item.opts.get("antialias") != on:
        item.opts["antialias"] = item.curve.opts["antialias"] = on
        item.curve.update()


def run_items(colour: str, symbol: str, width: float,
              size: Callable[[str], float]) -> tuple[pg.PlotDataItem, pg.PlotDataItem, dict[str, pg.PlotDataItem]]:
    """The plot items of one run: its line (above the compile stars, so a lane that compiles at every step
    stays visible), its legend sample (line + decode marker, never added to the plot) and one marker item
    per kind with a uniform style (pyqtgraph's fast path: no per-point pens). ``size(kind)``: marker px."""
    line = pg.PlotDataItem(pen=pg.mkPen(colour, width=width))
    line.setZValue(1)
    white = pg.mkPen("w", width=1)
    key = pg.PlotDataItem(pen=pg.mkPen(colour, width=width), symbol=symbol, symbolSize=size(DECODE),
                          symbolBrush=colour, symbolPen=white)
    styles = {
        PREFILL: ("s", colour, white),
        DECODE: (symbol, colour, white),
        "compiled": ("star", COMPILE_COLOUR, pg.mkPen("#7c2d12", width=1)),
        "disk": ("d", DISK_COLOUR, pg.mkPen("#064e3b", width=1)),
    }
    dots = {kind: pg.PlotDataItem(pen=None, symbol=sym, symbolSize=size(kind), symbolBrush=brush, symbolPen=pen)
            for kind, (sym, brush, pen) in styles.items()}
    return line, key, dots


def legend_entries(runs: list[PlotRun], capacity: int) -> list[list[PlotRun]]:
    """The run legend's entries, each the runs it names (oldest first), at most ``capacity`` (≥ 2) of them: one
    run each while they fit; else every older race (a group other than the newest run's) is one entry — its
    lanes are faded and drawn in the same mode colours as the newest race's (issue 37: two six-lane races took
    six legend rows and squeezed the plot to a strip; a race is one unit on the plot); and when that is still
    too many, the oldest entries become one (``"runs 1–9 · 9 earlier runs"``), so every entry left names its
    run's mode and model whole (issue 37: names cut to "run 5 · jit-static · recorded o…" in a small plot).
    The newest run, and every lane of the newest race, keeps its own entry (a race is one unit)."""
    capacity = max(2, capacity)
    if len(runs) <= capacity or not runs:
        return [[run] for run in runs]
    newest = runs[-1].group
    entries: list[list[PlotRun]] = []
    races: dict[int, list[PlotRun]] = {}
    for run in runs:
        if run.group is not None and run.group != newest:
            if run.group not in races:
                races[run.group] = []
                entries.append(races[run.group])
            races[run.group].append(run)
        else:
            entries.append([run])
    newest_from = next(i for i, entry in enumerate(entries)  # the newest race's lanes are never merged
                       if entry[-1] is runs[-1] or (newest is not None and entry[0].group == newest))
    cut = min(len(entries) - capacity + 1, newest_from)
    if cut >= 2:
        entries = [[run for entry in entries[:cut] for run in entry], *entries[cut:]]
    return entries


def race_entry_name(lanes: list[PlotRun], width: Callable[[str], float] | None = None, room: float = 0.0) -> str:
    """An entry of several runs: an older race's (``"runs 1–6 · race of 6 modes"``, ``▶ replay`` when it
    replayed; a settings race's lanes by their settings (:attr:`PlotRun.lane`), as its race table names them:
    ``"runs 7–8 · default, O1"``, issue 55), else older runs named together (``"runs 1–9 · 9 earlier runs"``).
    Where that name's ``width`` exceeds the entry's ``room`` (px), a shorter one that is whole: the settings
    counted (``"runs 1–4 · 4 settings"``), else the runs' span alone (``"runs 1–6"``) — never cut to
    ``"default, O…"`` or ``"6 earlier …"`` (the entry's tool tip names each run, :func:`entry_tip`)."""
    span = f"runs {lanes[0].run_id}–{lanes[-1].run_id}"
    groups = {lane.group for lane in lanes}
    names = [f"{span} · {len(lanes)} earlier runs", span]
    if len(groups) == 1 and None not in groups:
        replay = " ▶ replay" if all("▶ replay" in lane.label for lane in lanes) else ""
        settings = list(dict.fromkeys(lane.lane for lane in lanes))  # each once (a race of several rounds)
        what = "lanes" if set(settings) <= {"jit", "no-jit"} else "settings"  # a program's jit / no-jit: not settings
        names = ([f"{span} · race of {len(lanes)} modes{replay}"] if not all(settings) else
                 [f"{span} · {', '.join(settings)}{replay}", f"{span} · {len(settings)} {what}{replay}"])
        names.append(f"{span}{replay}")
    return next((name for name in names if width is None or width(name) <= room), names[-1])


def entry_tip(runs: list[PlotRun]) -> str:
    """The tool tip of a legend entry naming ``runs``: a run's whole name (``"run 5 · jit-static · 1 device ·
    pydoc-llama"``, which the entry may cut); an entry of several runs' whole name (:func:`race_entry_name`, which
    the entry may only count: ``"runs 1–4 · default, O1, O3, O0"``), then each run's name on a line of its own."""
    names = [run.legend_name() for run in runs]
    return "\n".join(names if len(runs) == 1 else [race_entry_name(runs), *names])


def shared_parts(labels: list[str]) -> list[str]:
    """The " · "-separated parts after the first (the mode) that every label of ``labels`` has, in the first
    label's order (``[]`` for fewer than two labels): ``["jit-static · 1 device · M", "torch · 1 device · M ·
    recorded on CPU × 4"]`` → ``["1 device", "M"]``."""
    if len(labels) < 2:
        return []
    split = [label.split(" · ") for label in labels]
    common = set(split[0][1:]).intersection(*(parts[1:] for parts in split[1:]))
    return [part for part in split[0][1:] if part in common]


def shorten(name: str, metrics: QFontMetricsF, room: float) -> str:
    """``name`` (``"run 5 · jit-static · 1 device · pydoc-llama"``) in ``room`` px, keeping what tells runs apart
    longest: whole if it fits; else without its devices and machine (:func:`essential`), so the run number,
    the mode and the model or program stay readable; else on two lines ("run 4 · jit ·<br>02_static_shapes.py:
    normalize": the random walk found it cut in a 300-px plot) (the random-walk journeys found "run 5 · …" and
    "run 29 · jit · 1 …"); else cut at the right with "…". A race lane's steady value (" ┄ 9.5 ms") is kept
    while the run number, mode and model fit beside it, else left out (its dashed line stays drawn)."""
    if metrics.horizontalAdvance(name) <= room:
        return name
    if " ┄ " in name:  # a lane's steady value stays whole while the run number and mode stay readable
        head, value = name.rsplit(" ┄ ", 1)
        value = f" ┄ {value}"
        least = essential(head)  # "run 5 · jit-static · pydoc-llama"
        if metrics.horizontalAdvance(least + value) <= room:
            return shorten(head, metrics, room - metrics.horizontalAdvance(value)) + value
        return shorten(head, metrics, room)  # no room for both: mode and model win (the dashed line stays drawn)
    parts = name.split(" · ")  # run N · mode · mesh · model or file:entry (whose own label may hold " · ")
    short = essential(name)
    if short != name:
        if metrics.horizontalAdvance(short) <= room:
            return short
        name = short
    head = " · ".join(parts[:2])  # "run 4 · jit"
    rest = name[len(head) + 3:]
    if rest and metrics.horizontalAdvance(head) <= room:  # on two lines: the model or file:entry whole below
        return f"{head} ·<br>{metrics.elidedText(rest, Qt.TextElideMode.ElideRight, room)}"
    cut = metrics.elidedText(name, Qt.TextElideMode.ElideRight, room)
    return cut if cut.startswith(parts[0]) else f"{parts[0]} …"  # the run number always: names stay unique


def least_name(name: str) -> str:
    """What a legend entry keeps when its column is narrow: :func:`essential`, then a lane's steady value."""
    value = f" ┄ {name.rsplit(' ┄ ', 1)[1]}" if " ┄ " in name else ""
    return essential(name) + value


def essential(name: str) -> str:
    """A legend entry's name without what does not tell runs apart (:data:`SECONDARY`: devices, the machine)
    and without a lane's steady value: ``"run 2 · jit-static · 1 device · pydoc-llama · recorded on CPU × 4"``
    → ``"run 2 · jit-static · pydoc-llama"``. By the parts' meaning, not their place: with the devices named
    once under the x axis the model is the third part (the random walk found "run 2 · jit-static ·
    recorded o…")."""
    head = name.rsplit(" ┄ ", 1)[0]
    parts = head.split(" · ")
    return " · ".join(parts[:2] + [p for p in parts[2:] if not SECONDARY.match(p)])
