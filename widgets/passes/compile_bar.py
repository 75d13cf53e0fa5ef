"""The compile spike taken apart: one horizontal stacked bar of a compile's parts (HLO pass pipelines,
thunk emission, LLVM, the rest of the backend, the rest; before them JAX's trace and lower when known),
coloured by group, each labelled with its ms
where it fits; hover a part for its name, ms, share and the profiler events it comes from.

Plain data in: :meth:`CompileBar.set_parts` takes the total ms and dicts with ``label``, ``ms``, ``group``
(``"trace"``, ``"lower"``, ``"HLO passes"``, ``"backend"``, ``"other"``) and optionally ``source``.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QHelpEvent, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

#: Shades per group, taken in turn by that group's parts.
GROUP_COLORS: dict[str, tuple[str, ...]] = {
    "trace": ("#7c3aed",),
    "lower": ("#0f766e",),
    "HLO passes": ("#1e40af", "#2563eb", "#3b82f6", "#60a5fa", "#93c5fd", "#1d4ed8"),
    "backend": ("#c2410c", "#ea580c", "#fb923c", "#fdba74"),
    "other": ("#6b7280", "#9ca3af", "#d1d5db"),
}
LIGHT_TEXT = {"#7c3aed", "#0f766e", "#1e40af", "#2563eb", "#3b82f6", "#1d4ed8", "#c2410c", "#ea580c", "#6b7280"}


def short_label(label: str) -> str:
    """``HLO passes: simplification`` → ``simplification`` (the colour says it is an HLO pipeline)."""
    return label.split(": ", 1)[-1]


class CompileBar(QWidget):
    """One stacked bar plus a caption line (total and per-group sums)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("compileBar")
        self.setMouseTracking(True)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self._total = 0.0
        self._parts: list[dict[str, Any]] = []
        self._rects: list[tuple[QRectF, dict[str, Any]]] = []
        self.setFixedHeight(self.sizeHint().height())

    def sizeHint(self) -> QSize:  # noqa: N802
        line = self.fontMetrics().height()
        return QSize(400, 2 * line + 14)

    # -- public API ---------------------------------------------------------------------------------
    def set_parts(self, total_ms: float, parts: list[dict[str, Any]]) -> None:
        self._total = float(total_ms)
        self._parts = [dict(p) for p in parts if p.get("ms", 0) > 0]
        colours: dict[str, int] = {}
        for p in self._parts:
            shades = GROUP_COLORS.get(p.get("group", "other"), GROUP_COLORS["other"])
            n = colours.get(p.get("group", ""), 0)
            colours[p.get("group", "")] = n + 1
            p["colour"] = shades[n % len(shades)]
        self.update()

    def parts(self) -> list[dict[str, Any]]:
        return [dict(p) for p in self._parts]

    def caption(self) -> str:
        """``compile 1,277 ms = HLO passes 105 ms (8%) + backend 1,136 ms (89%) + other 37 ms (3%)``."""
        if not self._parts:
            return "Record a step's passes to take its compile apart."
        groups: dict[str, float] = {}
        for p in self._parts:
            groups[p.get("group", "other")] = groups.get(p.get("group", "other"), 0.0) + p["ms"]
        total = self._total or sum(groups.values()) or 1.0
        head = "first call's compile" if "trace" in groups or "lower" in groups else "compile"
        return f"{head} {self._total:,.0f} ms = " + " + ".join(
            f"{g} {v:,.0f} ms ({v / total:.0%})" for g, v in groups.items())

    def labels(self) -> list[str]:
        """The labels drawn inside the bar (parts too narrow for one show theirs in the tooltip only)."""
        return [t for _, t in self._drawn_labels()]

    # -- painting -----------------------------------------------------------------------------------
    def _layout(self) -> list[tuple[QRectF, dict[str, Any]]]:
        line = self.fontMetrics().height()
        bar = QRectF(2, line + 6, max(self.width() - 4, 1), line + 6)
        total = sum(p["ms"] for p in self._parts) or 1.0
        x, out = bar.left(), []
        for p in self._parts:
            w = bar.width() * p["ms"] / total
            out.append((QRectF(x, bar.top(), w, bar.height()), p))
            x += w
        return out

    def _drawn_labels(self) -> list[tuple[QRectF, str]]:
        fm = self.fontMetrics()
        out = []
        for rect, p in self._layout():
            for text in (f"{short_label(p['label'])} {p['ms']:,.0f} ms", f"{p['ms']:,.0f} ms",
                         f"{p['ms']:,.0f}"):
                if fm.horizontalAdvance(text) + 6 <= rect.width():
                    out.append((rect, text))
                    break
        return out

    def paintEvent(self, _event: Any) -> None:  # noqa: N802
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        fm = self.fontMetrics()
        painter.setPen(QColor("#374151"))
        painter.drawText(QRectF(2, 2, self.width() - 4, fm.height() + 2),
                         Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                         fm.elidedText(self.caption(), Qt.TextElideMode.ElideRight, self.width() - 4))
        self._rects = self._layout()
        for rect, p in self._rects:
            painter.fillRect(rect, QColor(p["colour"]))
            painter.setPen(QPen(QColor("white"), 1))
            painter.drawLine(rect.topRight(), rect.bottomRight())
        colour = {p["label"]: p["colour"] for p in self._parts}
        for rect, text in self._drawn_labels():
            part = next(p for r, p in self._rects if r == rect)
            painter.setPen(QColor("white") if colour[part["label"]] in LIGHT_TEXT else QColor("#111827"))
            painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)
        painter.end()

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            total = sum(p["ms"] for p in self._parts) or 1.0
            for rect, p in self._rects:
                if rect.contains(QPointF(event.pos())):  # a QHelpEvent has pos(), no position()
                    QToolTip.showText(event.globalPos(), f"<b>{p['label']}</b>: {p['ms']:,.1f} ms "
                                      f"({p['ms'] / total:.0%})<br><i>{p.get('source', '')}</i>", self)
                    return True
            QToolTip.hideText()
            return True
        return super().event(event)
