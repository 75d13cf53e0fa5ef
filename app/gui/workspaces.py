"""Workspaces: full-window arrangements of the main window, switched by the tabs at the right of the menu bar
or by Ctrl+1 (Run), Ctrl+2 (Inspect) and Ctrl+3 (Code).

- **Run**: the prompt and token stream beside the latency plot, the controls dock at the left and the bottom
  docks (What JAX sees, Demo kit, Compile log) under them — the arrangement the user left, kept exactly.
- **Inspect**: "What JAX sees" (the IR tabs, Source map with its dataflow graph and prefill-vs-decode diff,
  Profile) fills the window below the tabs; every dock is hidden. At 1280×720 the jaxpr view shows 30+ lines.
- **Code**: the user's program in an editor (with its run controls) at the left; at the right the IR card
  above the latency plot — edit, Ctrl+Enter, and see the jaxpr and the compile spike beside the code. Every
  dock is hidden, as in Inspect: a workspace of its own rather than the prompt's place in Run, because the
  editor needs the height (a 1280×720 screen shows ~30 lines of code beside ~20 of jaxpr) and a program has
  no prompt, token stream or generation settings to show.

Switching moves the one IR card between the "What JAX sees" dock and the Inspect or Code page (and the one
plot between the Run and Code pages: there is one set of views, their links, scroll positions and selections
are kept) and remembers which docks were shown, so going back to Run puts every dock back where it was. GUI
thread only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QEvent, QObject, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QScrollArea,
    QSizePolicy,
    QStackedWidget,
    QTabBar,
    QVBoxLayout,
    QWidget,
)

from app.gui.context import WindowContext, WorkspaceParts
from app.gui.layout import layout_of
from app.gui.presentation import DockState, dock_state, restore_docks
from widgets.common.splitters import splitter
from widgets.common.typed_qt import named

if TYPE_CHECKING:
    from app.gui.panels.demo.kit import DemoKit

#: The workspaces, in tab order, with their shortcut and what they hold (the tab's tool tip).
WORKSPACES = (
    ("Run", "Ctrl+1", "Prompt, token stream, latency plot, race and compile log"),
    ("Inspect", "Ctrl+2", "What JAX sees: jaxpr, StableHLO, optimized HLO, Source map and graph, Profile — full window"),
    ("Code", "Ctrl+3", "Your own program: the editor beside its jaxpr and the latency plot (File ▸ Examples)"),
)
RUN, INSPECT, CODE = (name for name, _, _ in WORKSPACES)
#: The plot's share of the Code workspace's height under the IR views (issue 55: at 1280×720 half of it left the
#: plot 139 px of drawing area under its key and legend; the rule is ≥ 180 px)
PLOT_SHARE = 0.56


class Workspaces(QObject):
    """Puts a tab bar in the menu bar's corner and a page stack in the central area; switches workspaces.

    Signals: ``changed(str)`` — the workspace now shown (GUI thread)."""

    changed = Signal(str)

    def __init__(self, ctx: WindowContext, demo: DemoKit, parts: WorkspaceParts) -> None:
        """``demo``: the demo kit, whose presentation mode hides the tab bar and is left for Inspect and Code;
        ``parts``: what the workspaces move (the IR card, its dock and tabs, the plot's card, the main area)."""
        super().__init__(ctx.host)
        window = ctx.host
        self.host, self.parts, self.demo = ctx.host, parts, demo
        ui = parts
        self.tab_bar = named(QTabBar(), "workspaceTabs")
        self.tab_bar.setDrawBase(False)
        self.tab_bar.setExpanding(False)
        self.stack = named(QStackedWidget(), "workspaceStack")
        run_page = window.takeCentralWidget()  # the main area: prompt and stream beside the plot
        assert run_page is not None, "WindowParts set the main area as the central widget"
        self.inspect_page = named(QWidget(), "inspectPage")
        self._inspect_layout = QVBoxLayout(self.inspect_page)
        self._inspect_layout.setContentsMargins(0, 0, 0, 0)
        self.code_page = named(QWidget(), "codePage")
        code_layout = QVBoxLayout(self.code_page)
        code_layout.setContentsMargins(4, 2, 4, 2)
        #: editor (added by app.gui.panels.programs.wiring) | IR card above the plot
        self.code_right = splitter(Qt.Orientation.Vertical, name="codeRightSplit")
        self.code_split = splitter(Qt.Orientation.Horizontal, self.code_right, name="codeSplit")
        code_layout.addWidget(self.code_split)
        self.code_split.installEventFilter(self)  # a resized Code page keeps the IR tab titles whole
        self.stack.addWidget(run_page)
        self.stack.addWidget(self.inspect_page)
        self.stack.addWidget(self.code_page)
        self._shown = RUN
        self._code_sized = False
        self._top_state: QByteArray | None = None  # the main area's splitter while Code borrows the plot
        self._plot_hidden = False  # the plot was hidden in Run when Code borrowed it (the trade-off in its place)
        self._plot_policy = QSizePolicy()  # the plot card's size policy (its stretch) in Run, while Code borrows it
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
        self._fit_stack()
        scroll = ui.ir_dock.widget()
        assert isinstance(scroll, QScrollArea), "a bottom dock's content scrolls (app.gui.layout.dock_widget)"
        self._ir_scroll = scroll
        self._docks_shown: dict[QDockWidget, bool] = {}
        self._dock_sizes: DockState | None = None
        self._card_margins = layout_of(ui.ir_card).contentsMargins()
        self.tab_bar.currentChanged.connect(self._on_tab)
        demo.presentation.hide.append(self.tab_bar)  # presenting: the plot gets the room
        for action in demo.dock_actions:  # the docks live in Run: their keys go there rather than cover a workspace
            action.before_show = self._to_run

    def _to_run(self) -> None:
        if self.current() != RUN:
            self.show(RUN)

    def current(self) -> str:
        """The workspace shown: ``"Run"``, ``"Inspect"`` or ``"Code"``."""
        return WORKSPACES[self.tab_bar.currentIndex()][0]

    def names(self) -> list[str]:
        return [name for name, _, _ in WORKSPACES]

    @Slot(str)
    def show(self, name: str) -> None:
        """Show workspace ``name`` (``"Run"``, ``"Inspect"`` or ``"Code"``). Raises ``ValueError`` for another
        name."""
        if name not in self.names():
            raise ValueError(f"no workspace {name!r}: one of {', '.join(self.names())}")
        self.tab_bar.setCurrentIndex(self.names().index(name))

    @Slot(int)
    def _on_tab(self, index: int) -> None:
        name = WORKSPACES[index][0]
        old = self._shown
        if name != old:
            if old == RUN:
                self._hide_docks()
            else:
                self._give_back(old)
            if name == RUN:
                self.stack.setCurrentIndex(0)
                self._fit_stack()  # before the docks come back: their width adds to the page's minimum
                self._show_docks()
            else:
                self._borrow(name)
                self.stack.setCurrentIndex(index)
                self._fit_stack()
            self._shown = name
        self.changed.emit(name)

    def _fit_stack(self) -> None:
        """Only the shown page's minimum size counts: a QStackedWidget's minimum is the largest of all its pages'
        (``QStackedLayout::minimumSize``), so after a visit to Code (editor beside the IR views and the plot, laid
        out at 1,057 px) the Run workspace's window could not shrink below 1,446 px on a 1,280 px screen (issue 29,
        flaw 1). Hidden pages get an Ignored size policy (``qSmartMinSize`` then counts them as 0)."""
        current = self.stack.currentIndex()
        for i in range(self.stack.count()):
            policy = QSizePolicy.Policy.Preferred if i == current else QSizePolicy.Policy.Ignored
            page = self.stack.widget(i)
            assert page is not None, "i < count()"
            page.setSizePolicy(policy, policy)
            page.updateGeometry()
        self.stack.updateGeometry()

    def _hide_docks(self) -> None:
        win = self.host
        if self.demo.presentation.is_on():  # presenting is about the plot: leave it first
            self.demo.presentation_action.setChecked(False)
        docks = win.findChildren(QDockWidget)
        self._dock_sizes = dock_state(win)
        self._docks_shown = {d: not d.isHidden() for d in docks}
        for dock in docks:
            dock.hide()

    def _show_docks(self) -> None:
        win = self.host
        for dock, shown in self._docks_shown.items():
            dock.setVisible(shown)
        if self._dock_sizes is not None:
            restore_docks(win, self._dock_sizes)
        self._docks_shown, self._dock_sizes = {}, None

    def _borrow(self, name: str) -> None:
        """Move the IR card (and for Code the plot) onto workspace ``name``'s page."""
        ui = self.parts
        card = self._ir_scroll.takeWidget()
        assert card is not None, "the IR card is in its dock's scroll area while Run shows"
        self._card_margins = layout_of(card).contentsMargins()
        layout_of(card).setContentsMargins(2, 2, 2, 2)  # the window's edge is the frame: every line to the jaxpr
        if name == INSPECT:
            self._inspect_layout.addWidget(card)
        else:
            self._top_state, self._plot_hidden = ui.top_split.saveState(), ui.plot_card.isHidden()
            self._plot_policy = QSizePolicy(ui.plot_card.sizePolicy())  # its stretch in Run's main area
            self.code_right.insertWidget(0, card)
            self.code_right.insertWidget(1, ui.plot_card)
            # a resize keeps both parts' shares (issue 55: the walk, seed 5 at 1920x1080: the plot kept Run's
            # stretch factor 3 against the IR card's 0 and took a 241 px shrink alone, 56 % → 44 % of the column)
            for index in range(2):
                self.code_right.setStretchFactor(index, 0)
            ui.plot_card.show()
            if not self._code_sized:  # first time, once laid out: editor 45 %, the jaxpr above the plot
                self._code_sized = True
                QTimer.singleShot(0, self._size_code)
            else:  # later visits: the plot keeps room for its keys and points (a big tab took it: 68 px seen)
                QTimer.singleShot(0, self._keep_plot_room)
        card.show()

    @Slot()
    def _size_code(self) -> None:
        """The Code workspace's first sizes: editor 45 % of the width; the IR views and the plot half the height
        each (the plot needs room for its keys, its points and its legend)."""
        QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
        width, height = max(1, self.code_split.width()), max(1, self.code_right.height())
        self.code_split.setSizes([int(width * 0.45), int(width * 0.55)])
        self.code_right.setSizes([height - int(height * PLOT_SHARE), int(height * PLOT_SHARE)])
        self._keep_tab_room()

    #: the editor's least share of the Code page's width when the IR card widens for its tab titles
    EDITOR_SHARE = 0.38

    @Slot()
    def _keep_tab_room(self) -> None:
        """The IR card beside the editor is at least as wide as its tab titles (issue 37: at 1280×720 the tabs
        scrolled and the last read "Pas"), as long as the editor keeps :attr:`EDITOR_SHARE` of the width; a
        narrower card only when the window is too narrow for both. Run on the first sizing, on later visits and
        when the Code page is resized; a handle the user drags stays where it is left."""
        sizes = self.code_split.sizes()
        bar = self.parts.ir_tabs.tabs.tabBar()
        if self._shown != CODE or len(sizes) < 2 or not bar.isVisible():
            return
        total = sum(sizes)
        chrome = max(0, sizes[1] - bar.width())  # the card's margins and frame around its tab bar
        need = bar.sizeHint().width() + chrome + 2  # every tab whole (the hint of a scrolling bar is its tabs' sum)
        right = min(need, total - int(total * self.EDITOR_SHARE))
        if sizes[1] < right:
            self.code_split.setSizes([total - right, right])

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt override)
        if watched is self.code_split and event.type() == QEvent.Type.Resize and self._code_sized:
            QTimer.singleShot(0, self._keep_tab_room)  # after the splitter has shared the new width out
        return False

    @Slot()
    def _keep_plot_room(self) -> None:
        """In the Code workspace the plot under the IR views keeps at least 40 % of the height (random-walk
        journeys: after a sweep and a Passes visit it was 68 px tall)."""
        sizes = self.code_right.sizes()
        total = sum(sizes)
        if len(sizes) >= 2 and total > 0 and sizes[1] < PLOT_SHARE * total - 4:
            self.code_right.setSizes([total - int(total * PLOT_SHARE), int(total * PLOT_SHARE)])
        self._keep_tab_room()

    def _give_back(self, name: str) -> None:
        ui = self.parts
        card = ui.ir_card
        if name == INSPECT:
            self._inspect_layout.removeWidget(card)
        else:
            ui.top_split.insertWidget(1, ui.plot_card)
            ui.plot_card.setSizePolicy(self._plot_policy)  # Run's stretch again: it shares a resize as before
            # back as Run had it: hidden where a settings race's trade-off took its place (issue 55: the walk,
            # seed 1 at 1024x600: the plot and the trade-off side by side, Run and Stop squeezed, after Code)
            ui.plot_card.setHidden(self._plot_hidden)
            if self._top_state is not None:
                ui.top_split.restoreState(self._top_state)
            self.demo.show_stage()  # a settings race meanwhile may want the trade-off in the plot's place
        layout_of(card).setContentsMargins(self._card_margins)
        self._ir_scroll.setWidget(card)

    def docks_shown_in_run(self) -> dict[QDockWidget, bool]:
        """While Inspect or Code shows: which docks Run will show again (empty in Run)."""
        return dict(self._docks_shown)

