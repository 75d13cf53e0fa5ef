"""The mode race's steady-state phase in the window (:mod:`app.core.steady`): the Demo kit's setting (on or off,
its time budget), its progress while the paired rounds run (the busy line and the race summary: round, mode,
elapsed time), and its verdicts — in the race summary under the table, and on the latency plot as the line a
talk reads (presentation mode included). The verdicts are the session's (:class:`app.core.session.verdicts.
RaceVerdicts`: measured here or read from a session file); the widgets get their sentences as plain strings."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt, Slot
from PySide6.QtWidgets import QFrame, QScrollArea, QWidget

from app.core.events import SteadyBlockEvent
from app.core.session.runs import RunState
from app.core.steady import SteadyPlan
from app.core.verdict.words import format_verdicts, headline, progress_line, short_verdict
from app.gui.context import WindowContext
from widgets.common.splitters import splitter
from widgets.demo.race_controls import RaceControls
from widgets.demo.verdict_view import VerdictView

if TYPE_CHECKING:
    from widgets.common.busy_indicator import BusyIndicator
    from widgets.plot.latency_plot import LatencyPlot


def verdict_parts(doc: dict[str, Any]) -> tuple[str, list[tuple[str, bool]], list[str]]:
    """``(head, [(verdict, clear)], notes)`` of a phase's JSON form: the head line (paired rounds, dropped rounds,
    A/A floor, threads, why it stopped: what every pair shares), each pair's verdict with its interval
    (:func:`app.core.verdict.words.short_verdict`) and whether the interval excludes 1, then the other lines
    (modes left out, the noisy-machine warning) — :func:`app.core.verdict.words.format_verdicts`' lines."""
    head, *rest = format_verdicts(doc).splitlines()
    pairs = list(doc.get("pairs") or [])
    said = [(short_verdict(p), p.get("ci_low") is not None and p.get("ci_high") is not None
             and not p["ci_low"] <= 1.0 <= p["ci_high"]) for p in pairs]
    return head, said, [line.strip() for line in rest[len(pairs):]]


class SteadyVerdicts(QObject):
    """Feeds :attr:`view` (under the race table) and the latency plot's verdict line from the session's
    ``steadyProgress``, ``verdicts``, ``runStarted`` and ``runsDropped`` signals; :meth:`plan` is the phase a
    race from the window asks for (the controls' steady-state box and budget). GUI thread."""

    def __init__(self, ctx: WindowContext, controls: RaceControls, busy: BusyIndicator, plot: LatencyPlot) -> None:
        """``busy``: the busy line (the phase's round and mode); ``plot``: the latency plot (its verdict line)."""
        super().__init__(ctx.host)
        self.ctx, self.session, self.controls, self.busy, self.plot = ctx, ctx.session, controls, busy, plot
        self.view = VerdictView()
        self.scroll = QScrollArea()  # under the race table: never cut in a short dock, it scrolls
        self.scroll.setObjectName("verdictScroll")
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.setWidget(self.view)
        self.scroll.setVisible(False)
        ev = self.session.events
        ev.steadyProgress.connect(self._on_progress)
        ev.verdicts.connect(self._on_verdicts)
        ev.runStarted.connect(self._on_run_started)
        ev.runsDropped.connect(self._on_runs_dropped)

    def page(self, table: QWidget) -> QWidget:
        """The Race summary tab: ``table`` over the verdicts, split in halves (dragged as the user likes); the
        verdicts' pane shows once a steady-state phase runs or a race with verdicts is shown."""
        return splitter(Qt.Orientation.Vertical, table, self.scroll, stretch=[1, 1], name="raceSummarySplit")

    def plan(self) -> SteadyPlan | None:
        """The steady-state phase of a race started now (None: the box is unchecked)."""
        budget = self.controls.steady_budget_s()
        return None if budget is None else SteadyPlan(budget_s=budget)

    def state(self) -> dict[str, Any]:
        """What the user settings remember: the phase on or off and its budget (s)."""
        return {"steady": self.controls.steady.isChecked(), "steady_budget_s": self.controls.steady_budget.value()}

    def restore(self, state: dict[str, Any]) -> None:
        budget = state.get("steady_budget_s")
        on = state.get("steady", True)
        self.controls.set_steady(on if isinstance(on, bool) else True,
                                 float(budget) if isinstance(budget, (int, float)) and budget > 0 else None)

    # -- the session's signals ----------------------------------------------------------------------------
    def _on_progress(self, event: SteadyBlockEvent) -> None:
        """A block starts: the race summary says where the phase is; the busy line which round and mode."""
        if self.session.background is not None:
            return  # an abandoned race's phase, finishing on the compute thread
        self.view.show_progress(progress_line(event.round, event.label, event.elapsed_s, event.budget_s,
                                              event.min_rounds))
        self.scroll.setVisible(True)
        what = f"warming {event.label}" if event.round < 0 else (
            f"round {event.round + 1} (≥ {event.min_rounds}) · {event.label}")
        self.busy.set_detail(f"steady-state {what}")

    @Slot(int, dict)
    def _on_verdicts(self, _race: int, _doc: dict) -> None:
        self.refresh()

    def _on_run_started(self, _run: RunState) -> None:
        self.refresh()  # a new race (or run) is the newest: its own verdicts, none yet

    def _on_runs_dropped(self, _run_ids: list[int]) -> None:
        self.refresh()

    def refresh(self) -> None:
        """Show the verdicts of the newest race on the plot (:meth:`Session.shown_verdicts`), or none."""
        doc = self.session.shown_verdicts()
        self.scroll.setVisible(doc is not None)
        if doc is None:
            self.view.clear_verdicts()
            self.plot.set_verdict([])
            return
        head, pairs, notes = verdict_parts(doc)
        self.view.set_verdicts(head, pairs, notes, bool(doc.get("noisy")), [p["text"] for p in doc["pairs"]])
        self.plot.set_verdict(headline(doc))
