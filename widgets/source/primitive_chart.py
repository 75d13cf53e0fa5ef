"""Primitive histogram: horizontal bars of equation counts per jaxpr primitive, one colour per step
(prefill and decode side by side), drawn with pyqtgraph's ``BarGraphItem``. Plain data in: ``{step:
{primitive: count}}``. No JAX.
"""

from __future__ import annotations

import pyqtgraph as pg  # noqa: TID253 - a heavy module: its users import it inside functions
from PySide6.QtGui import QFontMetrics, QResizeEvent
from PySide6.QtWidgets import QWidget

from widgets.common.typed_qt import plot_item

COLORS = ("#4a6fa5", "#e8710a", "#188038", "#a142f4")


class PrimitiveChart(pg.PlotWidget):
    """``set_counts({"prefill": {...}, "decode": {...}})``; the most frequent primitives are shown, most
    frequent at the top, as many as fit one readable label per bar pair (at most ``top``); the rest are
    summed into ``(other)``."""

    def __init__(self, parent: QWidget | None = None, top: int = 20) -> None:
        super().__init__(parent, enableMenu=False)  # no ViewBox menu built (pyqtgraph builds one per box)
        self.setObjectName("primitiveChart")  # PlotWidget.__init__ forwards **kargs to its PlotItem (pyqtgraph/widgets/PlotWidget.py)
        self.top = top
        self.setBackground("w")
        item = plot_item(self)
        item.showGrid(x=True, y=False, alpha=0.3)
        item.getViewBox().setMouseEnabled(x=False, y=False)
        item.setLabel("bottom", "equations")
        self.bars: list[pg.BarGraphItem] = []
        self.categories: list[str] = []
        self.legend = item.addLegend(offset=(-10, -40))
        self._counts: dict[str, dict[str, int]] = {}
        self._fits = top

    def rows_that_fit(self) -> int:
        """Categories whose labels fit the plot's height without overlapping (≥ 1.6 text lines each)."""
        line = QFontMetrics(self.font()).height()
        return max(4, min(self.top, int((self.height() - 70) / (1.6 * line))))

    def resizeEvent(self, ev: QResizeEvent) -> None:  # noqa: N802 (Qt override)
        super().resizeEvent(ev)
        counts = self.__dict__.get("_counts")  # resized inside PlotWidget.__init__, before it is set
        if counts and self.rows_that_fit() != self._fits:
            self.set_counts(counts)

    def set_counts(self, counts: dict[str, dict[str, int]]) -> None:
        self._counts = counts
        self._fits = self.rows_that_fit()
        for bar in self.bars:
            plot_item(self).removeItem(bar)
        self.bars.clear()
        self.legend.clear()
        totals: dict[str, int] = {}
        for per_step in counts.values():
            for prim, n in per_step.items():
                totals[prim] = totals.get(prim, 0) + n
        ranked = sorted(totals, key=lambda p: (-totals[p], p))
        shown, rest = ranked[: self._fits - 1], ranked[self._fits - 1:]
        if len(rest) == 1:
            shown, rest = ranked, []
        self.categories = shown + (["(other)"] if rest else [])
        n_steps = max(len(counts), 1)
        height = 0.8 / n_steps
        for k, (step, per_step) in enumerate(counts.items()):
            values = [per_step.get(p, 0) for p in shown]
            if rest:
                values.append(sum(per_step.get(p, 0) for p in rest))
            ys = [len(self.categories) - 1 - i - 0.4 + height * (k + 0.5) for i in range(len(values))]
            bar = pg.BarGraphItem(x0=0, y=ys, width=values, height=height * 0.95,
                                  brush=COLORS[k % len(COLORS)], pen=None)
            plot_item(self).addItem(bar)
            self.legend.addItem(bar, step)
            self.bars.append(bar)
        ticks = [(len(self.categories) - 1 - i, p) for i, p in enumerate(self.categories)]
        axis = plot_item(self).getAxis("left")
        axis.setTicks([ticks])
        # pyqtgraph drops tick text wider than the axis: size the axis to the longest name.
        metrics = QFontMetrics(axis.style.get("tickFont") or axis.font())
        width = max((metrics.horizontalAdvance(p) for p in self.categories), default=40)
        axis.setWidth(width + 16)
        plot_item(self).getViewBox().setYRange(-0.6, len(self.categories) - 0.4, padding=0)
        most = max((max(per.values(), default=0) for per in counts.values()), default=0)
        plot_item(self).getViewBox().setXRange(0, max(most, 1) * 1.05, padding=0)
