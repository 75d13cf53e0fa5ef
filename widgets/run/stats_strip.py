"""The live figures above the token stream: TTFT, tokens/s, tokens, compiles, steady ms/token — or, for a run of
the user's program, first call, steady call, calls and compiles — and, for a model, the host's share of a steady
call and the steady decode's share of the memory-bandwidth bound. Every card keeps its place between runs."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QSize, QTimer
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QFrame, QGridLayout, QLabel, QVBoxLayout, QWidget

from app.core.units import ms
from widgets.plot.call_tooltip import (
    HOST_PARTS,
    SYNCHRONOUS_DISPATCH,
    SYNCHRONOUS_NOTE,
    host_share,
    share_text,
)

FIELDS: tuple[tuple[str, str], ...] = (
    ("ttft", "TTFT"),
    ("tps", "tokens/s"),
    ("tokens", "tokens"),
    ("compiles", "compiles"),
    ("steady", "ms/token"),
    ("host", "host share"),
    ("bound", "of mem BW"),
)
#: The widest figure each card shows in a sensible run ("52.2 ms" — :func:`app.core.units.ms` gives a decimal
#: below 100 ms, so "999 ms" was narrower — "1173" tokens/s, a program's steady call "21.4 ms" in the tokens/s
#: card, "2402.7" ms/token of an eager lane, "134 %"): its room is kept, so the strip's minimum width, which sets
#: the token column's, does not follow the figures (issue 55: TTFT "52.2 ms" then "118 ms" moved Run, Stop and
#: the plot 7–8 px between two runs at 1280×720)
WIDEST = {"ttft": "88.8 ms", "tps": "88.8 ms", "tokens": "8888", "compiles": "88", "steady": "8888.8",
          "host": "<0.1 %", "bound": "188 %"}
#: The host card's tool tip while it shows "–": why there is no figure.
NO_HOST_SHARE = ("host share: no steady decode call measured part by part yet — the jitted modes (jit-static, "
                 "jit-dynamic, jit-loop) time each call's host work; the eager and torch modes are not split")
MIN_COLUMNS = 4  # cards per row at least: seven cards wrap onto two rows in a narrow column
#: The captions of a program run (the "steady" card is hidden: the steady call is the second card).
PROGRAM_FIELDS: dict[str, str] = {"ttft": "first call", "tps": "steady call", "tokens": "calls",
                                  "compiles": "compiles"}


class StatsStrip(QFrame):
    """Seven small figure cards; :meth:`set_stats` takes plain numbers (None shows "–")."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("statsStrip")
        self._grid = QGridLayout(self)
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._grid.setSpacing(4)
        self._placed: tuple[int, tuple[str, ...]] = (0, ())  # columns, cards shown: the arrangement last laid out
        self.values: dict[str, QLabel] = {}
        self.captions: dict[str, QLabel] = {}
        self.cards: dict[str, QFrame] = {}
        self._program = False
        for key, title in FIELDS:
            card = QFrame(self)
            card.setObjectName("statCard")
            box = QVBoxLayout(card)
            box.setContentsMargins(6, 3, 6, 3)
            box.setSpacing(0)
            value = QLabel("–")
            value.setObjectName("statValue")
            caption = QLabel(title)
            caption.setObjectName("statCaption")
            box.addWidget(value)
            box.addWidget(caption)
            self.values[key] = value
            self.captions[key] = caption
            self.cards[key] = card
        self._reflow()

    # -- one row where it fits, else two: the strip never widens its column ---------------------------------
    def _shown(self) -> list[str]:
        return [key for key, card in self.cards.items() if not card.isHidden()]

    def _row_width(self, keys: list[str], columns: int) -> int:
        """Width in px of ``keys``' cards laid out in ``columns`` columns (a column as wide as its widest)."""
        widths = [max(self.cards[k].sizeHint().width(), self.cards[k].minimumWidth()) for k in keys]
        cols = [max(widths[j::columns], default=0) for j in range(columns)]
        return sum(cols) + self._grid.horizontalSpacing() * max(0, columns - 1)

    def minimumSizeHint(self) -> QSize:
        """As narrow as the cards in :data:`MIN_COLUMNS` columns (issue 37: seven cards in one row set the
        token column's minimum width and moved Run, Stop and the plot); a program run's keeps the room of the
        cards it hides (a model run's and a program's strip are as wide)."""
        keys = [k for k, card in self.cards.items() if not card.isHidden() or (self._program and k not in PROGRAM_FIELDS)]
        height = super().minimumSizeHint().height()
        return QSize(self._row_width(keys, min(MIN_COLUMNS, max(1, len(keys)))), height)

    def _reflow(self) -> None:
        """Lay the shown cards out in as many columns as the strip's width holds (all in one row when they fit,
        never fewer than :data:`MIN_COLUMNS` per row)."""
        self._reserve()
        keys = self._shown()
        columns = max(1, len(keys))
        while columns > MIN_COLUMNS and self._row_width(keys, columns) > self.width():
            columns -= 1
        if (columns, tuple(keys)) == self._placed:
            return
        self._placed = (columns, tuple(keys))
        for card in self.cards.values():
            self._grid.removeWidget(card)
        for column in range(self._grid.columnCount()):
            self._grid.setColumnStretch(column, 0)
        for i, key in enumerate(keys):
            self._grid.addWidget(self.cards[key], i // columns, i % columns)
        self._grid.setColumnStretch(columns, 1)  # the cards stay left, at their own widths
        self.updateGeometry()

    def _reserve(self) -> None:
        """Each value as wide as its :data:`WIDEST` in its own font, whatever it shows now: the strip's minimum width
        is then what its figures need (issue 37: at 1024×600 "648 ms" and "1173.0" were cut to "648 m" and
        "1173." — the minimum was taken while the cards showed "–")."""
        for key, label in self.values.items():  # on the card: a QLabel caches a size hint taken with its minimum
            label.ensurePolished()
            box = self.cards[key].layout()
            margins = self.cards[key].contentsMargins().left() + (box.contentsMargins().left() if box else 0)
            need = label.fontMetrics().horizontalAdvance(WIDEST[key]) + 2 * margins
            if self.cards[key].minimumWidth() != need:
                self.cards[key].setMinimumWidth(need)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._reflow()

    def event(self, e: QEvent) -> bool:
        if e.type() == QEvent.Type.LayoutRequest:  # a card shown or hidden (presentation), a font changed
            self._reflow()
        elif e.type() in (QEvent.Type.StyleChange, QEvent.Type.FontChange):  # presentation on or off: the
            QTimer.singleShot(0, self, self._reflow)  # values' room in their new font, once they have it
        return super().event(e)

    def set_program(self, program: bool) -> None:
        """Show a program run's cards (first call, steady call, calls, compiles) or a model run's (False)."""
        self._program = program
        for key, title in FIELDS:
            self.captions[key].setText(PROGRAM_FIELDS.get(key, title) if program else title)
            self.cards[key].setVisible(not program or key in PROGRAM_FIELDS)
        self._reflow()

    def is_program(self) -> bool:
        return self._program

    def caption(self, key: str) -> str:
        return self.captions[key].text()

    def set_calls(self, first_ms: float | None, steady_ms: float | None, n_calls: int, n_compiles: int) -> None:
        """A program run's figures: its first call's and its median non-compiling call's wall time (ms)."""
        self.values["ttft"].setText(ms(first_ms))
        self.values["tps"].setText(ms(steady_ms))
        self.values["tokens"].setText(str(n_calls))
        self.values["compiles"].setText(str(n_compiles))

    def reset(self) -> None:
        for label in self.values.values():
            label.setText("–")
        self.set_host(None)
        self.set_bound(None, "")

    def set_host(self, parts: dict[str, float] | None, leaves: int | None = None, synchronous: bool = False) -> None:
        """The host-dispatch card: the host's share of a steady decode call (the breakdown's parts in ms, the
        medians of the steady calls: ``app.core.events.steady_host_ms``; ``synchronous``: those calls ran their
        program inside the call, ``app.core.events.steady_synchronous``, so ``dispatch`` is the device's), the
        parts in its tool tip; "–" for None or an empty breakdown, its tool tip saying why. The card stays in
        place either way (issue 37: it came and went between runs and moved Run and Stop sideways)."""
        card = self.cards["host"]
        share = host_share(parts, synchronous)
        if share is None or parts is None:  # parts is None only when share is
            self.values["host"].setText("–")
            card.setToolTip(NO_HOST_SHARE)
            return
        self.values["host"].setText(share_text(share))
        described = {**dict(HOST_PARTS), **({"dispatch": SYNCHRONOUS_DISPATCH} if synchronous else {})}
        rows = [f"{key} {ms(parts.get(key, 0.0))} — {described[key]}" for key, _ in HOST_PARTS if key != "compile"]
        if leaves is not None:
            rows.append(f"{leaves:,} argument leaves per call")
        if synchronous:
            rows.append(SYNCHRONOUS_NOTE)
        card.setToolTip("<b>a steady decode call on the host</b> (medians)<br>" + "<br>".join(rows))

    def set_bound(self, share: float | None, note: str) -> None:
        """The memory-bandwidth gauge: the steady decode's share of the bandwidth bound (``bound_ms /
        steady_ms``, :meth:`app.core.profile.bound.MemoryBound.share`; 0.71 shows "71 %"), ``note`` (the
        bound's arithmetic) in its tool tip; "–" for None (no steady step yet, a program or recorded run)."""
        self.values["bound"].setText("–" if share is None else f"{share * 100:.0f} %")
        self.cards["bound"].setToolTip(
            "" if share is None else
            f"<b>{share * 100:.0f} % of the memory bandwidth</b>: the steady decode step against its floor"
            + (" — faster than memory allows: the weights are read from the CPU's caches" if share > 1 else "")
            + f"<br>{note}")

    def set_stats(
        self,
        ttft_ms: float | None,
        tokens_per_s: float | None,
        n_tokens: int,
        n_compiles: int,
        steady_ms: float | None,
    ) -> None:
        """Update every card. ``steady_ms`` is the median wall time of non-compiling decode calls."""
        self.values["ttft"].setText(ms(ttft_ms))
        self.values["tps"].setText("–" if tokens_per_s is None else per_s(tokens_per_s))
        self.values["tokens"].setText(str(n_tokens))
        self.values["compiles"].setText(str(n_compiles))
        self.values["steady"].setText("–" if steady_ms is None else f"{steady_ms:.1f}")

    def text(self, key: str) -> str:
        return self.values[key].text()


def per_s(rate: float) -> str:
    """Tokens per second as a card shows it: one decimal below 100 ("59.8"), whole from there ("1173")."""
    return f"{rate:.1f}" if rate < 100 else f"{rate:.0f}"
