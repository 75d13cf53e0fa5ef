"""The IR header's labels, sized so that the header never moves what is around it (issue 55: the header wrapped to
four lines and its run name widened the IR card, moving the Code workspace's editor splitter by 40–60 px).

:class:`ElidedLabel` draws its (rich) text as one plain line cut with "…" to its width and asks for no width of its
own; its full text stays :meth:`QLabel.text` and its tool tip. :class:`FiguresLabel` wraps its figures onto at most
:data:`FIGURE_LINES` lines (the rest hidden; all of them in the tool tip), that height wherever there is room
whatever its text, asking for no height of its own in a short dock."""

from __future__ import annotations

import re
from html import unescape

from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtGui import QFont, QFontMetrics, QPainter, QPaintEvent, QRegion, QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

#: The IR figures' lines (FLOPs, bytes, args, … fusions): the rest are in the tool tip.
FIGURE_LINES = 2


def plain(html: str) -> str:
    """``html``'s text without its tags and entities (``"<b>run 3</b>&nbsp;x"`` → ``"run 3 x"``)."""
    return unescape(re.sub(r"<[^>]+>", "", html)).replace("\xa0", " ")


class ElidedLabel(QLabel):
    """One line, cut with "…" at its width; no minimum width beyond a few characters."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)

    def setText(self, text: str) -> None:  # noqa: N802 (Qt override)
        super().setText(text)
        self.setToolTip(plain(text))

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        return QSize(self.fontMetrics().horizontalAdvance("run 00 …"), super().minimumSizeHint().height())

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        font = QFont(self.font())
        font.setBold("<b>" in self.text())
        return QSize(QFontMetrics(font).horizontalAdvance(plain(self.text())) + 4, super().sizeHint().height())

    def paintEvent(self, _event: QPaintEvent) -> None:  # noqa: N802 (Qt override)
        painter = QPainter(self)
        font = self.font()
        font.setBold("<b>" in self.text())
        painter.setFont(font)
        rect = self.contentsRect()
        text = painter.fontMetrics().elidedText(plain(self.text()), Qt.TextElideMode.ElideRight, rect.width())
        painter.drawText(rect, int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft), text)
        painter.end()


class FiguresLabel(QLabel):
    """Rich text wrapped onto :data:`FIGURE_LINES` lines (one where its :meth:`set_template` fits on one line), the
    rest hidden: that height wherever there is room, whatever its text (none, one line or more), so what is under it
    does not move between two runs (issue 55: its height followed its text's lines, 0–2, and the IR tabs moved 14 px
    in the Code workspace and 30 px in a short window's dock; two lines everywhere took the Inspect workspace's
    jaxpr view under 30 lines at 1280×720); no height of its own in a dock too short for it (the Run workspace's at
    1280×720 would scroll), where it shows the whole lines that fit, none in a row under one line tall (the walk,
    seed 7: the top 6 px of a cut line of figures over the IR tabs)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("", parent)
        self.setWordWrap(True)
        self.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Maximum)
        self.template = ""
        self.setMaximumHeight(self._lines_height())

    def set_template(self, html: str) -> None:
        """The row's figures at their widest, as its text writes them (``"FLOPs&nbsp;<b>888 M</b> · …"``: each
        number's digits as wide as they get; :func:`widgets.ir.ir_tabs.widest_figures`): where they fit on one
        line (the Inspect workspace, a wide window) the row is one line tall, else :data:`FIGURE_LINES` — a
        height that follows the row's width and font, never its text (without a template: always two)."""
        self.template = html
        self.setMaximumHeight(self._lines_height())
        self.updateGeometry()

    def _lines(self) -> int:
        """1 where the template (numbers in bold, as the header writes them) fits the row's width, else
        :data:`FIGURE_LINES`."""
        bold = QFont(self.font())
        bold.setBold(True)
        plain_fm, bold_fm = self.fontMetrics(), QFontMetrics(bold)
        parts = [m for part in self.template.split(" · ") if (m := re.fullmatch(r"(.*?)<b>(.*?)</b>", part))]
        widest = sum(plain_fm.horizontalAdvance(plain(m.group(1))) + bold_fm.horizontalAdvance(plain(m.group(2)))
                     for m in parts)
        widest += plain_fm.horizontalAdvance(" · ") * (len(parts) - 1)
        return 1 if parts and widest <= self.contentsRect().width() else FIGURE_LINES

    def _lines_height(self) -> int:
        return self._lines() * self.fontMetrics().lineSpacing() + 4

    def _whole_lines(self) -> int:
        """How many of its lines fit whole in the row's height as laid out."""
        return max(0, self.contentsRect().height()) // self.fontMetrics().lineSpacing()

    def _mask_cut_line(self) -> None:
        """Below its whole lines where the row is squeezed under its lines (but not under one: see paintEvent)."""
        whole = self._whole_lines()
        if 0 < whole < self._lines():
            self.setMask(QRegion(0, 0, self.width(), self.contentsRect().top() + whole * self.fontMetrics().lineSpacing()))
        else:
            self.clearMask()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt override)
        """A new width may hold the figures on one line, or no longer: the row's height follows (its width does
        not depend on its height, so this settles at once). A row squeezed under its lines shows the whole ones
        (a mask below them)."""
        super().resizeEvent(event)
        self._mask_cut_line()
        if self.maximumHeight() != self._lines_height():
            self.setMaximumHeight(self._lines_height())
            self.updateGeometry()

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt override)
        if self._whole_lines() > 0:  # no cut line in a row under one line tall
            super().paintEvent(event)

    def hasHeightForWidth(self) -> bool:  # noqa: N802 (Qt override): its lines' height, not its text's
        return False

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt override): its lines wherever there is room
        return QSize(super().sizeHint().width(), self._lines_height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt override): a dock too short for it shows fewer figures
        return QSize(0, 0)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 (Qt override)
        """A font change (presentation mode) keeps room for the row's lines in the new font, and shows its whole
        lines in that font."""
        super().changeEvent(event)
        if event.type() != QEvent.Type.FontChange:
            return
        self._mask_cut_line()
        if self.maximumHeight() != self._lines_height():
            self.setMaximumHeight(self._lines_height())
            self.updateGeometry()
