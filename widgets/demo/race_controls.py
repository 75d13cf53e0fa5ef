"""Mode-race controls: which modes race (checkboxes in the plot's colours), the steady-state phase after the lanes
and its time budget, the eager token cap, Race.

The checkboxes are the widget itself; the eager cap and the Replay/Race buttons are :attr:`RaceControls.bar`, a
widget of its own for the host to pin where it stays in sight (above a scroll area holding the checkboxes), so a
short dock scrolls the checkboxes and never the Race button out of view."""

from __future__ import annotations

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QDoubleSpinBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)


class RaceControls(QWidget):
    """The mode checkboxes; :attr:`bar` (not in this widget's layout: the host places it) holds the eager token
    cap and the Replay/Race buttons. Signals (GUI thread): ``raceRequested(modes)`` with the checked modes in display order;
    ``replayRequested()``: clear the in-memory caches and rerun the last run or race."""

    raceRequested = Signal(list)
    replayRequested = Signal()

    def __init__(
        self,
        modes: tuple[str, ...],
        mode_help: dict[str, str],
        colours: dict[str, str],
        capped_mode: str | None = None,
        token_cap: int = 8,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.checks: dict[str, QCheckBox] = {}
        grid = QGridLayout()
        grid.setHorizontalSpacing(12)
        grid.setVerticalSpacing(4)
        for i, mode in enumerate(modes):
            check = QCheckBox(mode)
            check.setObjectName(f"raceCheck-{mode}")
            check.setChecked(True)
            check.setToolTip(mode_help.get(mode, ""))
            colour = colours.get(mode, "#111827")
            check.setStyleSheet(f"QCheckBox {{ color: {colour}; font-weight: 600; }}")
            check.toggled.connect(self._update)
            grid.addWidget(check, i // 2, i % 2)
            self.checks[mode] = check
        #: The mode whose tokens the spin box caps (torchax-eager: ~0.5–2 s per token cold), or None.
        self.capped_mode = capped_mode
        self.eager_tokens = QSpinBox(minimum=1, maximum=256, value=token_cap)
        self.eager_tokens.setObjectName("eagerTokensSpin")
        self.eager_tokens.setToolTip(
            f"{capped_mode} runs every ATen op through JAX one by one (~0.5–2 s per token from cold): "
            "it generates at most this many tokens so the race stays short"
        )
        self.race_button = QPushButton("▶▶  Race")
        self.race_button.setObjectName("raceButton")
        self.race_button.setToolTip("Run the prompt through each checked mode, one after another, each from cold")
        self.race_button.clicked.connect(self._on_race)
        self.replay_button = QPushButton("⟲  Replay cold start")
        self.replay_button.setObjectName("replayButton")
        self.replay_button.setToolTip(
            "Clear the in-memory caches (compiled steps, jax.clear_caches()), then rerun the last run or race: "
            "the compile spike returns — served from disk when the persistent cache is on"
        )
        self.replay_button.clicked.connect(self.replayRequested)
        #: The eager token cap and the Replay/Race buttons in one row, for the host to pin in sight.
        self.bar = QWidget()
        self.bar.setObjectName("raceBar")
        eager = QHBoxLayout(self.bar)
        eager.setContentsMargins(0, 0, 0, 0)
        eager.addWidget(QLabel("Eager tokens"))
        eager.addWidget(self.eager_tokens)
        eager.addStretch(1)
        eager.addWidget(self.replay_button)
        eager.addWidget(self.race_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        layout.addLayout(grid)
        layout.addLayout(self._build_steady())
        self._running = False

    def _build_steady(self) -> QHBoxLayout:
        """The steady-state box and its budget (:attr:`steady`, :attr:`steady_budget`), in a row."""
        #: The steady-state phase after the cold lanes (paired rounds and verdicts) and its time budget (s).
        self.steady = QCheckBox("Steady state after the lanes, budget")
        self.steady.setObjectName("steadyCheck")
        self.steady.setChecked(True)
        self.steady.setToolTip(
            "After the cold lanes, paired rounds of the same short generation once per mode, in a shuffled order, "
            "until every ratio's 95 % interval is within ±3 % or the budget ends (at least 9 rounds): each "
            "speed-up is then stated with its interval"
        )
        self.steady_budget = QDoubleSpinBox(minimum=1.0, maximum=600.0, value=30.0, decimals=0, suffix=" s")
        self.steady_budget.setObjectName("steadyBudgetSpin")
        self.steady_budget.setToolTip("Seconds of steady-state rounds (the first 9 rounds always run)")
        self.steady.toggled.connect(self._update)
        steady = QHBoxLayout()
        steady.addWidget(self.steady)
        steady.addWidget(self.steady_budget)
        steady.addStretch(1)
        return steady

    def modes(self) -> list[str]:
        return [mode for mode, check in self.checks.items() if check.isChecked()]

    def set_modes(self, modes: list[str]) -> None:
        for mode, check in self.checks.items():
            check.setChecked(mode in modes)

    def eager_token_cap(self) -> int:
        return self.eager_tokens.value()

    def steady_budget_s(self) -> float | None:
        """The steady-state phase's budget in seconds, None when it is off."""
        return self.steady_budget.value() if self.steady.isChecked() else None

    def set_steady(self, on: bool, budget_s: float | None = None) -> None:
        """Turn the steady-state phase on or off, with ``budget_s`` seconds (None: as it is)."""
        self.steady.setChecked(on)
        if budget_s is not None:
            self.steady_budget.setValue(budget_s)

    def set_running(self, running: bool) -> None:
        self._running = running
        self._update()

    @Slot()
    def _update(self) -> None:
        self.race_button.setEnabled(not self._running and bool(self.modes()))
        self.replay_button.setEnabled(not self._running)
        self.steady_budget.setEnabled(self.steady.isChecked())
        eager = self.checks.get(self.capped_mode) if self.capped_mode else None
        self.eager_tokens.setEnabled(eager is not None and eager.isChecked())

    @Slot()
    def _on_race(self) -> None:
        if self.modes():
            self.raceRequested.emit(self.modes())
