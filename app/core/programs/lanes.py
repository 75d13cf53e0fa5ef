"""The one rule that turns a program request into runs ("lanes"), shared by the CLI (``program``) and the window's
Code workspace (:mod:`app.core.programs.compute.service`), so both surfaces make the same calls:

- a shape **sweep** → one jit lane over the sizes (one compile per new shape), then with ``bucket`` the same
  sizes zero-padded to power-of-two buckets (one compile per bucket);
- **static values** → one call per value (several static arguments varied together, lists of one length), in
  each mode asked for: a changed static value compiles again and the compile log says which and how;
- **compare** → the jit lane, then the no-jit lane (both cold, like a race);
- otherwise one lane of ``n_calls`` equal calls in ``mode``.

A sweep and static values both set the calls: asking for both is refused. :class:`LaneRun` runs the lanes — the one
lane loop of both front ends: its events are what the window's service forwards, :func:`run_lanes` folds them into a
:class:`~app.core.programs.runner.RunResult` per lane for the CLI. No Qt; JAX only through
:mod:`app.core.programs.runner` and :mod:`app.core.programs.ir`."""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from app.core.events import CallRecord, FinishedEvent, IREvent, LaneEvent
from app.core.programs.arguments import (
    parse_static_values,
    parse_sweep,
    static_value_args,
    sweep_args,
    sweep_target,
)
from app.core.programs.errors import ProgramError
from app.core.programs.ir import ir_from_stages
from app.core.programs.runner import (
    BUCKETED,
    JIT,
    NO_JIT,
    CallLoop,
    ProgramRunner,
    RecordFn,
    RunResult,
    StopFn,
    program_summary,
)
from app.core.programs.specs import SpecError

if TYPE_CHECKING:
    from app.core.inspect.ir import StepIR
    from app.core.programs.loader import PreparedCall

#: The request modes: ``"jit"``, ``"no-jit"``, ``"compare"`` (jit, then no-jit).
COMPARE = "compare"


@dataclass(frozen=True)
class Lane:
    """One run of calls: ``mode`` (``"jit"``, ``"no-jit"`` or ``"jit, bucketed"``), ``args``: per call every
    positional argument (as ``PreparedCall.args``); ``cold``: run with a fresh runner (its own compiles, as in a
    race) rather than the one kept for a warm rerun; ``sizes`` / ``padded``: per call, the swept size and the
    bucket it was padded to (sweeps only)."""

    mode: str
    args: list[tuple] = field(repr=False)
    cold: bool = False
    sizes: list[int] = field(default_factory=list)
    padded: list[int] = field(default_factory=list)


def split_static_values(text: str) -> tuple[str, ...]:
    """The window's one-field form ``"n=3,4,4; m=1,2,2"`` → ``("n=3,4,4", "m=1,2,2")`` (the CLI repeats
    ``--static-values`` instead)."""
    return tuple(part.strip() for part in text.split(";") if part.strip())


def plan_lanes(prepared: PreparedCall, *, n_calls: int = 10, mode: str = "jit", sweep: str = "", bucket: bool = False,
               static_values: Sequence[str] = ()) -> list[Lane]:
    """The lanes of one program request (see the module doc). ``prepared``: the
    :class:`app.core.programs.loader.PreparedCall`; ``sweep``: ``"1:16"``, ``"x=1:16"`` or ``"1=1:16"`` (an
    argument named by parameter name or user index; unnamed: the first array argument,
    :func:`app.core.programs.runner.sweep_target`); ``static_values``: ``"[ARG=]V1,V2,…"`` texts
    (:func:`app.core.programs.runner.parse_static_values`). Raises :class:`SpecError` for a bad sweep or value
    list, or a sweep with static values."""
    if sweep.strip():
        if static_values:
            raise SpecError("Static values and a sweep both set the calls: use one of them.")
        arg, text = sweep_target(prepared, sweep)
        parsed = parse_sweep(text)
        plain, sizes, _ = sweep_args(prepared, parsed, False, arg)
        lanes = [Lane(JIT, plain, True, sizes, sizes)]
        if bucket:
            padded_args, sizes, padded = sweep_args(prepared, parsed, True, arg)
            lanes.append(Lane(BUCKETED, padded_args, True, sizes, padded))
        return lanes
    if static_values:
        arg_list = static_value_args(prepared, [parse_static_values(t) for t in static_values])
    else:
        arg_list = [prepared.args] * max(1, int(n_calls))
    modes = [JIT, NO_JIT] if mode == COMPARE else [NO_JIT if mode == NO_JIT else JIT]
    return [Lane(m, arg_list, cold=len(modes) > 1 or m != JIT) for m in modes]


class LaneRun:
    """The one run of a program request's lanes, for both front ends: iterate it for the events (the window's
    service forwards them; :func:`run_lanes` folds them into a :class:`RunResult` per lane for the CLI).

    Per lane, each through :class:`app.core.programs.runner.CallLoop` (a ``cold`` lane with a fresh
    :class:`ProgramRunner`, the others with ``runner``, made here when None): a :class:`LaneEvent` with the lane's
    first record (a program that fails on its first call starts no run), one :class:`CallRecord` per call, with
    ``capture_ir`` the :class:`IREvent` of the lane's first compiling call (its capture not counted in the run's
    time; the first kept in :attr:`ir`), then a :class:`FinishedEvent` (``"calls"``, ``"stopped"`` or, before the
    program's :class:`ProgramError` is raised again, ``"error"``); a lane that made no call yields nothing. A
    stopped lane is the last. :attr:`results`: a :class:`RunResult` per lane run to its end or stopped (a sweep's
    with its sizes, a static-values run's with its values), added before the lane's :class:`FinishedEvent`."""

    def __init__(self, prepared: PreparedCall, lanes: Sequence[Lane], runner: ProgramRunner | None = None,
                 should_stop: StopFn = None, capture_ir: bool = False) -> None:
        self.prepared, self.lanes, self.should_stop, self.capture_ir = prepared, lanes, should_stop, capture_ir
        self.runner = runner or ProgramRunner(prepared)
        self.results: list[RunResult] = []
        self.ir: StepIR | None = None

    def __iter__(self) -> Iterator[Any]:
        for index, lane in enumerate(self.lanes):
            result = yield from self._lane(lane, index)
            if result.stopped:
                return

    def _lane(self, lane: Lane, index: int) -> Generator[Any, None, RunResult]:
        runner = ProgramRunner(self.prepared) if lane.cold else self.runner
        entry, static = self.prepared.entry.name, self.prepared.static_argnums
        result = RunResult(entry, lane.mode, [], program_summary(lane.mode, [], 0.0))
        aside, lane_ir = 0.0, None  # time spent capturing IR between calls: not the run's
        t0 = time.perf_counter()
        loop = CallLoop(runner, lane.args, lane.mode, self.should_stop)
        try:
            for args, outcome in loop:
                if not result.records:
                    yield LaneEvent(lane.mode, index, len(self.lanes), 0)
                result.records.append(outcome.record)
                for k in static:
                    if k < len(args):
                        result.static_values.setdefault(k, []).append(args[k])
                result.output, result.stages = outcome.outputs, result.stages or outcome.stages
                yield outcome.record
                if self.capture_ir and outcome.stages is not None and lane_ir is None:
                    t_ir = time.perf_counter()
                    lane_ir = ir_from_stages(outcome.stages, runner, args)
                    self.ir = self.ir or lane_ir
                    yield IREvent(entry, lane.mode, lane_ir.plain())
                    aside += time.perf_counter() - t_ir
        except ProgramError:
            if result.records:
                yield FinishedEvent("error", program_summary(lane.mode, result.records, _ms_since(t0, aside)))
            raise
        n = len(result.records)
        result.summary = program_summary(lane.mode, result.records, _ms_since(t0, aside))
        result.stopped, result.sizes, result.padded_sizes = loop.stopped, lane.sizes[:n], lane.padded[:n]
        self.results.append(result)
        if n:
            yield FinishedEvent("stopped" if loop.stopped else "calls", result.summary)
        return result


def _ms_since(t0: float, aside: float) -> float:
    return (time.perf_counter() - t0 - aside) * 1000


def run_lanes(prepared: PreparedCall, lanes: Sequence[Lane], should_stop: StopFn = None,
              on_record: RecordFn = None, runner: ProgramRunner | None = None) -> Iterator[RunResult]:
    """The lanes run by :class:`LaneRun`, folded: one :class:`~app.core.programs.runner.RunResult` per lane as it
    ends (a lane stopped before its first call too: no calls, ``stopped``); ``on_record`` gets each record as it is
    made. What the CLI prints and records. Raises the program's :class:`ProgramError`."""
    run = LaneRun(prepared, lanes, runner, should_stop)
    given = 0
    for event in run:
        if on_record is not None and isinstance(event, CallRecord):
            on_record(event)
        elif isinstance(event, FinishedEvent) and len(run.results) > given:
            given += 1
            yield run.results[given - 1]
    yield from run.results[given:]


def run_calls(prepared: PreparedCall, n_calls: int = 10, mode: str = JIT, should_stop: StopFn = None,
              on_record: RecordFn = None, runner: ProgramRunner | None = None) -> RunResult:
    """``n_calls`` calls of the entry point with its prepared arguments, ``mode`` :data:`JIT` or
    :data:`NO_JIT`. ``should_stop`` is checked before every call and on every user line while tracing (or
    running, in no-jit); ``on_record`` gets each record as it is made. Pass a ``runner`` to reuse its
    executables. Raises :class:`ProgramError` for an error in the program (records so far are lost: the
    caller keeps the last good result)."""
    return run_arg_list(prepared, [prepared.args] * n_calls, mode, should_stop, on_record, runner)


def run_arg_list(prepared: PreparedCall, arg_list: Sequence[tuple], mode: str = JIT, should_stop: StopFn = None,
                 on_record: RecordFn = None, runner: ProgramRunner | None = None) -> RunResult:
    """One call per argument tuple of ``arg_list`` (every positional argument, as ``prepared.args``), e.g.
    from :func:`app.core.programs.arguments.static_value_args`; otherwise as :func:`run_calls`."""
    return next(run_lanes(prepared, [Lane(mode, list(arg_list))], should_stop, on_record, runner))


def compare_jit(prepared: PreparedCall, n_calls: int = 10, should_stop: Callable[[], bool] | None = None,
                on_record: Callable[[Any], None] | None = None) -> tuple[Any, Any]:
    """The jit run, then the no-jit (op-by-op) run of the same calls: two runs for one plot (the lanes of
    :func:`app.core.programs.lanes.plan_lanes` with ``mode="compare"``)."""
    return _two(prepared, plan_lanes(prepared, n_calls=n_calls, mode="compare"), should_stop, on_record)


def _two(prepared: PreparedCall, lanes: Sequence[Lane], should_stop: Callable[[], bool] | None,
         on_record: Callable[[Any], None] | None) -> tuple[Any, Any]:
    """The two lanes' results; a second lane the stop left out is an empty stopped result."""
    results = list(run_lanes(prepared, lanes, should_stop, on_record))
    if len(results) == 1:
        mode = lanes[1].mode
        results.append(RunResult(prepared.entry.name, mode, [], program_summary(mode, [], 0.0), True))
    return results[0], results[1]


def compare_sweep(prepared: PreparedCall, sweep: Sequence[Any], arg: int = 0, should_stop: Callable[[], bool] | None = None,
                  on_record: Callable[[Any], None] | None = None) -> tuple[Any, Any]:
    """The sweep as is, then padded to power-of-two buckets (seed 004's lesson): two runs for one plot (the lanes
    of :func:`app.core.programs.lanes.plan_lanes` with a sweep and ``bucket``)."""
    plain, sizes, _ = sweep_args(prepared, sweep, False, arg)
    padded_args, _, padded = sweep_args(prepared, sweep, True, arg)
    return _two(prepared, [Lane(JIT, plain, True, sizes, sizes), Lane(BUCKETED, padded_args, True, sizes, padded)],
                should_stop, on_record)
