"""The live figures above the token stream: TTFT, tokens/s, tokens, compiles, steady ms/token — or, for a run of
the user's program, first call, steady call, calls and compiles."""

from __future__ import annotations

from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from app.core.units import ms
from widgets.plot.call_tooltip import HOST_PARTS, host_share

FIELDS: tuple[tuple[str, str], ...] = (
    ("ttft", "TTFT"),
    ("tps", "tokens/s"),
    ("tokens", "tokens"),
    ("compiles", "compiles"),
    ("steady", "ms/token"),
    ("host", "host share"),
)
#: Cards shown only once they have a figure (:meth:`StatsStrip.set_host`: a jitted mode's breakdown).
ON_DEMAND = ("host",)
#: The captions of a program run (the "steady" card is hidden: the steady call is the second card).
PROGRAM_FIELDS: dict[str, str] = {"ttft": "first call", "tps": "steady call", "tokens": "calls",
                                  "compiles": "compiles"}


class StatsStrip(QFrame):
    """Five small figure cards; :meth:`set_stats` takes plain numbers (None shows "–")."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("statsStrip")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        self.values: dict[str, QLabel] = {}
        self.captions: dict[str, QLabel] = {}
        self.cards: dict[str, QFrame] = {}
        self._program = False
        for key, title in FIELDS:
            card = QFrame()
            card.setObjectName("statCard")
            box = QVBoxLayout(card)
            box.setContentsMargins(8, 3, 8, 3)
            box.setSpacing(0)
            value = QLabel("–")
            value.setObjectName("statValue")
            caption = QLabel(title)
            caption.setObjectName("statCaption")
            box.addWidget(value)
            box.addWidget(caption)
            layout.addWidget(card)
            self.values[key] = value
            self.captions[key] = caption
            self.cards[key] = card
            card.setVisible(key not in ON_DEMAND)
        layout.addStretch(1)

    def set_program(self, program: bool) -> None:
        """Show a program run's cards (first call, steady call, calls, compiles) or a model run's (False)."""
        self._program = program
        for key, title in FIELDS:
            self.captions[key].setText(PROGRAM_FIELDS.get(key, title) if program else title)
            self.cards[key].setVisible((not program or key in PROGRAM_FIELDS) and key not in ON_DEMAND)

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

    def set_host(self, parts: dict[str, float] | None, leaves: int | None = None) -> None:
        """The host-dispatch card: the host's share of a steady decode call (the breakdown's parts in ms, the
        medians of the steady calls: ``app.core.events.steady_host_ms``), the parts in its tool tip; hidden for
        None or an empty breakdown (a mode that is not jitted)."""
        card = self.cards["host"]
        share = host_share(parts)
        card.setVisible(share is not None and not self._program)
        if share is None or parts is None:  # parts is None only when share is
            self.values["host"].setText("–")
            card.setToolTip("")
            return
        self.values["host"].setText(f"{share * 100:.0f} %")
        rows = [f"{key} {ms(parts.get(key, 0.0))} — {what}" for key, what in HOST_PARTS if key != "compile"]
        if leaves is not None:
            rows.append(f"{leaves:,} argument leaves per call")
        card.setToolTip("<b>a steady decode call on the host</b> (medians)<br>" + "<br>".join(rows))

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
        self.values["tps"].setText("–" if tokens_per_s is None else f"{tokens_per_s:.1f}")
        self.values["tokens"].setText(str(n_tokens))
        self.values["compiles"].setText(str(n_compiles))
        self.values["steady"].setText("–" if steady_ms is None else f"{steady_ms:.1f}")

    def text(self, key: str) -> str:
        return self.values[key].text()
