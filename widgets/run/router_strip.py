"""Which experts each token went to in a mixture-of-experts run: a heat strip under the token stream (issue 42).

One column per model call's token (the prompt's tokens, then each generated token as the next decode step read
it), one row per (layer, expert), the layers stacked with a gap between them. A cell is coloured by the router's
top-k weight of that expert for that token (white: not chosen). Plain data in — the call records' ``experts`` /
``expert_weights`` (``[layer][token][k]``) and the tokens' texts; no JAX. Hovering a column names the token and
each layer's experts and weights. Hidden until a run brings routing (a dense model never shows it).
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtGui import QColor, QMouseEvent, QPainter, QPaintEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QToolTip, QVBoxLayout, QWidget

from app.core.inspect.views import PREFILL
from app.core.units import counted

CELL_W = 7  # px per token column
GAP = 3  # px between two layers' rows
MAX_HEIGHT = 120  # px for the rows; each row gets at least 1 px
LABEL_W = 22  # px of the layer labels at the left
HOT = QColor(176, 58, 46)  # weight 1.0; weight w is HOT mixed with white by w


@dataclass(frozen=True)
class RoutedToken:
    """One column: ``call_index`` of the call that routed it, ``text`` of the token (may be ``""``), and per
    layer the ``(expert, weight)`` pairs its router chose."""

    call_index: int
    text: str
    layers: tuple[tuple[tuple[int, float], ...], ...]


class _Heat(QWidget):
    """The strip itself (painted): :class:`RouterStrip` owns the data."""

    def __init__(self, owner: RouterStrip) -> None:
        super().__init__(owner)
        self._owner = owner
        self.setMouseTracking(True)

    def row_height(self, height: int = MAX_HEIGHT) -> int:
        """Px per (layer, expert) row in ``height`` px (at most 6, at least 1)."""
        o = self._owner
        rows = max(1, o.n_layers * o.num_experts)
        return max(1, min(6, (min(height, MAX_HEIGHT) - GAP * max(0, o.n_layers - 1)) // rows))

    def sizeHint(self) -> QSize:
        o = self._owner
        return QSize(LABEL_W + CELL_W * 40, o.n_layers * (o.num_experts * self.row_height() + GAP))

    def minimumSizeHint(self) -> QSize:  # 1 px rows where the token card is short (1280×720)
        o = self._owner
        return QSize(LABEL_W + CELL_W * 8, o.n_layers * (o.num_experts + GAP))

    def visible_columns(self) -> list[RoutedToken]:
        """The latest columns that fit the width."""
        fit = max(1, (self.width() - LABEL_W) // CELL_W)
        return self._owner.columns[-fit:]

    def paintEvent(self, event: QPaintEvent) -> None:
        o, rh = self._owner, self.row_height(self.height())
        painter = QPainter(self)
        painter.fillRect(self.rect(), QColor("white"))
        painter.setPen(QColor(90, 90, 90))
        font = painter.font()
        font.setPointSizeF(7.0)
        painter.setFont(font)
        block = o.num_experts * rh
        for layer in range(o.n_layers):
            top = layer * (block + GAP)
            painter.drawText(QRect(0, top, LABEL_W - 2, block), Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                             f"L{layer}")
            painter.fillRect(LABEL_W, top, self.width() - LABEL_W, block, QColor(246, 246, 246))
        for c, col in enumerate(self.visible_columns()):
            x = LABEL_W + c * CELL_W
            for layer, pairs in enumerate(col.layers):
                top = layer * (block + GAP)
                for expert, weight in pairs:
                    if 0 <= expert < o.num_experts:
                        painter.fillRect(x, top + expert * rh, CELL_W - 1, rh, _heat(weight))
        painter.end()

    def column_at(self, pos: QPoint) -> RoutedToken | None:
        c = (pos.x() - LABEL_W) // CELL_W
        shown = self.visible_columns()
        return shown[c] if pos.x() >= LABEL_W and 0 <= c < len(shown) else None

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        col = self.column_at(event.position().toPoint())
        if col is None:
            QToolTip.hideText()
            return
        QToolTip.showText(event.globalPosition().toPoint(), describe(col), self)


def _heat(weight: float) -> QColor:
    w = max(0.15, min(1.0, weight))  # a chosen expert is never white
    return QColor(int(255 + (HOT.red() - 255) * w), int(255 + (HOT.green() - 255) * w),
                  int(255 + (HOT.blue() - 255) * w))


def describe(col: RoutedToken) -> str:
    """``call 3 · 'the' · L0: 5 (0.62), 1 (0.38) · L1: …`` — the column's tooltip and accessible text."""
    layers = " · ".join(f"L{i}: " + ", ".join(f"{e} ({w:.2f})" for e, w in pairs) for i, pairs in enumerate(col.layers))
    return f"call {col.call_index} · {col.text!r} · {layers}"


class RouterStrip(QWidget):
    """A caption and the heat strip. :meth:`add_call` per call record (its ``experts`` and ``expert_weights``),
    :meth:`add_token` per token (their texts name the columns), :meth:`clear` when a run starts."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("routerStrip")
        self.columns: list[RoutedToken] = []
        self.n_layers = 0
        self.num_experts = 0
        self._texts: dict[int, str] = {}  # call index → text of the token it produced
        self._prompt: list[str] = []
        self.caption = QLabel("")
        self.caption.setObjectName("routerCaption")
        # never wider than the column it is given: appearing must not widen the token card (and move Run/Stop)
        self.caption.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.heat = _Heat(self)
        self.heat.setObjectName("routerHeat")
        box = QVBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(2)
        box.addWidget(self.caption)
        box.addWidget(self.heat)
        # its height comes out of the token view's, never out of the window's: a minimum of its own (1 px), not its
        # rows', so appearing cannot make the main area taller and move the docks and the plot
        self.setMinimumHeight(1)
        self.setVisible(False)

    def clear(self, prompt_tokens: list[str] | None = None) -> None:
        """A new run: no columns; ``prompt_tokens`` name the prefill's columns (optional)."""
        self.columns, self._texts, self._prompt = [], {}, list(prompt_tokens or [])
        self.n_layers = self.num_experts = 0
        self.setVisible(False)

    def add_token(self, call_index: int, text: str) -> None:
        """The token made by call ``call_index``: the next call routes it."""
        self._texts[call_index] = text

    def add_call(self, call_index: int, step: str, experts: list | None, weights: list | None) -> None:
        """One call's routing (``[layer][token][k]``); a call without routing is skipped."""
        if not experts:
            return
        weights = weights or [[[1.0] * len(k) for k in layer] for layer in experts]
        n_tokens = len(experts[0])
        for t in range(n_tokens):
            if step == PREFILL:
                text = self._prompt[t] if t < len(self._prompt) else f"prompt token {t}"
            else:
                text = self._texts.get(call_index - 1, "")
            layers = tuple(tuple(zip(map(int, experts[layer][t]), map(float, weights[layer][t])))
                           for layer in range(len(experts)))
            self.columns.append(RoutedToken(call_index, text, layers))
        self.n_layers = max(self.n_layers, len(experts))
        self.num_experts = max(self.num_experts, 1 + max(e for layer in experts for tok in layer for e in tok))
        self.caption.setText(f"<b>Experts per token</b> · {counted(len(self.columns), 'token')} · "
                             f"{counted(self.n_layers, 'layer')} × {counted(self.num_experts, 'expert')} · "
                             "colour: router weight")
        self.setVisible(True)
        self.heat.setMaximumHeight(self.heat.sizeHint().height())  # its rows shrink where the card is short
        self.heat.update()
