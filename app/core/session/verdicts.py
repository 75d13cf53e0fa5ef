"""A mode race's steady-state phase in the session (:mod:`app.core.steady`): its progress while the rounds run
and its verdicts, one set per race on the plot — measured here or read from a session file — so the race
summary, the latency plot, the exports and a saved session read the same ones and no view keeps its own copy."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.core.events import SteadyBlockEvent, SteadyRoundEvent, VerdictsEvent
from app.core.session.events_group import SessionEvents
from app.core.session.runs import RunState


class RaceVerdicts:
    """The steady-state verdicts of the races on the plot (:attr:`race_verdicts`: race number → the phase's JSON
    form, :meth:`app.core.events.VerdictsEvent.to_json`, as ``race --json`` and session files keep it) and the
    progress of the phase running (:attr:`steady_progress`), announced on ``events`` (``steadyProgress``,
    ``steadyRound``, ``verdicts``). A base of :class:`app.core.session.model.Session`; same thread as it."""

    events: SessionEvents
    runs: list[RunState]
    _race_id: int

    def _init_verdicts(self) -> None:
        self.race_verdicts: dict[int, dict[str, Any]] = {}
        #: the block of the running steady-state phase that started last (None outside one)
        self.steady_progress: SteadyBlockEvent | None = None

    def verdicts_of(self, race: int | None) -> dict[str, Any] | None:
        """The verdicts of race ``race`` (None: none, or not a race)."""
        return self.race_verdicts.get(race) if race is not None else None

    def shown_verdicts(self) -> dict[str, Any] | None:
        """The verdicts of the newest race on the plot when the newest run is one of its lanes (what the race
        summary and the plot show beside that race's rows), else None."""
        return self.verdicts_of(self.runs[-1].race) if self.runs else None

    def show_verdicts(self, race: int, doc: dict[str, Any]) -> None:
        """Keep ``doc`` (a phase's JSON form; a session file's copy with its ``race`` and ``environment``) as the
        verdicts of race ``race`` and announce them; verdicts of races no longer on the plot are forgotten."""
        on_plot = {r.race for r in self.runs}
        self.race_verdicts = {k: v for k, v in self.race_verdicts.items() if k in on_plot}
        self.race_verdicts[race] = {**doc, "pairs": list(doc.get("pairs") or [])}
        self.events.verdicts.emit(race, self.race_verdicts[race])

    def _verdict_handlers(self) -> dict[type, Callable[[Any], None]]:
        return {SteadyBlockEvent: self._on_steady_block, SteadyRoundEvent: self.events.steadyRound.emit,
                VerdictsEvent: self._on_verdicts}

    def _on_steady_block(self, event: SteadyBlockEvent) -> None:
        self.steady_progress = event
        self.events.steadyProgress.emit(event)

    def _on_verdicts(self, event: VerdictsEvent) -> None:
        """The race in progress (the newest) ends its steady-state phase."""
        self.steady_progress = None
        self.show_verdicts(self._race_id, event.to_json())
