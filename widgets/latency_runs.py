"""The data behind :class:`widgets.latency_plot.LatencyPlot`: one plotted call, one overlaid run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pyqtgraph as pg


@dataclass
class PlotPoint:
    """One plotted call; ``record`` is the original record object (read by attribute)."""

    x: int
    wall_ms: float
    step: str
    compiled: bool
    record: Any


@dataclass
class PlotRun:
    run_id: int
    label: str
    colour: str
    line: pg.PlotDataItem
    dots: dict[str, pg.PlotDataItem]
    points: list[PlotPoint] = field(default_factory=list)
    notes: list[pg.TextItem] = field(default_factory=list)
    dirty: bool = False
    annotate: bool = True
    dot_counts: dict[str, int] = field(default_factory=dict)  # markers drawn per kind
    key: pg.PlotDataItem | None = None  # the legend's sample (line + decode marker), not in the plot
    symbol: str = "o"  # the decode marker

    def legend_name(self) -> str:
        return f"run {self.run_id} · {self.label}"


def point_kind(p: PlotPoint) -> str:
    if p.compiled:
        return "disk" if getattr(p.record, "persistent_cache_hit", None) else "compiled"
    return p.step


def set_antialias(item: pg.PlotDataItem, on: bool) -> None:
    """Switch a line's antialiasing off while it streams and back on once it settles: software-rendered
    antialiasing takes CPU from XLA on a 2-core machine (bench/gui_responsiveness.py, pydoc-llama: the
    window's warm tokens/s went from 0.63 to about 0.71 of the CLI's)."""
    if item.opts.get("antialias") != on:
        item.opts["antialias"] = item.curve.opts["antialias"] = on
        item.curve.update()
