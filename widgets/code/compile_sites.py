"""Compiles per call site: the table beside the compile log (issue 41). One row per (call site, function) of the
newest run — how many times it compiled, the compile ms (trace / lower / compile), and each compile's cause — in the
order given (the app sorts them costliest first: ``app.core.programs.sites.compile_sites``). Plain data in: one dict
per site with the keys of ``CompileSite.to_json()``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import QHeaderView, QTableWidget, QTableWidgetItem, QToolButton, QVBoxLayout, QWidget

from widgets.common.tables import read_only

COLUMNS = ("call site", "function", "compiles", "compile ms", "trace / lower / compile", "causes")


class CompileSitesTable(QTableWidget):
    """The table; :meth:`show_sites` replaces its rows."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(0, len(COLUMNS), parent)
        self.setObjectName("compileSites")
        self.setHorizontalHeaderLabels(list(COLUMNS))
        fit, stretch = QHeaderView.ResizeMode.ResizeToContents, QHeaderView.ResizeMode.Stretch
        read_only(self, selection="rows", alternating=True, grid=False, row_height="line",
                  column_resize={i: stretch if i == len(COLUMNS) - 1 else fit for i in range(len(COLUMNS))})

    def show_sites(self, sites: Sequence[dict[str, Any]]) -> None:
        """One row per site: ``site``, ``function``, ``n_compiles``, ``compile_ms``, ``trace_ms``, ``lower_ms``,
        ``backend_ms`` (ms), ``causes`` (a list of str, one per compile: the cell's tool tip) and ``cause_text`` (the
        cell: the causes in short, ``app.core.programs.sites.cause_summary``; default: all of them)."""
        self.setRowCount(len(sites))
        for r, s in enumerate(sites):
            causes = [str(c) for c in s.get("causes", [])]
            texts = (str(s.get("site", "")), str(s.get("function", "")), str(s.get("n_compiles", 0)),
                     f"{s.get('compile_ms', 0.0):.1f}",
                     f"{s.get('trace_ms', 0.0):.1f} / {s.get('lower_ms', 0.0):.1f} / {s.get('backend_ms', 0.0):.1f}",
                     str(s.get("cause_text") or "; ".join(causes)))
            for c, text in enumerate(texts):
                item = QTableWidgetItem(text)
                if c in (2, 3, 4):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if c == len(texts) - 1:
                    item.setToolTip("\n".join(f"{k + 1}. {cause}" for k, cause in enumerate(causes)))
                self.setItem(r, c, item)

    def cell_text(self, row: int, column: int) -> str:
        """The text of one cell (``""`` when empty)."""
        item = self.item(row, column)
        return item.text() if item is not None else ""


#: Rows the drawer shows without scrolling (its table's height when open).
DRAWER_ROWS = 4


class SitesDrawer(QWidget):
    """A one-line header (:attr:`toggle`: "▸ Compiles per call site: 2 call sites · 5 compiles") that opens the
    table put in it (:meth:`put`) under it, :data:`DRAWER_ROWS` rows tall; closed, only the header's line is
    used (the Code workspace's editor keeps its height: opening it is the user's click, never a run's)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sitesDrawer")
        self.toggle = QToolButton()
        self.toggle.setObjectName("sitesDrawerToggle")
        self.toggle.setCheckable(True)
        self.toggle.setAutoRaise(True)
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.toggle.setToolTip("Show or hide the compiles per call site of the newest run: how many times each "
                               "jitted function compiled at each line, the compile ms and each compile's cause")
        self.toggle.toggled.connect(self._on_toggled)
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(2)
        self._layout.addWidget(self.toggle)
        self.table: CompileSitesTable | None = None
        self.set_summary("")

    def set_summary(self, text: str) -> None:
        """The header's words after its title (``""``: none yet)."""
        self.toggle.setText("Compiles per call site" + (f": {text}" if text else ""))

    def put(self, table: CompileSitesTable) -> None:
        """Hold ``table`` under the header, shown while the drawer is open."""
        self.table = table
        self._layout.addWidget(table)
        rows = table.verticalHeader().defaultSectionSize() * DRAWER_ROWS
        table.setFixedHeight(rows + table.horizontalHeader().sizeHint().height() + 2 * table.frameWidth())
        table.setVisible(self.toggle.isChecked())

    def take(self) -> None:
        """Give the table back (its height free again); the header stays."""
        if self.table is not None:
            self._layout.removeWidget(self.table)
            self.table.setMinimumHeight(0)
            self.table.setMaximumHeight(16777215)  # QWIDGETSIZE_MAX
            self.table = None

    def is_open(self) -> bool:
        return self.toggle.isChecked()

    @Slot(bool)
    def _on_toggled(self, on: bool) -> None:
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if on else Qt.ArrowType.RightArrow)
        if self.table is not None:
            self.table.setVisible(on)
