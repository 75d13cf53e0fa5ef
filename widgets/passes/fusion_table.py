"""Every fusion of the final module: its kind, the pass that created it and how many instructions it absorbed;
the selected fusion's absorbed instructions with their source lines, and XLA's fusion-log decisions about it
(fused or refused, with the logged reason).

Plain data in: :meth:`FusionTable.set_fusions` takes dicts with ``name``, ``kind``, ``created_by``,
``created_in``, ``source``, ``absorbed`` (``[name, opcode, "file:line"]`` lists) and ``decisions`` (dicts with
``producer``, ``consumer``, ``fused``, ``reason``, ``fusion``, ``kind``). Signals (GUI thread):
``fusionSelected(str)`` with the fusion's name, ``fusionActivated(str)`` on a double-click or Enter.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
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
from widgets.common.tables import cell, read_only
from widgets.common.typed_qt import named

FUSION_COLUMNS = ("fusion", "kind", "created by", "absorbed", "source", "µs/step")
ABSORBED_COLUMNS = ("instruction", "opcode", "source")
DECISION_COLUMNS = ("", "producer", "consumer", "reason")


def _table(columns: tuple[str, ...], name: str) -> QTableWidget:
    table = named(QTableWidget(0, len(columns)), name)
    table.setHorizontalHeaderLabels(list(columns))
    read_only(table, row_height="line", resize=QHeaderView.ResizeMode.Interactive, stretch_last=True)
    return table


def _fill(table: QTableWidget, rows: list[list[str]], tips: list[str] | None = None) -> None:
    table.setSortingEnabled(False)
    table.setRowCount(len(rows))
    for i, row in enumerate(rows):
        for j, text in enumerate(row):
            item = QTableWidgetItem(text)
            item.setToolTip(tips[i] if tips and j == len(row) - 1 else text)
            table.setItem(i, j, item)
    table.resizeColumnsToContents()
    for j in range(table.columnCount() - 1):
        table.setColumnWidth(j, min(table.columnWidth(j), 220))


#: The LLVM IR button's tool tip.
LLVM_TIP = "The selected fusion's kernel as XLA's CPU backend wrote it in LLVM IR (before and after LLVM's optimization)"

class FusionTable(QWidget):
    """The fusions (top) and, for the selected one, what it absorbed and the log's decisions (bottom)."""

    fusionSelected = Signal(str)
    fusionActivated = Signal(str)
    #: the selected fusion's LLVM IR is asked for (its name; GUI thread)
    llvmRequested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._fusions: list[dict[str, Any]] = []
        self.count = named(QLabel(""), "fusionCount")
        self._measured: dict[str, float] = {}
        self.llvm_button = named(QPushButton("LLVM IR…"), "fusionLlvmButton")
        self.llvm_button.setEnabled(False)
        self.llvm_button.setToolTip(LLVM_TIP)
        self.llvm_button.clicked.connect(lambda: self.llvmRequested.emit(self.current()))
        self.table = _table(FUSION_COLUMNS, "fusionTable")
        self.absorbed_label = named(QLabel(""), "fusionAbsorbedLabel")
        self.absorbed = _table(ABSORBED_COLUMNS, "fusionAbsorbed")
        self.decisions_label = named(QLabel(""), "fusionDecisionsLabel")
        self.decisions_label.setWordWrap(True)
        self.decisions = _table(DECISION_COLUMNS, "fusionDecisions")
        detail = QWidget()
        d = QVBoxLayout(detail)
        d.setContentsMargins(0, 0, 0, 0)
        d.setSpacing(2)
        d.addWidget(self.absorbed_label)
        d.addWidget(self.absorbed, 3)
        d.addWidget(self.decisions_label)
        d.addWidget(self.decisions, 2)
        top = QWidget()
        t = QVBoxLayout(top)
        t.setContentsMargins(0, 0, 0, 0)
        t.setSpacing(2)
        head = QHBoxLayout()
        head.addWidget(self.count, 1)
        head.addWidget(self.llvm_button)
        t.addLayout(head)
        t.addWidget(self.table, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(splitter(Qt.Orientation.Vertical, top, detail, sizes=[200, 240], name="fusionSplit"))
        self.table.currentCellChanged.connect(self._on_current)
        self.table.cellActivated.connect(self._on_activated)

    # -- public API ---------------------------------------------------------------------------------
    def set_fusions(self, fusions: list[dict[str, Any]], have_log: bool = False) -> None:
        """Show ``fusions``; ``have_log``: the recording has the fusion log (else the decisions pane says how
        to get it)."""
        self._fusions = [dict(f) for f in fusions]
        self._have_log = have_log
        rows = [[f["name"], f.get("kind", ""), f.get("created_by") or "(final module)",
                 str(len(f.get("absorbed") or [])), f.get("source", ""), self._measured_text(f["name"])]
                for f in self._fusions]
        self.table.blockSignals(True)
        _fill(self.table, rows)
        self.table.blockSignals(False)
        kinds: dict[str, int] = {}
        for f in self._fusions:
            kinds[f.get("kind", "")] = kinds.get(f.get("kind", ""), 0) + 1
        self.count.setText(f"{len(fusions)} fusions in the final module · "
                           + ", ".join(f"{k or '?'} {n}" for k, n in sorted(kinds.items())))
        _fill(self.absorbed, [])
        _fill(self.decisions, [])
        self.absorbed_label.setText("Select a fusion to see the instructions it absorbed.")
        self.decisions_label.setText("" if have_log else "Fusion decisions: record with “Fusion log” checked.")
        if self._fusions:
            self.select(self._fusions[0]["name"])

    def set_measured(self, us_per_step: dict[str, float]) -> None:
        """Measured time per step (µs) of each fusion from a profile of the step (instruction name → µs), shown
        in the last column; ``{}`` clears it."""
        self._measured = dict(us_per_step)
        col = FUSION_COLUMNS.index("µs/step")
        for i in range(self.table.rowCount()):
            item = self.table.item(i, col)
            if item is not None:
                item.setText(self._measured_text(cell(self.table, i, 0).text()))

    def _measured_text(self, name: str) -> str:
        value = self._measured.get(name)
        return "" if value is None else f"{value:,.1f}"

    def names(self) -> list[str]:
        return [f["name"] for f in self._fusions]

    def select(self, name: str) -> bool:
        """Select fusion ``name`` (False when the final module has none of that name)."""
        for i in range(self.table.rowCount()):
            if cell(self.table, i, 0).text() == name:
                self.table.setCurrentCell(i, 0)
                self.table.scrollToItem(cell(self.table, i, 0))
                return True
        return False

    def current(self) -> str:
        row = self.table.currentRow()
        item = self.table.item(row, 0) if row >= 0 else None
        return item.text() if item else ""

    def decision_rows(self) -> list[list[str]]:
        """The decisions pane's rows as shown (tests)."""
        return [[cell(self.decisions, i, j).text() for j in range(self.decisions.columnCount())]
                for i in range(self.decisions.rowCount())]

    def absorbed_rows(self) -> list[list[str]]:
        return [[cell(self.absorbed, i, j).text() for j in range(self.absorbed.columnCount())]
                for i in range(self.absorbed.rowCount())]

    # -- internals ----------------------------------------------------------------------------------
    def _show(self, fusion: dict[str, Any]) -> None:
        absorbed = fusion.get("absorbed") or []
        has_ir = bool(fusion.get("has_llvm_ir"))
        self.llvm_button.setEnabled(has_ir)
        self.llvm_button.setToolTip(LLVM_TIP if has_ir else LLVM_TIP + ". Not dumped for this recording: a model "
                                    "step's kernels are recorded without it (jax 0.12's XLA:CPU can abort while "
                                    "dumping a large module's kernels); a program's are, and `passes --kernel-ir` "
                                    "asks for them")
        _fill(self.absorbed, [[str(a[0]), str(a[1]), str(a[2]) if len(a) > 2 else ""] for a in absorbed])
        where = f", created by <b>{fusion['created_by']}</b>" if fusion.get("created_by") else ""
        self.absorbed_label.setText(f"<b>{fusion['name']}</b> ({fusion.get('kind', '')}){where}: "
                                    f"{len(absorbed)} instructions")
        decisions = fusion.get("decisions") or []
        _fill(self.decisions, [["fused" if d.get("fused") else "refused", d.get("producer", ""),
                                d.get("consumer", ""), d.get("reason", "") or "(no reason logged)"]
                               for d in decisions])
        for i, d in enumerate(decisions):
            cell(self.decisions, i, 0).setForeground(QColor("#15803d" if d.get("fused") else "#b91c1c"))
        if getattr(self, "_have_log", False):
            fused = sum(1 for d in decisions if d.get("fused"))
            self.decisions_label.setText(f"Fusion log: {fused} fused, {len(decisions) - fused} refused into "
                                         f"{fusion['name']}" if decisions else
                                         f"The fusion log has no decision about {fusion['name']} "
                                         "(custom fusions are formed by other passes).")

    @Slot(int, int, int, int)
    def _on_current(self, row: int, _c: int, _pr: int, _pc: int) -> None:
        if 0 <= row < self.table.rowCount():
            name = cell(self.table, row, 0).text()
            fusion = next((f for f in self._fusions if f["name"] == name), None)
            if fusion is not None:
                self._show(fusion)
                self.fusionSelected.emit(name)

    @Slot(int, int)
    def _on_activated(self, row: int, _col: int) -> None:
        if 0 <= row < self.table.rowCount():
            self.fusionActivated.emit(cell(self.table, row, 0).text())
