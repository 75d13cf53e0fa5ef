"""The jit-loop mode: the whole decode loop compiled into one XLA program that streams its tokens to the host.

Prefill is jit-static's. Decoding is one jitted :func:`jax.lax.while_loop` (JAX docs, ``jax.lax.while_loop``:
``cond_fun`` / ``body_fun`` over a carry of fixed types, lowered to one XLA ``while``) whose carry is
``(token, KV cache, position, PRNG key, count, done, seen)`` and whose body is jit-static's decode step — the
model's forward and :func:`app.core.runtime.sampling.pick_token`, the same greedy / temperature / top-k / top-p /
repetition-penalty definitions — followed by one ordered host callback that hands the token id to the host
(:func:`app.core.runtime.host_token.token_to_host`: the custom call of :func:`jax.experimental.io_callback` with
``ordered=True``, whose callbacks run in program order, JAX docs "External callbacks", without its per-call
``device_put`` of the operands: ~0.2 against ~0.7 ms per token here, issue 38). The
callback's return value is the Stop flag: the loop exits after the iteration whose callback returned True.
An end-of-sequence token ends it on the device (``done``); the step limit is a runtime operand, so one compile
serves every ``max_new_tokens`` of a KV-cache capacity. A loop runs to the end of the cache's capacity at most;
the next one starts on the cache grown to the next capacity (jit-static's buckets, :meth:`JitStaticMode._grow`),
compiled once per capacity.

On the host the loop runs on a helper thread (it blocks until the loop ends) while the compute thread, inside
:meth:`JitLoopMode.decode`, takes the tokens from a queue one by one and returns each as a
:class:`app.core.modes.base.StepResult`: the engine's loop, its :class:`app.core.events.TokenEvent` s, TTFT and
tokens/s are those of every other mode. Each token's :class:`app.core.events.CallRecord` times the host-side
interval between its callback and the previous one (``timing == "callback interval"``); the first decode
record is the loop's one compiling call (trace / lower / compile phases), timed from the decode's start. The
host's work per token is measured inside the callbacks (``host_ms``: ``token`` the hand-over's own time,
``callback`` the iteration's other callbacks, :mod:`app.core.runtime.callback_clock`); the rest is ``wait``.

One token per callback, kept after measuring on this 2-core CPU: any host callback inside the loop (ordered,
unordered or ``jax.debug.callback``) costs ~0.3 ms per call. On the 4-layer pydoc-llama (steps of ~0.5 ms) the
same loop runs 0.45-0.53 ms/token without callbacks, 0.79-0.87 with one per token, 0.61 with one per 4 tokens,
0.48 per 16, against jit-static's 0.75-0.9: the callback costs less than the dispatch it saves, and on a 12-layer
GPT-2-small shape (~19 ms/token) it is ~1.5 % of a step. K tokens per callback would also make Stop and the token
points coarser by K.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax  # noqa: TID253 - a heavy module: its users import it inside functions
import jax.numpy as jnp  # noqa: TID253 - a heavy module: its users import it inside functions
import numpy as np  # noqa: TID253 - a heavy module: its users import it inside functions

from app.core.events import CALLBACK_INTERVAL, COMPILE_PHASES_FIELD, HOST_PARTS, CallRecord
from app.core.inspect import ir
from app.core.mode_catalog import decode_loop_mode
from app.core.modes.base import StepGen, StepResult, forward
from app.core.modes.jit import JitStaticMode
from app.core.parallel.host_calls import mesh_host_call
from app.core.runtime import callback_clock
from app.core.runtime.compiled_step import CompiledStep, HostMeter
from app.core.runtime.host_token import token_to_host
from app.core.runtime.pytrees import FlatTree
from app.core.runtime.sampling import pick_token
from app.core.steps import DECODE

#: Positional arguments of the loop (IR labels, compile reasons). ``token`` and ``position`` are int32 scalars,
#: ``max_steps`` the int32 step limit, ``stop_ids`` ``(STOP_IDS,)`` int32 (-1 = unused).
LOOP_ARGS = ("weights", "kv_cache", "token", "position", "attention_mask", "PRNG key", "seen tokens", "temperature",
             "top_k", "top_p", "repetition_penalty", "max_steps", "stop_ids")
#: Width of the ``stop_ids`` operand: end-of-sequence and end-of-turn ids padded with -1 (a fixed shape, so
#: another model's or a chat run's ids do not recompile).
STOP_IDS = 8
#: Seconds between two polls of the run's Stop flag while the compute thread waits for a token.
_POLL_S = 0.01


class TokenChannel:
    """The host end of the loop's ``io_callback``: one per compiled loop (the executable keeps this object), routed
    to the run in progress (:attr:`listener`). Called on an XLA runtime thread, once per iteration, in order."""

    def __init__(self) -> None:
        #: ``listener(token, count) -> stop`` of the running loop; None between runs (the loop then stops).
        self.listener: Callable[[int, int], bool] | None = None
        #: ``time.perf_counter()`` as the latest callback was entered (the listener's host-dispatch meter reads it).
        self.entered = 0.0

    def __call__(self, token: np.ndarray, count: np.ndarray) -> np.ndarray:
        """``token``: the iteration's int32 token id; ``count``: int32 iterations before it. Returns a bool
        scalar: True ends the loop after this iteration."""
        self.entered = time.perf_counter()
        listener = self.listener
        stop = True if listener is None else listener(int(token), int(count))
        return np.asarray(stop, dtype=np.bool_)


def make_loop_fn(fn: Callable, greedy: bool, channel: TokenChannel, to_host: Callable = token_to_host) -> Callable:
    """The decode loop as a pure JAX function of :data:`LOOP_ARGS`; returns ``(count, cache, key, seen)``: int32
    iterations run, the cache (a :class:`FlatTree`), the PRNG key and the ``(1, vocab)`` bool seen-mask after the
    last one. The key comes and goes as raw key data, as in jit-static's steps (``jax.random.key_data``). ``fn`` is ``torchax.extract_jax``'s module function; ``greedy`` is static (as in jit-static).
    ``to_host(channel, token, count)`` hands each token over (on a device mesh: every process's host, issue 39,
    :func:`app.core.parallel.host_calls.mesh_host_call`)."""

    def loop(weights, cache, token, position, attention_mask, key, seen, temperature, top_k, top_p, penalty,
             max_steps, stop_ids):
        def cond(carry):
            count, done = carry[4], carry[5]
            return jnp.logical_and(jnp.logical_not(done), count < max_steps)

        def body(carry):
            token, cache, position, key, count, done, seen = carry
            logits, new_cache = forward(fn, weights, cache.unflatten(), token.reshape(1, 1), position.reshape(1, 1),
                                        attention_mask)
            picked, key, seen = pick_token(logits[:, -1], key, seen, temperature, top_k, top_p, penalty, greedy=greedy)
            nxt = picked[0]
            stop = to_host(channel, nxt, count)
            done = jnp.logical_or(stop, jnp.any(nxt == stop_ids))
            return nxt, FlatTree.of(new_cache), position + 1, key, count + 1, done, seen

        init = (token, cache, position, jax.random.wrap_key_data(key), jnp.int32(0), jnp.bool_(False), seen)
        _, cache, _, key, count, _, seen = jax.lax.while_loop(cond, body, init)
        return count, cache, jax.random.key_data(key), seen

    return loop


class LoopStep(CompiledStep):
    """The compiled loop with its :class:`TokenChannel` (the callback target baked into its executables)."""

    def __init__(self, fn: Callable, channel: TokenChannel) -> None:
        super().__init__(fn, DECODE, LOOP_ARGS, donate_argnums=(1,))
        self.channel = channel


@dataclass
class LoopStats:
    """What the latest loop of a run did (``engine.mode_state("jit-loop")["last_loop"]``): ``steps`` iterations
    on the device (= callbacks), ``after_stop`` callbacks that ran once Stop was set (at most 1: the loop exits
    after the iteration that saw it), ``consumed`` tokens the engine took, ``limit`` the step limit it was given,
    ``stopped`` whether Stop was set."""

    steps: int = 0
    after_stop: int = 0
    consumed: int = 0
    limit: int = 0
    stopped: bool = False


class _LoopRun:
    """One dispatch of the compiled loop: the helper thread that runs it and the queue its callbacks fill."""

    def __init__(self, executable: jax.stages.Compiled, args: tuple, channel: TokenChannel, limit: int) -> None:
        self.tokens: queue.Queue = queue.Queue()
        self.stop = threading.Event()
        self.stats = LoopStats(limit=limit)
        self.outputs: Any = None
        self.error: BaseException | None = None
        self._channel = channel
        self._last = time.perf_counter()
        self._clock = callback_clock.reading()[0]
        channel.listener = self._on_token
        self._thread = threading.Thread(target=self._run, args=(executable, args), name=decode_loop_mode(),
                                        daemon=False)
        self._thread.start()

    def _on_token(self, token: int, count: int) -> bool:  # on an XLA runtime thread
        entered = self._channel.entered
        stopped = self.stop.is_set()
        self.stats.steps += 1
        self.stats.after_stop += stopped
        now = time.perf_counter()
        # The interval ends as the token is handed over: the wait since the previous hand-over (the loop body on
        # the device, the runtime's copy of the operands to the host) less the iteration's other host callbacks
        # (a MoE model's routing: their time on the callback clock), then this callback's own work.
        clock = callback_clock.reading()[0]
        wait, routed = (entered - self._last) * 1000, clock - self._clock
        self._clock = clock
        parts = {"wait": max(0.0, wait - routed), "callback": min(routed, wait), "token": (now - entered) * 1000}
        interval, self._last = (now - self._last) * 1000, now
        self.tokens.put((token, interval, parts))
        return stopped

    def _run(self, executable: jax.stages.Compiled, args: tuple) -> None:
        try:
            self.outputs = jax.block_until_ready(executable(*args))
        except BaseException as exc:  # handed to the compute thread, raised there
            self.error = exc
        finally:
            self.tokens.put(None)

    def next_token(self, should_stop: Callable[[], bool]) -> tuple[int, float, dict[str, float]] | None:
        """``(token, interval_ms, parts)`` of the next iteration (``parts``: the interval's ``wait``, ``callback``
        and ``token`` ms, see :data:`app.core.events.HOST_PARTS`), or None once the loop has ended (error raised).
        Polls ``should_stop`` (on the calling thread) while it waits and passes it on to the loop."""
        while True:
            if should_stop():
                self.stop.set()
            try:
                item = self.tokens.get(timeout=_POLL_S)
            except queue.Empty:
                continue
            if item is None:
                self.join()
                return None
            self.stats.consumed += 1
            return item

    def join(self) -> None:
        """Stop the loop (after its current iteration) and wait for its thread; raise what the loop raised."""
        self.stop.set()
        self._thread.join()
        self._channel.listener = None
        self.stats.stopped = self.stop.is_set() and self.stats.after_stop > 0
        if self.error is not None:
            error, self.error = self.error, None
            raise error


class JitLoopMode(JitStaticMode):
    """jit-static's prefill, then the decode loop as one jitted ``while_loop`` streaming each token through an
    ordered ``io_callback`` (see the module doc). On a device mesh (one process or several) the callback runs on
    every device and acts on one per process, so each process's host takes every token (issue 39,
    :func:`app.core.parallel.host_calls.mesh_host_call`)."""

    def __init__(self, engine, settings, max_cache_len: int) -> None:
        super().__init__(engine, settings, max_cache_len)
        self._loop: _LoopRun | None = None
        self._generated = 0
        chat = engine.chat_default if settings.chat is None else settings.chat  # as Engine.prompt_text decides
        stop = [*engine.eos_ids, *(engine.turn_end_ids if chat else [])] if settings.stop_at_eos else []
        ids = sorted(set(stop))[:STOP_IDS]
        self._stop_ids = np.full((STOP_IDS,), -1, dtype=np.int32)
        self._stop_ids[: len(ids)] = ids

    def prefill(self, prompt_ids):
        result = yield from super().prefill(prompt_ids)
        self._generated = 1
        return result

    def loop_step(self) -> LoopStep:
        """The on-device decode loop's jitted step for the current settings (built once per greedy/sampling
        choice and kept): what a decode runs and what ``profile --mode jit-loop`` measures."""
        greedy = self.settings.greedy

        def build() -> LoopStep:
            channel = TokenChannel()
            mesh = self.engine.mesh
            if mesh is None:
                return LoopStep(make_loop_fn(self.engine.jax_state()[1], greedy, channel), channel)
            return LoopStep(make_loop_fn(self.engine.jax_state()[1], greedy, channel,
                                         mesh_host_call(mesh, token_to_host)), channel)

        return self.engine.compiled_step(self.mode, DECODE, greedy, build)  # type: ignore[return-value]

    def decode(self, token: int, position: int) -> StepGen:
        meter = HostMeter() if self._loop is None else None  # the loop's first token: this call starts it
        record_fields: dict[str, Any] = {}
        capture = None
        if meter is not None:
            grown = self._grow(position)  # a loop runs to the end of the cache's capacity; the next one grows it
            step = self.loop_step()
            limit = min(self.settings.max_new_tokens - self._generated, self.capacity - position)
            weights, _ = self.engine.jax_state()
            args = (weights, self.cache, jnp.int32(token), jnp.int32(position), self.mask, self.key, self.seen,
                    *self.sampling, jnp.int32(max(limit, 1)), jnp.asarray(self._stop_ids))
            meter.mark("transfer")
            executable, record_fields, stages = yield from step.prepare(*args, meter=meter, reason=grown)
            self.cache = None  # donated to the loop
            self._loop = _LoopRun(executable, args, step.channel, limit)
            meter.mark("dispatch")
            self.engine.mode_state(self.mode)["last_loop"] = self._loop.stats
            if stages is not None:
                labels = step.input_labels(args)
                capture = lambda: ir.capture(*stages, labels)  # noqa: E731
        assert self._loop is not None, "started above or by an earlier decode of this run"
        item = self._loop.next_token(self.should_stop)
        if item is None:  # the loop ended before the engine did (the cache's capacity, a withdrawn Stop): go on
            self._resume()
            return (yield from self.decode(token, position))
        tok, interval_ms, parts = item
        self._generated += 1
        if meter is not None:
            meter.mark("wait")
            meter.carve("wait", "callback", parts.get("callback", 0.0))
            shapes = {"input_ids": [1, 1], "attention_mask": [1, self.capacity],
                      "max_steps": [self._loop.stats.limit]}
            meter.mark("token")
            wall_ms, host_ms, leaves = meter.wall_ms, meter.parts, meter.leaves
            execute_ms = wall_ms - sum(record_fields.get(COMPILE_PHASES_FIELD, {}).values())
        else:
            shapes = {"input_ids": [1, 1]}
            wall_ms = execute_ms = interval_ms
            host_ms, leaves = {k: parts.get(k, 0.0) for k in HOST_PARTS}, 0
        record = CallRecord(index=0, step=DECODE, mode="", input_shapes={}, wall_ms=wall_ms, execute_ms=execute_ms,
                            compiled=bool(record_fields), timing=CALLBACK_INTERVAL, host_ms=host_ms, leaves=leaves,
                            **record_fields)
        return StepResult(tok, record, shapes, wall_ms, capture)

    def _resume(self) -> None:
        """Take the ended loop's state (cache, key, seen) so that the next :meth:`decode` starts a new loop."""
        if self._loop is None:
            raise RuntimeError("There is no ended loop to resume from.")
        _, self.cache, self.key, self.seen = self._loop.outputs
        self._loop = None

    def finish(self) -> None:
        if self._loop is not None:
            self._loop.join()
            self._loop = None
