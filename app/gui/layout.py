"""Builds the main window's widgets and layout (no behaviour: :mod:`app.gui.window` wires it).

The layout is designed for 1280×720 first:

- the **main area** (the central widget) is the prompt and token stream beside the latency plot;
- the **controls** (model, generation settings, devices) are a left dock whose content scrolls, so a short
  window scrolls it instead of squashing it, and View ▸ Controls (Ctrl+B) collapses it;
- **inspection** ("What JAX sees": the IR tabs, Source map, Profile) is a bottom dock, tabbed with the demo
  kit's docks (:mod:`app.gui.panels.demo.kit`): one of them shows at a time, and each can be floated or docked
  elsewhere.

:class:`DockLayout` gives the default sizes (a share of the window, so 1920×1080 and 4K use the room),
saves and restores the arrangement, and resets it (View ▸ Reset layout).
"""

from __future__ import annotations

import base64

from PySide6.QtCore import QByteArray, QEvent, QObject, QPoint, QSize, Qt, QTimer
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QDockWidget,
    QFrame,
    QLabel,
    QLayout,
    QMainWindow,
    QPushButton,
    QScrollArea,
    QScrollBar,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.core.mode_catalog import CATALOG, DEFAULT_MODE, MODE_NAMES
from app.core.report.columns import CALL_COLUMNS
from app.core.settings import DTYPES
from widgets.common.busy_indicator import BusyIndicator
from widgets.common.splitters import splitter
from widgets.devices.device_panel import DevicePanel
from widgets.ir.ir_tabs import IRTabs
from widgets.plot.latency_plot import LatencyPlot
from widgets.run.generation_form import GenerationForm
from widgets.run.model_picker import ModelPicker
from widgets.run.prompt_editor import PromptEditor
from widgets.run.router_strip import RouterStrip
from widgets.run.stats_strip import StatsStrip
from widgets.run.token_view import TokenView

#: Bumped when the dock arrangement changes shape: a state saved by another version is then ignored.
LAYOUT_VERSION = 2
#: Default shares: the bottom docks' height and the plot's width in the main area.
BOTTOM_SHARE = 0.32
PLOT_SHARE = 0.62
SIDEBAR_WIDTH = 330


def _section(title: str) -> QLabel:
    label = QLabel(title.upper())
    label.setObjectName("sectionTitle")
    return label


def card(*widgets: QWidget, title: str | None = None, stretch_last: bool = False) -> QFrame:
    """A white rounded frame holding ``widgets`` one under the other, with an optional section title."""
    frame = QFrame()
    frame.setObjectName("card")
    box = QVBoxLayout(frame)
    box.setContentsMargins(10, 8, 10, 10)
    box.setSpacing(6)
    if title:
        box.addWidget(_section(title))
    for i, w in enumerate(widgets):
        box.addWidget(w, 1 if stretch_last and i == len(widgets) - 1 else 0)
    return frame


def card_title(frame: QFrame) -> QLabel:
    """The section title of a :func:`card` built with ``title``; AssertionError for a card built without one."""
    assert (label := frame.findChild(QLabel, "sectionTitle")) is not None, "the card was built without a title"
    return label


def layout_of(widget: QWidget) -> QLayout:
    """``widget.layout()`` of a widget that was given one when built (Qt's stubs allow None: a widget without)."""
    box = widget.layout()
    assert box is not None, f"{widget.objectName() or type(widget).__name__} was built with a layout"
    return box


class WheelGuard(QObject):
    """In ``scroll``, the wheel over a spin box or combo box without keyboard focus scrolls the area instead of
    changing the value (issue 37: scrolling the sidebar turned Max new tokens 1000 into 1008, silently); a click
    (or Tab) gives it focus, and then the wheel changes it as usual."""

    def __init__(self, scroll: QScrollArea) -> None:
        super().__init__(scroll)
        self.scroll = scroll

    def guard(self, content: QWidget) -> None:
        """Guard the spin and combo boxes inside ``content`` now."""
        for box in [*content.findChildren(QAbstractSpinBox), *content.findChildren(QComboBox)]:
            box.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # the wheel alone never focuses it
            box.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if (event.type() == QEvent.Type.Wheel and isinstance(watched, (QAbstractSpinBox, QComboBox))
                and not watched.hasFocus()):
            QApplication.sendEvent(self.scroll.verticalScrollBar(), event)
            return True
        return False


def scrolling(content: QWidget, name: str, both: bool = False) -> QScrollArea:
    """``content`` in a scroll area: vertical only and as wide as the content needs, or (``both``) in both
    directions. A scroll area smaller than its content scrolls, so the content keeps its minimum size; the
    wheel scrolls it even over an unfocused spin or combo box (:class:`WheelGuard`)."""
    scroll = QScrollArea()
    scroll.setObjectName(name)
    scroll.setWidget(content)
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QFrame.Shape.NoFrame)
    if not both:
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        content.ensurePolished()
        bar = scroll.verticalScrollBar().sizeHint().width()
        scroll.setMinimumWidth(content.minimumSizeHint().width() + bar)
    WheelGuard(scroll).guard(content)
    return scroll


def pinned_above(bar: QWidget, content: QWidget, name: str) -> QWidget:
    """``bar`` (a row of buttons) pinned above ``content`` in a scroll area named ``name``: a short dock scrolls
    the content, never the buttons, out of sight."""
    pane = QWidget()
    box = QVBoxLayout(pane)
    box.setContentsMargins(0, 0, 0, 0)
    box.setSpacing(4)
    box.addWidget(bar)
    box.addWidget(scrolling(content, name), 1)
    return pane


def keep_page_in_sight(tabs: QTabWidget, corner_px: int = 360) -> None:
    """When ``tabs`` shows another page, each scroll area around it scrolls as little as it takes to show the tab
    widget's top-left corner: its tab bar's height and ``corner_px`` of its width (a page's first column). A dock
    narrower than its content (its panel scrolls sideways) then shows the page just chosen, not the one beside,
    and a dock that shows that corner already does not move."""
    def axis(bar: QScrollBar, start: int, length: int, view: int) -> None:
        if length > view or start < bar.value():
            bar.setValue(start)
        elif start + length > bar.value() + view:
            bar.setValue(start + length - view)

    def scroll_to(_index: int) -> None:
        outer = tabs.parentWidget()
        while outer is not None:
            content = outer.widget() if isinstance(outer, QScrollArea) else None
            if isinstance(outer, QScrollArea) and content is not None:
                corner, view = tabs.mapTo(content, QPoint(0, 0)), outer.viewport().size()
                axis(outer.horizontalScrollBar(), corner.x(), min(tabs.width(), corner_px), view.width())
                axis(outer.verticalScrollBar(), corner.y(), tabs.tabBar().height(), view.height())
            outer = outer.parentWidget()

    tabs.currentChanged.connect(scroll_to)


def dock_widget(
    window: QMainWindow, title: str, name: str, widget: QWidget, area: Qt.DockWidgetArea
) -> QDockWidget:
    """A closable, movable, floatable dock named ``name`` added to ``window`` in ``area``. A bottom dock's
    content scrolls when the dock is shorter or narrower than the content's minimum size."""
    dock = QDockWidget(title, window)
    dock.setObjectName(name)
    dock.setWidget(widget if area != Qt.DockWidgetArea.BottomDockWidgetArea else scrolling(widget, f"{name}Scroll", True))
    features = QDockWidget.DockWidgetFeature
    dock.setFeatures(features.DockWidgetClosable | features.DockWidgetMovable | features.DockWidgetFloatable)
    window.addDockWidget(area, dock)
    return dock


class WindowParts:
    """Every widget of the main window, created and laid out into ``window``."""

    def __init__(self, window: QMainWindow) -> None:
        self.model_picker = ModelPicker()
        self.model_picker.combo.setMinimumContentsLength(15)  # the sidebar stays narrow (a window of ~1000 px)
        self.model_label = QLabel("no model loaded")
        self.model_label.setObjectName("modelLabel")
        self.model_label.setWordWrap(True)
        self.model_error = QLabel("")
        self.model_error.setObjectName("modelError")
        self.model_error.setWordWrap(True)
        self.model_error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.model_error.setVisible(False)
        self.model_warning = QLabel("")
        self.model_warning.setObjectName("modelWarning")
        self.model_warning.setWordWrap(True)
        self.model_warning.setVisible(False)
        self.form = GenerationForm(MODE_NAMES, {i.name: i.help for i in CATALOG}, DTYPES, DEFAULT_MODE)
        self.prompt = PromptEditor()
        self.device_panel = DevicePanel()
        self.stats = StatsStrip()
        self.tokens = TokenView()
        self.tokens.setObjectName("tokenView")
        self.router = RouterStrip()  # a mixture-of-experts run's experts per token (issue 42); hidden otherwise
        self.plot = LatencyPlot()
        self.plot.call_titles = {c.key: c.title for c in CALL_COLUMNS}
        self.ir_tabs = IRTabs()
        self.status_label = QLabel("Ready")
        self.status_label.setObjectName("statusLabel")
        self.status_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.busy = BusyIndicator()
        self.details_button = QPushButton("Details…")
        self.details_button.setObjectName("detailsButton")
        self.details_button.setFlat(True)
        self.details_button.setVisible(False)
        self._lay_out(window)

    def _sidebar(self) -> QScrollArea:
        sidebar = QFrame()
        sidebar.setObjectName("sidebar")
        side = QVBoxLayout(sidebar)
        side.setContentsMargins(8, 6, 8, 8)
        side.setSpacing(8)
        title = QLabel("torchax <b>playground</b>")
        title.setObjectName("appTitle")
        side.addWidget(title)
        side.addWidget(card(self.model_picker, self.model_label, self.model_warning, self.model_error, title="Model"))
        side.addWidget(card(self.form, title="Generation"))
        side.addWidget(card(self.device_panel, title="Devices"))
        side.addStretch(1)
        return scrolling(sidebar, "sidebarScroll")

    def _lay_out(self, window: QMainWindow) -> None:
        self.prompt_card = card(self.prompt, title="Prompt", stretch_last=True)
        self.token_card = card(self.stats, self.tokens, title="Token stream", stretch_last=True)
        layout_of(self.token_card).addWidget(self.router)
        self.plot_card = card(self.plot, title="Latency per call", stretch_last=True)
        # a panel is never squashed below its minimum size (not collapsible)
        self.stream_split = splitter(Qt.Orientation.Vertical, self.prompt_card, self.token_card, stretch=[0, 1],
                                     name="streamSplit")
        self.top_split = splitter(Qt.Orientation.Horizontal, self.stream_split, self.plot_card, stretch=[2, 3],
                                  name="topSplit")
        window.setCentralWidget(self.top_split)

        window.setDockOptions(
            QMainWindow.DockOption.AnimatedDocks
            | QMainWindow.DockOption.AllowTabbedDocks
            | QMainWindow.DockOption.AllowNestedDocks
        )
        window.setCorner(Qt.Corner.BottomLeftCorner, Qt.DockWidgetArea.LeftDockWidgetArea)
        window.setCorner(Qt.Corner.TopLeftCorner, Qt.DockWidgetArea.LeftDockWidgetArea)
        window.setTabPosition(Qt.DockWidgetArea.BottomDockWidgetArea, QTabWidget.TabPosition.North)
        self.controls_dock = dock_widget(
            window, "Controls", "controlsDock", self._sidebar(), Qt.DockWidgetArea.LeftDockWidgetArea
        )
        self.ir_card = card(self.ir_tabs, stretch_last=True)
        self.ir_dock = dock_widget(
            window, "What JAX sees", "irDock", self.ir_card, Qt.DockWidgetArea.BottomDockWidgetArea
        )

        bar = window.statusBar()
        bar.addWidget(self.status_label, 1)
        bar.addPermanentWidget(self.details_button)
        bar.addPermanentWidget(self.busy)

    def splitters(self) -> dict[str, QSplitter]:
        return {"central": self.top_split, "stream": self.stream_split}


class DockLayout:
    """The window's arrangement: docks (``QMainWindow.saveState``) and the main area's splitters.

    Call :meth:`capture_default` once every dock exists; :meth:`apply_default_sizes` sizes the docks and
    splitters as shares of the window (call it when the window is shown without a saved layout);
    :meth:`reset` puts back the default arrangement and sizes.
    """

    def __init__(self, window: QMainWindow, parts: WindowParts) -> None:
        self.window = window
        self.parts = parts
        self._default: QByteArray | None = None

    def capture_default(self) -> None:
        self._default = self.window.saveState(LAYOUT_VERSION)

    def bottom_docks(self) -> list[QDockWidget]:
        """The docks of the bottom area (inspection and the demo kit), in tab order."""
        area = Qt.DockWidgetArea.BottomDockWidgetArea
        docks = [d for d in self.window.findChildren(QDockWidget) if self.window.dockWidgetArea(d) == area]
        return docks

    def apply_default_sizes(self) -> None:
        """Sidebar ~330 px, bottom docks 32 % of the height (the plot keeps room for its drawing area, key and
        legend), plot 62 % of the main area's width."""
        win, parts = self.window, self.parts
        side = max(SIDEBAR_WIDTH, parts.controls_dock.minimumSizeHint().width())
        win.resizeDocks([parts.controls_dock], [side], Qt.Orientation.Horizontal)
        bottom = [d for d in self.bottom_docks() if not d.isFloating()]
        if bottom:
            win.resizeDocks(bottom[:1], [int(win.height() * BOTTOM_SHARE)], Qt.Orientation.Vertical)
        width = max(1, win.width() - side)
        parts.top_split.setSizes([int(width * (1 - PLOT_SHARE)), int(width * PLOT_SHARE)])
        parts.stream_split.setSizes([1, 3 * max(1, parts.stream_split.height())])

    def reset(self) -> None:
        """The default arrangement: every dock back in place and shown, default sizes."""
        if self._default is not None:
            self.window.restoreState(self._default, LAYOUT_VERSION)
        for dock in self.window.findChildren(QDockWidget):
            dock.setFloating(False)
            dock.setVisible(True)
        self.parts.ir_dock.raise_()
        self.apply_default_sizes()

    def save(self) -> dict[str, str]:
        """The arrangement as base64 strings (for the user settings)."""
        out = {"window": self.window.saveState(LAYOUT_VERSION)}
        out.update({name: sp.saveState() for name, sp in self.parts.splitters().items()})
        return {name: base64.b64encode(state.data()).decode() for name, state in out.items()}

    def restore(self, saved: dict[str, str]) -> bool:
        """Restore what :meth:`save` wrote; False (and nothing changed) if there is no usable window state."""
        try:
            states = {name: QByteArray(base64.b64decode(value)) for name, value in saved.items()}
        except (ValueError, TypeError):
            return False
        if "window" not in states or not self.window.restoreState(states["window"], LAYOUT_VERSION):
            return False
        for name, split in self.parts.splitters().items():
            if name in states:
                split.restoreState(states[name])
        return True


class ScreenFit(QObject):
    """The one owner of the window's minimum size: what the shown workspace's layout needs
    (``QLayout.totalMinimumSize``), never larger than the screen the window is on (its available geometry less
    the window frame). Qt would otherwise make the layout's minimum the window's, and a wide page (the Code
    workspace with the Passes tab after a recording: 1,870 × 738 px measured, issue 29) kept a 1,280 × 720 window
    wider than the screen with its plot and close button off screen; Reset layout and maximize could not help.
    Below that minimum a page is squeezed (its own scroll areas and elided labels take it), never the window
    pushed off the screen. ``fitted()`` is the minimum last set (tests)."""

    def __init__(self, window: QMainWindow) -> None:
        super().__init__(window)
        self.setObjectName("screenFit")
        self.window = window
        layout_of(window).setSizeConstraint(QLayout.SizeConstraint.SetNoConstraint)
        window.installEventFilter(self)
        self._pending = False

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if obj is self.window and event.type() in (QEvent.Type.LayoutRequest, QEvent.Type.Show,
                                                   QEvent.Type.ScreenChangeInternal) and not self._pending:
            self._pending = True
            QTimer.singleShot(0, self.fit)  # after the layout has taken the request
        elif obj is self.window and event.type() == QEvent.Type.Resize and self.window.isVisible():
            # the window manager applies a resize after fit() asked: back on screen once it has (the walk, seed
            # 302 at 1024x600: presentation grew a window at x = 169 to 1019 px, past the screen's right edge)
            QTimer.singleShot(0, self._keep_on_screen)
        return False

    def fit(self) -> QSize:
        """Set the window's minimum size now: the layout's, bounded by the screen. Returns it."""
        self._pending = False
        layout = self.window.layout()
        want = layout.totalMinimumSize() if layout is not None else QSize(0, 0)
        screen = self.window.screen()
        room = screen.availableGeometry().size() if screen is not None else want
        frame = self.window.frameGeometry().size() - self.window.geometry().size()
        size = QSize(min(want.width(), room.width() - max(frame.width(), 0)),
                     min(want.height(), room.height() - max(frame.height(), 0)))
        if self.window.minimumSize() != size:
            self.window.setMinimumSize(size)
        if screen is not None and self.window.isVisible() and not self.window.isMaximized():
            QTimer.singleShot(0, self._keep_on_screen)  # after the window took its new size
        return size

    def _keep_on_screen(self) -> None:
        """A window that grew to its minimum past the screen's edge moves back onto it (found by the random-walk
        journeys: a 1254×446 window grew to 622 px tall in the Code workspace, status line and race button
        below the screen)."""
        screen = self.window.screen()
        if screen is None or self.window.isMaximized() or self.window.isFullScreen():
            return
        room, frame = screen.availableGeometry(), self.window.frameGeometry()
        if room.contains(frame):
            return
        x = max(room.left(), min(frame.left(), room.right() - frame.width() + 1))
        y = max(room.top(), min(frame.top(), room.bottom() - frame.height() + 1))
        self.window.move(x, y)

    def fitted(self) -> QSize:
        return self.window.minimumSize()
