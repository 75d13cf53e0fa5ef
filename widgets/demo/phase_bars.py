"""Phase breakdown: one stacked horizontal bar per compiling call — trace, lower, compile, execute (ms).

Plain data in: :meth:`PhaseBars.set_calls` takes :class:`PhaseCall` tuples. The bars show why the first
call is slow: tracing Python and compiling with XLA dwarf executing the compiled step.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import pyqtgraph as pg  # noqa: TID253 - a heavy module: its users import it inside functions
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QWidget

from app.core.units import ms
from widgets.common.typed_qt import plot_item

PHASES: tuple[tuple[str, str], ...] = (
    ("trace", "#6366f1"),
    ("lower", "#0ea5e9"),
    ("compile", "#ea580c"),
    ("execute", "#16a34a"),
)
#: torch.compile's own split of its compile (``CallRecord.compile_phases``): drawn in place of one "compile"
#: segment, in shades of the compile colour (app/core/modes/torch_compile_capture.py ``compile_phases``).
COMPILER_PHASES: tuple[tuple[str, str], ...] = (
    ("dynamo", "#7c3aed"),
    ("aot autograd", "#c026d3"),
    ("inductor lowering", "#f97316"),
    ("inductor codegen", "#dc2626"),
    ("c++ compile", "#92400e"),
)

MAX_BARS = 12
BAR_HEIGHT = 0.62


class PhaseCall(NamedTuple):
    """One compiling call: ``label`` (e.g. ``"jit-static · prefill #0"``) and its phase times in ms."""

    label: str
    trace_ms: float
    lower_ms: float
    compile_ms: float
    execute_ms: float
    disk_hit: bool = False
    #: the compiler's own split of ``compile_ms`` (torch-compile: Dynamo, AOT autograd, Inductor, C++), ms
    compile_parts: tuple[tuple[str, float], ...] = ()

    def segments(self) -> list[tuple[str, float]]:
        """``(phase, ms)`` left to right: trace, lower, compile (or its parts), execute."""
        compile_ = list(self.compile_parts) or [("compile", self.compile_ms)]
        return [("trace", self.trace_ms), ("lower", self.lower_ms), *compile_, ("execute", self.execute_ms)]


class PhaseBars(pg.PlotWidget):
    """Stacked bars, first call on top, a total label at the end of each bar, a legend of the phases."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, background="w", enableMenu=False)
        self.setObjectName("phaseBars")
        item = plot_item(self)
        item.hideButtons()
        item.getViewBox().setMouseEnabled(x=False, y=False)
        item.getViewBox().invertY(True)
        item.showGrid(x=True, y=False, alpha=0.15)
        item.setLabel("bottom", "time", units="ms")
        item.getAxis("bottom").enableAutoSIPrefix(False)
        item.getAxis("left").setStyle(tickLength=0)
        self._font_scale = 1.0
        self._set_legend()
        self._bars: dict[str, pg.BarGraphItem] = {}
        for name, colour in (*PHASES, *COMPILER_PHASES):
            bar = pg.BarGraphItem(
                x0=[], y=[], width=[], height=BAR_HEIGHT, brush=colour, pen=pg.mkPen("w", width=0.5)
            )
            item.addItem(bar)
            self._bars[name] = bar
        self._labels: list[pg.TextItem] = []
        self._calls: list[PhaseCall] = []
        self._note = pg.TextItem("", color="#6b7280", anchor=(0.5, 0.5))
        item.addItem(self._note, ignoreBounds=True)
        self.set_calls([])

    def set_calls(self, calls: list[PhaseCall]) -> None:
        """Draw the first :data:`MAX_BARS` of ``calls`` (a note says how many were left out)."""
        item = plot_item(self)
        shown = list(calls[:MAX_BARS])
        self._calls = shown
        for label in self._labels:
            item.removeItem(label)
            label.deleteLater()  # on the GUI thread, not in a garbage collection on another thread
        self._labels.clear()
        ys = list(range(len(shown)))
        segments: dict[str, tuple[list[float], list[float], list[float]]] = {n: ([], [], []) for n in self._bars}
        start = [0.0] * len(shown)
        for i, call in enumerate(shown):
            for name, value in call.segments():
                width = max(float(value or 0.0), 0.0)
                x0, y, w = segments.setdefault(name, ([], [], []))
                x0.append(start[i])
                y.append(i)
                w.append(width)
                start[i] += width
        for name, (x0, y, w) in segments.items():
            if name in self._bars:
                self._bars[name].setOpts(x0=x0, y=y, width=w, height=BAR_HEIGHT)
        self._set_legend(any(c.compile_parts for c in shown))
        ticks = [(y, c.label + ("  ◆" if c.disk_hit else "")) for y, c in zip(ys, shown)]
        item.getAxis("left").setTicks([ticks, []])
        right = max(start, default=0.0)
        for y, total in zip(ys, start):
            text = pg.TextItem(ms(total), color="#374151", anchor=(0, 0.5))
            text.setPos(total + right * 0.01, y)
            item.addItem(text, ignoreBounds=True)
            self._labels.append(text)
        left_out = len(calls) - len(shown)
        if not shown:
            self._note.setText("Compiling calls of the latest run(s) appear here.")
            self._note.setPos(0.5, 0.5)
            item.getViewBox().setXRange(0, 1, padding=0)
            item.getViewBox().setYRange(0, 1, padding=0)
        else:
            self._note.setText(f"+ {left_out} more compiling calls" if left_out else "")
            self._note.setPos(right * 0.5, len(shown) - 0.2)
            item.getViewBox().setXRange(0, right * 1.18 or 1.0, padding=0)
            item.getViewBox().setYRange(-0.6, len(shown) - 0.4 + (0.6 if left_out else 0), padding=0)

    def _set_legend(self, compiler_parts: bool = False) -> None:
        """The legend, as the plot's title: a coloured square per phase (with torch.compile's parts when a bar
        shows them)."""
        phases = PHASES + (COMPILER_PHASES if compiler_parts else ())
        keys = " &nbsp; ".join(f"<span style='color:{colour}'>■</span> {name}" for name, colour in phases)
        size = 9 * self._font_scale
        self.setTitle(
            f"<span style='color:#374151;font-size:{size:.0f}pt'>{keys} &nbsp; ◆ = from disk cache</span>"
        )

    def legend_text(self) -> str:
        return plot_item(self).titleLabel.text

    def segment_widths(self) -> dict[str, list[float]]:
        """Per phase drawn, the widths (ms) of its segments, top bar first."""
        widths: dict[str, Any] = {name: bar.opts["width"] for name, bar in self._bars.items()}  # as setOpts got
        return {name: [float(w) for w in ws] for name, ws in widths.items() if len(ws)}

    def bar_count(self) -> int:
        return len(self._calls)

    def calls(self) -> list[PhaseCall]:
        return list(self._calls)

    def set_font_scale(self, scale: float, base_pt: float = 9.0) -> None:
        """Scale axis tick fonts (presentation mode); 1.0 restores."""
        font = QFont()
        font.setPointSizeF(base_pt * scale)
        for name in ("left", "bottom"):
            plot_item(self).getAxis(name).setTickFont(font)
        self._font_scale = scale
        self._set_legend()
