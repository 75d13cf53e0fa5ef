"""The compile-versus-run trade-off: one point per compiler setting at (compile ms, steady ms per call), the Pareto
front drawn through the settings no other beats on both, the baseline marked with a star, every point labelled, under
its name its paired verdict against the baseline ("1.25× faster than default (95 % CI 1.20–1.30)", the baseline's A/A
floor) and beside each point that compiles slower and runs faster its break-even sentence ("O3 pays for its extra
2.1 s after 180 tokens"). Hovering a point shows its compile split (trace / lower / compile ms) and the verdict.

Plain data in: :meth:`TradeoffPlot.set_points` takes :class:`TradeoffPoint` s, whose Pareto flag and break-even text
the race computed (:mod:`app.core.compile_settings.figures`): the widget draws, it does not decide. Exports: PNG,
SVG and PDF through :func:`widgets.plot.plot_export.export_plot` (the SVG in page coordinates, drawn alike by every
renderer), CSV and JSON of the points (:meth:`TradeoffPlot.export`).
"""

from __future__ import annotations

import csv
import json
import textwrap
from pathlib import Path
from typing import Any, NamedTuple

import pyqtgraph as pg  # noqa: TID253 - a heavy module: its users import it inside functions
from PySide6.QtCore import QPointF, QRectF, Qt, QTimer
from PySide6.QtGui import QFont, QFontMetricsF
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from widgets.common.typed_qt import graphics_scene, plot_item
from widgets.demo.tradeoff_export import export_slide

POINT_COLOUR = "#2563eb"
BASELINE_COLOUR = "#111827"
FRONT_COLOUR = "#ea580c"
TITLE = "Compile once, run fast: what each compiler setting costs and saves"
#: Said once after the title (not under every point) when the race's A/A floor is wider than ±3 % (issue 55).
NOISY = " · noisy machine (A/A > ±3 %)"
#: Hover radius around a point, in screen px.
HOVER_PX = 12.0
#: Export formats: the plot's own (:func:`export_plot`) and the points' data.
EXPORT_SUFFIXES = (".png", ".svg", ".pdf", ".csv", ".json")
#: The plot's smallest readable height (px): a host shows it smaller nowhere (issue 55).
MIN_PLOT_PX = 240
#: The axes' titles, long and short: the short one where the long one would be cut.
AXIS_TITLES = {"bottom": ("compile ms (trace + lower + compile)", "compile ms"),
               "left": ("steady ms per call", "ms per call")}
#: Where a label may go by its point, in order: (anchor x — None: the label's share —, anchor y, label heights
#: up, px right): above, under, right of it, left of it, then one and two label heights further up or down.
PLACES: tuple[tuple[float | None, float, int, int], ...] = (
    (None, 1, 0, 0), (None, 0, 0, 0), (0, 0.5, 0, 9), (1, 0.5, 0, -9), (None, 1, 1, 0), (None, 0, -1, 0),
    (None, 1, 2, 0), (None, 0, -2, 0))
#: A label's break-even sentence wraps after this many characters, so a long one stays by its point.
LABEL_CHARS = 48


class TradeoffPoint(NamedTuple):
    """One setting. ``compile_ms``: its step's trace + lower + compile (ms); ``steady_ms``: median ms per call;
    ``split``: ``{"trace": ms, "lower": ms, "compile": ms}``; ``baseline``: the race's baseline; ``pareto``: on the
    Pareto front; ``break_even``: the break-even sentence, or ""; ``equal``: outputs equal the baseline's (None:
    unknown); ``unit``: ``"token"`` or ``"call"``; ``detail``: the compile's own measured parts (``{"XLA passes": ms,
    "codegen": ms}``, on a GPU ``autotune`` and ``ptxas`` inside them; {} when not measured); ``versus``: what is said
    against the baseline (``"O3 1.25× faster than default (95 % CI 1.20–1.30) · same optimized HLO"``, or a one-pass
    ratio marked ``"(one pass, no CI)"``; "" unknown); ``verdict_line``: the paired verdict drawn under the name
    (``"1.25× faster than default (95 % CI 1.20–1.30)"``, the baseline's ``"A/A ±1.8 %"``; "" without paired
    rounds); ``verdict``: its numbers (``ratio``, ``ci_low``, ``ci_high``, ``rounds``, ``aa_noise``, ``dropped``,
    ``noisy``; {} without paired rounds)."""

    name: str
    compile_ms: float
    steady_ms: float
    split: dict[str, float]
    baseline: bool = False
    pareto: bool = False
    break_even: str = ""
    equal: bool | None = None
    unit: str = "token"
    detail: dict[str, float] = {}  # noqa: RUF012  (a NamedTuple default, never mutated)
    versus: str = ""
    verdict_line: str = ""
    verdict: dict[str, Any] = {}  # noqa: RUF012  (a NamedTuple default, never mutated)


def split_text(point: TradeoffPoint) -> str:
    """The hover text: name, compile split, steady ms per call and whether outputs match."""
    parts = " + ".join(f"{k} {v:,.0f}" for k, v in point.split.items())
    equal = "" if point.equal is None else (" · outputs equal" if point.equal else " · outputs DIFFER")
    d = point.detail
    inner = [f"{name} {d[name]:,.0f}" + (f" (of which {sub} {d[sub]:,.0f})" if sub in d else "")
             for name, sub in (("XLA passes", "autotune"), ("codegen", "ptxas")) if name in d]
    detail = f"; compile = {' + '.join(inner)} ms" if inner else ""
    return (f"{point.name}: compile {point.compile_ms:,.0f} ms ({parts} ms{detail}) · "
            f"{point.steady_ms:,.3f} ms/{point.unit}{equal}" + (f" · {point.versus}" if point.versus else ""))


def paired_position(point: TradeoffPoint, points: list[TradeoffPoint]) -> TradeoffPoint:
    """``point`` where its label's verdict says it is: with a paired verdict (``verdict["ratio"]``, the speed-up
    over the baseline from paired rounds) its height is the baseline's steady ms ÷ that ratio, so the point and its
    "1.25× faster" agree; without one (or for the baseline) its one-pass steady ms as measured."""
    base = next((p for p in points if p.baseline), None)
    ratio = point.verdict.get("ratio") if point.verdict else None
    if base is None or point.baseline or not ratio or point.verdict.get("ci_low") is None:
        return point
    note = f"placed by the paired ratio; one pass measured {point.steady_ms:,.3f} ms/{point.unit}"
    return point._replace(steady_ms=base.steady_ms / float(ratio),
                          versus=f"{point.versus} · {note}" if point.versus else note)


def placed_front(placed: list[TradeoffPoint], given: list[TradeoffPoint]) -> list[TradeoffPoint]:
    """``placed`` with the Pareto front of where they are drawn when :func:`paired_position` moved any (no point
    both compiles and runs at least as fast as one on the front, and faster in one): the line joins what the eye
    sees; the exports keep the race's own front (``given``'s)."""
    if all(a.steady_ms == b.steady_ms for a, b in zip(placed, given)):
        return placed
    def beaten(p: TradeoffPoint) -> bool:
        return any(q.compile_ms <= p.compile_ms and q.steady_ms <= p.steady_ms
                   and (q.compile_ms, q.steady_ms) != (p.compile_ms, p.steady_ms) for q in placed)
    return [p._replace(pareto=not beaten(p)) for p in placed]


def align(label: pg.TextItem, share: float) -> None:
    """``label``'s lines left-aligned (``share`` 0: it reads rightwards from its point), centred (0.5) or
    right-aligned (1), so that its first line, the setting's name, is by its point."""
    flag = (Qt.AlignmentFlag.AlignLeft, Qt.AlignmentFlag.AlignHCenter, Qt.AlignmentFlag.AlignRight)[round(share * 2)]
    item = label.textItem
    option = item.document().defaultTextOption()
    if option.alignment() != flag or item.textWidth() < 0:
        item.setTextWidth(-1)  # its natural width, then every line aligned inside it
        item.setTextWidth(item.boundingRect().width())
        option.setAlignment(flag)
        item.document().setDefaultTextOption(option)


class TradeoffPlot(QWidget):
    """Compile time (x, ms) against steady time per call (y, ms), one point per setting. Talk-sized with
    :meth:`set_font_size`. :attr:`hovered`: the point under the mouse (None). ``compact`` (a small panel): points
    are labelled by name only and the break-even sentences are listed under the plot (:attr:`notes`); ``title``:
    draw :data:`TITLE` above the plot (off where a card's title says it)."""

    def __init__(self, parent: QWidget | None = None, compact: bool = False, title: bool = True) -> None:
        super().__init__(parent)
        self.compact = compact
        self.plot = pg.PlotWidget(background="w")
        self.plot.setObjectName("tradeoff_plot")
        item = plot_item(self.plot)
        for side, (long, _short) in AXIS_TITLES.items():
            item.setLabel(side, long)
        for side in ("left", "bottom"):  # ms as they are: pyqtgraph would rescale 0.08 ms to "80 (x0.001)"
            item.getAxis(side).enableAutoSIPrefix(False)
        if title:
            item.setTitle(TITLE)
        self._title = title
        item.getViewBox().setDefaultPadding(0.12)  # room for the labels above the top point
        item.showGrid(x=True, y=True, alpha=0.2)
        self._points: list[TradeoffPoint] = []
        self._given: list[TradeoffPoint] = []
        self._font_pt = 0  # labels' font size (pt) set by set_font_size; 0: pyqtgraph's own
        self._labels: list[pg.TextItem] = []
        self.front = self.plot.plot([], [], pen=pg.mkPen(FRONT_COLOUR, width=2, style=Qt.PenStyle.DashLine),
                                    name="Pareto front")
        self.others = self.plot.plot([], [], pen=None, symbol="o", symbolSize=11, symbolBrush=POINT_COLOUR,
                                     symbolPen=None, name="setting")
        self.base = self.plot.plot([], [], pen=None, symbol="star", symbolSize=18, symbolBrush=BASELINE_COLOUR,
                                   symbolPen=None, name="baseline")
        self.hovered: TradeoffPoint | None = None
        graphics_scene(self.plot).sigMouseMoved.connect(self._on_mouse_moved)
        self._shares: list[float] = []  # each label's horizontal anchor (see set_points)
        # labels are moved apart once the view has settled (after every zoom, resize)
        self._tidy = QTimer(self, singleShot=True, interval=0)
        self._tidy.timeout.connect(self.declutter)
        item.getViewBox().sigTransformChanged.connect(self._on_view_changed)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot, 1)
        self.notes = QLabel("")
        self.notes.setObjectName("tradeoffNotes")
        self.notes.setWordWrap(True)
        self.notes.setVisible(False)
        layout.addWidget(self.notes)
        self.caption = QLabel("")  # what the points' verdicts rest on (rounds, A/A floor), under the plot
        self.caption.setObjectName("tradeoffCaption")
        self.caption.setWordWrap(True)
        self.caption.setVisible(False)
        layout.addWidget(self.caption)

    @property
    def points(self) -> list[TradeoffPoint]:
        return list(self._points)

    def set_points(self, points: list[TradeoffPoint]) -> None:
        """Draw ``points`` (replacing the previous ones): the Pareto front joins the ``pareto`` points in order of
        compile time; each point gets a label, and its break-even sentence under it."""
        self._given = list(points)  # as the race gave them (an export draws them anew)
        self._points = points = placed_front([paired_position(p, points) for p in points], points)
        others = [p for p in points if not p.baseline]
        base = [p for p in points if p.baseline]
        self.others.setData([p.compile_ms for p in others], [p.steady_ms for p in others])
        self.base.setData([p.compile_ms for p in base], [p.steady_ms for p in base])
        front = sorted((p for p in points if p.pareto), key=lambda p: p.compile_ms)
        self.front.setData([p.compile_ms for p in front], [p.steady_ms for p in front])
        for label in self._labels:
            self.plot.removeItem(label)
        self._labels, self._shares = [], []
        low = min((p.compile_ms for p in points), default=0.0)
        span = max((p.compile_ms for p in points), default=0.0) - low
        for p in points:
            text = p.name + (" (baseline)" if p.baseline else "")
            if p.verdict_line and not self.compact:  # the dock's small plot: its panel says the verdicts
                text += f"\n{p.verdict_line}"  # one line: the verdict with its interval, read as one
            if p.break_even and not self.compact:
                text += "\n" + textwrap.fill(p.break_even, LABEL_CHARS)
            # a label reads away from the nearer edge: the left third's points' to their right, the right third's
            # to their left (its lines right-aligned, ending at the point), the middle's centred above the point
            share = (p.compile_ms - low) / span if span > 0 else 0.0
            share = 0.0 if share < 1 / 3 else 1.0 if share > 2 / 3 else 0.5
            label = pg.TextItem(text, color=BASELINE_COLOUR if p.baseline else "#374151", anchor=(share, 1))
            label.setPos(p.compile_ms, p.steady_ms)
            if self._font_pt:
                label.setFont(self._font())
            self.plot.addItem(label)
            self._labels.append(label)
            self._shares.append(share)
        self.plot.enableAutoRange()
        for set_range, values in ((self.plot.setXRange, [p.compile_ms for p in points]),
                                  (self.plot.setYRange, [p.steady_ms for p in points])):
            if values and max(values) - min(values) <= 1e-6 * max(abs(v) for v in values):  # one point, or all alike
                mid = values[0]  # ±10 % around it, not a range of 1e-9 with fifteen-digit ticks
                set_range(*((mid * 0.9, mid * 1.1) if mid else (-1.0, 1.0)))
        notes = [p.break_even for p in points if p.break_even] if self.compact else []
        self.notes.setText("\n".join(notes))
        self.notes.setVisible(bool(notes))
        self._draw_title()
        self._tidy.start()

    def title_text(self) -> str:
        """The title drawn above the plot (``""`` with ``title=False``): :data:`TITLE`, with :data:`NOISY` when any
        point's paired verdict says the machine was noisy — once for the plot, not under each point."""
        if not self._title:
            return ""
        return TITLE + (NOISY if any(p.verdict.get("noisy") for p in self._given) else "")

    def _draw_title(self) -> None:
        if self._title:
            size = {"size": f"{self._font().pointSize()}pt"} if self._font_pt else {}
            plot_item(self.plot).setTitle(self.title_text(), **size)

    def set_caption(self, text: str, tooltip: str = "") -> None:
        """A line under the plot (``""``: none), e.g. the paired rounds the verdicts rest on; talk-sized with
        :meth:`set_font_size`."""
        self.caption.setText(text)
        self.caption.setToolTip(tooltip)
        self.caption.setVisible(bool(text))

    def _on_view_changed(self, *_view: object) -> None:
        self._tidy.start()

    def resizeEvent(self, event: Any) -> None:
        super().resizeEvent(event)
        self._tidy.start()

    def axis_titles(self) -> dict[str, tuple[str, float, float]]:
        """Each axis's title as drawn: ``{side: (text, text px, axis px)}`` (its text's length and the length of
        the axis it runs along, screen px)."""
        item = plot_item(self.plot)
        out = {}
        for side in AXIS_TITLES:
            axis = item.getAxis(side)
            text = axis.labelText or ""
            along = axis.geometry().height() if side == "left" else axis.geometry().width()
            out[side] = (text, QFontMetricsF(axis.label.font()).horizontalAdvance(text), along)
        return out

    def titles_whole(self) -> bool:
        """Whether every axis title is drawn whole (its text no longer than its axis)."""
        return all(width <= along for _text, width, along in self.axis_titles().values())

    def fit_titles(self) -> None:
        """Each axis its long title where it fits, else its short one (:data:`AXIS_TITLES`)."""
        item = plot_item(self.plot)
        for side, (long, short) in AXIS_TITLES.items():
            axis = item.getAxis(side)
            along = axis.geometry().height() if side == "left" else axis.geometry().width()
            fits = QFontMetricsF(axis.label.font()).horizontalAdvance(long) <= along - 8
            want = long if fits or along <= 0 else short
            if axis.labelText != want:
                axis.setLabel(want)

    def declutter(self) -> None:
        """Put each label (in the order of the points) at the first of :data:`PLACES` that lies inside the plot and
        overlaps no earlier label: above its point, under it, beside it (right, left), then a label's height or two
        further up or down; else the first place inside the plot, else above. The label's data position moves (not
        only its anchor), so a vector export draws it where the screen does."""
        self.fit_titles()
        placed: list[QRectF] = []
        view = plot_item(self.plot).getViewBox()
        px, inside = view.viewPixelSize(), view.sceneBoundingRect()  # data units per screen px (x, y)
        for label, share, p in zip(self._labels, self._shares, self._points):
            rects = []
            for where in PLACES:
                rect = self._place(label, share, p, where, px)
                if inside.contains(rect) and not any(rect.intersects(other) for other in placed):
                    break
                rects.append((where, inside.contains(rect)))
            else:
                where = next((w for w, ok in rects if ok), PLACES[0])
                rect = self._place(label, share, p, where, px)
            placed.append(rect)

    @staticmethod
    def _place(label: pg.TextItem, share: float, p: TradeoffPoint, where: tuple[float | None, float, int, int],
               px: tuple[float, float]) -> QRectF:
        """Put ``label`` at ``where`` (one of :data:`PLACES`) by its point (``px``: data units per screen px);
        its scene rect."""
        ax, ay, heights, right = where
        ax = share if ax is None else ax
        align(label, ax)
        label.setAnchor((ax, ay))
        height = label.boundingRect().height()  # px: a TextItem ignores the view's scaling
        label.setPos(p.compile_ms + right * px[0], p.steady_ms + heights * height * px[1])
        return label.sceneBoundingRect()

    def label_texts(self) -> list[str]:
        """Each point's label as drawn (name, then its verdict and its break-even sentence when it has them)."""
        return [label.toPlainText() for label in self._labels]

    def set_font_size(self, points: int) -> None:
        """Labels, axes and title at ``points`` pt (presentation mode; 0: the application's own size again);
        kept for the points drawn later."""
        self._font_pt = points
        font = self._font()
        self.caption.setFont(font)
        for label in self._labels:
            label.setFont(font)
            label.textItem.setTextWidth(-1)  # measured anew at the next placing (align)
        item = plot_item(self.plot)
        for side in ("left", "bottom"):
            item.getAxis(side).label.setFont(font)
            axis = item.getAxis(side)
            axis.setStyle(tickFont=font if points else None)
            axis.setLabel(axis.labelText)  # the axis makes room for its title's new size
        if self._title:
            item.setTitle(self.title_text(), size=f"{font.pointSize()}pt")
        self._tidy.start()

    def font_size(self) -> int:
        """The labels' size in pt (:meth:`set_font_size`; 0: the application's)."""
        return self._font_pt

    def _font(self) -> QFont:
        font = QFont()
        if self._font_pt:
            font.setPointSize(self._font_pt)
        return font

    def point_near(self, scene_pos: QPointF) -> TradeoffPoint | None:
        """The point within :data:`HOVER_PX` screen px of ``scene_pos`` (the nearest), or None."""
        vb = plot_item(self.plot).getViewBox()
        best, best_d = None, HOVER_PX
        for p in self._points:
            at = vb.mapViewToScene(QPointF(p.compile_ms, p.steady_ms))
            d = ((at.x() - scene_pos.x()) ** 2 + (at.y() - scene_pos.y()) ** 2) ** 0.5
            if d <= best_d:
                best, best_d = p, d
        return best

    def _on_mouse_moved(self, scene_pos: QPointF) -> None:
        self.hovered = self.point_near(scene_pos)
        self.plot.setToolTip(split_text(self.hovered) if self.hovered is not None else "")

    def _export_drawing(self, path: Path) -> Path:
        """The plot drawn anew for a slide (:data:`SLIDE_SIZE` at :data:`SLIDE_PT`, with its title), whatever
        its size on screen: every label with its verdict and break-even sentence (a compact plot's too)."""
        return export_slide(lambda: TradeoffPlot(title=True), self._given, path)

    def export(self, path: str | Path) -> Path:
        """Write the plot (``.png`` / ``.svg`` / ``.pdf``, every verdict and break-even sentence beside its point) or its
        points (``.csv``: one row per setting with its verdict — ``vs_baseline`` words, ``ratio`` (speed-up over the
        baseline), ``ci_low`` / ``ci_high`` (95 %), ``paired_rounds``, ``aa_noise_pct``, ``dropped_rounds``, empty
        without paired rounds — and the split; ``.json``: a list of objects). Returns the path; raises ValueError for another suffix, OSError if
        nothing was written."""
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix not in EXPORT_SUFFIXES:
            raise ValueError(f"Export as {', '.join(EXPORT_SUFFIXES)}, not {suffix or 'no suffix'}.")
        if suffix in (".png", ".svg", ".pdf"):
            return self._export_drawing(path)
        rows = [{"setting": p.name, "vs_baseline": p.versus, "ratio": p.verdict.get("ratio"),
                 "ci_low": p.verdict.get("ci_low"), "ci_high": p.verdict.get("ci_high"),
                 "paired_rounds": p.verdict.get("rounds"), "aa_noise_pct": p.verdict.get("aa_noise"),
                 "dropped_rounds": p.verdict.get("dropped"), "compile_ms": p.compile_ms, "trace_ms": p.split.get("trace"),
                 "lower_ms": p.split.get("lower"), "xla_compile_ms": p.split.get("compile"),
                 "xla_passes_ms": p.detail.get("XLA passes"), "codegen_ms": p.detail.get("codegen"),
                 "autotune_ms": p.detail.get("autotune"), "ptxas_ms": p.detail.get("ptxas"),
                 "steady_ms_per_call": p.steady_ms, "unit": p.unit, "baseline": p.baseline, "pareto": p.pareto,
                 "outputs_equal": p.equal, "break_even": p.break_even} for p in self._given]  # as measured
        if suffix == ".json":
            path.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
        else:
            with path.open("w", newline="", encoding="utf-8") as f:
                writer = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["setting"])
                writer.writeheader()
                writer.writerows(rows)
        return path

