"""The runs of a session: :class:`RunState` (one run on the plot, or one lane of a race), the number kept
(:data:`MAX_RUNS`) and the rules over the run list that need no signals: which runs the cap drops
(:func:`retain`) and how a run stopped before its :class:`FinishedEvent` ends (:func:`stopped_finish`).
:class:`app.core.session.run_list.RunList` applies them and announces the result."""

from __future__ import annotations

from dataclasses import dataclass, field

from app.core.events import CallRecord, FinishedEvent, PromptEvent, Summary, TokenEvent

#: Runs kept for the latency plot and the exports (oldest dropped first).
MAX_RUNS = 5


@dataclass(frozen=True)
class ReplayRequest:
    """The :attr:`Session.active` request while a recorded run is replayed (never sent to the worker):
    the window is busy and a run waits, as during a live run."""

    label: str


@dataclass
class RunState:
    """One run on the plot (a single run, or one lane of a race).

    ``label`` e.g. ``"run 3 · jit-static"``; ``race`` the race it belongs to (None for a single run);
    ``run_id`` its number in the session (3 here), by which views keep its drawings;
    ``records`` its call records; ``tokens`` its token events; ``finished`` once it ends; ``program``: the
    entry point's name for a run of the user's program (``""`` for a model run)."""

    label: str
    mode: str
    race: int | None = None
    run_id: int = 0
    records: list[CallRecord] = field(default_factory=list)
    tokens: list[TokenEvent] = field(default_factory=list)
    prompt: PromptEvent | None = None
    finished: FinishedEvent | None = None
    #: Where a run opened from a session file was recorded (``"recorded on CPU × 1 · jax 0.10.2 ·
    #: 2026-11-25"``); "" for a run of this window.
    origin: str = ""
    #: A recorded run streamed at its recorded pace (Demo ▸ Replay session).
    replay: bool = False
    program: str = ""

    @property
    def n_compiles(self) -> int:
        return sum(1 for r in self.records if r.compiled)


def units(runs: list[RunState]) -> list[list[RunState]]:
    """``runs`` as the plot's units, oldest first: a race's lanes together (its replay is a race of its own),
    every other run alone."""
    groups: dict[object, list[RunState]] = {}
    for run in runs:
        groups.setdefault(("race", run.race) if run.race is not None else ("run", id(run)), []).append(run)
    return list(groups.values())


def retain(runs: list[RunState], max_runs: int, keep: int) -> tuple[list[RunState], int]:
    """Drop the oldest of ``runs`` (in place) beyond ``max_runs`` units: ``(the runs dropped, the cap applied)``.

    The one retention rule of the window: the plot, the race table and the exports show the session's runs.
    The cap counts units (:func:`units`): a race is one, with all its lanes, so a cap never splits a race (issue
    37: a replay pushed lanes of the race it replayed off the plot). Never dropped: the newest unit (the run just
    started, a replay included, or the race in progress) and the units of the recorded runs of the session files
    opened last (``keep`` of them) — replays go first, so replaying a recorded race again and again never pushes
    the recording off the plot (issue 29, flaw 4). The cap is ``max_runs``, or more when more units are
    protected."""
    groups = units(runs)
    recorded = {id(r) for r in [r for r in runs if r.origin and not r.replay][-keep:]} if keep else set()
    protected = {id(g[0]) for g in groups if any(id(r) in recorded for r in g)}
    if groups:
        protected.add(id(groups[-1][0]))
    cap = max(max_runs, len(protected))
    excess = len(groups) - cap
    if excess <= 0:
        return [], cap
    free = [g for g in groups if id(g[0]) not in protected]
    replays = [g for g in free if all(r.replay for r in g)]
    others = [g for g in free if not all(r.replay for r in g)]
    victims = {id(r) for g in (replays + others)[:excess] for r in g}
    dropped = [r for r in runs if id(r) in victims]
    runs[:] = [r for r in runs if id(r) not in victims]
    return dropped, cap


def stopped_finish(run: RunState) -> FinishedEvent:
    """How ``run`` ends when it is stopped before its :class:`FinishedEvent` came: ``stopped``, with the
    records and tokens it has (its total time: its last token's, else the sum of its calls')."""
    tokens = run.tokens
    total_ms = tokens[-1].elapsed_ms if tokens else sum(r.wall_ms for r in run.records)
    summary = Summary.from_records(run.mode, run.records, len(tokens),
                                   tokens[0].elapsed_ms if tokens else None, total_ms)
    return FinishedEvent("stopped", summary, [t.token_id for t in tokens], "".join(t.text for t in tokens))


def compiled_by(runs: list[RunState], run: RunState, mode: str, step: str) -> RunState | None:
    """The run whose compile of ``step`` in ``mode`` a warm ``run`` reuses (its IR came from that compile:
    :attr:`app.core.events.IREvent.reused`): the latest run of ``runs`` before ``run``, of this window (not opened
    from a file), with a compiling call of ``step`` in ``mode``; None when none is kept (dropped by the cap)."""
    earlier = runs[: runs.index(run)] if run in runs else runs
    return next((r for r in reversed(earlier) if not r.origin and any(
        c.compiled and c.step == step and (c.mode or r.mode) == mode for c in r.records)), None)
