"""Mode-race summary: one column per mode, one row per figure; the best value of each row is highlighted.

Plain data in: the metrics are column objects (``key``, ``short`` or ``title``, ``format(value)`` or, when
they have it, ``spoken_text(value)`` with the unit in the value, ``best``
of ``"low"``/``"high"``/None and, when they have it, ``widest``, the widest text a value is expected to take —
the app passes ``app.core.report.columns.RACE_COLUMNS``), and :meth:`set_rows`
takes one dict per mode keyed by those keys plus ``mode`` and ``reason``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics
from PySide6.QtWidgets import QHeaderView, QTableWidget, QTableWidgetItem, QWidget

from widgets.common.tables import read_only

BEST_BRUSH = QBrush(QColor("#dcfce7"))
BEST_TEXT = QBrush(QColor("#14532d"))
STOPPED = " (stopped)"  # after a stopped lane's mode, in its header
#: The least share of the window's font the fitted summary's font shrinks to (:meth:`RaceTable.fit_rows`): 9 pt
#: of a talk's 14.4 pt at 1280×720, the window's own size outside a talk.
SMALLEST_FONT = 0.625


class RaceTable(QTableWidget):
    """Transposed summary table (modes are columns, so four modes fit a narrow panel)."""

    def __init__(self, metrics: Sequence[Any], parent: QWidget | None = None) -> None:
        super().__init__(len(metrics), 0, parent)
        self.metrics = list(metrics)
        self.setObjectName("raceTable")
        self.setVerticalHeaderLabels([m.short or m.title for m in self.metrics])
        read_only(self, selection="none", alternating=True, grid=False, row_header=True,
                  resize=QHeaderView.ResizeMode.Stretch)
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.verticalHeader().setDefaultAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.setToolTip(
            "Each mode starts cold (compiled steps and JAX caches cleared). TTFT: time to first token; "
            "compile: trace + lower + compile of every compiling call; ms / token and tokens / s: steady "
            "decode (median of the calls that did not compile); × torch compares steady tokens/s; total: "
            "the whole run. Best value of a row in green."
        )
        self._rows: list[dict[str, Any]] = []
        self._colours: dict[str, str] = {}

    def set_rows(self, rows: list[dict[str, Any]], colours: dict[str, str] | None = None) -> None:
        """Show ``rows`` (one per mode, in race order); ``colours`` maps a mode to its plot colour."""
        colours = colours or {}
        self._rows, self._colours = list(rows), dict(colours)
        self.setColumnCount(len(rows))
        bold = QFont(self.font())
        bold.setBold(True)
        for col, row in enumerate(rows):
            title = row["mode"] + (STOPPED if row.get("reason") == "stopped" else "")  # one line
            header = QTableWidgetItem(title)
            header.setForeground(QBrush(QColor(colours.get(row["mode"], "#111827"))))
            header.setFont(bold)
            self.setHorizontalHeaderItem(col, header)
        for r, metric in enumerate(self.metrics):
            best = metric.best
            fmt = getattr(metric, "spoken_text", metric.format)  # values carry their unit (s, ms/token, ×)
            values = [row.get(metric.key) for row in rows]
            known = [v for v in values if v is not None]
            winner = (min(known) if best == "low" else max(known)) if best and len(known) > 1 else None
            for col, value in enumerate(values):
                item = QTableWidgetItem(fmt(value))
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if winner is not None and value == winner:
                    item.setBackground(BEST_BRUSH)
                    item.setForeground(BEST_TEXT)
                self.setItem(r, col, item)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        """A font change (presentation mode on or off) redraws the headers in the new font: their bold font
        is set per item, so it would otherwise keep the old size (also when a race ended while presenting)."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange and self._rows:
            self.set_rows(self._rows, self._colours)

    def content_height(self) -> int:
        """Height that shows the header and every row without a scroll bar (px)."""
        self.resizeRowsToContents()
        rows = sum(self.rowHeight(r) for r in range(self.rowCount()))
        return self.horizontalHeader().sizeHint().height() + rows + 2 * self.frameWidth() + 2

    def content_width(self) -> int:
        """Width that shows the row titles and every column's header and values uncut, on one line (px)."""
        return self._frame() + sum(self._columns(
            [[item.text() for r in range(self.rowCount()) if (item := self.item(r, col))]
             for col in range(self.columnCount())],
            [h.text() if (h := self.horizontalHeaderItem(col)) else "" for col in range(self.columnCount())]))

    def reserved_width(self) -> int:
        """Width that shows the row titles and, for each column, its mode and the widest value each metric is
        expected to show (its ``widest`` text, when it has one), and one lane stopped ("jit-static (stopped)":
        Stop ends a race, so one lane at most), on one line (px): it depends on the modes shown, not on their
        values (issue 55: a longer value widened presentation mode's left column, and Run, Stop and the plot moved
        5–9 px between two runs)."""
        widest = [w for m in self.metrics if (w := getattr(m, "widest", ""))]
        modes = [row["mode"] for row in self._rows]
        columns = self._columns([widest] * len(modes), modes)
        stopped = self._columns([widest] * len(modes), [f"{mode}{STOPPED}" for mode in modes])
        return self._frame() + sum(columns) + max([b - a for a, b in zip(columns, stopped, strict=True)], default=0)

    def _frame(self) -> int:
        """Width of the row titles and the frame (px)."""
        return self.verticalHeader().sizeHint().width() + 2 * self.frameWidth() + 4

    def _columns(self, columns: list[list[str]], headers: list[str]) -> list[int]:
        """Widths of ``columns`` (each column's texts, its bold header ``headers[i]``), px."""
        bold = QFont(self.font())
        bold.setBold(True)
        wide, plain = QFontMetrics(bold), self.fontMetrics()
        return [max([wide.horizontalAdvance(header)] + [plain.horizontalAdvance(t) for t in texts]) + 12
                for texts, header in zip(columns, headers, strict=True)]

    def fit_rows(self, on: bool, most: int | None = None, limit: int | None = None) -> None:
        """Always show every row and every value uncut (no vertical scroll bar, no "…": the presentation's race
        summary), in a width reserved for the modes shown (:meth:`reserved_width`, at most ``most`` px: the
        content's when a value is wider than expected), never wider than ``limit`` px: where the values need more
        (three or four lanes in a talk's font), their font shrinks, down to :data:`SMALLEST_FONT` of it; beyond
        that (five or six lanes) the table keeps ``limit`` and scrolls sideways, so the plot beside it keeps its
        share (issue 55: a six-lane race at 1280×720 took 76 % of the window's width, the plot 19 % of its area);
        or not (``on`` False: the table's ordinary font, size and scroll bars)."""
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff if on else Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self._fit_font(limit if on else None)
        reserved = self.reserved_width() if most is None else min(self.reserved_width(), most)
        width = max(self.content_width(), reserved)
        width = width if limit is None else min(width, limit)
        sideways = on and self.content_width() > width  # its horizontal scroll bar shows: every row kept above it
        bar = self.horizontalScrollBar().sizeHint().height() if sideways else 0
        self.setMinimumHeight(self.content_height() + bar if on else 0)
        self.setMinimumWidth(width if on else 0)
        mode = QHeaderView.ResizeMode.ResizeToContents if on else QHeaderView.ResizeMode.Stretch
        self.horizontalHeader().setSectionResizeMode(mode)  # each column as wide as its longest value

    def _fit_font(self, limit: int | None) -> None:
        """The font the window gives the table (a talk's), or a smaller one, by half points down to
        :data:`SMALLEST_FONT` of it, in which every value fits ``limit`` px (None: the window's font)."""
        self._set_font_css("")
        full = pt = self.font().pointSizeF()
        while limit is not None and full > 0 and self.content_width() > limit and pt > full * SMALLEST_FONT:
            pt = max(full * SMALLEST_FONT, pt - 0.5)
            self._set_font_css(f"QTableWidget, QHeaderView {{ font-size: {pt:.2f}pt; }}")

    def _set_font_css(self, css: str) -> None:
        """The table's own style sheet (it wins over the window's: presentation mode's font size)."""
        if self.styleSheet() != css:
            self.setStyleSheet(css)

    def clear_rows(self) -> None:
        self.set_rows([])

    def modes(self) -> list[str]:
        return [row["mode"] for row in self._rows]

    def text(self, key: str, mode: str) -> str:
        """The shown text of metric ``key`` for ``mode``; ValueError if absent."""
        row = [m.key for m in self.metrics].index(key)
        col = self.modes().index(mode)
        item = self.item(row, col)
        return item.text() if item else ""
