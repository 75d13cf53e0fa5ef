"""The devices JAX sees and the tensor-parallel mesh picker. Plain data in, no JAX.

- :meth:`DevicePanel.set_devices`: objects with ``id``, ``platform``, ``kind``, ``key`` (``"cpu:0"``),
  ``memory_bytes`` and ``memory_in_use`` (None when the backend does not say: "unknown");
- :meth:`DevicePanel.set_mesh`: the mesh the engine runs on (``"1 device"``, ``"tp=2"``);
- :meth:`DevicePanel.set_tp_sizes`: the tp sizes the loaded model allows (its heads and MLP width divide);
  the others stay listed, greyed out and not selectable;
- :meth:`DevicePanel.set_device_bytes`: ``{"weights": {"cpu:0": bytes}, "kv_cache": {...}}`` per device.

``meshRequested(str)`` (GUI thread): the user applied a mesh, ``"tp=1"`` meaning one device.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QColor, QStandardItemModel
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.core.units import nbytes
from widgets.common.tables import cell, read_only

COLUMNS = ("Device", "Memory", "Weights", "KV cache")
TP_CHOICES = (1, 2, 4, 8)
ROW_H = 20
MAX_VISIBLE_ROWS = 4  # more devices scroll: the sidebar is short
IDLE = QColor("#9ca3af")


def tp_choices(n_devices: int, model_sizes: tuple[int, ...] | None = None) -> list[int]:
    """tp sizes offered for ``n_devices``: 1/2/4/8 up to the count, the count itself (e.g. 6), and the
    sizes the model allows (``model_sizes``, e.g. 3 for 9 heads / 3 KV heads)."""
    out = {tp for tp in TP_CHOICES if tp <= n_devices}
    if n_devices > 1 and n_devices <= 64:
        out.add(n_devices)
    out |= {tp for tp in model_sizes or () if tp <= n_devices}
    return sorted(out)


def mesh_text(tp: int) -> str:
    return f"tp={tp}"


class DevicePanel(QWidget):
    """Device table (one row per device) with a mesh picker and Apply above it."""

    meshRequested = Signal(str)
    #: a JAX platform chosen in the Device picker (``"cpu"``, ``"gpu"``, ``"tpu"``)
    platformRequested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("devicePanel")
        self._devices: list[Any] = []
        self._mesh = "1 device"
        self._model_sizes: tuple[int, ...] | None = None
        self.picker = QComboBox()
        self.picker.setObjectName("meshPicker")
        self.picker.setToolTip(
            "Tensor parallelism: split attention heads, MLP width and the KV cache over tp devices "
            "(XLA inserts the all-reduces). The next run compiles again."
        )
        self.apply_button = QPushButton("Apply")
        self.apply_button.setObjectName("applyMeshButton")
        self.platform_picker = QComboBox()
        self.platform_picker.setObjectName("platformPicker")
        self.platform_picker.setToolTip(
            "Where every mode runs: the JAX modes on this platform's devices, torch and torch-compile on CUDA on "
            "a GPU. Changing it loads the model again there (the next run compiles again)."
        )
        self.mesh_label = QLabel("")
        self.mesh_label.setObjectName("meshLabel")
        self.mesh_label.setWordWrap(True)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setObjectName("deviceTable")
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        read_only(self.table, selection="none", grid=False, row_height=ROW_H,
                  resize=QHeaderView.ResizeMode.Stretch,
                  column_resize={0: QHeaderView.ResizeMode.ResizeToContents})
        platform_row = QHBoxLayout()
        platform_row.setSpacing(6)
        platform_row.addWidget(QLabel("Device"))
        platform_row.addWidget(self.platform_picker, 1)
        row = QHBoxLayout()
        row.setSpacing(6)
        row.addWidget(QLabel("Mesh"))
        row.addWidget(self.picker, 1)
        row.addWidget(self.apply_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        layout.addLayout(platform_row)
        layout.addLayout(row)
        layout.addWidget(self.mesh_label)
        self.mesh_error = QLabel("")
        self.mesh_error.setObjectName("meshError")
        self.mesh_error.setWordWrap(True)
        self.mesh_error.setStyleSheet("color: #b91c1c;")
        self.mesh_error.setVisible(False)
        layout.addWidget(self.mesh_error)
        layout.addWidget(self.table)
        self.apply_button.clicked.connect(self._on_apply)
        self.platform_picker.activated.connect(self._on_platform)
        self.set_platforms([], "")
        self.set_devices([])

    # -- data in ----------------------------------------------------------------------------------
    def set_devices(self, devices: list[Any]) -> None:
        """One row per device; the picker offers the tp sizes that fit the count."""
        self._devices = list(devices)
        self._fill_picker()
        can_split = len(self._devices) > 1
        self.picker.setEnabled(can_split)
        self.apply_button.setEnabled(can_split)
        self.table.setRowCount(len(self._devices))
        for i, d in enumerate(self._devices):
            name = QTableWidgetItem(d.key)
            name.setToolTip(f"{d.platform} device {d.id} · kind {d.kind!r} · process {d.process_index}")
            self.table.setItem(i, 0, name)
            self.table.setItem(i, 1, self._cell(_memory_text(d)))
            self.table.setItem(i, 2, self._cell("—", idle=True))
            self.table.setItem(i, 3, self._cell("—", idle=True))
        shown = max(1, min(len(self._devices), MAX_VISIBLE_ROWS))
        self.table.setFixedHeight(self.table.horizontalHeader().sizeHint().height() + shown * ROW_H + 4)
        self.set_mesh(self._mesh)

    def set_platforms(self, platforms: list[str], current: str) -> None:
        """The JAX platforms this machine has (``["cpu", "gpu"]``) with ``current`` selected; the picker is
        enabled only when there is a choice."""
        self.platform_picker.blockSignals(True)
        self.platform_picker.clear()
        for name in platforms or ([current] if current else []):
            self.platform_picker.addItem(name.upper(), name)
        index = self.platform_picker.findData(current)
        self.platform_picker.setCurrentIndex(max(index, 0))
        self.platform_picker.setEnabled(len(platforms) > 1)
        self.platform_picker.blockSignals(False)

    def platform(self) -> str:
        """The platform selected in the Device picker (``""`` before the devices are listed)."""
        return self.platform_picker.currentData() or ""

    def _on_platform(self, _index: int) -> None:
        if self.platform():
            self.platformRequested.emit(self.platform())

    def set_error(self, text: str) -> None:
        """A refused mesh, shown under the picker until the next mesh is applied (empty: hide)."""
        self.mesh_error.setText(text)
        self.mesh_error.setVisible(bool(text))

    def set_tp_sizes(self, sizes: tuple[int, ...] | None) -> None:
        """The tp sizes the loaded model allows (None: not known yet, every size offered)."""
        self._model_sizes = tuple(sizes) if sizes is not None else None
        self._fill_picker()
        self.set_mesh(self._mesh)

    def _fill_picker(self) -> None:
        self.picker.clear()
        allowed = self._model_sizes
        model = self.picker.model()
        assert isinstance(model, QStandardItemModel), "a QComboBox's own model"
        for tp in tp_choices(len(self._devices), allowed) or [1]:
            self.picker.addItem("1 device" if tp == 1 else f"tp={tp} · {tp} devices", mesh_text(tp))
            if allowed is not None and tp not in allowed:
                item = model.item(self.picker.count() - 1)
                item.setEnabled(False)
                item.setText(f"tp={tp} · does not divide this model")
                item.setToolTip(f"tp={tp} does not divide this model's attention heads, KV heads or MLP width.")

    def set_mesh(self, label: str) -> None:
        """Show that the engine runs on ``label`` and select it in the picker."""
        self._mesh = label or "1 device"
        i = self.picker.findData(self._mesh if self._mesh.startswith("tp=") else mesh_text(1))
        if i >= 0:
            self.picker.setCurrentIndex(i)
        n = len(self._devices)
        kind = f"{n} {self._devices[0].platform} device{'s' if n != 1 else ''}" if n else "devices: listing…"
        if self._mesh.startswith("tp="):
            used = self._mesh.removeprefix("tp=")
            self.mesh_label.setText(f"Running on <b>{self._mesh}</b>: split over {used} of {kind}")
        else:
            hint = "" if n > 1 else " · start with <code>--devices 4</code> to simulate more on a CPU"
            self.mesh_label.setText(f"Running on <b>1 device</b> of {kind}{hint}")

    def set_device_bytes(self, per_device: dict[str, dict[str, int]]) -> None:
        """Fill the Weights / KV cache columns; a device holding nothing shows "—"."""
        for col, part in ((2, "weights"), (3, "kv_cache")):
            values = (per_device or {}).get(part) or {}
            for i, d in enumerate(self._devices):
                value = values.get(d.key)
                self.table.setItem(i, col, self._cell(nbytes(value) if value else "—", idle=not value))

    # -- queries (tests, window) ------------------------------------------------------------------
    def device_count(self) -> int:
        return len(self._devices)

    def bytes_text(self, column: str = "Weights") -> dict[str, str]:
        """Device key → the text shown in ``column`` ("Weights" or "KV cache")."""
        col = COLUMNS.index(column)
        return {d.key: cell(self.table, i, col).text() for i, d in enumerate(self._devices)}

    # -- internals --------------------------------------------------------------------------------
    @staticmethod
    def _cell(text: str, idle: bool = False) -> QTableWidgetItem:
        item = QTableWidgetItem(text)
        item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if idle:
            item.setForeground(IDLE)
        return item

    @Slot()
    def _on_apply(self) -> None:
        text = self.picker.currentData()
        if text:
            self.meshRequested.emit(str(text))


def _memory_text(device: Any) -> str:
    limit = getattr(device, "memory_bytes", None)
    if limit is None:
        return "unknown"
    used = getattr(device, "memory_in_use", None)
    return f"{nbytes(used)} / {nbytes(limit)}" if used is not None else nbytes(limit)
