"""The small dialogs of session files: which runs File ▸ Save session writes (:class:`SaveRunsDialog`) and
which recorded run Demo ▸ Replay session… plays, at which speed (:class:`ReplayDialog`). GUI thread only."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.core.recording import RecordedRun
from app.core.units import counted
from widgets.common.typed_qt import named

#: The replay speeds offered: ``(title, speed, skip_compile)``.
REPLAY_SPEEDS: tuple[tuple[str, float, bool], ...] = (
    ("1× (recorded pace)", 1.0, False),
    ("4×", 4.0, False),
    ("1×, skipping the compile wait", 1.0, True),
)


def run_title(run: RecordedRun) -> str:
    """A run as the dialogs list it: ``"run 1 · jit-static · CPU × 1 · 32 tokens"``."""
    label = run.label if run.mode in run.label else f"{run.label} · {run.mode}"
    return f"{label} · {run.machine} · {counted(len(run.tokens), 'token')}"


class SaveRunsDialog(QDialog):
    """A checkable list of the runs on the plot, all checked: :meth:`selected` are the ones to save."""

    def __init__(self, runs: list[RecordedRun], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("saveRunsDialog")
        self.setWindowTitle("Save session")
        self.runs = runs
        self.list = named(QListWidget(), "saveRunsList")
        for run in runs:
            item = QListWidgetItem(run_title(run))
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked)
            self.list.addItem(item)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save
                                        | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        all_button = named(QPushButton("All"), "saveRunsAll")
        none_button = named(QPushButton("None"), "saveRunsNone")
        all_button.clicked.connect(lambda: self.set_all(True))
        none_button.clicked.connect(lambda: self.set_all(False))
        self.buttons.addButton(all_button, QDialogButtonBox.ButtonRole.ActionRole)
        self.buttons.addButton(none_button, QDialogButtonBox.ButtonRole.ActionRole)
        self.list.itemChanged.connect(self._update)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Runs to save:"))
        layout.addWidget(self.list, 1)
        layout.addWidget(self.buttons)
        self.resize(520, 320)
        self._update()

    def _item(self, row: int) -> QListWidgetItem:
        item = self.list.item(row)
        assert item is not None, f"row {row} of {self.list.count()}: the list has a row per run"
        return item

    def set_checked(self, row: int, checked: bool) -> None:
        self._item(row).setCheckState(Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)

    def set_all(self, checked: bool) -> None:
        for row in range(self.list.count()):
            self.set_checked(row, checked)

    def selected(self) -> list[RecordedRun]:
        """The checked runs, in plot order."""
        return [run for row, run in enumerate(self.runs)
                if self._item(row).checkState() == Qt.CheckState.Checked]

    def _update(self, *_: object) -> None:
        save = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        assert save is not None, "the button box is built with Save"
        save.setEnabled(bool(self.selected()))


class ReplayDialog(QDialog):
    """Which recorded run (a race: all its lanes) to replay and at which speed (:data:`REPLAY_SPEEDS`).
    ``choices``: ``(title, runs)`` pairs, oldest first; the newest is preselected."""

    def __init__(self, choices: list[tuple[str, list[RecordedRun]]], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("replayDialog")
        self.setWindowTitle("Replay session")
        self.choices = choices
        self.run = named(QComboBox(), "replayRun")
        for title, _ in choices:
            self.run.addItem(title)
        self.run.setCurrentIndex(len(choices) - 1)
        self.speed = named(QComboBox(), "replaySpeed")
        for title, _, _ in REPLAY_SPEEDS:
            self.speed.addItem(title)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        buttons.addButton("Replay", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Recorded run:"))
        layout.addWidget(self.run)
        layout.addWidget(QLabel("Speed:"))
        layout.addWidget(self.speed)
        layout.addWidget(buttons)
        self.resize(520, 160)

    def choice(self) -> tuple[list[RecordedRun], float, bool]:
        """``(runs, speed, skip_compile)`` as chosen."""
        _, speed, skip = REPLAY_SPEEDS[self.speed.currentIndex()]
        return self.choices[self.run.currentIndex()][1], speed, skip
