"""Status-bar busy indicator: the current phase and a ticking elapsed time ("compiling… 1.2 s")."""

from __future__ import annotations

import time

from PySide6.QtCore import QTimer, Slot
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QWidget

#: Wording of engine phases (``app.core.events.Phase``) for people.
PHASE_LABELS: dict[str, str] = {
    "loading": "loading",
    "converting": "converting to JAX",
    "tracing": "tracing",
    "lowering": "lowering",
    "compiling": "compiling",
    "running": "running",
}
UNINTERRUPTIBLE = ("tracing", "lowering", "compiling")


class BusyIndicator(QWidget):
    """An indeterminate bar and ``"<phase> <detail>… 1.2 s"``, refreshed every 100 ms while busy."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.bar = QProgressBar()
        self.bar.setRange(0, 0)
        self.bar.setFixedWidth(90)
        self.bar.setFixedHeight(10)
        self.bar.setTextVisible(False)
        self.label = QLabel("")
        self.label.setObjectName("busyLabel")
        self.label.setMinimumWidth(280)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label)
        layout.addWidget(self.bar)
        self._phase = ""
        self._detail = ""
        self._stopping = False
        self._t0 = 0.0
        self._timer = QTimer(self, interval=100)
        self._timer.timeout.connect(self._refresh)
        self.setVisible(False)

    def start(self, phase: str, detail: str = "") -> None:
        """Show ``phase`` (an engine phase name or free text) and restart the clock."""
        self._phase, self._detail, self._t0 = phase, detail, time.perf_counter()
        self.setVisible(True)
        self._timer.start()
        self._refresh()

    def set_detail(self, detail: str) -> None:
        """Say what the phase shown works on now (a steady-state round's mode), keeping its clock."""
        self._detail = detail
        self._refresh()

    def set_stopping(self, stopping: bool = True) -> None:
        """Say that a stop was requested; during a compile: "stopping after compile…"."""
        self._stopping = stopping
        self._refresh()

    def is_stopping(self) -> bool:
        """True after :meth:`set_stopping` until the busy state ends."""
        return self._stopping

    def stop(self) -> None:
        self._timer.stop()
        self._phase, self._stopping = "", False
        self.setVisible(False)

    def phase(self) -> str:
        return self._phase

    def is_uninterruptible(self) -> bool:
        """True while tracing / lowering / compiling, which a stop cannot cut short."""
        return self._phase in UNINTERRUPTIBLE

    def text(self) -> str:
        return self.label.text()

    @Slot()
    def _refresh(self) -> None:
        elapsed = time.perf_counter() - self._t0
        what = PHASE_LABELS.get(self._phase, self._phase)
        if self._detail and self._detail.lower().startswith(what.lower()):  # "loading from the cache": once
            what = self._detail
        elif self._detail:  # "compiling decode step"; a load's detail is a sentence of its own
            what += f" · {self._detail}" if self._phase in ("loading", "converting") else f" {self._detail}"
        if self._stopping:
            what = "stopping after compile" if self.is_uninterruptible() else "stopping"
        self.label.setText(f"{what}… {elapsed:.1f} s")
