"""The mode race's steady-state verdicts under its summary table: a progress line while the paired rounds run, then
one verdict per pair of modes ("jit-static 2.41× faster than torch (95 % CI 2.30–2.52)", in bold), the notes (modes
left out, a noisy machine) and the line every pair shares (paired rounds, dropped rounds, A/A floor, threads, why the
phase stopped); the whole sentences in its tool tip.

Plain data in: strings and, per sentence, whether its interval excludes 1 (a clear verdict is drawn dark, "no clear
difference" grey); a noisy machine's warning in amber.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

CLEAR = "#14532d"
UNCLEAR = "#4b5563"
NOISY = "#b45309"


EXPLAIN = ("Steady state: after the cold lanes, rounds of the same short generation once per mode (the baseline "
           "twice: the A/A noise floor), in a shuffled order; each ratio is the geometric mean of the rounds' "
           "ratios with its 95 % confidence interval")


class VerdictView(QLabel):
    """Word-wrapped rich text; selectable, so a sentence can be copied. Empty (hidden) until a race's steady state
    starts. GUI thread."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("verdictView")
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        self.setContentsMargins(4, 2, 4, 2)
        self.setToolTip(EXPLAIN)
        self._plain: list[str] = []
        self.setVisible(False)

    def show_progress(self, text: str) -> None:
        """The phase is running: ``text`` (``"steady state · round 4 (≥ 9) · jit-static · 6.3 s of 30 s"``)."""
        self._show([text], f"<span style='color:{UNCLEAR}'>{html.escape(text)}</span>")

    def set_verdicts(self, head: str, pairs: list[tuple[str, bool]], notes: list[str], noisy: bool = False,
                     details: list[str] | None = None) -> None:
        """The phase's verdicts: ``head`` (its rounds, A/A, threads), ``pairs`` ``(verdict, clear)`` one per pair,
        ``notes`` (modes left out, …); ``noisy``: the A/A floor is above ±3 % (said in amber); ``details``: the
        whole sentences, in the tool tip."""
        self.setToolTip("\n\n".join([EXPLAIN, "\n".join(details or [])]).strip())
        lines = [f"<span style='color:{CLEAR if clear else UNCLEAR}'><b>{'●' if clear else '○'} "
                 f"{html.escape(text)}</b></span>" for text, clear in pairs]
        lines += [f"<span style='color:{NOISY if noisy else UNCLEAR}'>{html.escape(n)}</span>" for n in notes]
        lines.append(f"<span style='color:{UNCLEAR}'>{html.escape(head)}</span>")
        self._show([*(t for t, _ in pairs), *notes, head], "<br>".join(lines))

    def clear_verdicts(self) -> None:
        self._plain = []
        self.setText("")
        self.setVisible(False)

    def plain_text(self) -> str:
        """What is shown, one line per sentence (the pairs, the notes, the shared line), without markup."""
        return "\n".join(self._plain)

    def _show(self, plain: list[str], rich: str) -> None:
        self._plain = plain
        self.setText(rich)
        self.setVisible(True)
