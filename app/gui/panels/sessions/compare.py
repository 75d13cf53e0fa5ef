"""The compare table and the IR diff of recorded runs (File ▸ Compare recorded runs…, File ▸ Diff IR of two
runs…): :class:`CompareDialog` (:func:`app.core.recording.compare.compare_rows`) and :class:`IRDiffDialog`
(:func:`app.core.recording.compare.ir_diff`). GUI thread only."""

from __future__ import annotations

from PySide6.QtCore import Slot
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.core.inspect.views import STEP_CHOICES
from app.core.recording import RecordedRun
from app.core.recording.compare import COMPARE_COLUMNS, IR_TEXTS, compare_rows, ir_diff
from widgets.common.typed_qt import named


class CompareDialog(QDialog):
    """The summaries of recorded runs side by side, one row per run, labelled by machine
    (:data:`app.core.recording.compare.COMPARE_COLUMNS`)."""

    def __init__(self, runs: list[RecordedRun], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("compareDialog")
        self.setWindowTitle("Compare recorded runs")
        rows = compare_rows(runs)
        self.table = QTableWidget(len(rows), len(COMPARE_COLUMNS))
        self.table.setObjectName("compareTable")
        self.table.setHorizontalHeaderLabels([c.header for c in COMPARE_COLUMNS])
        for i, row in enumerate(rows):
            for j, column in enumerate(COMPARE_COLUMNS):
                item = QTableWidgetItem(column.text(row))
                if column.help:
                    item.setToolTip(column.help)
                self.table.setItem(i, j, item)
        self.table.resizeColumnsToContents()
        self.table.verticalHeader().setVisible(False)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        layout.addWidget(buttons)
        self.resize(1000, 300)

    def cell(self, row: int, key: str) -> str:
        col = [c.key for c in COMPARE_COLUMNS].index(key)
        item = self.table.item(row, col)
        assert item is not None, "every cell is filled when the dialog is built"
        return item.text()


class IRDiffDialog(QDialog):
    """A line diff of two recorded runs' IR of one step (:func:`app.core.recording.compare.ir_diff`)."""

    def __init__(self, runs: list[RecordedRun], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("irDiffDialog")
        self.setWindowTitle("Diff the IR of two runs")
        self.runs = runs
        self.a, self.b = QComboBox(), QComboBox()
        for combo in (self.a, self.b):
            for run in runs:
                combo.addItem(f"{run.label} · {run.machine}")
        self.a.setCurrentIndex(len(runs) - 2)
        self.b.setCurrentIndex(len(runs) - 1)
        self.step = QComboBox()
        self.step.addItems(list(STEP_CHOICES))
        self.which = QComboBox()
        self.which.addItems(list(IR_TEXTS))
        self.which.setCurrentText("hlo")
        self.align = named(QComboBox(), "irDiffAlign")
        self.align.addItem("text order", "text")
        self.align.addItem("source line", "source")
        self.align.setToolTip("Pair the two runs' lines in text order, or by their source location (file:line "
                              "of the jaxpr_source comments or the HLO metadata)")
        self.text = QPlainTextEdit(readOnly=True)
        self.text.setObjectName("irDiffText")
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        bar = QHBoxLayout()
        for w in (QLabel("run"), self.a, QLabel("vs"), self.b, QLabel("step"), self.step, QLabel("IR"), self.which,
                  QLabel("align by"), self.align):
            bar.addWidget(w)
        bar.addStretch(1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(self.text, 1)
        layout.addWidget(buttons)
        for combo in (self.a, self.b, self.step, self.which, self.align):
            combo.currentIndexChanged.connect(self.refresh)
        self.resize(1000, 640)
        self.refresh()

    @Slot()
    def refresh(self) -> None:
        a, b = self.runs[self.a.currentIndex()], self.runs[self.b.currentIndex()]
        try:
            self.text.setPlainText(ir_diff(a, b, self.step.currentText(), self.which.currentText(),
                                           align=self.align.currentData()))
        except KeyError as exc:
            self.text.setPlainText(str(exc.args[0] if exc.args else exc))
