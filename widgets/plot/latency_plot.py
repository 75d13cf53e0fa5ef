"""Per-call latency plot: one point per model call, log-scale wall time, compiling calls starred.

Successive runs overlay in distinct colours and decode markers; which runs are shown is the app's to say
(:meth:`LatencyPlot.retain`: the window keeps the session's runs, so the plot holds no run list of its own
beyond their drawings); the newest run's compiling calls are annotated with their compile phases (trace /
lower / compile for XLA, Dynamo / AOT / Inductor for torch-compile) and a dashed line marks its steady decode
median (its value is in the key above the plot: :mod:`widgets.plot.latency_key`). The run legend sits in its
own row under the x axis, in as many columns as fit, so it never hides a point; the x axis fits the run once
its points are drawn (:mod:`widgets.plot.plot_fitting`).
Compiles served by the persistent compilation cache are green diamonds instead of orange stars; the
tooltip of a compiling call says why it compiled.
Records are buffered and drawn by a 30 Hz timer; each run's curves are created once and fed with
``setData``.
"""

from __future__ import annotations

import math
from typing import Any

import pyqtgraph as pg  # noqa: TID253 - a heavy module: its users import it inside functions
from PySide6.QtCore import QEvent, QObject, QPointF, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QCursor, QFont, QHelpEvent, QResizeEvent
from PySide6.QtWidgets import QGraphicsItem, QToolTip, QWidget

from app.core.inspect.views import DECODE, PREFILL
from widgets.common.typed_qt import graphics_scene, plot_item
from widgets.plot.call_tooltip import describe
from widgets.plot.latency_key import LatencyKey
from widgets.plot.latency_runs import PlotPoint, PlotRun, point_kind, run_items, set_antialias
from widgets.plot.legend_row import add_legend_row
from widgets.plot.log_axis import LogMsAxis
from widgets.plot.plot_fitting import X_STEP, PlotFitting

RUN_COLOURS = ("#2563eb", "#be123c", "#9333ea", "#0891b2", "#a16207", "#db2777")
#: Decode markers of successive runs (pyqtgraph symbols), so overlapping lines stay apart.
RUN_SYMBOLS = ("o", "t1", "t", "t2", "t3", "h")
REDRAW_INTERVAL_MS = 50
#: px: the least the plot is laid out to (its axes, key and legend readable around a drawing area); a layout
#: keeps it and a window is not made smaller than its layout needs (issue 37: 134 px wide in a 921×453 window)
MIN_SIZE = (280, 220)  # 180 px tall left a two-row legend below the plot's edge (the walk, seed 304)
MARKER_SIZES = {PREFILL: 9, DECODE: 9, "compiled": 18, "disk": 16}  # px; ×1.4 when presenting


class LatencyPlot(LatencyKey, PlotFitting):
    """Wall time per call (log y) for the last few runs. Feed it from GUI-thread slots only. The key above
    the plot and the steady lines: :class:`LatencyKey`; the axes, legend and notes: :class:`PlotFitting`.

    Signals (GUI thread): ``pointHovered(call_index)`` for the newest run's point under the mouse, -1
    when the mouse leaves every point.
    """

    pointHovered = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, background="w", axisItems={"left": LogMsAxis("left")}, enableMenu=False)
        self.setObjectName("latencyPlot")
        self.setMinimumSize(*MIN_SIZE)
        #: Titles of the call-record timing fields for the hover tool tip (plain data from the app's one
        #: call-record column table; see :func:`widgets.plot.call_tooltip.describe`).
        self.call_titles: dict[str, str] = {}
        item = plot_item(self)
        item.setLogMode(x=False, y=True)
        item.showGrid(x=True, y=True, alpha=0.15)
        item.getAxis("left").enableAutoSIPrefix(False)
        # no "call index (x0.001)" with ticks -400…400 while the first compile has no point yet (issue 29, flaw 22)
        # (pyqtgraph 0.14 reads its SI-prefix ranges, not enableAutoSIPrefix: no range, no prefix)
        item.getAxis("bottom").setSIPrefixEnableRanges(())
        for name in ("left", "bottom"):  # their grid lines span the view: any new point repainted them
            item.getAxis(name).setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        item.hideButtons()  # pyqtgraph's "A" (auto-range) corner button: the plot's menu has Reset zoom
        item.getViewBox().setDefaultPadding(0.15)
        item.getViewBox().setXRange(-1, X_STEP, padding=0.02)
        item.getViewBox().setYRange(0, 3.3, padding=0)  # 1 ms … 2 s until the first points arrive
        self._font_scale = 1.0
        self.set_axis_labels()
        self._program = False
        self._median_text = ""
        self._title_key = None
        self._set_title()
        # the run legend in a row of its own under the x axis: never over the data, never clipped
        self.legend, self._legend_row = add_legend_row(item, labelTextSize="8pt", brush=pg.mkBrush(255, 255, 255, 210),
                                                       pen=pg.mkPen("#e5e7eb"))
        self._runs = []
        self._next_id = 1
        self._median = pg.InfiniteLine(
            angle=0, movable=False, pen=pg.mkPen("#6b7280", style=Qt.PenStyle.DashLine)
        )
        self._median.setVisible(False)
        self._hover = pg.ScatterPlotItem(size=20, pen=pg.mkPen("#111827", width=2), brush=None)
        for extra in (self._median, self._hover):
            item.addItem(extra, ignoreBounds=True)
        self._hovered = -1
        self._x_right = 0
        self._y_range = None
        self._y_view = None
        self._steady = None
        self._timer = QTimer(self, interval=REDRAW_INTERVAL_MS)
        self._timer.timeout.connect(self.redraw)
        graphics_scene(self).sigMouseMoved.connect(self.hover_at)
        # Qt's own tool-tip event (~0.7 s after the mouse rests) reaches QGraphicsScene.helpEvent, which finds no
        # item tool tip and hides ours: the "why it compiled" tip vanished after ~1 s (issue 29, flaw 9)
        self.viewport().installEventFilter(self)

    def _marker_size(self, kind: str) -> float:
        return MARKER_SIZES[kind] * (1.4 if self._font_scale > 1 else 1.0)

    # -- feeding ----------------------------------------------------------------------------------
    def start_run(
        self, label: str, colour: str | None = None, fade: bool = True, symbol: str | None = None,
        run_id: int | None = None, group: int | None = None, lane: str = "",
    ) -> int:
        """Begin a new overlaid run named ``label`` in the legend; returns its id (``run_id``, the session's
        run number, or the next number). ``colour`` and ``symbol`` (a pyqtgraph marker for its decode calls)
        override the next run colour and marker. Earlier runs fade, except, with ``fade=False``, the runs
        of the same ``group`` (the lanes of a mode race, drawn together), whose first compile each gets a
        one-line note in the lane's colour (the compile log tells their split). ``lane``: what a race's lane ran
        with when it is not a mode (a compiler setting, a program's jit / no-jit): an older race's one legend entry
        names its lanes by it (``"runs 1–2 · default, O1"``), else it counts modes."""
        self.redraw()
        for old in self._runs:
            if fade or old.group is None or old.group != group:
                for it in (old.line, *old.dots.values()):
                    it.setOpacity(0.4)
                for note in old.notes:  # an earlier run's compile split is in the compile log, not over the new run
                    note.retired = True
                    note.setVisible(False)
        run_id = self._next_id if run_id is None else run_id
        colour = colour or RUN_COLOURS[(run_id - 1) % len(RUN_COLOURS)]
        symbol = symbol or RUN_SYMBOLS[(run_id - 1) % len(RUN_SYMBOLS)]
        width = 1.5 * (2.0 if self._font_scale > 1 else 1.0)
        line, key, dots = run_items(colour, symbol, width, self._marker_size)
        plot_item(self).addItem(line)
        for kind, item in dots.items():
            plot_item(self).addItem(item)
            item.setZValue(0 if kind in ("compiled", "disk") else 2)
        run = PlotRun(run_id, label, colour, line, dots, annotate=fade or group is not None, key=key, symbol=symbol,
                      group=group, lane=lane)
        self.legend.addItem(key, run.legend_name())
        self._runs.append(run)
        self._next_id = run_id + 1
        self._steady = None
        self._median.setVisible(False)
        self._median_text = ""
        self._set_title()
        self._hover.setData([], [])
        self._x_right = max(self._x_right, 0)
        self.place_legend()  # the new name fitted to its column at once (not at its first points)
        self._fit_y()  # the legend grew: keep its band free of points
        return run.run_id

    def relabel(self, run_id: int, label: str) -> None:
        """Name run ``run_id`` ``label`` from now on (a run's KV cache size is known once it ends); no-op for a
        run no longer shown."""
        for run in self._runs:
            if run.run_id == run_id and run.label != label:
                run.label = label
                self.place_legend()  # the entry re-fitted to its column

    def add_record(self, record: Any) -> None:
        """Append one call record (``index``, ``step``, ``wall_ms``, ``compiled``, …) to the newest run."""
        if not self._runs:
            self.start_run("run")
        run = self._runs[-1]
        run.points.append(
            PlotPoint(  # a star too for a call that compiled inside it (a program's entry run as written)
                int(record.index), float(record.wall_ms), str(record.step),
                bool(record.compiled or getattr(record, "inner_compiles", None)), record
            )
        )
        run.dirty = True
        if not self._timer.isActive():
            self._timer.start()

    def clear_runs(self) -> None:
        for run in list(self._runs):
            self._drop(run)
        self._y_range = None
        self._x_right = 0
        plot_item(self).getViewBox().setXRange(-1, X_STEP, padding=0.02)
        self._steady = None
        self._median.setVisible(False)
        self._median_text = ""
        self._set_title()
        self.place_legend()  # no entry left: the legend's row gives its height back

    def retain(self, run_ids: list[int]) -> None:
        """Keep the drawings of the runs ``run_ids`` (the session's runs) and drop the others: retention is
        decided by the session (:attr:`app.core.session.model.Session.max_runs`), never here."""
        keep = set(run_ids)
        for run in [r for r in self._runs if r.run_id not in keep]:
            self._drop(run)
        if not self._runs:
            self.clear_runs()
        else:
            self.place_legend()  # fewer entries: the names may be whole again, the row shorter

    # -- queries ----------------------------------------------------------------------------------
    def run_count(self) -> int:
        return len(self._runs)

    def run_labels(self) -> list[str]:
        """Labels of the shown runs, oldest first, as given to :meth:`start_run`."""
        return [run.label for run in self._runs]

    def run_ids(self) -> list[int]:
        """The shown runs' numbers, oldest first (as :meth:`run_labels`)."""
        return [run.run_id for run in self._runs]

    def run_colours(self) -> list[str]:
        return [run.colour for run in self._runs]

    def points(self, run: int = -1) -> list[PlotPoint]:
        """Points of a run (``-1`` = newest), flushed or not."""
        return list(self._runs[run].points) if self._runs else []

    def plotted_count(self, run: int = -1) -> int:
        """Number of points actually handed to pyqtgraph for a run (after the throttled redraw)."""
        if not self._runs:
            return 0
        xs, _ = self._runs[run].line.getData()
        return 0 if xs is None else len(xs)

    # -- drawing ----------------------------------------------------------------------------------
    @Slot()
    def redraw(self) -> None:
        """Push buffered points to the curves (called by the 30 Hz timer)."""
        dirty = [run for run in self._runs if run.dirty]
        if not dirty:
            self._timer.stop()
            self._draw_steady()
            for run in self._runs:
                self._draw_dots(run, streaming=False)
                set_antialias(run.line, True)
            self._fit_x()  # the run has settled: the x axis fits its calls
            self._fit_y()
            self.place_legend()  # once a burst of points is drawn
            return
        for run in dirty:
            set_antialias(run.line, False)  # while points stream: antialiased lines cost XLA a core
            self._draw_run(run)
            run.dirty = False
        self._draw_steady()

    def _draw_run(self, run: PlotRun) -> None:
        xs = [p.x for p in run.points]
        ys = [max(p.wall_ms, 1e-3) for p in run.points]
        run.line.setData(xs, ys)
        self._grow_y_range()
        self._draw_dots(run, streaming=True)
        if run is self._runs[-1]:
            self._annotate(run)
            self._grow_x_range(max((p.x for r in self._runs for p in r.points), default=0))

    def _draw_dots(self, run: PlotRun, streaming: bool) -> None:
        """Markers of each kind whose count changed. While points stream the many decode dots wait for the
        run to settle (the line shows them): re-building a scatter item at every redraw cost the window
        about a third of its tokens/s on a fast model (bench/gui_responsiveness.py)."""
        for kind, item in run.dots.items():
            chosen = [p for p in run.points if point_kind(p) == kind]
            if (streaming and kind == DECODE) or run.dot_counts.get(kind) == len(chosen):
                continue
            run.dot_counts[kind] = len(chosen)
            item.setData([p.x for p in chosen], [max(p.wall_ms, 1e-3) for p in chosen])

    @Slot()
    def reset_zoom(self) -> None:
        """Fit both axes to the shown points again (after the user zoomed or panned)."""
        self._y_range = None
        self._y_view = None
        self._x_right = 0
        self._grow_y_range()
        self._fit_x()

    def _drop(self, run: PlotRun) -> None:
        entry = [it for sample, label in self.legend.items if sample.item is run.key for it in (sample, label)]
        items = (run.line, *run.dots.values(), *run.notes, *([run.steady_line] if run.steady_line else []))
        for it in items:
            plot_item(self).removeItem(it)
        self.legend.removeItem(run.key)
        for it in (*items, *entry):  # delete on the GUI thread, not in a garbage collection elsewhere
            it.deleteLater()
        self._runs.remove(run)

    # -- presentation -----------------------------------------------------------------------------
    def set_font_scale(self, scale: float, base_pt: float = 9.0) -> None:
        """Scale tick, axis-label, title, legend and note fonts by ``scale`` (presentation mode) and
        thicken the axes and curves; 1.0 restores the normal look."""
        self._font_scale = scale
        self._base_pt = base_pt
        item = plot_item(self)
        tick = QFont()
        tick.setPointSizeF(base_pt * scale)
        big = scale > 1
        for name in ("left", "bottom"):
            axis = item.getAxis(name)
            axis.setTickFont(tick)
            axis.setPen(pg.mkPen("#000000" if big else "#374151", width=2 if big else 1))
            axis.setTextPen("#000000" if big else "#374151")
        self.set_axis_labels()
        self._set_title()
        self.legend.opts["labelTextSize"] = f"{8 * scale:.0f}pt"
        note_font = QFont()
        note_font.setPointSizeF(base_pt * scale)
        for run in self._runs:
            run.line.setPen(pg.mkPen(run.colour, width=3.0 if big else 1.5))
            run.key.setPen(pg.mkPen(run.colour, width=3.0 if big else 1.5))
            # pyqtgraph annotates setSymbolSize(size: int); it draws a float diameter (×1.4 presenting) as given
            for kind, dots in run.dots.items():
                dots.setSymbolSize(self._marker_size(kind))  # pyright: ignore[reportArgumentType]
            run.key.setSymbolSize(self._marker_size(DECODE))  # pyright: ignore[reportArgumentType]
            self.legend.removeItem(run.key)  # re-added: pyqtgraph sizes a legend row only when it is added
            self.legend.addItem(run.key, run.legend_name())
            for note in run.notes:
                note.setFont(note_font)
        self._fit_y()
        self.place_legend()

    def font_scale(self) -> float:
        return self._font_scale

    def resizeEvent(self, ev: QResizeEvent) -> None:
        super().resizeEvent(ev)
        if hasattr(self, "legend") and self.plotItem is not None:  # None: being deleted
            self._set_title()
            self._fit_y()
            self.place_legend()

    # -- hover ------------------------------------------------------------------------------------
    def nearest_point(self, scene_pos: QPointF, max_px: float = 12.0) -> PlotPoint | None:
        """The point within ``max_px`` pixels of ``scene_pos`` (newest run first), if any."""
        found = self._nearest(scene_pos, max_px)
        return found[1] if found else None

    def _nearest(self, scene_pos: QPointF, max_px: float) -> tuple[PlotRun, PlotPoint] | None:
        vb = plot_item(self).getViewBox()
        best, best_d = None, max_px
        for run in reversed(self._runs):
            for p in run.points:
                sp = vb.mapViewToScene(QPointF(p.x, math.log10(max(p.wall_ms, 1e-3))))
                d = math.hypot(sp.x() - scene_pos.x(), sp.y() - scene_pos.y())
                if d < best_d:
                    best, best_d = (run, p), d
        return best

    def highlight_call(self, call_index: int) -> None:
        """Ring the newest run's point of ``call_index`` (-1 removes the ring)."""
        match = [p for p in self._runs[-1].points if p.x == call_index] if self._runs else []
        if match:
            p = match[0]
            self._hover.setData([p.x], [math.log10(max(p.wall_ms, 1e-3))])
        else:
            self._hover.setData([], [])

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        """The viewport's tool-tip event shows the hovered point's tip again (and goes no further), so the
        scene's empty help text does not hide it; elsewhere the event goes on as usual."""
        if obj is self.viewport() and event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            found = self._nearest(self.mapToScene(event.pos()), 12.0)
            if found is not None:
                run, point = found
                QToolTip.showText(event.globalPos(), describe(point.record, f"run {run.run_id} · {run.label}",
                                                              self.call_titles), self)
                return True
        return super().eventFilter(obj, event)

    @Slot(object)
    def hover_at(self, scene_pos: QPointF) -> None:
        """Show the tool tip of the point under ``scene_pos`` (scene coordinates) and emit ``pointHovered``."""
        found = self._nearest(scene_pos, 12.0)
        index = found[1].x if found and found[0] is self._runs[-1] else -1  # token links: newest run only
        if found is not None:
            run, point = found
            QToolTip.showText(QCursor.pos(), describe(point.record, f"run {run.run_id} · {run.label}", self.call_titles), self)
        elif self._hovered != -1:
            QToolTip.hideText()
        if index != self._hovered:
            self._hovered = index
            self.highlight_call(index)
            self.pointHovered.emit(index)
