"""Instruction and fusion counts along XLA's pass pipeline: one point per snapshot (the module before
optimization, after each pass that changed it, the final module), instructions on the left axis and fusions
on the right one, a vertical line at the selected snapshot. Click near a point to select its snapshot.

Plain data in: :meth:`PassChart.set_snapshots` takes dicts with ``index``, ``pass``, ``pipeline``,
``n_instructions`` and ``n_fusions`` (``app.core.passes.model.Snapshot.summary``). Signal (GUI thread):
``snapshotClicked(int)`` with the clicked snapshot's dump index.
"""

from __future__ import annotations

from typing import Any

import pyqtgraph as pg  # noqa: TID253 - a heavy module: its users import it inside functions
from PySide6.QtCore import QPointF, Signal
from PySide6.QtWidgets import QWidget

from widgets.common.typed_qt import graphics_scene, plot_item

INSTR_COLOR = "#1565c0"
FUSION_COLOR = "#ea580c"


class PassChart(pg.PlotWidget):
    """The counts chart; x is the snapshot's position in pipeline order."""

    snapshotClicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, background="w", enableMenu=False)
        self.setObjectName("passChart")
        item = plot_item(self)
        item.hideButtons()
        item.getViewBox().setMouseEnabled(x=False, y=False)
        item.showGrid(x=False, y=True, alpha=0.15)
        item.getAxis("left").setTextPen(INSTR_COLOR)
        item.getAxis("left").setWidth(44)
        item.getAxis("bottom").setStyle(showValues=False)
        item.setLabel("bottom", "snapshots in pipeline order")
        item.showAxis("right")
        item.getAxis("right").setTextPen(FUSION_COLOR)
        item.getAxis("right").setWidth(34)
        self.setTitle(f"<span style='font-size:8pt'><span style='color:{INSTR_COLOR}'>━ instructions</span>"
                      f" &nbsp; <span style='color:{FUSION_COLOR}'>━ fusions</span></span>")
        self._fusion_box = pg.ViewBox(enableMenu=False)
        self._fusion_box.setMouseEnabled(x=False, y=False)
        item.scene().addItem(self._fusion_box)
        item.getAxis("right").linkToView(self._fusion_box)
        self._fusion_box.setXLink(item)
        item.getViewBox().sigResized.connect(self._sync_boxes)
        self._instr = item.plot([], [], pen=pg.mkPen(INSTR_COLOR, width=2), symbol="o", symbolSize=4,
                                symbolBrush=INSTR_COLOR, symbolPen=None)
        self._fusions = pg.PlotDataItem([], [], pen=pg.mkPen(FUSION_COLOR, width=2), symbol="s", symbolSize=4,
                                        symbolBrush=FUSION_COLOR, symbolPen=None)
        self._fusion_box.addItem(self._fusions)
        self._marker = pg.InfiniteLine(angle=90, pen=pg.mkPen("#6b7280", width=1, style=pg.QtCore.Qt.PenStyle.DashLine))
        item.addItem(self._marker, ignoreBounds=True)
        self._marker.hide()
        self._snapshots: list[dict[str, Any]] = []
        graphics_scene(self).sigMouseClicked.connect(self._on_click)

    def _sync_boxes(self) -> None:
        self._fusion_box.setGeometry(plot_item(self).getViewBox().sceneBoundingRect())

    # -- public API ---------------------------------------------------------------------------------
    def set_snapshots(self, snapshots: list[dict[str, Any]]) -> None:
        self._snapshots = list(snapshots)
        xs = list(range(len(snapshots)))
        self._instr.setData(xs, [float(s.get("n_instructions") or 0) for s in snapshots])
        fusions = [float(s.get("n_fusions") or 0) for s in snapshots]
        self._fusions.setData(xs, fusions)
        item = plot_item(self)
        item.getViewBox().setXRange(-0.5, max(len(xs) - 0.5, 0.5), padding=0)
        self._fusion_box.setYRange(0, max(fusions, default=1.0) * 1.1 or 1.0, padding=0)
        item.getViewBox().enableAutoRange(axis="y")
        self._marker.hide()
        self._sync_boxes()

    def select(self, index: int) -> None:
        """Mark snapshot ``index`` (dump index)."""
        pos = self.position_of(index)
        if pos is None:
            self._marker.hide()
            return
        self._marker.setValue(pos)
        self._marker.show()

    def marked(self) -> int | None:
        """The dump index marked, or None."""
        if not self._marker.isVisible() or not self._snapshots:
            return None
        return self._snapshots[int(round(self._marker.getXPos()))].get("index")  # a vertical line's value()

    def position_of(self, index: int) -> int | None:
        return next((i for i, s in enumerate(self._snapshots) if s.get("index") == index), None)

    def series(self) -> tuple[list[float], list[float]]:
        """(instructions, fusions) as drawn."""
        _, ys = self._instr.getData()
        _, fs = self._fusions.getData()
        return [float(v) for v in (ys if ys is not None else [])], [float(v) for v in (fs if fs is not None else [])]

    def click_at(self, position: int) -> None:
        """Act as if the user clicked snapshot ``position`` (tests)."""
        if 0 <= position < len(self._snapshots):
            self.snapshotClicked.emit(int(self._snapshots[position]["index"]))

    # -- internals ----------------------------------------------------------------------------------
    def _on_click(self, event: Any) -> None:
        box = plot_item(self).getViewBox()
        if not self._snapshots or not box.sceneBoundingRect().contains(event.scenePos()):
            return
        x = box.mapSceneToView(QPointF(event.scenePos())).x()
        self.click_at(int(round(min(max(x, 0), len(self._snapshots) - 1))))
