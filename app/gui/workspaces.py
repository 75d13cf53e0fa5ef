"""Workspaces: full-window arrangements of the main window, switched by the tabs at the right of the menu bar
or by Ctrl+1 (Run) and Ctrl+2 (Inspect).

- **Run**: the prompt and token stream beside the latency plot, the controls dock at the left and the bottom
  docks (What JAX sees, Demo kit, Compile log) under them — the arrangement the user left, kept exactly.
- **Inspect**: "What JAX sees" (the IR tabs, Source map with its dataflow graph and prefill-vs-decode diff,
  Profile) fills the window below the tabs; every dock is hidden. At 1280×720 the jaxpr view shows 30+ lines.

Switching moves the one IR card between the "What JAX sees" dock and the Inspect page (there is one set of
IR views: their links, scroll positions and selections are kept) and remembers which docks were shown, so
going back to Run puts every dock back where it was. GUI thread only.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QScrollArea, QStackedWidget, QTabBar, QVBoxLayout, QWidget

from app.gui.presentation import dock_state, restore_docks

#: The workspaces, in tab order, with their shortcut and what they hold (the tab's tool tip).
WORKSPACES = (
    ("Run", "Ctrl+1", "Prompt, token stream, latency plot, race and compile log"),
    ("Inspect", "Ctrl+2", "What JAX sees: jaxpr, StableHLO, optimized HLO, Source map and graph, Profile — full window"),
)
RUN, INSPECT = (name for name, _, _ in WORKSPACES)


class Workspaces(QObject):
    """Puts a tab bar in the menu bar's corner and a page stack in the central area; switches workspaces.

    Signals: ``changed(str)`` — the workspace now shown (GUI thread)."""

    changed = Signal(str)

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.window = window
        ui = window.ui
        self.tab_bar = QTabBar(objectName="workspaceTabs")
        self.tab_bar.setDrawBase(False)
        self.tab_bar.setExpanding(False)
        self.stack = QStackedWidget(objectName="workspaceStack")
        run_page = window.takeCentralWidget()  # the main area: prompt and stream beside the plot
        self.inspect_page = QWidget(objectName="inspectPage")
        self._inspect_layout = QVBoxLayout(self.inspect_page)
        self._inspect_layout.setContentsMargins(0, 0, 0, 0)
        self.stack.addWidget(run_page)
        self.stack.addWidget(self.inspect_page)
        self.actions: dict[str, QAction] = {}
        for i, (name, keys, tip) in enumerate(WORKSPACES):
            self.tab_bar.addTab(name)
            self.tab_bar.setTabToolTip(i, f"{tip} ({keys})")
            action = QAction(f"{name} workspace", window)
            action.setShortcut(QKeySequence(keys))
            action.triggered.connect(lambda _=False, n=name: self.show(n))
            window.addAction(action)  # works with the menu bar hidden
            self.actions[name] = action
        # the tabs sit in the menu bar's corner: every pixel under it goes to the workspace
        window.menuBar().setCornerWidget(self.tab_bar, Qt.Corner.TopRightCorner)
        window.setCentralWidget(self.stack)
        self._ir_scroll: QScrollArea = ui.ir_dock.widget()
        self._docks_shown: dict[QDockWidget, bool] = {}
        self._dock_sizes: dict[str, Any] | None = None
        self._card_margins = ui.ir_card.layout().contentsMargins()
        self.tab_bar.currentChanged.connect(self._on_tab)
        window.demo.presentation.hide.append(self.tab_bar)  # presenting: the plot gets the room

    def current(self) -> str:
        """The workspace shown: ``"Run"`` or ``"Inspect"``."""
        return WORKSPACES[self.tab_bar.currentIndex()][0]

    def names(self) -> list[str]:
        return [name for name, _, _ in WORKSPACES]

    @Slot(str)
    def show(self, name: str) -> None:
        """Show workspace ``name`` (``"Run"`` or ``"Inspect"``). Raises ``ValueError`` for another name."""
        if name not in self.names():
            raise ValueError(f"no workspace {name!r}: one of {', '.join(self.names())}")
        self.tab_bar.setCurrentIndex(self.names().index(name))

    @Slot(int)
    def _on_tab(self, index: int) -> None:
        name = WORKSPACES[index][0]
        if name == INSPECT and self.stack.currentIndex() == 0:
            self._enter_inspect()
        elif name == RUN and self.stack.currentIndex() == 1:
            self._leave_inspect()
        self.changed.emit(name)

    def _enter_inspect(self) -> None:
        win = self.window
        presentation = win.demo.presentation
        if presentation.is_on():  # presenting is about the plot: leave it first
            win.demo.presentation_action.setChecked(False)
        docks = win.findChildren(QDockWidget)
        self._dock_sizes = dock_state(win)
        self._docks_shown = {d: not d.isHidden() for d in docks}
        card = self._ir_scroll.takeWidget()
        self._card_margins = card.layout().contentsMargins()
        card.layout().setContentsMargins(2, 2, 2, 2)  # the window's edge is the frame: every line to the jaxpr
        self._inspect_layout.addWidget(card)
        card.show()
        for dock in docks:
            dock.hide()
        self.stack.setCurrentIndex(1)

    def _leave_inspect(self) -> None:
        win = self.window
        card = win.ui.ir_card
        self._inspect_layout.removeWidget(card)
        card.layout().setContentsMargins(self._card_margins)
        self._ir_scroll.setWidget(card)
        self.stack.setCurrentIndex(0)
        for dock, shown in self._docks_shown.items():
            dock.setVisible(shown)
        if self._dock_sizes is not None:
            restore_docks(win, self._dock_sizes)
        self._docks_shown, self._dock_sizes = {}, None

    def docks_shown_in_run(self) -> dict[QDockWidget, bool]:
        """While Inspect shows: which docks Run will show again (empty in Run)."""
        return dict(self._docks_shown)

