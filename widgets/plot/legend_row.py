"""A plot's legend in a row of its own under the x axis: it never covers a data point and is never clipped.

pyqtgraph anchors a ``LegendItem`` inside the view box, over the data. Here a placeholder widget takes row
4 of the ``PlotItem``'s layout (under the bottom axis), the legend is its child, and :func:`fit_legend_row`
lays the entries out in as many columns as fit the width and gives the row the legend's height.
"""

from __future__ import annotations

from typing import Any

import pyqtgraph as pg  # noqa: TID253 - a heavy module: its users import it inside functions

from widgets.common.typed_qt import plot_grid

LEGEND_ROW = 4  # PlotItem layout rows: 0 title, 1 top axis, 2 view box, 3 bottom axis
LEGEND_INSET = 4.0  # px from the plot item's left edge to the legend's


def add_legend_row(item: pg.PlotItem, **legend_opts: Any) -> tuple[pg.LegendItem, pg.GraphicsWidget]:
    """A legend under ``item``'s x axis and the placeholder that holds its row: ``(legend, row)``. The row spans
    the view box's column; the legend starts :data:`LEGEND_INSET` px from the plot item's left edge (under the
    y axis too: its names get the axis' width)."""
    row = pg.GraphicsWidget()
    row.setMinimumHeight(0)
    row.setMaximumHeight(0)
    plot_grid(item).addItem(row, LEGEND_ROW, 1)
    legend = pg.LegendItem(offset=None, **legend_opts)
    legend.setParentItem(row)  # no pyqtgraph anchor: it outlives its parent's deletion and then fails

    row.geometryChanged.connect(lambda: align_legend(legend, row))  # wherever the row is laid out
    align_legend(legend, row)
    return legend, row


def align_legend(legend: pg.LegendItem, row: pg.GraphicsWidget) -> None:
    """Put ``legend`` :data:`LEGEND_INSET` px from the plot item's left edge (under the y axis too), 2 px
    under the x axis; again after every resize of the legend (pyqtgraph's ``updateSize`` puts it at 0, 0)."""
    try:
        legend.setPos(LEGEND_INSET - row.pos().x(), 2)
    except RuntimeError:  # the plot is being deleted: its row or legend is gone already
        pass


def fit_legend_row(legend: pg.LegendItem, row: pg.GraphicsWidget, room: float | None = None,
                   columns: int | None = None) -> None:
    """Lay ``legend`` out in ``columns`` columns, or the most whose width fits ``room`` px (one at least), and
    give ``row`` its height (0 when it has no entry)."""
    n = len(legend.items)
    if columns is None:
        columns = 1
        for c in range(n, 0, -1):
            if legend.columnCount != c:
                legend.setColumnCount(c)
                legend.updateSize()
            if room is None or legend.boundingRect().width() <= room:
                columns = c
                break
    if legend.columnCount != columns:
        legend.setColumnCount(columns)
        legend.updateSize()
    align_legend(legend, row)
    height = legend.boundingRect().height() + 6 if n else 0
    if abs(row.maximumHeight() - height) > 0.5:
        row.setMinimumHeight(height)
        row.setMaximumHeight(height)
