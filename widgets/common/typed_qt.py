"""Typed access where PySide6's stubs or pyqtgraph's untyped code say less than the objects are: a
``PlotWidget``'s plot item (typed ``PlotItem | None``: ``None`` only while its ``__init__`` runs and after its
``close()``), a ``PlotItem``'s grid layout (pyqtgraph's ``layout`` attribute hides Qt's ``layout()``), the
pyqtgraph scene of a ``GraphicsView`` (typed as Qt's ``QGraphicsScene``, without pyqtgraph's mouse signals),
and a widget named as it is built (PySide6 takes ``objectName=`` and the other inherited Qt properties as
keywords of a constructor, but its stubs list only the class's own)."""

from __future__ import annotations

import pyqtgraph as pg  # noqa: TID253 - a heavy module: its users import it inside functions
from pyqtgraph.GraphicsScene import GraphicsScene  # noqa: TID253 - a heavy module
from PySide6.QtCore import QObject
from PySide6.QtWidgets import QGraphicsGridLayout, QGraphicsWidget


def plot_item(plot: pg.PlotWidget) -> pg.PlotItem:
    """``plot.getPlotItem()``: never None from the end of the PlotWidget's ``__init__`` to its ``close()``."""
    item = plot.getPlotItem()
    assert item is not None, "a PlotWidget holds a PlotItem from its __init__ to its close()"
    return item


def plot_grid(item: pg.PlotItem) -> QGraphicsGridLayout:
    """The grid ``item`` lays its parts out in (rows: 0 title, 1 top axis, 2 view box, 3 bottom axis):
    pyqtgraph keeps it in an attribute ``layout``, which hides Qt's ``QGraphicsWidget.layout()`` that returns
    it."""
    grid = QGraphicsWidget.layout(item)
    assert isinstance(grid, QGraphicsGridLayout), "a PlotItem lays its parts out in a QGraphicsGridLayout"
    return grid


def graphics_scene(view: pg.GraphicsView) -> GraphicsScene:
    """``view.scene()``: a pyqtgraph GraphicsView draws in its own ``GraphicsScene`` (``sigMouseMoved``,
    ``sigMouseClicked``)."""
    scene = view.scene()
    assert isinstance(scene, GraphicsScene), "a pyqtgraph GraphicsView builds its own GraphicsScene"
    return scene


def named[Q: QObject](obj: Q, name: str) -> Q:
    """``obj`` with its ``objectName`` set to ``name`` (for ``QLabel(text, objectName=name)``, which runs but
    which PySide6's stubs reject)."""
    obj.setObjectName(name)
    return obj
