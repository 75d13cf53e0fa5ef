"""Where two raced settings part: a picker under the trade-off plot (two of the race's settings, Compare passes,
its progress and elapsed time, one line for the answer or an error) and a dialog with the two pass pipelines side
by side in lockstep, the first pass whose output HLO differs highlighted, the diff of the two modules after it and
the fusions each final module kept.

Plain data in: the settings' names, :class:`LockstepRow` s, the diff view's rows
(:func:`app.core.passes.diff.diff_rows`). The app finds the parting on the compute thread
(:func:`app.core.compile_settings.parting.where_settings_part`); GUI thread only.
"""

from __future__ import annotations

import time
from typing import NamedTuple

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtGui import QBrush, QColor, QFont, QResizeEvent
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from widgets.common.splitters import splitter
from widgets.common.tables import read_only
from widgets.common.typed_qt import named
from widgets.ir.hlo_diff import HloDiff

#: Elapsed-time refresh while the two settings are recorded (ms).
TICK_MS = 200
#: The first differing row's background and the rows after it (the modules still differ there).
FIRST_COLOR, AFTER_COLOR = QColor("#fde68a"), QColor("#fef3c7")
#: Width (px) of each setting's column in the lockstep table (its name elided, whole in the header's tool tip).
SIDE_WIDTH = 100


class LockstepRow(NamedTuple):
    """One row of the lockstep view: ``pipeline`` / ``pass_name``; ``a`` / ``b``: that side's snapshot label
    (``""``: the pass did not change that side's module); ``differs``: the two modules differ after this row."""

    pipeline: str
    pass_name: str
    a: str
    b: str
    differs: bool


class PartingPicker(QWidget):
    """Two of the race's settings and **Compare passes** (``compareRequested(a, b)``; ``stopRequested()`` while
    one runs), the elapsed time while it runs (:meth:`set_running`) and one line (:meth:`set_message`)."""

    compareRequested = Signal(str, str)
    stopRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.first = named(QComboBox(), "partingFirst")
        self.second = named(QComboBox(), "partingSecond")
        for combo in (self.first, self.second):
            combo.setMinimumContentsLength(6)
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.currentIndexChanged.connect(self._update)
        self.first.setToolTip("The first setting (the diff's old side; the baseline by default)")
        self.second.setToolTip("The second setting, compared against the first")
        self.button = named(QPushButton("Compare passes…"), "partingButton")
        self.button.setToolTip("Compile the decode step under both settings with XLA's pass dumps on, walk the two "
                               "pass pipelines in lockstep and show the first pass whose output HLO differs")
        self.button.clicked.connect(self._on_click)
        self.message = named(QLabel(""), "partingMessage")
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message.setMinimumWidth(40)  # elided to the pane (the whole line in its tool tip)
        pick, act = QHBoxLayout(), QHBoxLayout()  # two short rows: the Demo kit's pane is narrow at 1280×720
        pick.addWidget(self.first, 1)
        pick.addWidget(QLabel("vs"))
        pick.addWidget(self.second, 1)
        act.addWidget(self.button)
        act.addWidget(self.message, 1)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(2)
        column.addLayout(pick)
        column.addLayout(act)
        self.running = False
        self._enabled = True
        self._t0 = 0.0
        self._what = ""
        self._timer = QTimer(self, interval=TICK_MS)
        self._timer.timeout.connect(self._tick)
        self._update()

    def names(self) -> list[str]:
        return [self.first.itemText(i) for i in range(self.first.count())]

    def set_names(self, names: list[str]) -> None:
        """The raced settings (the baseline first): the first box keeps its choice (default: the baseline), the
        second its own (default, and when it would be the first's: the newest other setting)."""
        if names == self.names():
            return
        keep = (self.first.currentText(), self.second.currentText())
        for combo in (self.first, self.second):
            combo.blockSignals(True)
            combo.clear()
            combo.addItems(names)
            combo.blockSignals(False)
        if names:
            self.first.setCurrentIndex(max(0, names.index(keep[0]) if keep[0] in names else 0))
            mine = keep[1] in names and keep[1] != self.first.currentText()  # one setting twice compares nothing
            self.second.setCurrentIndex(names.index(keep[1]) if mine else len(names) - 1)
        self._update()

    def choose(self, a: str, b: str) -> None:
        self.first.setCurrentText(a)
        self.second.setCurrentText(b)

    def set_enabled(self, enabled: bool) -> None:
        """Whether a comparison may start now (the window is idle)."""
        self._enabled = enabled
        self._update()

    def set_running(self, running: bool, what: str = "") -> None:
        """A comparison runs (``what``: its line, the elapsed seconds added) or ended."""
        self.running = running
        if running:
            self._what, self._t0 = what, time.perf_counter()
            self.message.setStyleSheet("")
            self._tick()
            self._timer.start()
        else:
            self._timer.stop()
        self._update()

    def elapsed(self) -> float:
        """Seconds since the comparison started."""
        return time.perf_counter() - self._t0

    def set_message(self, text: str, error: bool = False) -> None:
        self.message.setStyleSheet("color: #b91c1c;" if error else "")
        self._set_text(text)

    def message_text(self) -> str:
        """The whole line (the label shows it elided to its width)."""
        return self.message.toolTip()

    def _set_text(self, text: str) -> None:
        self.message.setToolTip(text)
        metrics = self.message.fontMetrics()
        self.message.setText(metrics.elidedText(text, Qt.TextElideMode.ElideRight, max(40, self.message.width())))

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 — Qt's name
        super().resizeEvent(event)
        self._set_text(self.message.toolTip())

    @Slot()
    def _tick(self) -> None:
        self._set_text(f"{self._what} {self.elapsed():.1f} s")

    @Slot()
    def _on_click(self) -> None:
        if self.running:
            self.stopRequested.emit()
        else:
            self.compareRequested.emit(self.first.currentText(), self.second.currentText())

    def _update(self) -> None:
        self.button.setText("■  Stop" if self.running else "Compare passes…")
        two = self.first.count() >= 2
        self.button.setEnabled(self.running or (self._enabled and two))
        for combo in (self.first, self.second):
            combo.setEnabled(two and not self.running)


class PartingDialog(QDialog):
    """Two settings' pass pipelines in lockstep (``table``: pass, pipeline, then one column per setting saying
    whether that pass changed its module), the first differing row (``first``, None: no pass differs) highlighted
    and selected, the two modules' diff after it in ``diff_view`` (``diff``: :func:`app.core.passes.diff.diff_rows`
    rows, ``new_text`` the second setting's module there), ``sentence`` above and ``fusions`` (each side's final
    fusions) below."""

    def __init__(self, parent: QWidget | None, labels: tuple[str, str], rows: list[LockstepRow], first: int | None,
                 sentence: str, diff: list[tuple[str, int | None, int | None, str]] | None, new_text: str,
                 fusions: str) -> None:
        super().__init__(parent)
        self.setObjectName("partingDialog")
        self.setWindowTitle(f"Where {labels[1]} parts from {labels[0]}")
        self.first = first
        self.summary = named(QLabel(sentence), "partingSentence")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        table = self.table = lockstep_table(labels, rows, first)
        self.diff_view = named(HloDiff(), "partingDiff")
        if diff is not None:
            self.diff_view.set_diff(labels[0], labels[1], diff, new_text)
        else:
            self.diff_view.clear("No pass differs: the two optimized modules are the same text.")
        where = rows[first] if first is not None else None
        self.diff_title = named(QLabel(f"After {where.pipeline} / {where.pass_name}: {labels[0]} → {labels[1]}"
                                       if where is not None else "No diff: no pass differs."), "partingDiffTitle")
        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 0, 0)
        rl.addWidget(self.diff_title)
        rl.addWidget(self.diff_view, 1)
        self.fusions = named(QLabel(fusions), "partingFusions")
        self.fusions.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(self.summary)
        lay.addWidget(splitter(Qt.Orientation.Horizontal, table, right, sizes=[600, 560], collapsible=True), 1)
        lay.addWidget(self.fusions)
        lay.addWidget(buttons)
        self.resize(1180, 660)
        if first is not None:
            table.selectRow(first)
            table.scrollTo(table.model().index(first, 0), QTableWidget.ScrollHint.PositionAtCenter)

    def first_pass(self) -> str:
        """The highlighted row's pass name, or ``"no pass differs"``."""
        item = self.table.item(self.first, 0) if self.first is not None else None
        return item.text() if item is not None else "no pass differs"


def lockstep_table(labels: tuple[str, str], rows: list[LockstepRow], first: int | None) -> QTableWidget:
    """The lockstep rows as a read-only table: pass, pipeline, then ``changed`` / ``–`` per setting; the row
    ``first`` (the parting) in bold and amber, the rows after it where the modules still differ tinted."""
    table = named(QTableWidget(len(rows), 4), "partingTable")
    table.setHorizontalHeaderLabels(["pass", "pipeline", *labels])
    bold = QFont(table.font())
    bold.setBold(True)
    for r, row in enumerate(rows):
        cells = (row.pass_name, row.pipeline, "changed" if row.a else "–", "changed" if row.b else "–")
        for c, text in enumerate(cells):
            item = QTableWidgetItem(text)
            tip = [row.a, row.b][c - 2] if c >= 2 else f"{row.pipeline} / {row.pass_name}"
            item.setToolTip(tip or "this pass did not change the module under this setting")
            if first is not None and r >= first and row.differs:
                item.setBackground(QBrush(FIRST_COLOR if r == first else AFTER_COLOR))
            if r == first:
                item.setFont(bold)
            table.setItem(r, c, item)
    read_only(table)
    head = table.horizontalHeader()
    head.setTextElideMode(Qt.TextElideMode.ElideMiddle)  # a typed XLA flag is a long column name
    head.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
    head.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
    for c, label in ((2, labels[0]), (3, labels[1])):
        head.setSectionResizeMode(c, QHeaderView.ResizeMode.Fixed)
        head.resizeSection(c, SIDE_WIDTH)
        header = table.horizontalHeaderItem(c)
        if header is not None:
            header.setToolTip(label)
    return table
