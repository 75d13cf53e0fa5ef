"""The settings race of a program entry point: its prepared arguments called ``n_calls`` times under each compiler
setting, each lane with a fresh :class:`app.core.programs.runner.ProgramRunner` (so its first call traces, lowers and
compiles under the setting, timed by the runner), outputs compared with the baseline lane's element for element.

Yields per lane a :class:`app.core.events.LaneEvent` (``mode``: the setting), its :class:`app.core.events.CallRecord` s
and its :class:`app.core.compile_settings.figures.SettingLane` (``unit="call"``). Stop is checked before every call
and reaches the user's code while it traces (the runner's ``should_stop``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from app.core.compile_settings.figures import SettingLane
from app.core.compile_settings.options import observing_compiles
from app.core.compile_settings.race import applied, no_persistent_cache, peak_bytes, resolve
from app.core.compile_settings.split import CompileCapturer
from app.core.events import CallRecord, LaneEvent
from app.core.programs.loader import PreparedCall


def outputs_digest(outputs: Any) -> list[Any]:
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
                          rounds: int = 1) -> Iterator[CallRecord | LaneEvent | SettingLane]:
    """Race ``prepared`` under each setting of ``names`` (:func:`app.core.compile_settings.race.resolve` on
    ``platform``: the baseline first), ``n_calls`` (>= 2) calls per lane, ``rounds`` times round-robin (merge with
    :func:`app.core.compile_settings.figures.merge_rounds`). Raises
    :class:`app.core.errors.InvalidSettingsError` before anything runs, and the runner's
    :class:`app.core.programs.errors.ProgramError` for an error in the program."""
    from app.core.programs.errors import ProgramStopped
    from app.core.programs.runner import JIT, ProgramRunner

    lanes = resolve(names, platform, "program") * max(1, rounds)
    stop = should_stop or (lambda: False)
    base: list[Any] | None = None
    with no_persistent_cache():
        for i, setting in enumerate(lanes):
            if stop():
                return
            yield LaneEvent(setting.name, i, len(lanes), max(2, n_calls))
            runner = ProgramRunner(prepared)
            records: list[CallRecord] = []
            executable = outputs = None
            stopped = False
            capturer = CompileCapturer("program", platform)  # XLA's passes against codegen (and autotune, ptxas)
            with applied(setting), observing_compiles(capturer):
                for k in range(max(2, n_calls)):
                    if stop():
                        stopped = True
                        break
                    try:
                        outcome = runner.call(None, k, JIT, should_stop)
                    except ProgramStopped:
                        stopped = True
                        break
                    records.append(outcome.record)
                    outputs = outcome.outputs
                    if outcome.stages is not None:
                        executable = outcome.stages[2]
                    yield outcome.record
            lane = _program_lane(setting, records, executable, outputs, stopped)
            capturer.fill(lane)
            base = lane.outputs if base is None else base
            lane.outputs_equal = same_outputs(lane.outputs, base)
            yield lane


def _program_lane(setting: Any, records: list[CallRecord], executable: Any, outputs: Any,
                  stopped: bool) -> SettingLane:
    import statistics

    compiled = next((r for r in records if r.compiled), None)
    steady = [r.wall_ms for r in records if not r.compiled]
    return SettingLane(
        setting.name, setting.sets,
        compiled.trace_ms if compiled else None, compiled.lower_ms if compiled else None,
        compiled.compile_ms if compiled else None, statistics.median(steady) if steady else None,
        n_calls=len(records), unit="call", changes_results=setting.changes_results,
        peak_bytes=peak_bytes(executable), persistent_cache_hit=bool(compiled and compiled.persistent_cache_hit),
        stopped=stopped, outputs=outputs_digest(outputs) if outputs is not None else [])
