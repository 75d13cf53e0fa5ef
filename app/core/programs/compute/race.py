"""The settings race of a program entry point: its prepared arguments called ``n_calls`` times under each compiler
setting, each lane with a fresh :class:`app.core.programs.runner.ProgramRunner` (so its first call traces, lowers and
compiles under the setting, timed by the runner), outputs compared with the baseline lane's element for element.

Yields per lane a :class:`app.core.events.LaneEvent` (``mode``: the setting), its :class:`app.core.events.CallRecord` s
and its :class:`app.core.compile_settings.figures.SettingLane` (``unit="call"``). A lane's calls are the program's one
call loop (:class:`app.core.programs.runner.CallLoop`, as a program run's): stop is checked before every call and
reaches the user's code while it traces (the runner's ``should_stop``).

As the compute service runs it (:func:`program_race_events`, a :class:`ProgramSettingsRaceRequest`): the program loaded
and kept warm by the :class:`ProgramService`, each lane a program run (its :class:`app.core.events.FinishedEvent`
with the run's summary) and :class:`app.core.compile_settings.progress.SettingsRaceLanes` before and after it.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from app.core.compile_options import observing_compiles
from app.core.compile_settings.catalog import CompileSetting
from app.core.compile_settings.figures import SettingLane
from app.core.compile_settings.paired import (
    SettingsVerdicts,
    call_timer,
    hlo_fingerprint,
    optimized_hlo,
    paired_phase,
)
from app.core.compile_settings.progress import lanes_events
from app.core.compile_settings.race import applied, no_persistent_cache, peak_bytes, resolve
from app.core.compile_settings.split import CompileCapturer
from app.core.events import CallRecord, FinishedEvent, LaneEvent, SteadyBlockEvent
from app.core.programs.compute.requests import ProgramLoaded, ProgramSettingsRaceRequest
from app.core.programs.compute.service import ProgramService, entry_infos, failed
from app.core.programs.errors import ProgramError
from app.core.programs.loader import PreparedCall
from app.core.programs.runner import JIT, CallLoop, ProgramRunner, program_summary
from app.core.programs.specs import SpecError
from app.core.steady import SteadyPlan

if TYPE_CHECKING:
    import jax

#: What a program's settings race yields.
RaceItem = CallRecord | LaneEvent | SettingLane | SteadyBlockEvent | SettingsVerdicts


def outputs_digest(outputs: object) -> list[Any]:
    """A program's outputs as host numpy arrays, leaf by leaf (what two lanes compare)."""
    import jax
    import numpy as np

    return [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(outputs)]


def same_outputs(a: list[Any], b: list[Any]) -> bool:
    """Whether two digests (:func:`outputs_digest`) hold the same shapes, dtypes and values (NaN equal to NaN)."""
    import numpy as np

    return len(a) == len(b) and all(
        x.shape == y.shape and x.dtype == y.dtype and np.array_equal(x, y, equal_nan=x.dtype.kind in "fc")
        for x, y in zip(a, b))


def program_settings_race(prepared: PreparedCall, names: Sequence[str], platform: str, n_calls: int = 10,
                          should_stop: Callable[[], bool] | None = None,
                          rounds: int = 1,
                          paired: SteadyPlan | None = None) -> Iterator[RaceItem]:
    """Race ``prepared`` under each setting of ``names`` (:func:`app.core.compile_settings.race.resolve` on
    ``platform``: the baseline first), ``n_calls`` (>= 2) calls per lane, ``rounds`` times round-robin (merge with
    :func:`app.core.compile_settings.figures.merge_rounds`). With ``paired`` (a :class:`app.core.steady.SteadyPlan`),
    after every lane each setting's executable is called in paired, interleaved rounds
    (:func:`app.core.compile_settings.paired.paired_rounds`: a :class:`app.core.events.SteadyBlockEvent` per block,
    then a :class:`SettingsVerdicts`) and the verdicts are put on the lanes already yielded (``SettingLane.verdict``;
    a block's figure is ms per call, donated arguments copied per call for every setting alike). Raises
    :class:`app.core.errors.InvalidSettingsError` before anything runs, and the runner's
    :class:`app.core.programs.errors.ProgramError` for an error in the program."""
    if paired is not None:
        paired.validated()
    lanes = resolve(names, platform, "program") * max(1, rounds)
    stop = should_stop or (lambda: False)
    base: list[Any] | None = None
    warm: dict[str, Any] = {}
    done: list[SettingLane] = []
    with no_persistent_cache():
        for i, setting in enumerate(lanes):
            if stop():
                return
            yield LaneEvent(setting.name, i, len(lanes), max(2, n_calls))
            runner = ProgramRunner(prepared)
            records: list[CallRecord] = []
            executable = outputs = None
            capturer = CompileCapturer("program", platform)  # XLA's passes against codegen (and autotune, ptxas)
            loop = CallLoop(runner, [prepared.args] * max(2, n_calls), JIT, should_stop)
            with applied(setting), observing_compiles(capturer):
                for _args, outcome in loop:
                    records.append(outcome.record)
                    outputs = outcome.outputs
                    if outcome.stages is not None:
                        executable = outcome.stages[2]
                    yield outcome.record
            stopped = loop.stopped
            lane = _program_lane(setting, records, executable, outputs, stopped)
            lane.hlo_hash = hlo_fingerprint(optimized_hlo(executable))
            if executable is not None and not stopped:
                warm[setting.name] = call_timer(_warm_call(executable, prepared))
            done.append(lane)
            capturer.fill(lane)
            base = lane.outputs if base is None else base
            lane.outputs_equal = same_outputs(lane.outputs, base)
            yield lane
    yield from paired_phase(warm, done, lanes[0].name, paired, stop)


def _warm_call(executable: jax.stages.Compiled, prepared: PreparedCall) -> Any:
    """One warm call of ``executable`` on the prepared arguments, blocked until its outputs are ready (donated
    arguments copied per call, alike for every setting)."""
    import jax
    import jax.numpy as jnp

    donate = prepared.donate_argnums
    dynamic = [(i in donate, a) for i, a in enumerate(prepared.args) if i not in prepared.static_argnums]

    def call() -> Any:
        args = [jax.tree_util.tree_map(jnp.copy, a) if copy else a for copy, a in dynamic]
        return jax.block_until_ready(executable(*args))

    return call


def _program_lane(setting: CompileSetting, records: list[CallRecord], executable: jax.stages.Compiled | None,
                  outputs: object, stopped: bool) -> SettingLane:
    compiled = next((r for r in records if r.compiled), None)
    steady = [r.wall_ms for r in records if not r.compiled]
    return SettingLane(
        setting.name, setting.sets,
        compiled.trace_ms if compiled else None, compiled.lower_ms if compiled else None,
        compiled.compile_ms if compiled else None, statistics.median(steady) if steady else None,
        n_calls=len(records), unit="call", changes_results=setting.changes_results,
        peak_bytes=peak_bytes(executable), persistent_cache_hit=bool(compiled and compiled.persistent_cache_hit),
        stopped=stopped, outputs=outputs_digest(outputs) if outputs is not None else [])


def program_race_events(programs: ProgramService, request: ProgramSettingsRaceRequest,
                        should_stop: Callable[[], bool]) -> Iterator[Any]:
    """Load and prepare ``request``'s program (``programs`` keeps it warm for a later run), say so
    (:class:`ProgramLoaded`), then race its entry point under ``request.names`` on JAX's default backend: per lane
    a :class:`LaneEvent`, its :class:`CallRecord` s, a :class:`FinishedEvent` (``"calls"``, ``"stopped"`` or
    ``"error"``; the program run's summary) and :class:`app.core.compile_settings.progress.SettingsRaceLanes` before and
    after it; unless stopped,
    the entry point's IR and source map last (:meth:`ProgramService.ir_events`: one more compile). Raises
    :class:`app.core.errors.InvalidSettingsError` (a setting refused by name) before any lane, and the program's
    :class:`app.core.programs.errors.ProgramError` (after its :class:`ProgramFailed`)."""
    try:
        try:
            program, prepared, _runner = programs.prepare(request, should_stop)
        except SpecError as exc:
            raise ProgramError(str(exc), error_type="SpecError", stage="args") from None
        yield ProgramLoaded(request, program.path, program.display_name, entry_infos(program),
                            prepared.entry.name, prepared.describe_args(), prepared.backend)
        yield from _program_lanes(prepared, request, should_stop)
        if not should_stop():  # the IR views show the entry point as XLA's defaults compile it (the lanes keep no IR;
            yield from programs.ir_events(prepared, prepared.entry.name, should_stop)  # a model race's first lane does)
    except ProgramError as exc:
        yield failed(request, exc)
        raise


def _program_lanes(prepared: PreparedCall, request: ProgramSettingsRaceRequest,
                   should_stop: Callable[[], bool]) -> Iterator[Any]:
    import jax

    lane: dict[str, Any] = {"mode": "", "records": [], "t0": time.perf_counter()}  # the lane running
    stream = program_settings_race(prepared, request.names, jax.default_backend(), request.n_calls, should_stop,
                                   paired=request.steady)

    def with_summaries() -> Iterator[Any]:  # each lane's FinishedEvent (its program run's summary) before its figures
        for event in stream:
            if isinstance(event, SettingLane):
                summary = program_summary(event.name, lane["records"], (time.perf_counter() - lane["t0"]) * 1000)
                yield FinishedEvent("stopped" if event.stopped else "calls", summary)
                lane["mode"] = ""
            elif isinstance(event, LaneEvent):
                lane.update(mode=event.mode, records=[], t0=time.perf_counter())
            elif isinstance(event, CallRecord):
                lane["records"].append(event)
            yield event

    try:
        yield from lanes_events(request, with_summaries())
    except ProgramError:
        if lane["mode"]:  # the lane that failed ends as an error, with the calls it made
            ms = (time.perf_counter() - lane["t0"]) * 1000
            yield FinishedEvent("error", program_summary(lane["mode"], lane["records"], ms))
        raise
