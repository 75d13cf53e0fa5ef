"""The one rule that turns a program request into runs ("lanes"), shared by the CLI (``program``) and the window's
Code workspace (:mod:`app.core.programs.compute.service`), so both surfaces make the same calls:

- a shape **sweep** → one jit lane over the sizes (one compile per new shape), then with ``bucket`` the same
  sizes zero-padded to power-of-two buckets (one compile per bucket);
- **static values** → one call per value (several static arguments varied together, lists of one length), in
  each mode asked for: a changed static value compiles again and the compile log says which and how;
- **compare** → the jit lane, then the no-jit lane (both cold, like a race);
- otherwise one lane of ``n_calls`` equal calls in ``mode``.

A sweep and static values both set the calls: asking for both is refused. No Qt; JAX only through
:mod:`app.core.programs.runner` (random sweep data)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from app.core.programs.arguments import (
    parse_static_values,
    parse_sweep,
    static_value_args,
    sweep_args,
    sweep_target,
)
from app.core.programs.runner import BUCKETED, JIT, NO_JIT, RunResult, program_summary, run_arg_list
from app.core.programs.specs import SpecError

if TYPE_CHECKING:
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


def run_lanes(prepared: PreparedCall, lanes: Sequence[Lane], should_stop: Callable[[], bool] | None = None,
              on_record: Callable[[Any], None] | None = None) -> Iterator[Any]:
    """Run the lanes one after another (each through :class:`app.core.programs.runner.CallLoop`), yielding one
    :class:`~app.core.programs.runner.RunResult` per lane (a sweep's with its sizes); a stopped lane is the
    last. What the CLI prints and records; the window's service iterates the same lanes as events."""
    for lane in lanes:
        result = run_arg_list(prepared, lane.args, lane.mode, should_stop, on_record)
        result.sizes, result.padded_sizes = lane.sizes[: len(result.records)], lane.padded[: len(result.records)]
        yield result
        if result.stopped:
            return


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
