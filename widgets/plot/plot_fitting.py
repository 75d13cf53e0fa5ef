"""Axis fitting and label placement of the latency plot (:class:`widgets.plot.latency_plot.LatencyPlot` mixes
this in): a log y axis grown in half-decade steps with a band kept free above the data for the run legend,
an x axis that grows while points stream and fits the run once drawn, the legend put in the corner where it
hides nothing, compile notes placed beside their points, run names elided to the plot's width."""

from __future__ import annotations

import math
from collections.abc import Callable

import pyqtgraph as pg  # noqa: TID253 - a heavy module: its users import it inside functions
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QFont, QFontMetricsF

from app.core.units import ms
from widgets.common.geometry import Shapes
from widgets.common.typed_qt import plot_item
from widgets.plot.call_tooltip import COMPILE_COLOUR
from widgets.plot.latency_key import SHORT_PLOT
from widgets.plot.latency_runs import (
    SECONDARY,
    CompileNote,
    PlotRun,
    entry_tip,
    essential,
    least_name,
    legend_entries,
    race_entry_name,
    shared_parts,
    shorten,
)
from widgets.plot.legend_row import LEGEND_INSET, fit_legend_row

MAX_ANNOTATIONS = 3  # compile notes per run
MAX_HEADROOM_DECADES = 1.0  # the y axis ends at most one decade above the largest point
LEGEND_SHARE = 0.2  # the run legend's rows take at most this share of the plot's height (its budget)
SHORT_LEGEND_ROWS = 2  # at most this many in a plot shorter than SHORT_PLOT px (issue 55: 3–4 rows at 1280×720)
#: px: the drawing area (the view box) the legend's rows leave at least, where the plot has that much to give (issue
#: 55: three rows left 173 px in a 1324×723 window, walk seed 7 at 1920×1080; the walk's rule is 180 px)
LEGEND_LEAVES_PX = 190
X_STEP = 32  # the x range grows in steps, so the axis is not re-rendered at every redraw
X_MIN_RIGHT = 8  # while points stream the right edge doubles from here (8, 16, 32, …, then steps of X_STEP)
UNREADABLE = 40  # a compile note's placement cost when cut at the plot's edge or over another note
NOTE_ANCHORS = ((-0.02, 1.15), (-0.02, -0.15), (1.02, 1.15), (1.02, -0.15), (-0.08, 0.5), (1.08, 0.5),
                (0.5, 1.15), (0.5, -0.15), (-0.08, 1.6), (-0.08, -0.6))


class PlotFitting(pg.PlotWidget):
    """The axes, the run legend and the compile notes of the latency plot; the plot's ``__init__`` sets the
    state declared here."""

    _runs: list[PlotRun]
    legend: pg.LegendItem  # the run legend, in its own row under the x axis
    _legend_row: pg.GraphicsWidget  # the placeholder that holds that row
    _y_range: tuple[float, float] | None  # log10 bounds, grown in half-decade steps
    _y_data_max: float  # log10 of the largest point (set with _y_range)
    _y_view: tuple[float, float] | None  # the y range last set (bounds + legend band)
    _x_right: int  # the x range's right edge while points stream; negative once fitted to the run
    _font_scale: float
    _base_pt: float = 9.0  # the application's font size (presentation mode scales from it)
    _shared: str = ""
    _named: str = "every run"  # the runs what the x axis names after them is shared by
    _earlier: str = ""  # "runs 5–9 earlier": the earlier runs named under the x axis when the legend has no row for them
    _legend_need: float = 160.0  # px: the least a legend entry is cut to (set by _fit_legend_names)
    _axis_text: tuple[str, float] = ("", 0.0)  # the x axis' title last set, and its size
    lanes_in_legend: Callable[[], bool]  # LatencyKey's: race lanes' steady values go in their legend entries

    def _grow_y_range(self) -> None:
        """Fit the log y axis to every shown point in half-decade steps: the axes (whose ticks are costly to
        repaint) change only when a point crosses a step, not at every redraw while a run streams."""
        ys = [math.log10(max(p.wall_ms, 1e-3)) for r in self._runs for p in r.points]
        if not ys:
            return
        bounds = (math.floor(min(ys) * 2) / 2, math.ceil(max(ys) * 2) / 2)
        self._y_data_max = max(ys)
        if bounds != self._y_range:
            self._y_range = bounds
            self._fit_y()

    def _fit_legend(self) -> None:
        """The run legend (under the x axis) in its columns (:meth:`_legend_layout`); its row as tall as it."""
        fit_legend_row(self.legend, self._legend_row, columns=self._legend_layout(len(self.legend.items), self._legend_need)[0])

    def _fit_y(self) -> None:
        """Set the y range to the data bounds (half-decade steps) and a margin, with at most
        :data:`MAX_HEADROOM_DECADES` above the largest point: the axis never runs past the data's max × 10,
        whatever the legend (under the x axis) or the view's height."""
        if self._y_range is None:
            return
        low, high = self._y_range[0] - 0.15, self._y_range[1] + 0.1
        cap = getattr(self, "_y_data_max", self._y_range[1]) + MAX_HEADROOM_DECADES
        top = high + 0.15
        vb = plot_item(self).getViewBox()
        notes = [n for run in self._runs for n in run.notes if n.isVisible()]
        if notes and vb.height() > 0:  # room above the spike for its compile notes, within the cap
            tall = max(n.boundingRect().height() for n in notes) + 8
            if tall < 0.8 * vb.height():
                top = max(top, low + (high - low) / (1 - tall / vb.height()))
        view = (round(low, 3), round(min(top, cap), 3))
        if view != self._y_view:
            self._y_view = view
            plot_item(self).getViewBox().setYRange(*view, padding=0)

    def _grow_x_range(self, last_x: int) -> None:
        """While points stream: the right edge doubles from :data:`X_MIN_RIGHT`, then grows by X_STEP."""
        right = X_MIN_RIGHT
        while right <= last_x and right < X_STEP:
            right *= 2
        if right <= last_x:
            right = (last_x // X_STEP + 1) * X_STEP
        if right != self._x_right:
            self._x_right = right
            plot_item(self).getViewBox().setXRange(-1, right, padding=0.02)

    def _fit_x(self) -> None:
        """Fit the x axis to the shown calls (half a call of margin each side)."""
        last = max((p.x for r in self._runs for p in r.points), default=None)
        if last is not None and self._x_right != -last - 1:
            self._x_right = -last - 1  # negative: fitted, not a streaming step
            plot_item(self).getViewBox().setXRange(-0.5, last + 0.5, padding=0.02)

    def _place_notes(self) -> None:
        """Put each compile note on the side of its point (:data:`NOTE_ANCHORS`) where it covers no point,
        stays inside the view and clears the legend and the notes placed before it."""
        vb = plot_item(self).getViewBox()
        view = vb.sceneBoundingRect()
        curves = [[vb.mapViewToScene(QPointF(p.x, math.log10(max(p.wall_ms, 1e-3)))) for p in r.points]
                  for r in self._runs]
        shapes = Shapes([[(sp.x(), sp.y()) for sp in curve] for curve in curves])
        taken = [self.legend.sceneBoundingRect()] if self.legend.isVisible() else []
        for note in (n for run in self._runs for n in run.notes if not n.retired):
            best: tuple[str, tuple[float, float]] | None = None
            best_cost: int | None = None
            own_at = vb.mapViewToScene(note.pos())  # the note's own point: beside it is where it belongs
            own = (own_at.x(), own_at.y())
            # the full split first; in a cramped plot the one-line form (the compile log has the split)
            for text in dict.fromkeys((note.full_text, note.short_text)):
                if text != note.toPlainText():
                    note.setText(text)
                for anchor in NOTE_ANCHORS:
                    note.setAnchor(anchor)
                    rect = note.sceneBoundingRect()
                    box = (rect.left(), rect.top(), rect.right(), rect.bottom())
                    cost = 10 * shapes.points_in((box[0] - 6, box[1] - 6, box[2] + 6, box[3] + 6), own)
                    cost += UNREADABLE * sum(rect.intersects(t) for t in taken)  # over another note, the legend
                    # a curve behind the note (drawn over the curves on an opaque background: readable), a note
                    # cut at the plot's edge (unreadable: issue 29, flaw 18; the race lanes' notes at x = 0)
                    cost += shapes.segments_crossing(box)
                    cost += 0 if view.contains(rect) else UNREADABLE
                    if best_cost is None or cost < best_cost:
                        best, best_cost = (text, anchor), cost
                if best_cost == 0:
                    break
            assert best is not None and best_cost is not None, "NOTE_ANCHORS is not empty: every note has a place"
            if best[0] != note.toPlainText():
                note.setText(best[0])
            note.setAnchor(best[1])
            # a note that could only be cut or cover another is left out (the tool tip and the compile log
            # have it); it comes back when the plot has room again
            note.setVisible(best_cost < UNREADABLE)
            if note.isVisible():
                taken.append(note.sceneBoundingRect())

    def place_legend(self) -> None:
        """Fit the run legend (its names, its columns, its row under the x axis), then place the compile
        notes; hide it while no run is shown."""
        if self.plotItem is None:  # being deleted
            return
        self.legend.setVisible(bool(self._runs))
        vb = plot_item(self).getViewBox()
        room, share = self._legend_room(), 1.0
        for _ in range(6):  # labels are drawn wider than measured in some fonts: cut the names until it fits
            self._fit_legend_names(share)
            self._fit_legend()
            if vb.width() <= 0 or self.legend.boundingRect().width() <= room:
                break
            share *= 0.85
        if any(run.points for run in self._runs):
            self._place_notes()

    def _legend_room(self) -> float:
        """The legend's width in px: the plot item's, less :data:`LEGEND_INSET` on each side and the frame (the
        legend starts under the y axis: :func:`widgets.plot.legend_row.add_legend_row`)."""
        width = plot_item(self).width()
        return (width if width > 0 else self.width()) - 2 * LEGEND_INSET - 6

    def _legend_layout(self, n: int, need: float) -> tuple[int, float]:
        """``(columns, px per name)`` of ``n`` legend entries under the x axis: at most a fifth of the plot's
        height in rows (:data:`LEGEND_SHARE`), as many columns as that needs, but never so many that a name
        is cut below ``need`` px (its run number, mode and model: :func:`essential`), names cut to their
        column's width."""
        room = self._legend_room()
        columns = max(1, min(n, -(-n // self._legend_rows())))
        columns = min(columns, self._legend_columns(room, need))
        return columns, max(60.0, room / columns - 45)  # 45: the sample and the gaps

    def _legend_rows(self) -> int:
        """The legend's budget in rows: :data:`LEGEND_SHARE` of the plot's height."""
        row_px = self._legend_metrics().lineSpacing() + 8
        rows = max(1, int(LEGEND_SHARE * max(self.height(), 1) // row_px))
        return min(rows, SHORT_LEGEND_ROWS) if 0 < self.height() < SHORT_PLOT else rows

    def _leaves_too_little(self, rows: int) -> bool:
        """Whether ``rows`` legend rows would leave the drawing area under :data:`LEGEND_LEAVES_PX` (the view box
        and the legend's row share what the axes, the key and the title leave, in one layout pass)."""
        shared = plot_item(self).getViewBox().height() + self._legend_row.size().height()
        return shared - rows * (self._legend_metrics().lineSpacing() + 8) - 6 < LEGEND_LEAVES_PX

    def _earlier_to_title(self, entries: list[list[PlotRun]], capacity: int, columns: int) -> bool:
        """Whether the earlier runs' one entry (``entries[0]``) goes under the x axis: not even the newest run or
        race fits beside it in the budget (issue 55, walk seed 7 at 1920×1080: three rows left 173 px of drawing
        area), one row more leaves too little drawing area, and "runs a–b earlier" fits the title whole."""
        if len(entries) <= capacity or len(entries[0]) < 2 or not self._leaves_too_little(-(-len(entries) // columns)):
            return False
        return self._title_fits(f"call index   ·   runs {entries[0][0].run_id}–{entries[0][-1].run_id} earlier")

    def _title_fits(self, text: str) -> bool:
        metrics, room = self._title_room()
        return metrics.horizontalAdvance(text) <= room

    def _title_room(self) -> tuple[QFontMetricsF, float]:
        """The x axis' title's metrics and its room in px."""
        item = plot_item(self)
        font = QFont(item.getAxis("bottom").label.font())  # the family the title is drawn in
        font.setPointSizeF(round(self._base_pt * 1.1 * self._font_scale))
        width = item.getViewBox().width()
        # 0.85: rich text is drawn wider than these metrics measure it (as the key's: LatencyKey._set_title)
        return QFontMetricsF(font), 0.85 * (width if width > 0 else self.width() - 80) - 16

    def _legend_columns(self, room: float, need: float) -> int:
        """The most columns of ``need`` px names in ``room`` px."""
        return max(1, int(room // (need + 45)))  # each column: its name and 45 px of sample and gaps

    def _legend_metrics(self) -> QFontMetricsF:
        """Metrics of the legend's labels as drawn (their item's font at the legend's size)."""
        font = QFont(self.legend.items[0][1].item.font()) if self.legend.items else QFont()
        font.setPointSizeF(float(str(self.legend.opts["labelTextSize"]).removesuffix("pt")))
        return QFontMetricsF(font)

    def _entry_name(self, run: PlotRun, drop: tuple[str, ...] = ()) -> str:
        """``run``'s legend entry: "run N · " and its label without the parts ``drop`` (those every run shares,
        then named under the x axis), and its steady value when the key has no room for it."""
        parts = run.label.split(" · ")
        name = f"run {run.run_id} · {' · '.join([parts[0], *(p for p in parts[1:] if p not in drop)])}"
        if run.steady_ms is not None and self.lanes_in_legend():
            name += f" ┄ {ms(run.steady_ms)}"
        return name

    def shared_label(self) -> str:
        """What every run's label ends with when the legend names it once, under the x axis ('' when not)."""
        return self._shared

    def _set_shared(self, shared: str) -> None:
        self._shared = shared
        self.set_axis_labels()

    def set_axis_labels(self) -> None:
        """The axes' titles at the current font scale; the x axis' also names what every run shares, cut with
        "…" to the view box's width (a long model label ran past the plot's edge)."""
        item = plot_item(self)
        size = self._base_pt * 1.1 * self._font_scale
        css = {"font-size": f"{size:.0f}pt"}
        text = "call index"
        if self._shared or self._earlier:
            metrics, room = self._title_room()
            shared = f"   ·   {self._named}: {self._shared}" if self._shared else ""
            earlier = f"   ·   {self._earlier}" if self._earlier else ""  # whole (the legend names those runs nowhere else)
            if metrics.horizontalAdvance(text + earlier) > room:
                earlier = ""  # only while the plot is being refitted (place_legend moves them back to the legend)
            room -= metrics.horizontalAdvance(text + earlier)
            text += metrics.elidedText(shared, Qt.TextElideMode.ElideRight, max(room, 40)) + earlier
        if (text, size) == self._axis_text:
            return
        self._axis_text = (text, size)
        item.setLabel("bottom", text, **css)
        bottom = item.getAxis("bottom")
        bottom.setSIPrefixEnableRanges(())  # call indexes never take "x0.001" (setLabel resets it)
        bottom.resizeEvent()  # centre the new title now (pyqtgraph places it only when the axis is resized)
        item.setLabel("left", "wall time per call", units="ms", **css)

    def _fit_legend_names(self, share: float = 1.0) -> None:
        """Name each run in its legend column's width: whole when every name fits; else what every label ends with
        (model, devices) is named once under the x axis (issue 37: six long names took five rows); a name still too
        wide is cut (:func:`shorten`), a race's settings counted; earlier runs may go under the x axis (issue 55).
        Re-added: pyqtgraph sizes a row when added. The least an entry may be cut to: its run number, mode and model
        or file:entry (what every run shares apart) and a lane's steady value, left out where the entries would take
        more rows than the budget (issue 55: a replayed race beside older runs took 3 rows, 172 px of drawing area
        left): its dashed line stays."""
        vb = plot_item(self).getViewBox()
        metrics, shared, room = self._legend_metrics(), shared_parts([r.label for r in self._runs]), self._legend_room()
        def least_need(runs: list[PlotRun], least: Callable[[str], str]) -> tuple[float, int]:
            """(px per name, lines per entry) of ``runs`` named at least as ``least`` names them."""
            need = max((metrics.horizontalAdvance(least(self._entry_name(run, tuple(shared)))) for run in runs),
                       default=0.0) + 12  # the label's text margins: drawn 96.5 px where 90.9 measured
            need /= share  # drawn wider than measured (place_legend): fewer columns, never names cut below need
            return min(need, room), 2 if need > room else 1  # an entry wider than the plot takes two lines (shorten)

        for least in (least_name, essential):
            need, lines = least_need(self._runs, least)
            capacity = self._legend_rows() // lines * self._legend_columns(room, need)
            entries = legend_entries(self._runs, capacity)
            if len(entries) <= capacity:
                break
        earlier: list[PlotRun] = []
        if self._earlier_to_title(entries, capacity, self._legend_columns(room, need)):
            earlier, entries = entries[0], entries[1:]
            named = [run for entry in entries for run in entry]
            shared = [p for p in shared_parts([r.label for r in named]) if not SECONDARY.match(p)]  # the model
            need, _lines = least_need(named, essential)
        self._legend_need = need
        self._earlier = f"runs {earlier[0].run_id}–{earlier[-1].run_id} earlier" if earlier else ""
        self._named = f"runs {entries[0][0].run_id}–{entries[-1][-1].run_id}" if earlier else "every run"
        _columns, room = self._legend_layout(len(entries), need)

        def name(runs: list[PlotRun], drop: tuple[str, ...] = ()) -> str:  # a race's settings counted if too wide
            if len(runs) == 1:
                return self._entry_name(runs[0], drop)
            return race_entry_name(runs, metrics.horizontalAdvance, room * share)

        names = [name(runs) for runs in entries]
        whole = f"call index   ·   {self._named}: {' · '.join(shared)}   ·   {self._earlier}"  # as the title draws it
        if shared and any(metrics.horizontalAdvance(n) > room * share for n in names) and (
                not earlier or self._title_fits(whole)):  # the model said whole, once
            names = [name(runs, tuple(shared)) for runs in entries]
        else:
            shared = []
        self._set_shared(" · ".join(sorted(shared, key=lambda p: bool(SECONDARY.match(p)))))  # the model first
        names = [shorten(n, metrics, room * share) for n in names]
        shown = [label.text for _sample, label in self.legend.items]
        if vb.width() <= 0 or shown == names:
            return
        for run in self._runs:
            self.legend.removeItem(run.key)
        for runs, text in zip(entries, names):
            self.legend.addItem(runs[0].key, text)
            self.legend.items[-1][1].setToolTip(entry_tip(runs))  # whole where the entry is cut or counts its runs

    def legend_rect(self) -> QRectF:
        """The run legend's rectangle in view coordinates (x: call index, y: log10 ms)."""
        vb = plot_item(self).getViewBox()
        return vb.mapSceneToView(self.legend.sceneBoundingRect()).boundingRect()

    def notes(self, run: int = -1) -> list[CompileNote]:
        """The compile notes of run ``run`` (index into the drawn runs; -1 the latest)."""
        return list(self._runs[run].notes)

    def annotate_compile(self, run_id: int, call_index: int, line: str) -> bool:
        """Add ``line`` (e.g. XLA's compile split from a pass recording: "XLA: HLO passes 101 ms · backend
        557 ms · other 34 ms") to the note beside the compile spike of call ``call_index`` of run ``run_id``.
        False when that call has no note (not a compiling call, or not annotated)."""
        run = next((r for r in self._runs if r.run_id == run_id), None)
        note = next((n for n in (run.notes if run else []) if n.call_x == call_index), None)
        if note is None:
            return False
        base, short = note.full_text.split("\n‖ ")[0], note.short_text.split("\n‖ ")[0]
        note.full_text, note.short_text = f"{base}\n‖ {line}", f"{short}\n‖ {line}"  # either form shows it
        note.setText(note.full_text)
        self.place_legend()  # the taller note finds its place again
        return True

    def _annotate(self, run: PlotRun) -> None:
        """Label the first compiling calls with their split, alternately above and below the point; a race
        lane's first compiling call only, on one line in the lane's colour ("jit-static: compile 5.12 s"), so
        each lane's compile is named where the lanes are drawn together. A note is drawn over the curves, on an
        almost opaque background: a curve passing behind it does not cross its numbers."""
        lane = run.group is not None
        most = 1 if lane else MAX_ANNOTATIONS
        compiled = [p for p in run.points if p.compiled][:most] if run.annotate else []
        for p in compiled[len(run.notes) :]:
            phases = getattr(p.record, "compile_phases", None) or {}
            parts = [f"{name} {ms(v)}" for name, v in phases.items()]
            # Two phases a line: narrow enough to sit beside its point in a 1280x720 window's plot.
            text = "\n".join([f"{p.step} {ms(p.wall_ms)}"] + [" · ".join(parts[i:i + 2]) for i in range(0, len(parts), 2)])
            short = f"{p.step} compile {ms(p.wall_ms)}"  # when cramped
            if lane:
                text = short = f"{run.label.split(' · ')[0]}: compile {ms(p.wall_ms)}"
            above = len(run.notes) % 2 == 0
            note = CompileNote(
                text,
                short,
                p.x,  # the call it describes (annotate_compile adds to it)
                color=run.colour if lane else COMPILE_COLOUR,
                anchor=(-0.02, 1.15 if above else -0.15),
                fill=pg.mkBrush(255, 255, 255, 235),
            )
            note.setZValue(10)  # over every curve and marker
            note.setPos(p.x, math.log10(max(p.wall_ms, 1e-3)))
            if self._font_scale != 1.0:
                font = QFont()
                font.setPointSizeF(9.0 * self._font_scale)
                note.setFont(font)
            plot_item(self).addItem(note, ignoreBounds=True)
            run.notes.append(note)

