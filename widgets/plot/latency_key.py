"""The marker key above the latency plot and the steady lines whose values it shows
(:class:`widgets.plot.latency_plot.LatencyPlot` builds on this): "★ compiling call   ◆ compile served from disk
cache   ■ prefill   ● decode   ┄ steady decode 12 ms (83 tok/s)", wrapped onto as many lines as the plot's
width needs, at most :data:`KEY_LINES` lines (issue 37: with a race and its replay the key grew to five lines
and squeezed the plot to a strip): the dashed line at the newest run's steady decode median, or one per race
lane in the lane's colour with each lane's value in the key — or, where those values would take the key past
its lines, in each lane's legend entry ("run 2 · jit-static ┄ 9.5 ms"). Above the key, after a race's
steady-state phase, its verdict line ("jit-static 2.41× faster than torch (95 % CI 2.30–2.52)"): the longest
wording the app gives that fits one line, else two (:meth:`LatencyKey.set_verdict`, :data:`VERDICT_LINES`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from html import escape

import pyqtgraph as pg  # noqa: TID253 - a heavy module: its users import it inside functions
from PySide6.QtCore import QPointF, Qt, QTimer
from PySide6.QtGui import QFont, QFontMetricsF

from app.core.units import ms
from widgets.common.typed_qt import plot_grid, plot_item
from widgets.plot.call_tooltip import COMPILE_COLOUR, DISK_COLOUR
from widgets.plot.latency_runs import PlotRun

KEY_LINES = 2  # the key's budget: its rows are taken from the plot's drawing area
#: px: a plot shorter than this keeps its key to one line (issue 55: a two-line key helped squeeze the Code
#: workspace's plot at 1280×720 to 45 px of drawing area)
SHORT_PLOT = 420
VERDICT_LINES = 2  # the verdict line's budget, above the key (one line whenever a wording fits)
VERDICT_COLOUR = "#111827"
#: The key's wordings, longest first: the first that fits :data:`KEY_LINES` is drawn; the last, terse one
#: ("★ compile ◆ disk ■ prefill ● decode ┄ steady 9.5 ms") is for a narrow plot (a 1000×560 window cut the key).
DISK_KEYS = ("compile served from disk cache", "disk-cache compile", "disk")


class LatencyKey(pg.PlotWidget):
    """The key and steady lines of the latency plot; the plot's ``__init__`` sets the state declared here."""

    _runs: list[PlotRun]
    _program: bool  # the runs are calls of the user's program: "call", not prefill / decode
    _median_text: str  # the steady median as the key shows it ("12 ms (83 tok/s)"; '' when none)
    _title_key: tuple[float, tuple[tuple[str, ...], ...]] | None  # the key last drawn: font size, its lines
    _font_scale: float
    _median: pg.InfiniteLine  # the single run's steady line
    _steady: float | None  # its median, ms per call
    _timer: QTimer  # the redraw timer: active while points stream
    _key_wording: tuple[str, bool] = (DISK_KEYS[0], True)  # the key's wording last drawn (see _title_keys)
    _lanes_in_legend: bool = False
    _verdicts: tuple[str, ...] = ()  # the verdict line's wordings, longest first (set_verdict)
    _verdict_lines: tuple[str, ...] = ()  # the verdict as drawn, one string per line
    place_legend: Callable[[], None]  # PlotFitting's: fits the run legend again

    def _title_keys(self, disk: str = DISK_KEYS[0], lanes_in_key: bool = True) -> list[tuple[str, str]]:
        """(plain text, html) of each key of the marker legend above the plot: ``disk`` names the disk-cache
        marker; race lanes' steady values are keys of their own when ``lanes_in_key``, else in the legend."""
        star = f"<span style='color:{COMPILE_COLOUR}'>★</span>"
        diamond = f"<span style='color:{DISK_COLOUR}'>◆</span>"
        lanes = self.steady_lanes()
        terse = disk == DISK_KEYS[-1]
        steady = "steady" if terse else "steady call" if self._program else "steady decode"
        if lanes and lanes_in_key:  # a race: a dashed line per lane, each value in its lane's colour (they wrap)
            median_keys = [(f"┄ {steady}", f"┄ {steady}")] + [
                (f"{self._lane_name(r)} {ms(r.steady_ms)}",
                 f"<span style='color:{r.colour}'>{self._lane_name(r)} {ms(r.steady_ms)}</span>") for r in lanes]
        elif lanes:  # each lane's value ends its legend entry ("run 2 · jit-static ┄ 27.9 ms")
            median_keys = [(f"┄ {steady}", f"┄ {steady}")]
        else:
            text = self._median_text.split(" (")[0] if terse else self._median_text  # no tok/s when terse
            median = f"{steady} {text}" if text else f"{steady} median"
            median_keys = [(f"┄ {median}", f"┄ {median}")]
        steps = [("● call", "● call")] if self._program else [("■ prefill", "■ prefill"), ("● decode", "● decode")]
        compiling = "compile" if terse else "compiling call"
        return [
            (f"★ {compiling}", f"{star} {compiling}"),
            (f"◆ {disk}", f"{diamond} {disk}"),
            *steps,
            *median_keys,
        ]

    def steady_lanes(self) -> list[PlotRun]:
        """The shown runs with a steady line of their own (a race's lanes), oldest first."""
        return [r for r in getattr(self, "_runs", ()) if r.steady_ms is not None]  # none yet in __init__

    def lanes_in_legend(self) -> bool:
        """Whether the race lanes' steady values are in their legend entries (the key had no room for them)."""
        return getattr(self, "_lanes_in_legend", False)

    def set_program(self, program: bool) -> None:
        """The runs shown are calls of the user's program (True: the key says "call" and "steady call N ms",
        no tokens/s) or a model's prefill and decode steps (False)."""
        if program != self._program:
            self._program = program
            self._median_text = ""
            self._title_key = None
            self._draw_steady()
            self._set_title()

    def is_program(self) -> bool:
        return self._program

    def key_text(self) -> str:
        """The marker key above the plot as plain text ("★ compiling call   ● decode   ┄ steady decode …")."""
        return "   ".join(plain for plain, _ in self._title_keys(*self._key_wording))

    @staticmethod
    def _lane_name(run: PlotRun) -> str:
        return run.label.split(" · ")[0]

    def steady_lines(self) -> list[pg.InfiniteLine | None]:
        """Each shown run's own steady-decode line (race lanes; None for a run without one), oldest first."""
        return [r.steady_line for r in self._runs]

    def set_run_steady(self, run_id: int, median: float | None) -> None:
        """A race lane's steady decode median (ms per call): a dashed line in the lane's colour, its value in
        the key above the plot beside the other lanes' (None removes it). The single-run line
        (:meth:`set_steady_ms`) is hidden while lanes have theirs."""
        run = next((r for r in self._runs if r.run_id == run_id), None)
        if run is None:
            return
        run.steady_ms = median
        if median is None:
            if run.steady_line is not None:
                run.steady_line.setVisible(False)
        else:
            if run.steady_line is None:
                run.steady_line = pg.InfiniteLine(angle=0, movable=False,
                                                  pen=pg.mkPen(run.colour, width=1.2, style=Qt.PenStyle.DashLine))
                plot_item(self).addItem(run.steady_line, ignoreBounds=True)
            run.steady_line.setPos(QPointF(0, math.log10(max(median, 1e-3))))
            run.steady_line.setVisible(True)
            self._steady = None
            self._median.setVisible(False)
        self._title_key = None
        self._set_title()

    def _set_title(self) -> None:
        """The marker legend above the plot, wrapped onto as many lines as the plot's width needs, at most
        :data:`KEY_LINES` with the longest wording that fits (:data:`DISK_KEYS`); it never sets the plot's
        minimum width (pyqtgraph's title would: the plot was drawn past its widget's right edge, cut)."""
        item = plot_item(self)
        size = 9 * self._font_scale
        font = QFont(item.titleLabel.item.font())  # the family the title is drawn in
        font.setPointSizeF(size)
        metrics = QFontMetricsF(font)
        vb_width = item.getViewBox().width()  # the title spans the view box's column
        # 0.8: the title's rich text is drawn wider than these metrics measure it (up to ~15 % when scaled)
        room = max(120.0, 0.8 * (vb_width if vb_width > 0 else self.width() - 80.0) - 16.0)
        wording = (DISK_KEYS[0], True)
        lines = _wrap(self._title_keys(*wording), metrics, room)
        for shorter in [(disk, True) for disk in DISK_KEYS[1:]] + [(DISK_KEYS[-1], False)]:
            if len(lines) <= self.key_lines():  # the longest wording within the budget, else the shortest
                break
            wording, lines = shorter, _wrap(self._title_keys(*shorter), metrics, room)
        moved = self._key_wording[1] != wording[1]
        self._key_wording = wording
        self._lanes_in_legend = bool(self.steady_lanes()) and not wording[1]
        if moved and hasattr(self, "legend"):  # the lanes' values went to (or came back from) the legend
            self.place_legend()
        # the verdict is measured in its own bold font, which the title draws as measured: nearly the view's width
        verdict = self._fit_verdict(font, max(120.0, 0.97 * (vb_width if vb_width > 0 else self.width() - 80.0) - 16))
        key = (size, tuple(tuple(line) for line in [[v] for v in verdict] + lines))
        if key == self._title_key:
            return
        self._title_key = key
        self._verdict_lines = tuple(verdict)
        keys = "<br>".join([f"<span style='color:{VERDICT_COLOUR};font-weight:700'>{escape(v)}</span>" for v in verdict]
                           + [" &nbsp; ".join(line) for line in lines])
        item.setTitle(f"<span style='color:#374151;font-size:{size:.0f}pt'>{keys}</span>")
        free_width(item.titleLabel)  # a line wider than the plot is cut, never widens the plot past its widget
        height = int((len(lines) + len(verdict)) * metrics.lineSpacing() * 1.15 + 12)  # pyqtgraph fixes the title row at 30 px
        item.titleLabel.setMaximumHeight(height)
        plot_grid(item).setRowFixedHeight(0, height)

    def key_lines(self) -> int:
        """The key's budget in lines: :data:`KEY_LINES`, one in a plot shorter than :data:`SHORT_PLOT` px."""
        return 1 if 0 < self.height() < SHORT_PLOT else KEY_LINES

    def set_verdict(self, wordings: list[str]) -> None:
        """A race's steady-state verdict above the key: ``wordings`` of the same verdict, longest first, the last
        the shortest and without its interval's name (``[]`` removes it); see :meth:`_fit_verdict`."""
        if tuple(wordings) != self._verdicts:
            self._verdicts = tuple(wordings)
            self._title_key = None
            self._set_title()

    def verdict_text(self) -> str:
        """The verdict line as drawn ('' when none); its lines joined by a space."""
        return " ".join(self._verdict_lines)

    def _fit_verdict(self, font: QFont, room: float) -> list[str]:
        """The verdict's lines within ``room`` px: the first wording on one line, else the first whose parts (split
        at " · ") pack onto at most :data:`VERDICT_LINES` lines — the wordings with an interval first, the last
        (the shortest) only when none of them fits; else the shortest wrapped at its spaces, the rest cut with "…"."""
        if not self._verdicts:
            return []
        bold = QFont(font)
        bold.setBold(True)
        metrics = QFontMetricsF(bold)
        for group in (self._verdicts[:-1], self._verdicts[-1:]):
            fits = [w for w in group if metrics.horizontalAdvance(w) <= room]
            if fits:
                return [fits[0]]
            for wording in group:
                lines = _pack(wording.split(" · "), " · ", metrics, room)
                if len(lines) <= VERDICT_LINES and all(metrics.horizontalAdvance(line) <= room for line in lines):
                    return lines
        lines = _pack(self._verdicts[-1].split(" "), " ", metrics, room)
        if len(lines) > VERDICT_LINES:
            lines = [*lines[:VERDICT_LINES - 1], metrics.elidedText(" ".join(lines[VERDICT_LINES - 1:]),
                                                                     Qt.TextElideMode.ElideRight, room)]
        return lines

    def steady_visible(self) -> bool:
        """Whether the steady-decode line of a single run is shown."""
        return self._median.isVisible()

    def median_text(self) -> str:
        """The steady decode median as shown in the key above the plot ('' when none)."""
        steady = "steady call" if self._program else "steady decode"
        return f"{steady} {self._median_text}" if self._median_text else ""

    def set_steady_ms(self, median: float | None) -> None:
        """Draw the newest run's steady decode time (ms per call; None hides the line and its label). While
        points stream it is drawn with them, at the redraw rate."""
        self._steady = median
        if not self._timer.isActive():
            self._draw_steady()

    def _draw_steady(self) -> None:
        """The dashed line at the median; its value goes in the key above the plot (never on the data)."""
        median = self._steady
        self._median.setVisible(median is not None)
        text = ""
        if median:
            text = ms(median) if self._program else f"{ms(median)} ({1000 / median:.0f} tok/s)"
        if median is not None:
            self._median.setPos(QPointF(0, math.log10(max(median, 1e-3))))
        if text != self._median_text:
            self._median_text = text
            self._set_title()


def free_width(label: pg.LabelItem) -> None:
    """Let ``label`` be narrower than its text: pyqtgraph's ``LabelItem.updateMin`` (after every text change and
    resize) makes the text's width the label's minimum, and a plot item wider than its view is drawn past the
    widget's right edge (the key and the plot cut at 1000×560 and in a 300-px plot)."""
    if getattr(label, "_free_width", False):
        return
    update_min = label.updateMin

    def narrow() -> None:
        update_min()
        label.setMinimumWidth(0)
        height = label._sizeHint[Qt.SizeHint.MinimumSize][1]
        label._sizeHint[Qt.SizeHint.MinimumSize] = (0, height)
        label.updateGeometry()

    label.updateMin = narrow  # type: ignore[method-assign]  # pyqtgraph calls self.updateMin()
    label._free_width = True  # type: ignore[attr-defined]
    narrow()


def _wrap(keys: list[tuple[str, str]], metrics: QFontMetricsF, room: float) -> list[list[str]]:
    """The keys' html in lines of at most ``room`` px (their plain text measured with ``metrics``)."""
    gap = metrics.horizontalAdvance("   ")
    lines: list[list[str]] = [[]]
    used = 0.0
    for plain, html in keys:
        w = metrics.horizontalAdvance(plain)
        if lines[-1] and used + gap + w > room:
            lines.append([])
            used = 0.0
        used += (gap if lines[-1] else 0.0) + w
        lines[-1].append(html)
    return lines


def _pack(parts: list[str], sep: str, metrics: QFontMetricsF, room: float) -> list[str]:
    """``parts`` joined by ``sep`` into lines of at most ``room`` px where they fit (a part wider than ``room``
    takes a line of its own)."""
    lines = [""]
    for part in parts:
        joined = f"{lines[-1]}{sep}{part}" if lines[-1] else part
        if lines[-1] and metrics.horizontalAdvance(joined) > room:
            lines.append(part)
        else:
            lines[-1] = joined
    return lines
