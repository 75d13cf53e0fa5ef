"""Presentation mode for talks: big fonts, a high-contrast theme, only the prompt, token stream and plot.

:class:`Presentation` remembers everything it changes (application font, the window's style sheet, hidden
panels, splitter sizes, window state) and puts it back when turned off.
"""

from __future__ import annotations

import weakref
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QMainWindow,
    QSplitter,
    QSplitterHandle,
    QToolBar,
    QWidget,
)

#: Font scale in presentation mode (the issue asks for at least 1.6×).
SCALE = 1.75


def presentation_qss(k: float) -> str:
    """High-contrast style sheet (white, black text and borders) with the app's pt sizes scaled by ``k``."""
    return f"""
QMainWindow, QSplitter, QSplitter::handle, #sidebar {{ background: #ffffff; }}
#card {{ background: #ffffff; border: 2px solid #000000; border-radius: 10px; }}
#sectionTitle {{ color: #000000; font-size: {8 * k:.0f}pt; font-weight: 700; }}
#statCard {{ background: #ffffff; border: 2px solid #000000; border-radius: 6px; }}
#statValue {{ color: #000000; font-size: {14 * k:.0f}pt; font-weight: 700; }}
#statCaption {{ color: #000000; font-size: {8 * k:.0f}pt; }}
#tokenView, QPlainTextEdit {{ background: #ffffff; color: #000000; border: 2px solid #000000; }}
QPushButton {{ border: 2px solid #000000; color: #000000; background: #ffffff; padding: 6px 16px; }}
QPushButton#runButton {{ background: #1d4ed8; color: #ffffff; border-color: #000000; }}
QPushButton#stopButton:enabled {{ background: #b91c1c; color: #ffffff; border-color: #000000; }}
QComboBox {{ color: #000000; }}
QStatusBar {{ background: #ffffff; border-top: 2px solid #000000; }}
#statusLabel {{ color: #000000; font-weight: 600; }}
#busyLabel {{ color: #9a3412; font-weight: 700; }}
"""


class Presentation:
    """Turns presentation mode on and off for ``window``.

    Fonts: the application font and, inside the window, a style sheet scale every size by ``scale``
    (widgets that set their own font, like the token view, keep their relative size).

    ``keep``: the panels that stay (the prompt, token-stream and plot cards); every sibling of them or of
    their ancestors is hidden, and so are dock widgets, tool bars and the widgets in ``also_hide``.
    ``plot`` is scaled with its own ``set_font_scale`` (pyqtgraph fonts do not follow the application
    font). ``sizes`` gives splitters their proportions while presenting (e.g. a wider plot).
    """

    def __init__(
        self,
        window: QMainWindow,
        keep: list[QWidget],
        plot: Any,
        also_hide: list[QWidget] = (),
        sizes: dict[QSplitter, list[int]] | None = None,
        scale: float = SCALE,
    ) -> None:
        self._window = weakref.ref(window)  # a strong reference would make a cycle through the window
        self.keep = keep
        self.plot = plot
        self.also_hide = list(also_hide)
        self.sizes = sizes or {}
        self.scale = scale
        self._saved: dict[str, Any] | None = None

    @property
    def window(self) -> QMainWindow:
        return self._window()

    def is_on(self) -> bool:
        return self._saved is not None

    def set_on(self, on: bool) -> None:
        if on and self._saved is None:
            self._enter()
        elif not on and self._saved is not None:
            self._leave()

    def _to_hide(self) -> list[QWidget]:
        chains: set[int] = set()
        for w in self.keep:
            while w is not None and w is not self.window:
                chains.add(id(w))
                w = w.parentWidget()
        hide: list[QWidget] = []
        for w in self.keep:
            parent = w.parentWidget()
            while parent is not None and parent is not self.window:
                for sibling in parent.findChildren(
                    QWidget, options=Qt.FindChildOption.FindDirectChildrenOnly
                ):
                    if id(sibling) in chains or isinstance(sibling, QSplitterHandle) or sibling.isWindow():
                        continue
                    if sibling.isVisibleTo(self.window) and sibling not in hide:
                        hide.append(sibling)
                parent = parent.parentWidget()
        for kind in (QDockWidget, QToolBar):
            hide += [
                d for d in self.window.findChildren(kind) if d.isVisibleTo(self.window) and d not in hide
            ]
        return hide + [w for w in self.also_hide if w.isVisibleTo(self.window) and w not in hide]

    def _enter(self) -> None:
        app = QApplication.instance()
        win = self.window
        saved: dict[str, Any] = {
            "app_font": QFont(app.font()),
            "style": win.styleSheet(),
            "state": win.windowState(),
            "splitters": {sp: sp.sizes() for sp in win.findChildren(QSplitter)},
            "hidden": self._to_hide(),
        }
        for w in saved["hidden"]:
            w.setVisible(False)
        base = saved["app_font"]
        big = QFont(base)
        big.setPointSizeF(base.pointSizeF() * self.scale)
        app.setFont(big)  # menus, dialogs, tool tips
        # Inside the window the sizes come from the style sheet: unlike the application font they also
        # reach widgets that set their own font (the token view), whatever the order of re-polishing.
        rules = [f"QWidget {{ font-size: {big.pointSizeF():.1f}pt; }}"]
        for w in win.findChildren(QWidget):
            if (
                w.objectName()
                and w.testAttribute(Qt.WidgetAttribute.WA_SetFont)
                and w.font().pointSizeF() > 0
            ):
                rules.append(
                    f"#{w.objectName()} {{ font-size: {w.font().pointSizeF() * self.scale:.1f}pt; }}"
                )
        win.setStyleSheet(saved["style"] + "\n".join(rules) + presentation_qss(self.scale))
        self.plot.set_font_scale(self.scale, base.pointSizeF())
        for splitter, parts in self.sizes.items():
            total = sum(splitter.sizes())
            splitter.setSizes([total * p // sum(parts) for p in parts])
        self._saved = saved

    def _leave(self) -> None:
        saved, self._saved = self._saved, None
        app = QApplication.instance()
        win = self.window
        app.setFont(saved["app_font"])
        win.setStyleSheet(saved["style"])
        self.plot.set_font_scale(1.0, saved["app_font"].pointSizeF())
        for w in saved["hidden"]:
            w.setVisible(True)
        for splitter, sizes in saved["splitters"].items():
            splitter.setSizes(sizes)
        if win.windowState() != saved["state"]:
            win.setWindowState(saved["state"])
