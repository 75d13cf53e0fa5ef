"""The settings race of a model: the same prompt through jit-static once per compiler setting, each lane from cold,
its decode step compiled under the setting (:func:`app.core.compile_settings.options.compiling_with`) and timed by
the engine's own machinery (:class:`app.core.runtime.compiled_step.CompiledStep`'s trace / lower / compile timers,
the engine's steady ms per token).

The stream is the mode race's (:mod:`app.core.race`): per lane a :class:`app.core.events.LaneEvent` (its ``mode`` is
the setting's name), the engine's events, then the lane's :class:`app.core.compile_settings.figures.SettingLane`.
The first lane is the baseline (:data:`app.core.compile_settings.catalog.BASELINE` is put first when the list lacks
it). JAX's persistent cache is off for the race (a disk hit would hide a compile) and back as it was afterwards.
Stop is polled between lanes and, inside one, between decode steps; a running XLA compile cannot be interrupted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from app.core.compile_settings.catalog import BASELINE, CompileSetting, parse_setting
from app.core.compile_settings.figures import SettingLane
from app.core.compile_settings.options import compiling_with
from app.core.errors import InvalidSettingsError
from app.core.events import CallRecord, Event, FinishedEvent, LaneEvent

if TYPE_CHECKING:
    from app.core.engine.engine import Engine
    from app.core.settings import GenerationSettings

#: The mode every model lane runs: two compiles (prefill, decode), then each decode call reuses its executable.
RACE_MODE = "jit-static"


def resolve(names: Sequence[str], platform: str) -> list[CompileSetting]:
    """The settings ``names`` name on ``platform`` (:func:`app.core.compile_settings.catalog.parse_setting`), the
    baseline first (added when missing), each once, every XLA option checked by one tiny compile
    (:func:`check_options`). Raises :class:`InvalidSettingsError` naming the first bad setting."""
    settings = [parse_setting(n, platform) for n in names]
    if not any(s.name == BASELINE for s in settings):
        settings.insert(0, parse_setting(BASELINE, platform))
    settings.sort(key=lambda s: s.name != BASELINE)  # stable: the others keep their order
    unique: list[CompileSetting] = []
    for setting in settings:  # each once, at its first place
        if all(u.name != setting.name for u in unique):
            unique.append(setting)
    for setting in unique:
        check_options(setting)
    return unique


def check_options(setting: CompileSetting) -> None:
    """Compile ``x * 2`` with ``setting``'s options, so an option XLA does not know is refused by name before a race
    spends minutes (XLA: ``No such compile option``). Raises :class:`InvalidSettingsError`."""
    if not setting.options:
        return
    import jax

    try:
        jax.jit(lambda x: x * 2).lower(1.0).compile(compiler_options=dict(setting.options))
    except Exception as exc:  # JaxRuntimeError (unknown option, bad enum value), ValueError (effort level)
        raise InvalidSettingsError(f"XLA refused the setting {setting.name!r}: {str(exc).splitlines()[0]}") from exc


@contextmanager
def applied(setting: CompileSetting) -> Iterator[None]:
    """Within the block, this thread compiles under ``setting``: its compile options (:func:`compiling_with`), and
    its ``jax.config`` pairs set with ``jax.config.update`` and put back on exit."""
    import jax

    before = {name: jax.config.values[name] for name in setting.config}
    try:
        for name, value in setting.config.items():
            jax.config.update(name, value)
        with compiling_with(setting.options):
            yield
    finally:
        for name, value in before.items():
            jax.config.update(name, value)


@contextmanager
def no_persistent_cache() -> Iterator[None]:
    """JAX's persistent compilation cache off within the block (each lane compiles for real), then as it was."""
    from app.core.compile_cache import xla

    directory = xla.persistent_cache_dir()
    if directory is not None:
        xla.set_persistent_cache(None)
    try:
        yield
    finally:
        if directory is not None:
            xla.set_persistent_cache(directory)


def settings_race(engine: Engine, prompt: str, names: Sequence[str], settings: GenerationSettings,
                  should_stop: Callable[[], bool] = lambda: False, rounds: int = 1) -> Iterator[Event | SettingLane]:
    """Race the decode step of ``engine`` (mode :data:`RACE_MODE`, ``settings`` otherwise) under each of ``names``
    (see :func:`resolve`), one lane each from cold (``engine.clear_compiled()``), ``rounds`` times round-robin (a
    shared machine's noise then falls on every setting alike: merge with
    :func:`app.core.compile_settings.figures.merge_rounds`). Yields per lane a :class:`LaneEvent`, the engine's events
    and the lane's :class:`SettingLane` (``unit="token"``; tokens compared with the first baseline lane's over their
    common length). Raises :class:`InvalidSettingsError` before anything runs."""
    lanes = resolve(names, engine.device.platform) * max(1, rounds)
    settings = settings.with_(mode=RACE_MODE)
    base_tokens: list[int] | None = None
    with no_persistent_cache():
        for i, setting in enumerate(lanes):
            if should_stop():
                return
            yield LaneEvent(setting.name, i, len(lanes), settings.max_new_tokens)
            engine.clear_compiled()
            records: list[CallRecord] = []
            finished: FinishedEvent | None = None
            with applied(setting):
                for event in engine.generate(prompt, settings, should_stop):
                    if isinstance(event, CallRecord):
                        records.append(event)
                    elif isinstance(event, FinishedEvent):
                        finished = event
                    yield event
            lane = _model_lane(engine, setting, records, finished, settings.greedy)
            base_tokens = lane.outputs if base_tokens is None else base_tokens
            n = min(len(base_tokens), len(lane.outputs))
            lane.outputs_equal = lane.outputs[:n] == base_tokens[:n]
            yield lane


def _model_lane(engine: Engine, setting: CompileSetting, records: list[CallRecord], finished: FinishedEvent | None,
                greedy: bool) -> SettingLane:
    """The lane's figures from its decode records and the engine's compiled decode step."""
    compiled = next((r for r in records if r.step == "decode" and r.compiled), None)
    steady = finished.summary.steady_decode_ms if finished is not None else None
    return SettingLane(
        setting.name, setting.sets,
        compiled.trace_ms if compiled else None, compiled.lower_ms if compiled else None,
        compiled.compile_ms if compiled else None, steady,
        n_calls=sum(1 for r in records if r.step == "decode"), unit="token",
        changes_results=setting.changes_results, peak_bytes=_peak_bytes(engine, greedy),
        persistent_cache_hit=bool(compiled and compiled.persistent_cache_hit),
        stopped=finished is None or finished.reason == "stopped",
        outputs=list(finished.token_ids) if finished is not None else [],
    )


def _peak_bytes(engine: Engine, greedy: bool) -> int | None:
    """Peak memory of the engine's compiled decode step (``memory_analysis().peak_memory_in_bytes``), or None."""
    step = engine.existing_step(RACE_MODE, "decode", greedy)
    executable = step.executable(step.last_key) if step is not None else None
    return peak_bytes(executable)


def peak_bytes(executable: Any) -> int | None:
    """``executable.memory_analysis().peak_memory_in_bytes`` (a ``jax.stages.Compiled``), None where the backend
    gives no analysis."""
    if executable is None:
        return None
    try:
        stats = executable.memory_analysis()
    except Exception:  # noqa: BLE001  (a backend without memory analysis raises: the lane still counts)
        return None
    value = getattr(stats, "peak_memory_in_bytes", None) if stats is not None else None
    return int(value) if value else None
