"""The ``jax.jit`` modes: jit-dynamic (a growing DynamicCache, a recompile every step) and jit-static
(prompt buckets and a StaticCache: two compiles, then every step reuses them). Steps are
:class:`app.core.runtime.compiled_step.CompiledStep` s kept on the engine across runs."""

from __future__ import annotations

import time
from collections.abc import Callable

import jax
import jax.numpy as jnp

from app.core.events import PhaseEvent
from app.core.modes.base import Mode, StepGen, StepResult, forward, ids_array, positions_array, prompt_bucket
from app.core.runtime.compiled_step import CompiledStep
from app.core.runtime.pytrees import FlatTree
from app.core.runtime.sampling import pick_token


def _make_step_fn(fn, greedy: bool, constrain=None):
    """Decode step (also jit-dynamic's prefill): forward, then select from the last position's logits.
    The cache travels as a :class:`FlatTree`; ``constrain(cache)`` (mesh runs) pins its sharding."""

    def step(weights, cache, input_ids, position_ids, attention_mask, key, seen, temperature, top_k, top_p,
             penalty):
        logits, cache = forward(fn, weights, cache.unflatten(), input_ids, position_ids, attention_mask)
        token, key, seen = pick_token(logits[:, -1], key, seen, temperature, top_k, top_p, penalty, greedy=greedy)
        return token, FlatTree.of(constrain(cache) if constrain else cache), key, seen

    return step


def _make_static_prefill_fn(fn, greedy: bool, constrain=None):
    """Prefill of a right-padded prompt: logits at ``true_len - 1``; cache lengths reset to ``true_len``."""

    def prefill(weights, cache, input_ids, position_ids, attention_mask, true_len, key, seen, temperature, top_k,
                top_p, penalty):
        logits, cache = forward(fn, weights, cache.unflatten(), input_ids, position_ids, attention_mask)
        last = jax.lax.dynamic_index_in_dim(logits, true_len - 1, axis=1, keepdims=False)
        token, key, seen = pick_token(last, key, seen, temperature, top_k, top_p, penalty, greedy=greedy)
        for layer in cache.layers:
            if hasattr(layer, "cumulative_length") and not isinstance(layer.cumulative_length, int):
                layer.cumulative_length = jnp.asarray(true_len, jnp.asarray(layer.cumulative_length).dtype)
        return token, FlatTree.of(constrain(cache) if constrain else cache), key, seen

    return prefill


STEP_ARGS = ("weights", "kv_cache", "input_ids", "position_ids", "attention_mask", "PRNG key",
             "seen tokens", "temperature", "top_k", "top_p", "repetition_penalty")
PREFILL_ARGS = STEP_ARGS[:5] + ("true_len",) + STEP_ARGS[5:]


class _JitMode(Mode):
    """A mode whose steps are jitted :class:`CompiledStep` s, kept on the engine across runs."""

    #: Positional arguments of the step donated to XLA (updated in place).
    donate_argnums: tuple[int, ...] = ()

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

    def _run(self, step: CompiledStep, args: tuple, shapes: dict) -> StepGen:
        t_wall = time.perf_counter()
        output = None
        for item in step(*args):
            if isinstance(item, PhaseEvent):
                yield item
            else:
                output = item
        token, self.cache, self.key, self.seen = output.outputs
        tok = int(token[0])
        wall = (time.perf_counter() - t_wall) * 1000
        capture = None
        if output.stages is not None:
            from app.core.inspect import ir

            traced, lowered, compiled = output.stages
            labels = step.input_labels(args)
            capture = lambda: ir.capture(traced, lowered, compiled, labels)  # noqa: E731
        return StepResult(tok, output.record, shapes, wall, capture)


class JitDynamicMode(_JitMode):
    """``jax.jit`` with a growing ``DynamicCache``: every step has new shapes, so every step recompiles."""

    def prefill(self, prompt_ids):
        self.cache = FlatTree.of(self.engine.dynamic_cache())
        return (yield from self._call(prompt_ids, 0, "prefill"))

    def decode(self, token, position):
        return (yield from self._call([token], position, "decode"))

    def _call(self, tokens, start, kind):
        weights, _ = self.engine.jax_state()
        step = self._step(kind)
        ids = ids_array(tokens)
        mask = jnp.ones((1, start + len(tokens)), jnp.int32)
        if start == 0:
            self.seen = jnp.asarray(self.start_seen(tokens))
        args = (weights, self.cache, ids, positions_array(start, len(tokens)), mask, self.key, self.seen, *self.sampling)
        shapes = {"input_ids": list(ids.shape), "attention_mask": list(mask.shape), "kv_cache_len": [start]}
        return (yield from self._run(step, args, shapes))


class JitStaticMode(_JitMode):
    """Jitted prefill (prompt padded to a length bucket) and decode step over a ``StaticCache``, weights
    passed as arguments and the cache donated: two compiles, then every step reuses them. On a device
    mesh the cache's sharding is pinned inside the step (:func:`app.core.parallel.mesh.constrain_cache`)."""

    donate_argnums = (1,)

    def step_function(self, kind: str, greedy: bool) -> tuple[Callable, tuple[str, ...]]:
        if kind == "prefill":
            return _make_static_prefill_fn(self.engine.jax_state()[1], greedy, self._constrain()), PREFILL_ARGS
        return super().step_function(kind, greedy)

    def _constrain(self) -> Callable | None:
        engine = self.engine
        if engine.mesh is None:
            return None
        from app.core.parallel.mesh import constrain_cache

        mesh, tp = engine.mesh, engine.mesh_spec.tp
        return lambda cache: constrain_cache(cache, mesh, tp)

    def prefill(self, prompt_ids):
        weights, _ = self.engine.jax_state()
        self.cache = FlatTree.of(self.engine.static_cache(self.max_cache_len))
        n = len(prompt_ids)
        bucket = prompt_bucket(n, self.max_cache_len)
        ids = ids_array(list(prompt_ids) + [self.engine.pad_id] * (bucket - n))
        self.mask = jnp.ones((1, self.max_cache_len), jnp.int32)
        step = self._step("prefill")
        seen = jnp.asarray(self.start_seen(prompt_ids))
        args = (weights, self.cache, ids, positions_array(0, bucket), self.mask, jnp.int32(n), self.key, seen,
                *self.sampling)
        shapes = {"input_ids": [1, bucket], "attention_mask": [1, self.max_cache_len], "prompt_len": [n]}
        return (yield from self._run(step, args, shapes))

    def decode(self, token, position):
        weights, _ = self.engine.jax_state()
        step = self._step("decode")
        args = (weights, self.cache, ids_array([token]), positions_array(position, 1), self.mask, self.key, self.seen,
                *self.sampling)
        self.cache = None  # donated: the old buffers are invalid after the call
        shapes = {"input_ids": [1, 1], "attention_mask": [1, self.max_cache_len]}
        return (yield from self._run(step, args, shapes))
