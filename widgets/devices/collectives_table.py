"""The collectives XLA inserted into a partitioned (multi-device) optimized HLO module: a one-line count
and a small table (kind, shape, model source line, HLO line). Plain data in: objects with ``kind``,
``shape``, ``source``, ``op_name``, ``name`` and ``line`` attributes (``app.core.parallel.mesh.Collective``).
No JAX. Signals are emitted on the GUI thread.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from widgets.common.tables import read_only

COLUMNS = ("Kind", "Shape", "Source line", "HLO line")
MAX_VISIBLE_ROWS = 3  # then it scrolls: hloView keeps most of the panel


def summary(rows: list[Any]) -> str:
    """``"7 collectives: 4 all-reduce, 2 all-gather, 1 reduce-scatter"`` (most frequent kind first)."""
    counts = Counter(r.kind for r in rows)
    kinds = ", ".join(f"{n} {kind}" for kind, n in counts.most_common())
    plural = "" if len(rows) == 1 else "s"
    return f"{len(rows)} collective{plural}: {kinds}" if rows else "no collectives"


class CollectivesTable(QWidget):
    """Hidden while there is nothing to list. ``lineActivated(int)``: the 1-based HLO line of a clicked
    row."""

    lineActivated = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("collectivesPanel")
        self._rows: list[Any] = []
        self.label = QLabel("")
        self.label.setObjectName("collectivesLabel")
        self.toggle = QToolButton(autoRaise=True)
        self.toggle.setText("Hide table")
        self.toggle.setCheckable(True)
        self.toggle.setObjectName("collectivesToggle")
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setObjectName("collectivesTable")
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        read_only(self.table, alternating=True, grid=False, row_height=20,
                  resize=QHeaderView.ResizeMode.ResizeToContents,
                  column_resize={2: QHeaderView.ResizeMode.Stretch})
        self.table.setToolTip("Click a row to show the instruction in the HLO text")
        top = QHBoxLayout()
        top.setContentsMargins(6, 2, 4, 0)
        top.addWidget(self.label, 1)
        top.addWidget(self.toggle)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 4)
        layout.setSpacing(2)
        layout.addLayout(top)
        layout.addWidget(self.table)
        self.table.cellClicked.connect(self._on_cell)
        self.toggle.toggled.connect(self._on_toggle)
        self.setVisible(False)

    def set_collectives(self, rows: list[Any] | None) -> None:
        """Show ``rows`` (None or empty hides the widget)."""
        self._rows = list(rows or [])
        self.setVisible(bool(self._rows))
        self.label.setText(f"<b>{summary(self._rows)}</b> · inserted by XLA's SPMD partitioner")
        self.table.setRowCount(len(self._rows))
        for i, r in enumerate(self._rows):
            cells = (r.kind, r.shape, r.source or "(no source line)", str(r.line))
            for j, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(f"{r.name} · {r.op_name}" if getattr(r, "op_name", "") else r.name)
                if j == 3:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(i, j, item)
        shown = min(len(self._rows), MAX_VISIBLE_ROWS)
        height = self.table.horizontalHeader().sizeHint().height() + shown * 20 + 4
        self.table.setFixedHeight(height)

    def rows(self) -> list[Any]:
        return list(self._rows)

    @Slot(int, int)
    def _on_cell(self, row: int, _column: int) -> None:
        if 0 <= row < len(self._rows):
            self.lineActivated.emit(int(self._rows[row].line))

    @Slot(bool)
    def _on_toggle(self, hidden: bool) -> None:
        self.table.setVisible(not hidden)
        self.toggle.setText("Show table" if hidden else "Hide table")
