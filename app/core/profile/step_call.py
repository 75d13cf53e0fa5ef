"""The calls the step profiler (:mod:`app.core.profile.step`) measures: a :class:`StepCall` of an engine's
compiled step — jit-static's prefill or decode (:func:`engine_step_call`), or jit-loop's decode loop making
``n_steps`` tokens in one call (:func:`engine_loop_call`) — with the step's IR and source map kept in
``engine.ir`` as a run does. The profiler's one module coupled to the modes' and the engine's internals."""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.core.errors import InvalidSettingsError
from app.core.inspect import ir
from app.core.inspect.source_map import build_source_map
from app.core.mode_catalog import decode_loop_mode, mode_class, profiling_mode
from app.core.settings import GenerationSettings
from app.core.steps import DECODE

if TYPE_CHECKING:
    import jax
    import torch

    from app.core.engine.engine import Engine
    from app.core.inspect.ir import StepIR
    from app.core.modes.loop import JitLoopMode, LoopStep
    from app.core.runtime.compiled_step import CallKey, CompiledStep


@dataclass
class StepCall:
    """What the profiler needs from an engine: ``compiled`` (the AOT ``jax.stages.Compiled`` the calls run),
    ``run()`` one call as the app makes it (build arguments, call, wait, copy the token to the host), and
    ``source_map`` of the step (:class:`app.core.inspect.source_map.SourceMap`, None when it cannot be built).
    ``iterations``: tokens one call makes (a jit-loop call runs that many iterations of its loop; 1 otherwise)."""

    compiled: Any
    run: Callable[[], None]
    source_map: Any = None
    iterations: int = 1


def _drain(gen: Generator[object, None, Any]) -> Any:
    """Run a mode's step generator (it yields phase events) and return its result."""
    try:
        while True:
            next(gen)
    except StopIteration as stop:
        return stop.value


def engine_step_call(engine: Engine, prompt: str, step: str, n_calls: int, mode_name: str | None = None) -> StepCall:
    """THE ONE FUNCTION COUPLED TO ENGINE INTERNALS (``app/core/modes/base.py``'s ``JitStaticMode``, its
    ``prefill``/``decode`` generators and its ``cache``/``mask``/``seen`` state; the engine's ``_steps``
    and ``ir``; ``CompiledStep._executables``). Makes one greedy call of ``mode_name``'s ``step`` (jit-static's
    by default; jit-loop's prefill is jit-static's)
    (compiling it on first use) with a KV cache sized for the prompt plus ``n_calls`` decode steps, and
    returns the executable and a function making one more call exactly as the mode does. Decode starts from
    a zeroed cache after the prompt's positions (no prefill compile: a step's time depends on the cache's
    shape, not its values). Raises :class:`InvalidSettingsError` when the calls do not fit the model."""
    import jax.numpy as jnp
    import torch

    from app.core.runtime.pytrees import FlatTree  # noqa: PLC0415 - heavy: jax
    ids = engine.encode(prompt)
    settings = GenerationSettings(mode=mode_name or profiling_mode(), max_new_tokens=n_calls + 4,
                                  stop_at_eos=False).validated()
    cache_len = engine.cache_len_for(len(ids), settings)
    if step == DECODE and len(ids) + n_calls + 4 > cache_len:
        raise InvalidSettingsError(f"{n_calls} decode steps after a {len(ids)}-token prompt do not fit the "
                                   f"model's {cache_len} positions: profile fewer steps.")
    mode = mode_class(settings.mode)(engine, settings, cache_len)
    state: dict[str, Any] = {"token": engine.pad_id, "position": len(ids)}
    if step == DECODE:
        mode.cache = FlatTree.of(engine.static_cache(cache_len))
        mode.mask = jnp.ones((1, cache_len), jnp.int32)
        mode.seen = jnp.asarray(mode.start_seen(ids))  # the repetition penalty's seen-token mask

    def run() -> None:
        with torch.no_grad():
            result = _drain(mode.decode(state["token"], state["position"]) if step == DECODE
                            else mode.prefill(ids))
        state.setdefault("first", result)
        state["last"] = result
        if step == DECODE:
            state["token"], state["position"] = result.token, state["position"] + 1

    run()
    compiled_step = engine.existing_step(mode.mode, step, settings.greedy)
    if compiled_step is None:  # the run above built it
        raise RuntimeError(f"The profiled call made no compiled {step} step.")
    run()
    key, compiled = compiled_step.last_key, compiled_step.executable(compiled_step.last_key)
    if compiled is None:
        raise RuntimeError("The profiled call did not run a cached executable.")
    step_ir, compiled = _step_ir(engine, (mode.mode, step), state, compiled_step, key, run, compiled)
    return StepCall(compiled, run, _source_map(step_ir, step, getattr(engine, "model", None)))


def engine_loop_call(engine: Engine, prompt: str, iterations: int) -> StepCall:
    """jit-loop's decode: a call that runs the compiled loop for ``iterations`` tokens, as the mode dispatches it
    (the same executable, arguments and ordered ``io_callback``; the callback's listener takes each token and
    never asks to stop; no stop ids, so EOS does not end it), from a zeroed cache after the prompt's positions.
    Each call starts from the same position with the cache the previous one returned (donated, as the mode
    does). Coupled to :class:`app.core.modes.loop.JitLoopMode` (its ``loop_step``, ``key``, ``sampling``,
    ``start_seen``) and :class:`app.core.modes.loop.LoopStep` (``prepare``, ``channel``). Raises
    :class:`InvalidSettingsError` when the tokens do not fit the model."""
    ids = engine.encode(prompt)
    settings = GenerationSettings(mode=decode_loop_mode(), max_new_tokens=iterations + 4,
                                  stop_at_eos=False).validated()
    cache_len = engine.cache_len_for(len(ids), settings)
    if len(ids) + iterations + 4 > cache_len:
        raise InvalidSettingsError(f"{iterations} decode steps after a {len(ids)}-token prompt do not fit the "
                                   f"model's {cache_len} positions: profile fewer steps.")
    mode = mode_class(decode_loop_mode())(engine, settings, cache_len)
    loop = mode.loop_step()
    run, state = _loop_runner(engine, mode, loop, ids, cache_len, iterations)
    run()
    step_ir = _loop_ir(engine, (mode.mode, DECODE), loop, state, run)
    return StepCall(state["executable"], run, _source_map(step_ir, DECODE, getattr(engine, "model", None)),
                    iterations)


def _loop_runner(engine: Engine, mode: JitLoopMode, loop: LoopStep, ids: list[int], cache_len: int,
                 iterations: int) -> tuple[Callable[[], None], dict[str, Any]]:
    """One call of jit-loop's compiled ``loop`` as :func:`engine_loop_call` makes it, and the state it keeps from
    call to call: the cache (donated), the tokens of the last call, its executable, and the IR stages of a
    compiling call (``"capture"``)."""
    import jax
    import jax.numpy as jnp

    from app.core.modes.loop import STOP_IDS  # noqa: PLC0415 - heavy: jax
    from app.core.runtime.pytrees import FlatTree  # noqa: PLC0415 - heavy: jax

    weights, _ = engine.jax_state()
    state: dict[str, Any] = {"cache": FlatTree.of(engine.static_cache(cache_len)), "tokens": []}
    mask = jnp.ones((1, cache_len), jnp.int32)
    seen = jnp.asarray(mode.start_seen(ids))
    stop_ids = jnp.full((STOP_IDS,), -1, jnp.int32)

    def args() -> tuple:
        return (weights, state["cache"], jnp.int32(engine.pad_id), jnp.int32(len(ids)), mask, mode.key, seen,
                *mode.sampling, jnp.int32(iterations), stop_ids)

    def on_token(token: int, *_: object) -> bool:  # on an XLA runtime thread, once per iteration
        state["tokens"].append(token)
        return False

    def run() -> None:
        call_args = args()
        executable, _, stages = _drain(loop.prepare(*call_args))
        if stages is not None:
            state["capture"] = (stages, loop.input_labels(call_args))
        state["cache"], state["tokens"] = None, []  # donated to the loop
        loop.channel.listener = on_token
        try:
            count, state["cache"], _, _ = jax.block_until_ready(executable(*call_args))
        finally:
            loop.channel.listener = None
        if int(count) != iterations or len(state["tokens"]) != iterations:
            raise RuntimeError(f"The profiled loop ran {int(count)} iterations ({len(state['tokens'])} callbacks), "
                               f"not {iterations}.")
        state["executable"] = executable

    return run, state


def _loop_ir(engine: Engine, ir_key: tuple[str, str], loop: LoopStep, state: dict[str, Any],
             run: Callable[[], None]) -> Any:
    """The loop's :class:`app.core.inspect.ir.StepIR`, kept in ``engine.ir`` as a run does: captured from the
    first call when it compiled, else the engine's; when neither has a jaxpr (compiled by a run without IR
    capture) the loop compiles once more to capture it."""
    if "capture" in state:
        stages, labels = state.pop("capture")
        engine.ir[ir_key] = ir.capture(*stages, input_labels=labels)
    if getattr(engine.ir.get(ir_key), "traced_jaxpr", None) is None:  # compiled by a run without IR capture
        loop.forget(loop.last_key)
        run()
        stages, labels = state.pop("capture")
        engine.ir[ir_key] = ir.capture(*stages, input_labels=labels)
    return engine.ir.get(ir_key)


def _step_ir(engine: Engine, ir_key: tuple[str, str], state: dict, compiled_step: CompiledStep, key: CallKey,
             run: Callable[[], None],
             compiled: jax.stages.Compiled) -> tuple[Any, Any]:
    """The step's :class:`app.core.inspect.ir.StepIR` (with its jaxpr) and the executable: the IR is captured from
    a compiling first call and kept in ``engine.ir`` as a run does, else the engine's; when neither has a
    jaxpr (compiled by a run without IR capture) the step compiles once more to capture it."""
    if state["first"].capture_ir is not None:
        engine.ir[ir_key] = state["first"].capture_ir()
    if getattr(engine.ir.get(ir_key), "traced_jaxpr", None) is None:
        compiled_step.forget(key)
        run()
        capture = state["last"].capture_ir
        engine.ir[ir_key] = capture() if capture is not None else None
        compiled = compiled_step.executable(key) or compiled
    return engine.ir.get(ir_key), compiled


def _source_map(step_ir: StepIR | None, step: str, model: torch.nn.Module | None) -> Any:
    """The step's source map, or None when its IR is unknown or has no jaxpr."""
    try:
        return build_source_map(step_ir, step, model) if step_ir is not None else None
    except ValueError:
        return None
