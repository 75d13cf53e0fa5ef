"""Timeline of one profiled step: one lane per runtime thread with a bar per executed HLO op, and a lane of
the gaps in which no op runs (host work, dispatch, the runtime between ops), summed in the header.

Plain data in: :meth:`StepTimeline.set_timeline` takes a dict (what ``app.core.profile.model.Timeline
.to_dict()`` gives)::

    {"step_us": 1200.0, "threads": ["XLAPjRtCpuClient 1", "XLAEigen 1"],
     "bars": [{"thread": "XLAEigen 1", "start_us": 310.0, "duration_us": 23.1, "name": "dot.19",
               "kind": "dot", "source": "transformers/models/llama/modeling_llama.py:164",
               "module": "model.layers.0.mlp.gate_proj"}, ...],
     "gaps": [[0.0, 289.0], ...]}            # [start_us, duration_us], from the step's start

Bars are coloured by kind (fusion kind or opcode) or by source line (a toggle); the view zooms and pans
along time (mouse wheel, drag). Signals (GUI thread): ``opClicked(str)`` with the instruction name of a
clicked bar, for cross-links to the HLO text, jaxpr equations and source line.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import pyqtgraph as pg  # noqa: TID253 - a heavy module: its users import it inside functions
from PySide6.QtCore import QPointF, Qt, Signal, Slot
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from app.core.units import fmt
from widgets.common.typed_qt import graphics_scene, named, plot_item
from widgets.plot.legend_row import add_legend_row, fit_legend_row
from widgets.plot.plot_export import export_plot

PALETTE = ("#2563eb", "#ea580c", "#16a34a", "#9333ea", "#0891b2", "#ca8a04", "#db2777", "#4f46e5",
           "#059669", "#b91c1c", "#7c3aed", "#0d9488")
OTHER = "#9ca3af"
GAP = "#fca5a5"
BAR_HEIGHT = 0.7
MAX_COLOURED = len(PALETTE)  # lines or kinds beyond this share the grey of "other"
GAP_LANE = "no op running"


def describe_bar(bar: dict[str, Any]) -> str:
    """One line per field of a bar: name, kind, duration, source, module (tooltip and hover text)."""
    parts = [f"{bar.get('name', '?')}  ({bar.get('kind', '?')})",
             f"{fmt(bar.get('duration_us'), ',.1f')} µs at {fmt(bar.get('start_us'), ',.1f')} µs",
             bar.get("source") or "no source line"]
    if bar.get("module"):
        parts.append(bar["module"])
    return "\n".join(parts)


class StepTimeline(QWidget):
    """Bars per thread over one step (x in µs from the step's start). Use from the GUI thread only.

    Signals: ``opClicked(str)`` — the instruction name of the bar under a left click (GUI thread).
    """

    opClicked = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("stepTimeline")
        self.colour_choice = named(QComboBox(), "timelineColourBy")
        self.colour_choice.addItem("colour by kind", "kind")
        self.colour_choice.addItem("colour by source line", "source")
        self.summary = named(QLabel("No profile yet."), "timelineSummary")
        self.summary.setWordWrap(True)  # one line is ~770 px wide: a narrow pane wraps it, never cuts it
        self.hover = named(QLabel(""), "timelineHover")
        self.hover.setStyleSheet("color: #374151")
        self.plot = pg.PlotWidget(background="w", enableMenu=False)  # no menus built (pyqtgraph builds them eagerly)
        self.plot.setObjectName("timelinePlot")  # PlotWidget(objectName=…) would go to its PlotItem
        top = QHBoxLayout()
        top.addWidget(self.summary, 1)
        top.addWidget(self.colour_choice)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.hover)
        self._setup_plot()
        self._data: dict[str, Any] = {"step_us": 0.0, "bars": [], "gaps": [], "threads": []}
        self._ops_running = ""
        self._lanes: list[str] = []
        self._items: list[Any] = []
        self.legend_entries: list[tuple[str, str]] = []
        self.colour_choice.currentIndexChanged.connect(self._on_colour_changed)
        graphics_scene(self.plot).sigMouseMoved.connect(self.hover_at)
        graphics_scene(self.plot).sigMouseClicked.connect(self._on_mouse_clicked)

    def _setup_plot(self) -> None:
        item = plot_item(self.plot)
        item.hideButtons()
        item.showGrid(x=True, y=False, alpha=0.15)
        item.setLabel("bottom", "time from the step's start", units="µs")
        item.getAxis("bottom").enableAutoSIPrefix(False)
        item.getAxis("left").setStyle(tickLength=0)
        item.getViewBox().setMouseEnabled(x=True, y=False)
        item.getViewBox().invertY(True)
        self._end_line = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen("#111827", width=1.5))
        item.addItem(self._end_line, ignoreBounds=True)
        # the legend under the time axis, never over the bars
        self._legend, self._legend_row = add_legend_row(item, labelTextSize="8pt",
                                                        brush=pg.mkBrush(255, 255, 255, 210))

    # -- data ---------------------------------------------------------------------------------------
    def set_timeline(self, data: dict[str, Any], ops_running: str = "") -> None:
        """Show one step (see the module docstring for the dict's keys). ``ops_running``: the profile's own
        "ops running" figure over all its steps (``ops running 45% of the wall time of the 5 steps``, the
        Profile tab's header figure); given, the line above the plot shows it and the drawn (median) step only
        in ms, so the two never disagree (issue 29, flaw 16). Without it the line gives the drawn step's
        shares."""
        self._ops_running = ops_running
        self._data = {"step_us": float(data.get("step_us") or 0.0), "bars": list(data.get("bars") or []),
                      "gaps": [list(g) for g in data.get("gaps") or []],
                      "threads": list(data.get("threads") or [])}
        threads = list(self._data["threads"])
        threads += [b["thread"] for b in self._data["bars"] if b["thread"] not in threads]
        threads = list(dict.fromkeys(threads))
        self._lanes = threads + [GAP_LANE]
        self._redraw()
        self._update_summary()

    def colour_by(self) -> str:
        """``"kind"`` or ``"source"``."""
        return self.colour_choice.currentData()

    def set_colour_by(self, mode: str) -> None:
        """Colour bars by ``"kind"`` (fusion kind / opcode) or ``"source"`` (source line)."""
        index = self.colour_choice.findData(mode)
        if index < 0:
            raise ValueError(f"colour mode must be 'kind' or 'source', got {mode!r}.")
        self.colour_choice.setCurrentIndex(index)

    def bars(self) -> list[dict[str, Any]]:
        """The bars drawn, as given to :meth:`set_data` (each a dict with ``thread``, ``start_us``, ``dur_us``, …)."""
        return list(self._data["bars"])

    def bar_count(self) -> int:
        return len(self._data["bars"])

    def gap_total_us(self) -> float:
        """Summed duration of the gaps (µs): the step's time during which no op runs."""
        return sum(float(d) for _, d in self._data["gaps"])

    def lanes(self) -> list[str]:
        """Lane labels top to bottom: threads, then the gap lane."""
        return list(self._lanes)

    def bar_at(self, x_us: float, lane: int) -> dict[str, Any] | None:
        """The bar of lane ``lane`` (index in :meth:`lanes`) covering time ``x_us``, or None."""
        if not 0 <= lane < len(self._lanes) - 1:
            return None
        thread = self._lanes[lane]
        hits = [b for b in self._data["bars"] if b["thread"] == thread
                and b["start_us"] <= x_us <= b["start_us"] + b["duration_us"]]
        return min(hits, key=lambda b: b["duration_us"]) if hits else None

    def bar_centre(self, name: str) -> tuple[float, int] | None:
        """``(x_us, lane)`` at the middle of the first bar of instruction ``name``, or None."""
        for b in self._data["bars"]:
            if b["name"] == name:
                return b["start_us"] + b["duration_us"] / 2, self._lanes.index(b["thread"])
        return None

    def export(self, path: str | Path, width: int | None = None) -> Path:
        """Write the plot to ``path``: SVG for ``.svg``, else PNG (``width`` pixels). Raises OSError."""
        return export_plot(self.plot, path, width)

    # -- drawing ------------------------------------------------------------------------------------
    def _colours(self) -> dict[str, str]:
        key = self.colour_by()
        totals: dict[str, float] = {}
        for b in self._data["bars"]:
            totals[b.get(key) or "?"] = totals.get(b.get(key) or "?", 0.0) + b["duration_us"]
        ranked = sorted(totals, key=lambda k: -totals[k])
        return {k: (PALETTE[i] if i < MAX_COLOURED else OTHER) for i, k in enumerate(ranked)}

    def _redraw(self) -> None:
        item = plot_item(self.plot)
        for old in self._items:
            item.removeItem(old)
        self._items.clear()
        self._legend.clear()
        colours, key = self._colours(), self.colour_by()
        groups: dict[str, list[dict]] = {}
        for b in self._data["bars"]:
            groups.setdefault(colours[b.get(key) or "?"], []).append(b)
        names = {c: [k for k, v in colours.items() if v == c] for c in groups}
        self.legend_entries = []
        for colour in dict.fromkeys(colours.values()):  # legend in rank order: most time first
            bars = groups[colour]
            bar = pg.BarGraphItem(x0=[b["start_us"] for b in bars], y=[self._lanes.index(b["thread"]) for b in bars],
                                  width=[b["duration_us"] for b in bars], height=BAR_HEIGHT, brush=colour,
                                  pen=pg.mkPen(colour, width=0))
            item.addItem(bar)
            self._items.append(bar)
            label = names[colour][0] if colour != OTHER else "other"
            self.legend_entries.append((label, colour))
            self._legend.addItem(bar, _short(label))
        gap_lane = len(self._lanes) - 1
        gaps = pg.BarGraphItem(x0=[g[0] for g in self._data["gaps"]], y=[gap_lane] * len(self._data["gaps"]),
                               width=[g[1] for g in self._data["gaps"]], height=BAR_HEIGHT, brush=GAP,
                               pen=pg.mkPen(GAP, width=0))
        item.addItem(gaps)
        self._items.append(gaps)
        vb = item.getViewBox()
        fit_legend_row(self._legend, self._legend_row, (vb.width() if vb.width() > 0 else self.width() - 120) - 10)
        left = item.getAxis("left")
        left.setTicks([list(enumerate(self._lanes)), []])
        # no auto-width: as wide as the longest lane name in the axis's own font (pyqtgraph drops a tick label
        # that does not fit, e.g. "GPU:0 stream 14 (Compute,MemcpyD2D)" under a 6.5 px-per-character guess)
        metrics = QFontMetrics(left.style.get("tickFont") or self.font())
        left.setWidth(max((metrics.horizontalAdvance(lane) for lane in self._lanes), default=50) + 16)
        step = self._data["step_us"] or 1.0
        self._end_line.setPos(step)
        item.getViewBox().setLimits(xMin=-0.05 * step, xMax=1.05 * step, minXRange=0.5)
        item.getViewBox().setXRange(0, step, padding=0.01)
        item.getViewBox().setYRange(-0.6, len(self._lanes) - 0.4, padding=0)

    def _update_summary(self) -> None:
        step, gap = self._data["step_us"], self.gap_total_us()
        busy = max(step - gap, 0.0)
        n_gaps, ops = len(self._data["gaps"]), self.bar_count()
        if self._ops_running:  # the profile's figure; the drawn step in ms only (no second percentage)
            self.summary.setText(
                f"{self._ops_running} · drawn: the median step, {fmt(step / 1e3, ',.2f')} ms, no op running for "
                f"{fmt(gap / 1e3, ',.2f')} ms in {n_gaps} gap{'s' if n_gaps != 1 else ''} · "
                f"{ops} op{'s' if ops != 1 else ''}")
            return

        def pct(v: float) -> str:
            return fmt(v / step * 100 if step else None, ".0f")

        # in ms like the Profile tab's header; this is one step (the median one), the header the mean
        self.summary.setText(
            f"median step {fmt(step / 1e3, ',.2f')} ms · ops running {fmt(busy / 1e3, ',.2f')} ms ({pct(busy)}%) · "
            f"no op running {fmt(gap / 1e3, ',.2f')} ms ({pct(gap)}%) in {n_gaps} gap{'s' if n_gaps != 1 else ''} · "
            f"{ops} op{'s' if ops != 1 else ''}")

    # -- mouse --------------------------------------------------------------------------------------
    def _bar_under(self, scene_pos: QPointF) -> dict[str, Any] | None:
        view = plot_item(self.plot).getViewBox()
        if not view.sceneBoundingRect().contains(scene_pos):
            return None
        p = view.mapSceneToView(scene_pos)
        lane = int(round(p.y()))
        if abs(p.y() - lane) > BAR_HEIGHT / 2:
            return None
        return self.bar_at(p.x(), lane)

    @Slot(int)
    def _on_colour_changed(self, _index: int) -> None:
        self._redraw()

    @Slot(object)
    def hover_at(self, scene_pos: QPointF) -> None:
        """Show the bar under ``scene_pos`` (scene coordinates) in the hover line and its tool tip."""
        bar = self._bar_under(scene_pos)
        text = describe_bar(bar) if bar else ""
        self.hover.setText(text.replace("\n", " · "))
        self.plot.setToolTip(text)

    @Slot(object)
    def _on_mouse_clicked(self, event: Any) -> None:
        if event.button() != Qt.MouseButton.LeftButton:
            return
        bar = self._bar_under(event.scenePos())
        if bar is not None:
            self.opClicked.emit(bar["name"])


def _short(label: str) -> str:
    """A legend label (HTML-escaped: pyqtgraph renders legend text as HTML, ``<input cache[1]>`` would
    vanish): a source path keeps its last two components (``llama/modeling_llama.py:164``)."""
    return html.escape("/".join(label.split("/")[-2:]) if "/" in label else label)
