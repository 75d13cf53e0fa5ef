"""Presentation mode for a room: the latency plot fills most of the window, big high-contrast fonts.

While presenting, the main area is the prompt, the token stream and the race summary in a column beside
the plot (which gets about two thirds of the width and the full height: more than half the window at
1280×720); every dock (controls, "What JAX sees", demo kit, compile log) and tool bar is hidden.

:class:`Presentation` remembers everything it changes (application font, the window's style sheet, the
dock arrangement, the visibility of the widgets it shows or hides, splitter sizes, window state) and puts
it back exactly when turned off.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QRect, Qt, QTimer
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QApplication, QDockWidget, QMainWindow, QSplitter, QToolBar, QWidget

if TYPE_CHECKING:
    from widgets.plot.latency_plot import LatencyPlot

#: Font scale in presentation mode (at least 1.6× for a room): 1.75× from 1600×900 up, else 1.6× so the
#: column beside the plot stays narrow enough at 1280×720.
SCALE = 1.75
SMALL_SCALE = 1.6


def scale_for(width: int, height: int) -> float:
    """The presentation font scale for a window of ``width`` × ``height`` px."""
    return SCALE if width >= 1600 and height >= 900 else SMALL_SCALE


def presentation_qss(k: float) -> str:
    """High-contrast style sheet (white, black text and borders) with the app's pt sizes scaled by ``k``.
    Disabled controls are grey with dashed borders, so Run during a race does not look available."""
    return f"""
QMainWindow, QSplitter, QSplitter::handle, #sidebar {{ background: #ffffff; }}
#card {{ background: #ffffff; border: 2px solid #000000; border-radius: 10px; }}
#sectionTitle {{ color: #000000; font-size: {8 * k:.0f}pt; font-weight: 700; }}
#statCard {{ background: #ffffff; border: 2px solid #000000; border-radius: 6px; }}
#statValue {{ color: #000000; font-size: {10 * k:.0f}pt; font-weight: 700; }}
#statCaption {{ color: #000000; font-size: {7 * k:.0f}pt; }}
#tokenView, QPlainTextEdit {{ background: #ffffff; color: #000000; border: 2px solid #000000; }}
QPushButton {{ border: 2px solid #000000; color: #000000; background: #ffffff; padding: 4px 14px; }}
QPushButton:disabled {{ color: #9ca3af; background: #f3f4f6; border: 2px dashed #9ca3af; }}
QPushButton#runButton:enabled {{ background: #1d4ed8; color: #ffffff; border: 2px solid #000000; }}
QPushButton#stopButton:enabled {{ background: #b91c1c; color: #ffffff; border: 2px solid #000000; }}
QComboBox, QCheckBox, QSpinBox, QDoubleSpinBox, QLabel {{ color: #000000; }}
QComboBox:disabled, QCheckBox:disabled, QSpinBox:disabled, QDoubleSpinBox:disabled, QLabel:disabled
    {{ color: #9ca3af; }}
QTableWidget {{ color: #000000; gridline-color: #000000; }}
QHeaderView::section {{ color: #000000; background: #ffffff; font-weight: 700; border: none; }}
QStatusBar {{ background: #ffffff; border-top: 2px solid #000000; }}
#statusLabel {{ color: #000000; font-weight: 600; }}
#busyLabel {{ color: #9a3412; font-weight: 700; }}
"""


@dataclass
class DockState:
    """What :func:`dock_state` saves: the docks in front of their tab group, and each one's width and height."""

    front: list[QDockWidget]
    sizes: list[tuple[QDockWidget, int, int]]


def dock_state(win: QMainWindow) -> DockState:
    """The docks in front of their tab group and the sizes of the docked ones. (Hidden docks keep their
    place, so showing them again restores the arrangement; ``restoreState`` would also do it, but
    under X11 it can leave a stale copy of a dock area's tab bar on screen.)"""
    docks = [d for d in win.findChildren(QDockWidget) if not d.isHidden() and not d.isFloating()]
    front = [d for d in docks if not d.visibleRegion().isEmpty()]
    return DockState(front, [(d, d.width(), d.height()) for d in front])


def restore_docks(win: QMainWindow, state: DockState) -> None:
    """Raise the docks that were in front and give the docked ones their sizes again (:func:`dock_state`)."""
    for dock in state.front:
        dock.raise_()
    docks = [d for d, _, _ in state.sizes]
    horizontal = [d for d in docks if win.dockWidgetArea(d) in (Qt.DockWidgetArea.LeftDockWidgetArea,
                                                              Qt.DockWidgetArea.RightDockWidgetArea)]
    vertical = [d for d in docks if d not in horizontal]
    sizes = {d: (w, h) for d, w, h in state.sizes}
    # resizeDocks sizes a dock's area, which includes a tab bar the dock does not: ask for the size, measure
    # what the dock got, ask again corrected by the difference, until it is exact (3 tries). Correcting from the
    # size the dock had before the first ask (as this did up to issue 29) drifted 30-50 px per presentation
    # toggle at 1280x720.
    for docks_of, axis, pick in ((horizontal, Qt.Orientation.Horizontal, 0), (vertical, Qt.Orientation.Vertical, 1)):
        if not docks_of:
            continue
        asked = {d: sizes[d][pick] for d in docks_of}
        for _ in range(3):
            win.resizeDocks(docks_of, [asked[d] for d in docks_of], axis)
            QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
            got = {d: (d.width(), d.height())[pick] for d in docks_of}
            if all(got[d] == sizes[d][pick] for d in docks_of):
                break
            for d in docks_of:
                asked[d] += sizes[d][pick] - got[d]


@dataclass
class _Saved:
    """What presentation mode changed, as it was before (put back when it turns off)."""

    app_font: QFont
    style: str  # the window's style sheet
    state: Qt.WindowState
    geometry: QRect  # the window's, when it was neither maximized nor full screen
    docks: DockState
    splitters: dict[QSplitter, list[int]]
    visible: dict[QWidget, bool]  # every dock, tool bar and widget shown or hidden
    fonts: dict[QWidget, tuple[QFont, bool]]  # each widget's font, and whether it had set its own


class Presentation:
    """Turns presentation mode on and off for ``window``.

    Fonts: the application font and, inside the window, a style sheet scale every size by ``scale``
    (widgets that set their own font, like the token view, keep their relative size). ``plot`` is scaled
    with its own ``set_font_scale`` (pyqtgraph fonts do not follow the application font).

    Panels: every dock widget and tool bar is hidden, the widgets in ``show`` are shown (e.g. the race
    summary beside the plot) and those in ``hide`` hidden; ``sizes`` gives splitters their proportions
    while presenting (e.g. a wide plot).
    """

    def __init__(
        self,
        window: QMainWindow,
        plot: LatencyPlot,
        show: Sequence[QWidget] = (),
        hide: Sequence[QWidget] = (),
        sizes: dict[QSplitter, list[int]] | None = None,
        scale: float | None = None,
    ) -> None:
        self._window = weakref.ref(window)  # a strong reference would make a cycle through the window
        self.plot = plot
        self.show = list(show)
        self.hide = list(hide)
        self.sizes = sizes or {}
        self.fixed_scale = scale  # None: chosen from the window size (:func:`scale_for`) when turned on
        self.scale = scale or SCALE
        self._saved: _Saved | None = None
        #: Fits the window's minimum size to its layout again (the window's ``ScreenFit.fit``, app.gui.layout, a
        #: layer up: handed in by the window), called before the size it had before presentation comes back.
        self.refit: Callable[[], object] | None = None

    @property
    def window(self) -> QMainWindow:
        win = self._window()
        assert win is not None, "the window outlives its presentation mode (its demo kit's, a child of it)"
        return win

    def is_on(self) -> bool:
        return self._saved is not None

    def set_on(self, on: bool) -> None:
        if on and self._saved is None:
            self._enter()
        elif not on and self._saved is not None:
            self._leave()

    def _panels(self) -> list[QWidget]:
        win = self.window
        bars = [w for kind in (QDockWidget, QToolBar) for w in win.findChildren(kind)]
        return bars + self.hide + self.show

    def _enter(self) -> None:
        win = self.window
        self.scale = self.fixed_scale or scale_for(win.width(), win.height())
        saved = _Saved(
            app_font=QFont(QApplication.font()),
            style=win.styleSheet(),
            state=win.windowState(),
            geometry=QRect(win.geometry()),
            docks=dock_state(win),
            splitters={sp: sp.sizes() for sp in win.findChildren(QSplitter)},
            visible={w: not w.isHidden() for w in self._panels()},
            fonts={
                w: (QFont(w.font()), w.testAttribute(Qt.WidgetAttribute.WA_SetFont))
                for w in win.findChildren(QWidget)
            },
        )
        for w in saved.visible:
            w.setVisible(w in self.show)
        base = saved.app_font
        big = QFont(base)
        big.setPointSizeF(base.pointSizeF() * self.scale)
        QApplication.setFont(big)  # menus, dialogs, tool tips
        # Inside the window the sizes come from the style sheet: unlike the application font they also
        # reach widgets that set their own font (the token view), whatever the order of re-polishing.
        rules = [f"QWidget {{ font-size: {big.pointSizeF():.1f}pt; }}"]
        for w in win.findChildren(QWidget):
            if w.objectName() and w.testAttribute(Qt.WidgetAttribute.WA_SetFont) and w.font().pointSizeF() > 0:
                rules.append(f"#{w.objectName()} {{ font-size: {w.font().pointSizeF() * self.scale:.1f}pt; }}")
        win.setStyleSheet(saved.style + "\n".join(rules) + presentation_qss(self.scale))
        self.plot.set_font_scale(self.scale, base.pointSizeF())
        self._saved = saved
        self.apply_sizes()

    def apply_sizes(self) -> None:
        """Give the splitters their presentation proportions (again, e.g. once the race summary shows)."""
        if self._saved is None:
            return
        QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
        for splitter, parts in self.sizes.items():
            total = sum(splitter.sizes()) or 1
            shares = parts[: splitter.count()]
            splitter.setSizes([total * p // sum(shares) for p in shares])

    def _leave(self) -> None:
        saved, self._saved = self._saved, None
        assert saved is not None, "set_on leaves only while on"
        win = self.window
        QApplication.setFont(saved.app_font)
        win.setStyleSheet(saved.style)
        self.plot.set_font_scale(1.0, saved.app_font.pointSizeF())
        self._restore_fonts(saved.fonts)
        for w, visible in saved.visible.items():
            w.setVisible(visible)
        # Lay out with the normal fonts first, so the docks' minimum sizes are the normal ones again.
        QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
        restore_docks(win, saved.docks)
        QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
        for splitter, sizes in saved.splitters.items():
            splitter.setSizes(sizes)
        if win.windowState() != saved.state:
            # the user maximized or restored the window while presenting: it stays theirs, at its new minimum and
            # on the screen (ScreenFit). Put back, a window maximized before but resized while presenting was
            # grown past the screen's edge (the walk, seed 302 at 1024x600: x = 169, 1019 px wide)
            return
        if not saved.state & (Qt.WindowState.WindowMaximized | Qt.WindowState.WindowFullScreen):
            # the larger fonts raised the window's minimum and it grew (a 1027x590 window came back 1027x690):
            # its normal minimum first (ScreenFit, after this layout), then its own size and place again
            QTimer.singleShot(0, win, lambda: self._restore_geometry(saved.geometry))  # cancelled with the window

    def _restore_geometry(self, geometry: QRect, again: bool = True) -> None:
        """The window's size and place before presentation, once its minimum is the normal one again (widgets
        that size themselves from their new fonts a moment later, like the stats strip, then again)."""
        win = self.window
        if self.is_on():
            return
        QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
        if self.refit is not None:
            self.refit()
        if win.geometry() != geometry:
            win.setGeometry(geometry)
        if again:  # the walk, seed 302: a 1019-px window came back 1027 px (the strip's cards were still wide)
            QTimer.singleShot(150, win, lambda: self._restore_geometry(geometry, again=False))

    @staticmethod
    def _restore_fonts(fonts: dict[QWidget, tuple[QFont, bool]]) -> None:
        """Widgets that Qt did not give their font back when the style sheet went (children of a scroll
        area's viewport): inheriting again, or their own font if they had set one."""
        for w, (font, own) in fonts.items():
            try:
                if w.font() == font:
                    continue
            except RuntimeError:  # deleted meanwhile
                continue
            w.setFont(font if own else QFont())
            if w.font() != font:
                w.setFont(font)
