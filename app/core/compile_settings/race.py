"""The settings race of a model: the same prompt once per compiler setting, each lane from cold, one step — jit-static's
decode step (the default) or prefill, or jit-loop's whole decode loop (:data:`STEPS`) — compiled under the setting
(:func:`app.core.compile_options.compiling_with`) and timed by the engine's own machinery
(:class:`app.core.runtime.compiled_step.CompiledStep`'s trace / lower / compile timers, the engine's steady ms per
token, or the median ms of the warm prefill calls).

The stream is the mode race's (:mod:`app.core.race`): per lane a :class:`app.core.events.LaneEvent` (its ``mode`` is
the setting's name), the engine's events, then the lane's :class:`app.core.compile_settings.figures.SettingLane`.
The first lane is the baseline (:data:`app.core.compile_settings.catalog.BASELINE` is put first when the list lacks
it). JAX's persistent cache is off for the race (a disk hit would hide a compile) and back as it was afterwards.
Stop is polled between lanes and, inside one, between runs and decode steps; a running XLA compile cannot be interrupted.

An Inductor row's lane (``inductor-default``, ``-reduce-overhead``, ``-max-autotune``) runs the same step in the
``torch-compile`` mode under that ``torch.compile`` mode, Dynamo reset and Inductor's disk caches off for the lane
(every kernel built); its split is Dynamo's capture as *trace*, AOT autograd and Inductor's lowering as *lower*,
Inductor's code generation and the C++ build as *compile* (``CallRecord.compile_phases``, which sum to Dynamo's
frame compile time). Its peak memory is not known (None).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from app.core.compile_cache import xla
from app.core.compile_cache.inductor import ensure_inductor_cache, set_inductor_cache
from app.core.compile_options import compiling_inductor, compiling_with, observing_compiles
from app.core.compile_settings.catalog import BASELINE, CompileSetting, inductor_mode, parse_setting
from app.core.compile_settings.figures import SettingLane
from app.core.compile_settings.paired import (
    SettingsVerdicts,
    Timer,
    hlo_fingerprint,
    optimized_hlo,
    paired_phase,
)
from app.core.compile_settings.split import CompileCapturer
from app.core.errors import InvalidSettingsError
from app.core.events import CallRecord, Event, FinishedEvent, LaneEvent, PromptEvent, SteadyBlockEvent
from app.core.mode_catalog import decode_loop_mode, race_lane_mode
from app.core.steady import SteadyPlan, steady_settings, time_block
from app.core.steady import calibrate as steady_calibrate
from app.core.steps import DECODE, PREFILL
from app.core.verdict import Block

if TYPE_CHECKING:
    from app.core.engine.engine import Engine
    from app.core.settings import GenerationSettings

#: What a settings race yields.
RaceItem = Event | SettingLane | SteadyBlockEvent | SettingsVerdicts
#: The mode a model lane runs by default: two compiles (prefill, decode), then each decode call reuses its executable.
RACE_MODE = race_lane_mode("xla")
#: The model steps a race can time: ``step`` → ``(mode, the records' step kind)``. ``loop`` is jit-loop's whole
#: decode loop compiled into one XLA program (:mod:`app.core.modes.loop`); its prefill is jit-static's. An Inductor
#: lane runs :data:`INDUCTOR_MODE` instead (decode and prefill only).
STEPS: dict[str, tuple[str, str]] = {DECODE: (RACE_MODE, DECODE), PREFILL: (RACE_MODE, PREFILL),
                                     "loop": (decode_loop_mode(), DECODE)}
#: The mode an Inductor setting's lane runs.
INDUCTOR_MODE = race_lane_mode("inductor")


def resolve(names: Sequence[str], platform: str, step: str = DECODE) -> list[CompileSetting]:
    """The settings ``names`` name on ``platform`` (:func:`app.core.compile_settings.catalog.parse_setting`) for a
    race of ``step`` (:data:`STEPS`, or ``"program"``: a program's entry point), the baseline first (added when
    missing), each once, every XLA option checked by one tiny compile (:func:`check_options`). Raises
    :class:`InvalidSettingsError` naming the first bad setting, an Inductor one too where ``step`` has nothing
    for Inductor to compile (jit-loop's decode loop, a JAX program)."""
    settings = [parse_setting(n, platform) for n in names]
    inductor = next((s.name for s in settings if s.compiler == "Inductor"), None)
    if inductor and step in ("loop", "program"):
        what = "decode loop" if step == "loop" else "JAX program"
        raise InvalidSettingsError(f"{inductor} is an Inductor setting: Inductor compiles PyTorch and has no {what} "
                                   "to race; race a model's decode or prefill step with it.")
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
        with compiling_with(setting.options), compiling_inductor(inductor_mode(setting)):
            yield
    finally:
        for name, value in before.items():
            jax.config.update(name, value)


@contextmanager
def no_persistent_cache() -> Iterator[None]:
    """JAX's persistent compilation cache off within the block (each lane compiles for real), then as it was."""
    directory = xla.persistent_cache_dir()
    if directory is not None:
        xla.set_persistent_cache(None)
    try:
        yield
    finally:
        if directory is not None:
            xla.set_persistent_cache(directory)


def step_target(step: str) -> tuple[str, str]:
    """``(mode, the records' step kind)`` that a race of ``step`` runs (:data:`STEPS`). Raises
    :class:`InvalidSettingsError` naming an unknown step."""
    try:
        return STEPS[step]
    except KeyError:
        raise InvalidSettingsError(f"Unknown step {step!r} for a settings race: use one of {', '.join(STEPS)}.") from None


def settings_race(engine: Engine, prompt: str, names: Sequence[str], settings: GenerationSettings,
                  should_stop: Callable[[], bool] = lambda: False, rounds: int = 1, step: str = DECODE,
                  calls: int = 10, first_lane_ir: bool = False,
                  paired: SteadyPlan | None = None) -> Iterator[RaceItem]:
    """Race one step of ``engine`` under each of ``names`` (see :func:`resolve`), one lane each from cold
    (``engine.clear_compiled()``), ``rounds`` times round-robin (a shared machine's noise then falls on every setting
    alike: merge with :func:`app.core.compile_settings.figures.merge_rounds`).

    ``step`` (:data:`STEPS`): ``"decode"`` (jit-static's decode step: one run of ``settings.max_new_tokens`` tokens,
    steady ms per token), ``"prefill"`` (jit-static's prefill: ``calls`` runs of one token each, the first compiling,
    steady ms per prefill call of the prompt) or ``"loop"`` (jit-loop's compiled decode loop: one run; its first
    decode record is the loop's compile, steady ms per token from the callback intervals). ``settings``' mode is
    replaced; with ``capture_ir`` every lane captures its IR (outside its timings), with ``first_lane_ir`` only the
    first — enough for ``engine.ir`` to hold the raced step's ``Lowered``, what
    :func:`app.core.compile_settings.parting.settings_partings` compiles again.

    With ``paired`` (a :class:`app.core.steady.SteadyPlan`): after every lane, the XLA settings' warm steps in
    paired, interleaved rounds (:func:`_timers`, :func:`app.core.compile_settings.paired.paired_phase`): a
    :class:`app.core.events.SteadyBlockEvent` per block, then
    a :class:`app.core.compile_settings.paired.SettingsVerdicts`, whose verdicts are also put on the lanes already
    yielded (``SettingLane.verdict``: the "vs baseline" ratio, its 95 % interval and words). Skipped when stopped,
    or when fewer than two XLA settings (the baseline among them) ran to their end.

    Yields per lane a :class:`LaneEvent`, the engine's events and the lane's :class:`SettingLane`
    (``unit="token"``, ``"call"`` for prefill; outputs compared with the first baseline lane's over their common
    length). Raises :class:`InvalidSettingsError` before anything runs."""
    mode, kind = step_target(step)
    if paired is not None:
        paired.validated()
    lanes = resolve(names, engine.device.platform, step) * max(1, rounds)
    runs = max(2, calls) if step == PREFILL else 1
    base_settings = settings.with_(mode=mode, **({"max_new_tokens": 1} if step == PREFILL else {}))
    base_tokens: list[int] | None = None
    kept: dict[str, tuple[CompileSetting, dict, int | None]] = {}
    done: list[SettingLane] = []  # every lane yielded, for the paired verdicts
    with no_persistent_cache():
        for i, setting in enumerate(lanes):
            if should_stop():
                return
            lane_mode = INDUCTOR_MODE if setting.compiler == "Inductor" else mode
            lane_settings = base_settings.with_(mode=lane_mode,
                                                capture_ir=settings.capture_ir and (i == 0 or not first_lane_ir))
            yield LaneEvent(setting.name, i, len(lanes), runs if step == PREFILL else settings.max_new_tokens)
            engine.clear_compiled()
            capturer = CompileCapturer(kind, engine.device.platform) if setting.compiler == "XLA" else None
            with applied(setting), _cold_inductor(engine, setting), observing_compiles(capturer):
                records, finished, cache_len = yield from _runs(engine, prompt, lane_settings, runs, should_stop)
            lane = _model_lane(engine, setting, (lane_mode, kind), records, finished, runs, lane_settings.greedy)
            if capturer is not None:  # XLA's passes against codegen (GPU: autotune, ptxas)
                capturer.fill(lane)
            base_tokens = lane.outputs if base_tokens is None else base_tokens
            n = min(len(base_tokens), len(lane.outputs))
            lane.outputs_equal = lane.outputs[:n] == base_tokens[:n]
            _keep(engine, setting, lane, (lane_mode, kind, lane_settings.greedy), kept, cache_len)
            done.append(lane)
            yield lane
        timers = _timers(engine, prompt, base_settings, kept, paired, should_stop) if paired is not None else {}
        if (yield from paired_phase(timers, done, lanes[0].name, paired, should_stop)):
            engine.restore_steps(kept[next(reversed(kept))][1])  # the last setting's steps, as after its lane


def _runs(engine: Engine, prompt: str, settings: GenerationSettings, runs: int, should_stop: Callable[[], bool],
          ) -> Generator[Event, None, tuple[list[CallRecord], list[FinishedEvent], int | None]]:
    """A lane's ``runs`` generations, their events yielded; returns its records, finished events and KV-cache
    length (its :class:`PromptEvent`'s)."""
    records: list[CallRecord] = []
    finished: list[FinishedEvent] = []
    cache_len: int | None = None
    for _ in range(runs):
        if should_stop():
            break
        for event in engine.generate(prompt, settings, should_stop):
            if isinstance(event, CallRecord):
                records.append(event)
            elif isinstance(event, FinishedEvent):
                finished.append(event)
            elif isinstance(event, PromptEvent):
                cache_len = event.cache_len
            yield event
    return records, finished, cache_len


def _keep(engine: Engine, setting: CompileSetting, lane: SettingLane, step: tuple[str, str, bool],
          kept: dict[str, tuple[CompileSetting, dict, int | None]], cache_len: int | None) -> None:
    """After a lane: its optimized HLO's fingerprint, and (an XLA lane run to its end) its compiled steps kept with
    the lane's KV-cache length (the paired rounds reuse both: nothing compiles again)."""
    lane.hlo_hash = hlo_fingerprint(optimized_hlo(_executable(engine, *step)))
    if setting.compiler == "XLA" and not lane.stopped:
        kept[setting.name] = (setting, engine.compiled_steps(step[0]), cache_len)


def _timers(engine: Engine, prompt: str, settings: GenerationSettings,
            kept: dict[str, tuple[CompileSetting, dict, int | None]], plan: SteadyPlan,
            should_stop: Callable[[], bool]) -> dict[str, Timer]:
    """The kept settings' :class:`Timer` s for the paired rounds (:func:`app.core.compile_settings.paired.
    paired_phase`): a block is ``plan.tokens`` tokens (one prefill call for a prefill race) generated with the
    setting's compiled steps put back and its options applied, timed as the mode race times its blocks
    (:func:`app.core.steady.time_block`: mean ms of the decode calls; for prefill the generation's wall time)."""
    def timer(name: str) -> Timer:
        setting, steps, cache_len = kept[name]
        short = steady_settings(settings, settings.mode, plan.tokens, cache_len)

        @contextmanager
        def as_compiled() -> Iterator[None]:
            engine.restore_steps(steps)
            with applied(setting):
                yield

        def calibrate(block_ms: float) -> int:
            with as_compiled():
                return steady_calibrate(engine, prompt, short, block_ms, should_stop)

        def block(reps: int, label: str) -> Block:
            with as_compiled():
                return time_block(engine, prompt, short, reps, label, should_stop)

        return Timer(calibrate, block)

    return {name: timer(name) for name in kept}


def _executable(engine: Engine, mode: str, kind: str, greedy: bool) -> Any:
    step = engine.existing_step(mode, kind, greedy)
    return step.executable(step.last_key) if step is not None else None


def _model_lane(engine: Engine, setting: CompileSetting, target: tuple[str, str], records: list[CallRecord],
                finished: list[FinishedEvent], runs: int, greedy: bool) -> SettingLane:
    """The lane's figures from its records of the raced step kind and the engine's compiled step."""
    mode, kind = target
    mine = [r for r in records if r.step == kind]
    compiled = next((r for r in mine if r.compiled), None)
    if kind == DECODE:
        steady = finished[-1].summary.steady_decode_ms if finished else None
        outputs = list(finished[-1].token_ids) if finished else []
    else:  # prefill: one call per run; its first token is its output
        warm = [r.wall_ms for r in mine if not r.compiled]
        steady = statistics.median(warm) if warm else None
        outputs = [f.token_ids[0] for f in finished if f.token_ids]
    split = _split(compiled) if compiled else (None, None, None)
    return SettingLane(
        setting.name, setting.sets, *split, steady,
        n_calls=len(mine), unit="token" if kind == DECODE else "call",
        changes_results=setting.changes_results, peak_bytes=_peak_bytes(engine, mode, kind, greedy),
        persistent_cache_hit=bool(compiled and compiled.persistent_cache_hit),
        stopped=len(finished) < runs or finished[-1].reason == "stopped",
        outputs=outputs,
    )


def _split(record: CallRecord) -> tuple[float | None, float | None, float | None]:
    """``(trace, lower, compile)`` ms of a compiling call: XLA's stages, or Inductor's phases grouped as the module
    doc says (``dynamo`` | ``aot autograd`` + ``inductor lowering`` | ``inductor codegen`` + ``c++ compile``)."""
    if record.trace_ms is not None or not record.compile_phases:
        return record.trace_ms, record.lower_ms, record.compile_ms
    p = record.compile_phases
    return (p.get("dynamo", 0.0), p.get("aot autograd", 0.0) + p.get("inductor lowering", 0.0),
            p.get("inductor codegen", 0.0) + p.get("c++ compile", 0.0))


@contextmanager
def _cold_inductor(engine: Engine, setting: CompileSetting) -> Iterator[None]:
    """For an Inductor lane: Dynamo reset and the engine's torch-compile steps dropped, Inductor's disk caches off
    within the block (every kernel built), then the caches as they were. Nothing for an XLA lane."""
    if setting.compiler != "Inductor":
        yield
        return
    from app.core.modes.torch_compile import clear_torch_compile  # noqa: PLC0415 - heavy: jax

    before = ensure_inductor_cache()
    clear_torch_compile(engine)
    set_inductor_cache(None)
    try:
        yield
    finally:
        set_inductor_cache(before)


def _peak_bytes(engine: Engine, mode: str, kind: str, greedy: bool) -> int | None:
    """Peak memory of the engine's compiled ``(mode, kind)`` step (``memory_analysis().peak_memory_in_bytes``), or
    None."""
    return peak_bytes(_executable(engine, mode, kind, greedy))


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
