"""The ``jax.jit`` modes: jit-dynamic (a growing DynamicCache, a recompile every step) and jit-static
(prompt buckets and a StaticCache: two compiles, then every step reuses them). Steps are
:class:`app.core.runtime.compiled_step.CompiledStep` s kept on the engine across runs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import jax  # noqa: TID253 - a heavy module: its users import it inside functions
import jax.numpy as jnp  # noqa: TID253 - a heavy module: its users import it inside functions
import numpy as np  # noqa: TID253 - a heavy module: its users import it inside functions

from app.core.events import PhaseEvent
from app.core.inspect import ir
from app.core.modes.base import Mode, StepGen, StepResult, forward, ids_array, positions_array, prompt_bucket
from app.core.parallel.mesh import constrain_cache
from app.core.runtime.compiled_step import CallKey, CompiledStep, HostMeter
from app.core.runtime.kv_cache import first_capacity, grow, growable, next_capacity
from app.core.runtime.pytrees import FlatTree
from app.core.runtime.sampling import pick_token
from app.core.steps import DECODE, PREFILL


def _next_inputs(token, position_ids):
    """The next decode step's ``(input_ids, position_ids)``, both ``(1, 1)`` int32, made inside the step from its
    own token and the position after its last one: fed back as they are, the next call copies nothing to the device."""
    return token.reshape(1, 1).astype(jnp.int32), position_ids[:, -1:].astype(jnp.int32) + 1


def _make_step_fn(fn, greedy: bool, constrain=None):
    """Decode step (also jit-dynamic's prefill): forward, then select from the last position's logits.
    The cache travels as a :class:`FlatTree`; ``constrain(cache)`` (mesh runs) pins its sharding. The PRNG key
    travels as its raw ``uint32`` data (``jax.random.key_data``; wrapped inside with ``jax.random.wrap_key_data``):
    a typed key among the outputs would send every call down JAX's Python dispatch path instead of its C++ one.
    Returns ``(token, cache, key, seen, next_ids, next_positions)`` (:func:`_next_inputs`)."""

    def step(weights, cache, input_ids, position_ids, attention_mask, key, seen, temperature, top_k, top_p,
             penalty):
        logits, cache = forward(fn, weights, cache.unflatten(), input_ids, position_ids, attention_mask)
        token, key, seen = pick_token(logits[:, -1], jax.random.wrap_key_data(key), seen, temperature, top_k, top_p,
                                      penalty, greedy=greedy)
        return (token, FlatTree.of(constrain(cache) if constrain else cache), jax.random.key_data(key), seen,
                *_next_inputs(token, position_ids))

    return step


def _make_static_prefill_fn(fn, greedy: bool, constrain=None):
    """Prefill of a right-padded prompt: logits at ``true_len - 1``; cache lengths reset to ``true_len``. Outputs as
    :func:`_make_step_fn`'s, the next position being ``true_len``."""

    def prefill(weights, cache, input_ids, position_ids, attention_mask, true_len, key, seen, temperature, top_k,
                top_p, penalty):
        logits, cache = forward(fn, weights, cache.unflatten(), input_ids, position_ids, attention_mask)
        last = jax.lax.dynamic_index_in_dim(logits, true_len - 1, axis=1, keepdims=False)
        token, key, seen = pick_token(last, jax.random.wrap_key_data(key), seen, temperature, top_k, top_p, penalty,
                                      greedy=greedy)
        for layer in cache.layers:
            if hasattr(layer, "cumulative_length") and not isinstance(layer.cumulative_length, int):
                layer.cumulative_length = jnp.asarray(true_len, jnp.asarray(layer.cumulative_length).dtype)
        return (token, FlatTree.of(constrain(cache) if constrain else cache), jax.random.key_data(key), seen,
                *_next_inputs(token, jnp.reshape(true_len - 1, (1, 1))))

    return prefill


STEP_ARGS = ("weights", "kv_cache", "input_ids", "position_ids", "attention_mask", "PRNG key",
             "seen tokens", "temperature", "top_k", "top_p", "repetition_penalty")
PREFILL_ARGS = STEP_ARGS[:5] + ("true_len",) + STEP_ARGS[5:]


def _first(outputs):
    """What a step's call waits for: its token (every output of one execution is ready with it)."""
    return outputs[0]


class _JitMode(Mode):
    """A mode whose steps are jitted :class:`CompiledStep` s, kept on the engine across runs. Its PRNG key is
    held as raw key data (see :func:`_make_step_fn`)."""

    #: Positional arguments of the step donated to XLA (updated in place).
    donate_argnums: tuple[int, ...] = ()

    def __init__(self, engine, settings, max_cache_len: int) -> None:
        super().__init__(engine, settings, max_cache_len)
        self.key = jax.random.key_data(self.key)
        #: ``(token, position, input_ids, position_ids)``: the latest call's token and the position the next decode
        #: is expected at, with the step's own device arrays for them (:func:`_next_inputs`).
        self._fed: tuple | None = None

    def step_function(self, kind: str, greedy: bool) -> tuple[Callable, tuple[str, ...]]:
        """The pure JAX function of step ``kind`` and its argument names."""
        return _make_step_fn(self.engine.jax_state()[1], greedy, self._constrain()), STEP_ARGS

    def _constrain(self) -> Callable | None:
        return None

    def _step(self, kind: str) -> CompiledStep:
        greedy = self.settings.greedy

        def build() -> CompiledStep:
            fn, names = self.step_function(kind, greedy)
            return CompiledStep(fn, kind, names, donate_argnums=self.donate_argnums)

        return self.engine.compiled_step(self.mode, kind, greedy, build)

    def _decode_inputs(self, token: int, position: int) -> tuple[jax.Array, jax.Array]:
        """``(input_ids, position_ids)`` of a decode step at ``position`` after ``token``: the previous step's own
        outputs when they are those (the engine's loop), else copied from the host (a caller that drives the mode
        itself, e.g. the profiler; and on a device mesh, where the step's outputs carry the mesh's sharding)."""
        fed = self._fed
        if fed is not None and fed[0] == token and fed[1] == position and self.engine.mesh is None:
            return fed[2], fed[3]
        return ids_array([token]), positions_array(position, 1)

    def _run(self, step: CompiledStep, args: tuple, shapes: dict, meter: HostMeter, next_position: int,
             key: CallKey | None = None, reason: str | None = None) -> StepGen:
        """One call of ``step``, timed by ``meter`` (started before the arguments were built: its ``transfer``
        part is marked here). ``key``: the call's signature when known (:meth:`CompiledStep.prepare`); ``reason``:
        why it compiles, if it does (default: what changed in its arguments)."""
        meter.mark("transfer")
        output = None
        for item in step(*args, meter=meter, key=key, ready=_first, reason=reason):
            if isinstance(item, PhaseEvent):
                yield item
            else:
                output = item
        if output is None:  # CompiledStep.__call__ ends with its StepOutput
            raise RuntimeError(f"The {step.name} step ended without its output.")
        token, self.cache, self.key, self.seen, ids, positions = output.outputs
        tok = int(np.asarray(token)[0])  # one device → host copy (``token[0]`` would dispatch a slice first)
        self._fed = (tok, next_position, ids, positions)
        meter.mark("token")
        wall = meter.wall_ms
        record = replace(output.record, host_ms=meter.parts, leaves=meter.leaves)
        capture = None
        if output.stages is not None:
            traced, lowered, compiled = output.stages
            labels = step.input_labels(args)
            capture = lambda: ir.capture(traced, lowered, compiled, labels)  # noqa: E731
        return StepResult(tok, record, shapes, wall, capture)


class JitDynamicMode(_JitMode):
    """``jax.jit`` with a growing ``DynamicCache``: every step has new shapes, so every step recompiles."""

    def prefill(self, prompt_ids):
        self.cache = FlatTree.of(self.engine.dynamic_cache())
        return (yield from self._call(prompt_ids, 0, PREFILL))

    def decode(self, token, position):
        return (yield from self._call([token], position, DECODE))

    def _call(self, tokens, start, kind):
        meter = HostMeter()
        weights, _ = self.engine.jax_state()
        step = self._step(kind)
        ids = ids_array(tokens)
        mask = jnp.ones((1, start + len(tokens)), jnp.int32)
        if start == 0:
            self.seen = jnp.asarray(self.start_seen(tokens))
        args = (weights, self.cache, ids, positions_array(start, len(tokens)), mask, self.key, self.seen, *self.sampling)
        shapes = {"input_ids": list(ids.shape), "attention_mask": list(mask.shape), "kv_cache_len": [start]}
        return (yield from self._run(step, args, shapes, meter, start + len(tokens)))


class JitStaticMode(_JitMode):
    """Jitted prefill (prompt padded to a length bucket) and decode step over a ``StaticCache``, weights
    passed as arguments and the cache donated: two compiles, then every step reuses them. On a device
    mesh the cache's sharding is pinned inside the step (:func:`app.core.parallel.mesh.constrain_cache`)."""

    donate_argnums = (1,)
    #: The decode step and its call signature, kept after the run's first decode call (see :meth:`decode`).
    _decode_step: CompiledStep | None = None
    _decode_key: CallKey | None = None

    def step_function(self, kind: str, greedy: bool) -> tuple[Callable, tuple[str, ...]]:
        if kind == PREFILL:
            return _make_static_prefill_fn(self.engine.jax_state()[1], greedy, self._constrain()), PREFILL_ARGS
        return super().step_function(kind, greedy)

    def _constrain(self) -> Callable | None:
        engine = self.engine
        if engine.mesh is None:
            return None
        mesh, tp = engine.mesh, engine.mesh_spec.tp
        return lambda cache: constrain_cache(cache, mesh, tp)

    def prefill(self, prompt_ids):
        meter = HostMeter()
        weights, _ = self.engine.jax_state()
        n = len(prompt_ids)
        self.capacity = self._first_capacity(n)
        self.cache = FlatTree.of(self.engine.static_cache(self.capacity))
        bucket = prompt_bucket(n, self.capacity)
        ids = ids_array(list(prompt_ids) + [self.engine.pad_id] * (bucket - n))
        self.mask = jnp.ones((1, self.capacity), jnp.int32)
        step = self._step(PREFILL)
        seen = jnp.asarray(self.start_seen(prompt_ids))
        args = (weights, self.cache, ids, positions_array(0, bucket), self.mask, jnp.int32(n), self.key, seen,
                *self.sampling)
        shapes = {"input_ids": [1, bucket], "attention_mask": [1, self.capacity], "prompt_len": [n]}
        return (yield from self._run(step, args, shapes, meter, n))

    #: Positions the run's static KV cache holds now (its bucket; :func:`app.core.runtime.kv_cache.first_capacity`):
    #: at most ``max_cache_len``, grown by :meth:`_grow` as decoding reaches its end.
    capacity: int = 0

    def _first_capacity(self, n_prompt: int) -> int:
        """The run's first KV-cache capacity: a bucket of :func:`app.core.runtime.kv_cache.first_capacity`, or the
        full length on a device mesh (its cache sharding is pinned per length) or for a cache that cannot grow."""
        if self.engine.mesh is not None:
            return self.max_cache_len
        capacity = first_capacity(self.max_cache_len, prompt_bucket(n_prompt, self.max_cache_len))
        if capacity < self.max_cache_len and not growable(self.engine.static_cache(capacity)):
            return self.max_cache_len
        return capacity

    def _grow(self, position: int) -> str | None:
        """Make the cache hold a write at ``position``: the next capacity (:func:`app.core.runtime.kv_cache.
        next_capacity`), the cache padded to it and the mask widened. Returns the compile reason the next call gives
        (the steps compile once per capacity), None when the cache already holds ``position``."""
        if not self.capacity:  # a caller that set the cache itself (the profiler's step call): the run's full length
            self.capacity = self.max_cache_len
        if position < self.capacity:
            return None
        old, self.capacity = self.capacity, next_capacity(self.capacity, position, self.max_cache_len)
        cache, self.cache = self.cache, None
        assert cache is not None  # a run's cache is set at its prefill, before any decode step grows it
        self.cache = grow(cache, self.capacity)
        self.mask = jnp.ones((1, self.capacity), jnp.int32)
        self._decode_step = None  # new argument shapes: sign the next call
        return f"KV cache grown from {old:,} to {self.capacity:,} positions (one compile per cache size)"

    def decode(self, token, position):
        """One decode step. Its arguments are the previous step's outputs as they are (cache, key, seen mask, and
        the next ``input_ids`` / ``position_ids`` made on the device), so their shapes never change within a run:
        after the run's first decode call the step's signature is known and the call neither copies inputs to the
        device nor signs them in Python (:meth:`CompiledStep.prepare`'s ``key``)."""
        meter = HostMeter()
        grown = self._grow(position)
        weights, _ = self.engine.jax_state()
        step = self._step(DECODE)
        ids, positions = self._decode_inputs(token, position)
        cache, self.cache = self.cache, None  # donated: the old buffers are invalid after the call
        args = (weights, cache, ids, positions, self.mask, self.key, self.seen, *self.sampling)
        shapes = {"input_ids": [1, 1], "attention_mask": [1, self.capacity]}
        known = self._decode_key if self._decode_step is step else None
        try:
            result = yield from self._run(step, args, shapes, meter, position + 1, known, grown)
        except TypeError:  # JAX checks the arguments' types before it runs anything: nothing was donated
            if known is None:
                raise
            self.cache, self._decode_step = cache, None  # sign the arguments this time
            return (yield from self.decode(token, position))
        self._decode_step, self._decode_key = step, step.last_key
        return result
