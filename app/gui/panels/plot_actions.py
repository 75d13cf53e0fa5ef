"""The latency plot's context menu and View actions: export, copy to the clipboard, clear, reset zoom, and how
many runs the plot keeps."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QPoint, Qt, Slot
from PySide6.QtGui import QAction, QActionGroup, QGuiApplication
from PySide6.QtWidgets import QMenu

from app.gui.context import WindowContext
from widgets.plot.plot_export import PNG_SCALE, render_image

if TYPE_CHECKING:
    from widgets.plot.latency_plot import LatencyPlot

RUN_CAPS = (1, 2, 3, 5, 8)  # choices of "Runs on the plot"


class PlotActions(QObject):
    """Right-click on the plot opens :meth:`menu`; "Clear plot" also forgets the session's runs, so the
    exports and the race table never list a run the plot no longer shows. GUI thread only."""

    def __init__(self, ctx: WindowContext, plot: LatencyPlot, exports: list[QAction]) -> None:
        """``plot``: the latency plot whose menu this is; ``exports``: the plot's export actions shown first in its
        menu (the demo kit's PNG and SVG)."""
        super().__init__(ctx.host)
        self.host = ctx.host
        self.plot = plot
        self.session = ctx.session
        self.exports = exports
        self.copy_action = self._action("&Copy plot", self.copy, "Ctrl+Shift+C")
        self.clear_action = self._action("C&lear plot", self.clear)
        self.reset_action = self._action("&Reset zoom", self.plot.reset_zoom)
        self.settings = ctx.settings
        self.runs_group = QActionGroup(self)
        for n in RUN_CAPS:
            action = QAction(f"Keep the last {n} run{'s' if n > 1 else ''}", self, checkable=True)
            action.setToolTip("A race counts as one run: its lanes stay together")
            action.setData(n)
            self.runs_group.addAction(action)
        self.runs_group.triggered.connect(lambda action: self.set_max_runs(action.data()))
        self.set_max_runs(self.settings.plot_runs if self.settings.plot_runs in RUN_CAPS else 5)
        self.plot.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.plot.customContextMenuRequested.connect(self.show_menu)
        self.session.events.busyChanged.connect(self._on_busy)

    def _action(self, text: str, slot: Any, shortcut: str = "") -> QAction:
        action = QAction(text, self.host)
        if shortcut:
            action.setShortcut(shortcut)
        action.triggered.connect(slot)
        self.host.addAction(action)
        return action

    def menu(self) -> QMenu:
        """The context menu (built anew each time; its actions are this object's and the demo kit's)."""
        menu = QMenu(self.plot)
        menu.setObjectName("plotMenu")
        for action in (*self.exports, self.copy_action, None, self.clear_action, self.reset_action):
            menu.addSeparator() if action is None else menu.addAction(action)
        runs = menu.addMenu("Runs on the plot")
        runs.setObjectName("plotRunsMenu")
        runs.addActions(self.runs_group.actions())
        return menu

    def set_max_runs(self, n: int) -> None:
        """Keep the last ``n`` runs on the plot and in the session (exports, race table), a race counting as one
        (:func:`app.core.session.runs.retain`); remembered."""
        self.session.set_max_runs(n)
        self.plot.retain([r.run_id for r in self.session.runs])
        self.settings.plot_runs = n
        for action in self.runs_group.actions():
            action.setChecked(action.data() == n)

    @Slot(QPoint)
    def show_menu(self, pos: QPoint) -> None:
        self.menu().popup(self.plot.mapToGlobal(pos))

    @Slot()
    def copy(self) -> None:
        """The plot as an image on the clipboard, rendered at twice its on-screen size (for slides)."""
        self.plot.redraw()
        QGuiApplication.clipboard().setImage(render_image(self.plot, PNG_SCALE))

    @Slot()
    def clear(self) -> None:
        if not self.session.busy:
            self.session.clear_runs()
            self.plot.retain([r.run_id for r in self.session.runs])

    def _on_busy(self, busy: bool) -> None:
        self.clear_action.setEnabled(not busy)
