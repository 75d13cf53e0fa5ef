"""The Passes tab's two dialogs, as widgets filled with plain data: a fusion's kernel in LLVM IR (after LLVM's
passes and before) and the comparison of two recorded compilations (their counts side by side, the diff of their
final modules). The panel (:mod:`app.gui.panels.passes`) builds the data. GUI thread only."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from widgets.common.splitters import splitter
from widgets.common.tables import read_only
from widgets.common.typed_qt import named
from widgets.ir.code_view import CodeView
from widgets.ir.hlo_diff import HloDiff

DiffRow = tuple[str, int | None, int | None, str]


def _close_box(dlg: QDialog, body: QWidget, size: tuple[int, int]) -> None:
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
    buttons.rejected.connect(dlg.reject)
    lay = QVBoxLayout(dlg)
    lay.addWidget(body, 1)
    lay.addWidget(buttons)
    dlg.resize(*size)


class LlvmDialog(QDialog):
    """Fusion ``name``'s kernel: ``optimized`` (after LLVM's passes) and ``unoptimized`` texts in two tabs
    (``views``: their code views, optimized first); ``None`` shows "(not dumped)"."""

    def __init__(self, parent: QWidget | None, name: str, optimized: str | None, unoptimized: str | None) -> None:
        super().__init__(parent)
        self.setObjectName("fusionLlvmDialog")
        self.setWindowTitle(f"{name} · LLVM IR")
        tabs = QTabWidget()
        self.views: list[CodeView] = []
        for text, key, title in ((optimized, "Optimized", "after LLVM's passes"),
                                 (unoptimized, "Unoptimized", "before")):
            view = CodeView()
            view.setObjectName(f"fusionLlvm{key}")
            view.set_code(text or "(not dumped)", highlight=False)
            tabs.addTab(view, title)
            self.views.append(view)
        _close_box(self, tabs, (1000, 640))


class CompareDialog(QDialog):
    """Two compilations side by side: ``counts`` rows ``(what, first, second)`` (numbers or None, shown "–") in
    ``counts_table`` under ``labels``, and ``rows`` (:func:`app.core.passes.diff.diff_rows`) of their final
    modules in ``diff_view`` (``final_text``: the second's whole module), titled by ``summary``."""

    def __init__(self, parent: QWidget | None, labels: tuple[str, str], counts: list[tuple[str, Any, Any]],
                 rows: list[DiffRow] | None, final_text: str, summary: str) -> None:
        super().__init__(parent)
        self.setObjectName("passesCompareDialog")
        self.setWindowTitle("Compare two compilations")
        self.comparison: Any = None  # the panel keeps what it compared here
        table = self.counts_table = named(QTableWidget(len(counts), 3), "passesCompareCounts")
        table.setHorizontalHeaderLabels(["", *labels])
        table.setToolTip("measured ms per call: the median wall time of the latest run's calls of that step that "
                         "did not compile (– when no run executed that compilation, e.g. one with XLA flags)")
        for r, (what, x, y) in enumerate(counts):
            for col, v in enumerate((what, x, y)):
                text = what if col == 0 else ("–" if v is None else (f"{v:,.1f}" if isinstance(v, float) else f"{v:,}"))
                item = QTableWidgetItem(text)
                if col:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                table.setItem(r, col, item)
        for col, label in enumerate(labels, start=1):
            header = table.horizontalHeaderItem(col)
            if header is not None:
                header.setToolTip(label)
        table.resizeColumnsToContents()
        read_only(table, selection="rows", wrap=True)
        # the two recordings side by side in the pane, the row names kept (issue 29's flaw 7: a column as wide
        # as its long label showed one column at a time and scrolled the row names away): labels elided in the
        # headers, whole above the table and in the headers' tool tips
        head = table.horizontalHeader()
        head.setTextElideMode(Qt.TextElideMode.ElideRight)  # "1: decode · jit-…": the number first
        head.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        for col in (1, 2):
            head.setSectionResizeMode(col, QHeaderView.ResizeMode.Stretch)
        table.setMinimumWidth(360)
        legend = named(QLabel("\n".join(labels)), "passesCompareLabels")
        legend.setWordWrap(True)
        left = QWidget()
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        ll.addWidget(legend)
        ll.addWidget(table, 1)
        diff = self.diff_view = HloDiff()
        diff.setObjectName("passesCompareDiff")
        if rows is not None:
            diff.set_diff(labels[0], labels[1], rows, final_text)
        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 0, 0)
        rl.addWidget(QLabel(summary))
        rl.addWidget(diff, 1)
        split = splitter(Qt.Orientation.Horizontal, left, right, sizes=[380, 720], collapsible=True)
        _close_box(self, split, (1100, 650))
