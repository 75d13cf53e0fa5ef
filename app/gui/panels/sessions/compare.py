"""The compare table and the IR diff of recorded runs (File ▸ Compare recorded runs…, File ▸ Diff IR of two
runs…): :class:`CompareDialog` (:func:`app.core.recording.compare.compare_rows`) and :class:`IRDiffDialog`
(:func:`app.core.recording.compare.ir_diff`). GUI thread only."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.core.inspect.views import HLO, STEP_CHOICES
from app.core.recording import RecordedRun
from app.core.recording.compare import (
    COMPARE_COLUMNS,
    IR_TEXTS,
    PROGRAM_COMPARE_COLUMNS,
    compare_rows,
    ir_diff,
)
from app.core.recording.model import is_program_run
from widgets.common.typed_qt import named

#: the compare table's columns whose text may be elided in a narrow dialog (whole in their tool tips)
ELIDED = ("run", "machine")


class CompareDialog(QDialog):
    """The summaries of recorded runs side by side, one row per run, labelled by machine
    (:data:`app.core.recording.compare.COMPARE_COLUMNS`; :data:`PROGRAM_COMPARE_COLUMNS`, in calls, when every run
    is a program's).

    The dialog is as wide as its table needs and no wider than the window (or screen) it opens on; when that is
    too narrow (1280×720: issue 29's flaw 7, issue 37), the figures keep their whole width and the text columns
    (:data:`ELIDED`) share what is left, their cells elided in the middle with the whole text in their
    tool tips — every column of every run in view at once, no sideways scrolling."""

    #: the least width of an elided text column (px)
    MIN_TEXT = 90

    def __init__(self, runs: list[RecordedRun], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("compareDialog")
        self.setWindowTitle("Compare recorded runs")
        rows = compare_rows(runs)
        programs = bool(runs) and all(is_program_run(r) for r in runs)
        self.columns = PROGRAM_COMPARE_COLUMNS if programs else COMPARE_COLUMNS
        self.table = QTableWidget(len(rows), len(self.columns))
        self.table.setObjectName("compareTable")
        self.table.setHorizontalHeaderLabels([c.header for c in self.columns])
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)  # "run 4 · SmolLM2…jit-static": both ends kept
        for j, column in enumerate(self.columns):
            header = self.table.horizontalHeaderItem(j)
            if header is not None and column.help:
                header.setToolTip(column.help)
        for i, row in enumerate(rows):
            for j, column in enumerate(self.columns):
                text = column.text(row)
                item = QTableWidgetItem(text)
                if column.align != "left":
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                item.setToolTip(f"{text}\n{column.help}" if column.help else text)
                self.table.setItem(i, j, item)
        self.table.resizeColumnsToContents()
        self._wanted = [self.table.columnWidth(j) for j in range(len(self.columns))]
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.table.verticalHeader().setVisible(False)
        self.table.setWordWrap(False)  # one line per run: elided, not wrapped
        self.table.installEventFilter(self)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        layout.addWidget(buttons)
        margins = layout.contentsMargins()
        self.resize(self._fitting_width(margins.left() + margins.right()), min(640, max(300, 120 + 30 * len(rows))))

    def _fitting_width(self, margins: int) -> int:
        """The table's whole width (with the dialog's ``margins``, px), at most the width of the window it opens
        on (or of the screen) less 20 px for the dialog's frame."""
        chrome = 2 * self.table.frameWidth() + 4 + margins
        host = self.parentWidget()
        room = (host.window().width() if host is not None else self.screen().availableGeometry().width()) - 20
        return max(400, min(sum(self._wanted) + chrome, room))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt override)
        if watched is self.table and event.type() == QEvent.Type.Resize:
            QTimer.singleShot(0, self._fit_columns)  # once the table has laid out its viewport and scroll bars
        return False

    @Slot()
    def _fit_columns(self) -> None:
        """The figures (and the date) at their whole width; the run and machine columns share the rest in
        proportion to their text (at least :attr:`MIN_TEXT` px each), elided when it is less than they need."""
        room = self.table.viewport().width()
        text_cols = [j for j, c in enumerate(self.columns) if c.key in ELIDED]
        fixed = sum(w for j, w in enumerate(self._wanted) if j not in text_cols)
        wanted_text = sum(self._wanted[j] for j in text_cols) or 1
        left = max(room - fixed, 0)
        widths = list(self._wanted)
        if left < wanted_text:
            for j in text_cols:
                widths[j] = min(widths[j], max(self.MIN_TEXT, int(left * widths[j] / wanted_text)))
            widest = max(text_cols, key=lambda j: widths[j], default=None)
            excess = sum(widths[j] for j in text_cols) - left  # what the floors took beyond the room
            if widest is not None and excess > 0:
                widths[widest] = max(self.MIN_TEXT, widths[widest] - excess)
        for j, width in enumerate(widths):  # narrower than even that: the table scrolls sideways
            self.table.setColumnWidth(j, width)

    def cell(self, row: int, key: str) -> str:
        col = [c.key for c in self.columns].index(key)
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
        self.which.setCurrentText(HLO)
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
