"""Settings-race controls: which compiler settings race (a checkable list of the catalog's rows), a field for
settings typed by hand (an ``XLA_FLAGS`` string or a ``jax.config`` pair), Race and Stop, the race's progress and
elapsed time, and one line for a refusal.

Plain data in: :class:`SettingRow` s (name, what it sets, why it cannot run here). The widget decides nothing about
settings: the app checks each name and says what is wrong with :meth:`SettingsRaceControls.set_message`.
"""

from __future__ import annotations

import time
from typing import NamedTuple

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

#: Typed settings are separated by this (one XLA_FLAGS string may hold several flags, with spaces).
SEPARATOR = ";"
#: Lines of the list (three or so names each) shown without scrolling where the dock is tall enough.
VISIBLE_ROWS = 8
#: Elapsed-time refresh while a race runs (ms).
TICK_MS = 200


class SettingRow(NamedTuple):
    """One catalog row: ``name``, ``sets`` (what it sets, shown as its tool tip), ``refused``: why this backend
    cannot race it (``""``: it can; the row is then greyed out, its reason in the tool tip)."""

    name: str
    sets: str
    refused: str = ""


class SettingsRaceControls(QWidget):
    """The settings list, the typed settings, the message and progress; :attr:`bar` (Stop, Race) is placed by the
    host. Signals (GUI thread): ``raceRequested(names)``: the checked rows in list order, then the typed settings in
    the order typed; ``stopRequested()``."""

    raceRequested = Signal(list)
    stopRequested = Signal()

    def __init__(self, rows: list[SettingRow], checked: tuple[str, ...] = (), parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.list = self._build_list(rows, checked)
        self.typed_edit = QLineEdit()
        self.typed_edit.setObjectName("settingsTypedEdit")
        self.typed_edit.setPlaceholderText("--xla_cpu_enable_fast_math=true ; jax_optimization_level=O3")
        self.typed_edit.setToolTip(
            "Settings of your own, separated by ';': an XLA_FLAGS string (one setting, however many flags) or a "
            "jax.config pair jax_name=value. Each is applied per compile, like the rows above.")
        self.typed_edit.textChanged.connect(self._update)
        self.typed_edit.returnPressed.connect(self._on_race)
        self.race_button = QPushButton("▶▶  Race settings")
        self.race_button.setObjectName("settingsRaceButton")
        self.race_button.setToolTip("Compile and run the decode step once per setting, each from cold "
                                    "(the baseline 'default' first), and plot compile time against run time")
        self.race_button.clicked.connect(self._on_race)
        self.stop_button = QPushButton("■  Stop")
        self.stop_button.setObjectName("settingsStopButton")
        self.stop_button.clicked.connect(self.stopRequested)
        # the lane and the elapsed time written on the bar: no line of their own in a short dock (issue 55)
        self.progress = QProgressBar()
        self.progress.setObjectName("settingsProgress")
        self.progress.setFormat("")
        self.progress.setMaximumHeight(self.progress.fontMetrics().height() + 4)
        self.message = QLabel("")
        self.message.setObjectName("settingsMessage")
        self.message.setWordWrap(True)
        self.message.setStyleSheet("color: #b91c1c;")
        self.message.setVisible(False)
        #: Stop and Race in one row, not in this widget's layout: the host pins it where a short dock keeps it in sight.
        self.bar = QWidget()
        self.bar.setObjectName("settingsRaceBar")
        buttons = QHBoxLayout(self.bar)
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.addStretch(1)
        buttons.addWidget(self.stop_button)
        buttons.addWidget(self.race_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        layout.addWidget(self.list)
        layout.addWidget(self.typed_edit)
        layout.addWidget(self.message)
        layout.addWidget(self.progress)
        self._clock = QTimer(self)
        self._clock.setInterval(TICK_MS)
        self._clock.timeout.connect(self._tick)
        self._t0 = 0.0
        self._lane = ""
        self._busy = False
        self._racing = False
        self._update()

    def _build_list(self, rows: list[SettingRow], checked: tuple[str, ...]) -> QListWidget:
        view = QListWidget()
        view.setObjectName("settingsList")
        for row in rows:
            item = QListWidgetItem(row.name)
            item.setToolTip(row.refused or row.sets)
            flags = Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsSelectable
            item.setFlags(flags if row.refused else flags | Qt.ItemFlag.ItemIsEnabled)
            item.setCheckState(Qt.CheckState.Checked if row.name in checked and not row.refused
                               else Qt.CheckState.Unchecked)
            view.addItem(item)
        view.itemChanged.connect(self._update)
        # the names side by side, wrapping at the list's width (issue 55: one per line, a 1280×720 dock showed 3 of
        # its 22 rows); a short dock scrolls the rest, downwards
        view.setFlow(QListView.Flow.LeftToRight)
        view.setWrapping(True)
        view.setResizeMode(QListView.ResizeMode.Adjust)
        view.setSpacing(1)
        view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        view.setMaximumHeight(view.sizeHintForRow(0) * VISIBLE_ROWS + 2 * view.frameWidth() + 2)
        view.setMinimumHeight(view.sizeHintForRow(0) * 2 + 2 * view.frameWidth() + 2)  # a short dock: it scrolls
        return view

    # -- what is asked ------------------------------------------------------------------------------
    def checked(self) -> list[str]:
        """The checked rows' names, in list order."""
        return [it.text() for it in self._items() if it.checkState() == Qt.CheckState.Checked]

    def set_checked(self, names: list[str]) -> None:
        """Check the rows named in ``names`` (that can race here), uncheck the others."""
        for it in self._items():
            enabled = bool(it.flags() & Qt.ItemFlag.ItemIsEnabled)
            it.setCheckState(Qt.CheckState.Checked if it.text() in names and enabled else Qt.CheckState.Unchecked)

    def set_refused(self, refused: dict[str, str]) -> None:
        """Grey out (and uncheck) each row whose name maps to a reason it cannot race here; enable the others."""
        for it in self._items():
            why = refused.get(it.text(), "")
            flags = it.flags() | Qt.ItemFlag.ItemIsEnabled
            it.setFlags(flags & ~Qt.ItemFlag.ItemIsEnabled if why else flags)
            if why:
                it.setCheckState(Qt.CheckState.Unchecked)
                it.setToolTip(why)

    def typed(self) -> list[str]:
        """The typed settings (the field split at ``;``, blanks dropped)."""
        return [part.strip() for part in self.typed_edit.text().split(SEPARATOR) if part.strip()]

    def names(self) -> list[str]:
        """What Race asks for: :meth:`checked`, then :meth:`typed`."""
        return self.checked() + self.typed()

    # -- what the app says ----------------------------------------------------------------------------
    def set_message(self, text: str) -> None:
        """Show ``text`` (a refusal naming the setting) under the field; ``""`` hides it."""
        self.message.setText(text)
        self.message.setVisible(bool(text))

    def message_text(self) -> str:
        return "" if self.message.isHidden() else self.message.text()

    def set_busy(self, busy: bool, racing: bool) -> None:
        """``busy``: the compute thread has work (Race waits); ``racing``: it is this race (Stop applies, the
        clock runs). Starting a race resets the clock and the progress."""
        if racing and not self._racing:
            self._t0 = time.perf_counter()
            self._lane = ""
            self.progress.setRange(0, 0)  # busy until the first lane says how many there are
            self._clock.start()
        elif not racing and self._racing:
            self._clock.stop()
            self._tick()
        self._busy, self._racing = busy, racing
        self._update()

    def set_progress(self, done: int, n_lanes: int, running: str, stopped: bool = False) -> None:
        """``done`` of ``n_lanes`` lanes ended; ``running``: the setting of the lane in progress (``""``);
        ``stopped``: the last lane that ended was stopped (Stop), so the race ended there."""
        self.progress.setRange(0, max(1, n_lanes))
        self.progress.setValue(done)
        self._lane = (f"lane {done + 1}/{n_lanes} · {running}" if running
                      else f"stopped in lane {done}/{n_lanes}" if stopped else f"{done}/{n_lanes} lanes done")
        self._tick()

    def progress_text(self) -> str:
        """The lane in progress (or how many ended) and the elapsed time, as written on the progress bar."""
        return self.progress.format()

    # -- internals ----------------------------------------------------------------------------------
    def _items(self) -> list[QListWidgetItem]:
        return [item for i in range(self.list.count()) if (item := self.list.item(i)) is not None]

    @Slot()
    def _tick(self) -> None:
        if not self._t0:
            return
        elapsed = f"{time.perf_counter() - self._t0:.1f} s"
        text = f"{self._lane} · {elapsed}" if self._lane else elapsed
        self.progress.setFormat(text)
        self.progress.setToolTip(text)

    def _update(self, *_changed: object) -> None:
        self.race_button.setEnabled(not self._busy and bool(self.names()))
        self.stop_button.setEnabled(self._racing)

    @Slot()
    def _on_race(self) -> None:
        if self.names() and not self._busy:
            self.raceRequested.emit(self.names())
