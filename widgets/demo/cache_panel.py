"""Compilation-cache controls: persistent cache on/off and its directory, size, clear buttons.

The panel only emits requests (the window runs them on the compute thread) and shows what it is told
with :meth:`CachePanel.set_info`.
"""

from __future__ import annotations

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.core.units import nbytes


class CachePanel(QWidget):
    """Signals (GUI thread)
    -------
    persistentChanged(enabled, directory): the toggle changed, or the directory changed while on.
    directoryChanged(directory): a new directory was chosen (its size should be measured).
    clearMemoryRequested(): drop compiled steps and JAX's in-memory caches.
    clearDiskRequested(directory): delete the persistent cache's files.
    """

    persistentChanged = Signal(bool, str)
    directoryChanged = Signal(str)
    clearMemoryRequested = Signal()
    clearDiskRequested = Signal(str)

    def __init__(self, default_dir: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.toggle = QCheckBox("Persistent cache on disk")
        self.toggle.setObjectName("persistentCacheCheck")
        self.toggle.setToolTip(
            "JAX stores compiled executables in this directory and reuses them after the in-memory caches "
            "are cleared or in a new process; compiles served from it are drawn as green diamonds."
        )
        self.dir_edit = QLineEdit(default_dir)
        self.dir_edit.setObjectName("cacheDirEdit")
        self.dir_edit.setToolTip(default_dir)
        self.browse = QToolButton()
        self.browse.setText("…")
        self.browse.setObjectName("cacheDirButton")
        self.browse.setToolTip("Choose the cache directory")
        self.size_label = QLabel("–")
        self.size_label.setObjectName("cacheSizeLabel")
        self.clear_memory = QPushButton("Clear in-memory caches")
        self.clear_memory.setObjectName("clearMemoryButton")
        self.clear_memory.setToolTip(
            "Drop the compiled steps and jax.clear_caches(): the next run compiles again"
        )
        self.clear_disk = QPushButton("Clear disk cache")
        self.clear_disk.setObjectName("clearDiskButton")

        row = QHBoxLayout()
        row.setSpacing(4)
        row.addWidget(self.dir_edit, 1)
        row.addWidget(self.browse)
        buttons = QHBoxLayout()
        buttons.setSpacing(6)
        buttons.addWidget(self.clear_memory)
        buttons.addWidget(self.clear_disk)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        top = QHBoxLayout()
        top.addWidget(self.toggle)
        top.addStretch(1)
        top.addWidget(self.size_label)
        layout.addLayout(top)
        layout.addLayout(row)
        layout.addLayout(buttons)

        self.toggle.toggled.connect(self._on_toggle)
        self.dir_edit.editingFinished.connect(self._on_dir_edited)
        self.browse.clicked.connect(self._choose_dir)
        self.clear_memory.clicked.connect(self.clearMemoryRequested)
        self.clear_disk.clicked.connect(self._on_clear_disk)
        self._last_dir = default_dir

    def directory(self) -> str:
        return self.dir_edit.text().strip()

    def is_enabled(self) -> bool:
        return self.toggle.isChecked()

    def set_directory(self, directory: str) -> None:
        self.dir_edit.setText(directory)
        self._on_dir_edited()

    def set_info(self, enabled: bool, n_files: int, n_bytes: int, message: str = "") -> None:
        """Show the cache state: on/off (as applied) and the directory's size; ``message`` (the last
        request's result, e.g. bytes freed) becomes the size label's tool tip."""
        self.toggle.blockSignals(True)
        self.toggle.setChecked(enabled)
        self.toggle.blockSignals(False)
        state = "on" if enabled else "off"
        self.size_label.setText(
            f"{n_files} entr{'y' if n_files == 1 else 'ies'} · {nbytes(n_bytes)} on disk · {state}"
        )
        if message:
            self.size_label.setToolTip(message)

    def set_running(self, running: bool) -> None:
        """Disable the buttons that queue compute work while a run is in progress."""
        for w in (self.clear_memory, self.clear_disk, self.toggle, self.dir_edit, self.browse):
            w.setEnabled(not running)

    @Slot(bool)
    def _on_toggle(self, on: bool) -> None:
        self.persistentChanged.emit(on, self.directory())

    @Slot()
    def _on_dir_edited(self) -> None:
        directory = self.directory()
        if not directory or directory == self._last_dir:
            return
        self._last_dir = directory
        self.dir_edit.setToolTip(directory)
        self.directoryChanged.emit(directory)
        if self.is_enabled():
            self.persistentChanged.emit(True, directory)

    @Slot()
    def _choose_dir(self) -> None:
        chosen = QFileDialog.getExistingDirectory(
            self, "Persistent compilation cache directory", self.directory()
        )
        if chosen:
            self.set_directory(chosen)

    @Slot()
    def _on_clear_disk(self) -> None:
        self.clearDiskRequested.emit(self.directory())
