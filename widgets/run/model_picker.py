"""Model chooser: built-in models, shape presets, recently used ids, a typed hub id or a local folder."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QToolButton,
    QWidget,
)

ROLE_ID = Qt.ItemDataRole.UserRole


class ModelPicker(QWidget):
    """An editable combo box (``modelPicker``), an "Open folder…" button and a Load button.

    Signals (GUI thread): ``loadRequested(model)`` — a built-in name, a preset such as
    ``"random:gpt2-small-shape"``, a hub id ``"org/name"`` or a folder path; validated by the engine.
    """

    loadRequested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.combo = QComboBox()
        self.combo.setObjectName("modelPicker")
        self.combo.setEditable(True)
        self.combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.combo.setMinimumContentsLength(22)
        self.combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self._line_edit().setPlaceholderText("built-in, hub id (org/name) or folder")
        self._line_edit().returnPressed.connect(self._on_return)
        self.combo.activated.connect(self._on_activated)
        self.combo.currentIndexChanged.connect(lambda _i: self._line_edit().setCursorPosition(0))
        folder = QToolButton()
        folder.setText("Folder…")
        folder.setToolTip("Open a local model folder (config.json + weights)")
        folder.clicked.connect(self.open_folder)
        self.load_button = QPushButton("Load")
        self.load_button.setObjectName("loadButton")
        self.load_button.setToolTip("Load the model named in the box")
        self.load_button.clicked.connect(self._on_return)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.combo, 1)
        layout.addWidget(folder)
        layout.addWidget(self.load_button)
        self._populating = False

    def set_models(self, builtins: dict[str, str], presets: list[str], recent: list[str]) -> None:
        """Fill the list: ``builtins`` maps name → description; ``recent`` newest first."""
        current = self.current_model()
        self._populating = True
        self.combo.clear()
        for name, description in builtins.items():
            # the name alone in the box ("smollm2-135m-instruct — bui" was cut at 1280x720; issue 29, flaw 22);
            # "built-in" and the description in the item's tool tip
            self._add(name, name, f"built-in: {description}")
        if presets:
            self.combo.insertSeparator(self.combo.count())
            for name in presets:
                self._add(name, name, "random weights with the shape of a real model (no download)")
        extra = [m for m in recent if m not in builtins and m not in presets]
        if extra:
            self.combo.insertSeparator(self.combo.count())
            for name in extra:
                self._add(name, name, "recently used")
        self._populating = False
        if current:
            self.set_current_model(current)

    def _add(self, model: str, text: str, tooltip: str) -> None:
        self.combo.addItem(text, model)
        self.combo.setItemData(self.combo.count() - 1, tooltip, Qt.ItemDataRole.ToolTipRole)

    def current_model(self) -> str:
        """The model id in the box: the item's id if the text is an item's label, else the typed text."""
        text = self.combo.currentText().strip()
        index = self.combo.findText(text)
        if index >= 0 and self.combo.itemData(index, ROLE_ID):
            return str(self.combo.itemData(index, ROLE_ID))
        return text

    def set_current_model(self, model: str) -> None:
        index = self.combo.findData(model, ROLE_ID)
        if index >= 0:
            self.combo.setCurrentIndex(index)
        else:
            self.combo.setEditText(model)
        self._line_edit().setCursorPosition(0)  # a long name (a folder, a hub id) shows its start
        self.combo.setToolTip(self.combo.currentText())

    def set_busy(self, busy: bool) -> None:
        self.load_button.setEnabled(not busy)


    def _line_edit(self) -> QLineEdit:
        """The combo box's line edit (the box is editable from the start)."""
        edit = self.combo.lineEdit()
        assert edit is not None, "the model box is editable: it has a line edit"
        return edit

    @Slot()
    def open_folder(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Open a model folder")
        if path:
            self.combo.setEditText(path)
            self.loadRequested.emit(path)

    @Slot()
    def _on_return(self) -> None:
        model = self.current_model()
        if model:
            self.loadRequested.emit(model)

    @Slot(int)
    def _on_activated(self, index: int) -> None:
        if not self._populating and self.combo.itemData(index, ROLE_ID):
            self.loadRequested.emit(str(self.combo.itemData(index, ROLE_ID)))
