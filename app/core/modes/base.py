"""The execution modes, one class each: a prefill call, then one decode step per token.

A mode object owns everything that makes its steps: the step functions, their argument names, which
argument is donated, how the KV cache is built and sharded. The engine creates one per run and drives it
with the shared decode loop (:meth:`app.core.engine.engine.Engine.generate`); each ``prefill`` / ``decode`` is a
generator that yields :class:`PhaseEvent` s (tracing, lowering, compiling) and returns a
:class:`StepResult` holding the token, the call's timing record and, for a compiling call, a function
that captures its IR (run by the engine outside the timed region). Token ids
cross to the host after every step (``int(token)``): that sync lets Stop act within one decode step
(without it JAX's asynchronous dispatch queues steps ahead: https://docs.jax.dev/en/latest/async_dispatch.html).

Shapes: ``input_ids`` and ``position_ids`` are ``(1, seq_len)`` int32; the attention mask is
``(1, kv_len)`` int32 of ones; logits are ``(1, seq_len, vocab)``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from app.core.events import CallRecord, PhaseEvent
from app.core.runtime.compiled_step import CompiledStep
from app.core.runtime.pytrees import FlatTree
from app.core.runtime.sampling import jitted_pick_token, pick_token, sampling_args, seen_mask


@dataclass
class StepResult:
    """One model call: the selected ``token``; ``record``, its timing fields set (the engine fills in
    ``index``, ``mode``, ``wall_ms``, ``input_shapes`` and ``mesh``); ``input_shapes`` by argument name;
    ``wall_ms`` of the whole call (host work included); ``capture_ir()`` builds the
    :class:`app.core.inspect.ir.StepIR` of a compiling call (None otherwise)."""

    token: int
    record: CallRecord
    input_shapes: dict[str, list[int]]
    wall_ms: float
    capture_ir: Callable[[], Any] | None = None


def eager_record(execute_ms: float) -> CallRecord:
    """The timing record of a call that compiled nothing."""
    return CallRecord(index=0, step="prefill", mode="", input_shapes={}, wall_ms=execute_ms, execute_ms=execute_ms)


StepGen = Generator[PhaseEvent, None, StepResult]


def _ids(tokens: list[int]) -> jax.Array:
    """``(1, n)`` int32, built in NumPy and transferred: ``jnp`` indexing or ``arange`` would each launch a
    tiny XLA program per token (measured: 1.31 → 0.84 ms/token on a small Llama)."""
    return jax.device_put(np.asarray(tokens, dtype=np.int32)[None, :])


def _positions(start: int, length: int) -> jax.Array:
    return jax.device_put(np.arange(start, start + length, dtype=np.int32)[None, :])


def forward(fn, weights, cache, input_ids, position_ids, attention_mask):
    """Run the HF module (through ``torchax.extract_jax``'s function) → ``(logits, new_cache)``."""
    out = fn(
        weights,
        (),
        {
            "input_ids": input_ids,
            "position_ids": position_ids,
            "attention_mask": attention_mask,
            "past_key_values": cache,
            "use_cache": True,
        },
    )
    return out.logits, out.past_key_values


def _no_live_event(event: PhaseEvent) -> None:
    pass


class Mode:
    """Per-run state of one execution mode. ``engine`` owns the model, the JAX weights and the compiled
    steps (kept across runs); ``emit_live(PhaseEvent)`` reports a phase while a call blocks (a compiler
    that runs for seconds inside one call), from the compute thread."""

    mode = "?"
    #: ``None`` (nothing compiles), ``"xla"`` or ``"inductor"``: what the IR views show for this mode.
    compiler: str | None = None
    emit_live: Callable[[PhaseEvent], None] = staticmethod(_no_live_event)

    def __init__(self, engine: Any, settings: Any, max_cache_len: int) -> None:
        self.engine = engine
        self.settings = settings
        self.max_cache_len = max_cache_len
        self.key = jax.random.key(settings.seed)
        self.sampling = sampling_args(
            settings.temperature, settings.top_k, settings.top_p, settings.repetition_penalty
        )
        self.seen: Any = None  # (1, vocab) bool: tokens of the prompt and the generated text

    def _start_seen(self, prompt_ids: list[int]) -> Any:
        """The repetition-penalty mask of the prompt (numpy; the jitted modes move it to the device)."""
        self.seen = seen_mask(list(prompt_ids), self.engine.vocab_size)
        return self.seen

    def prefill(self, prompt_ids: list[int]) -> StepGen:
        raise NotImplementedError

    def decode(self, token: int, position: int) -> StepGen:
        raise NotImplementedError

    def _sample_host(self, logits_last) -> int:
        """Select on the host for the un-jitted modes. Greedy is a plain numpy argmax (first maximum, as
        ``jnp.argmax``) after the repetition penalty, so the PyTorch reference timing contains no JAX
        compile; sampling uses the jitted :func:`app.core.runtime.sampling.pick_token`."""
        penalty = self.settings.repetition_penalty
        if self.settings.greedy:
            logits = np.asarray(logits_last, dtype=np.float32)[0]
            if penalty != 1.0:  # transformers' RepetitionPenaltyLogitsProcessor, as in pick_token
                scaled = np.where(logits < 0, logits * penalty, logits / penalty)
                logits = np.where(self.seen[0], scaled, logits)
            token = int(np.argmax(logits))
            self.seen[0, token] = True
            return token
        select = jitted_pick_token(False)
        tok, self.key, seen = select(jnp.asarray(logits_last), self.key, jnp.asarray(self.seen), *self.sampling)
        self.seen = np.array(seen)
        return int(tok[0])


class TorchMode(Mode):
    """PyTorch eager reference: our own loop over the HF module with a ``DynamicCache``."""

    mode = "torch"

    def _call(self, tokens: list[int], start: int) -> StepGen:
        import torch
        from transformers import DynamicCache

        if start == 0:
            self.cache = DynamicCache(config=self.engine.config)
            self._start_seen(tokens)
        t_wall = time.perf_counter()
        ids = torch.tensor([tokens], dtype=torch.long)
        kwargs = dict(
            input_ids=ids,
            position_ids=torch.arange(start, start + len(tokens))[None, :],
            attention_mask=torch.ones((1, start + len(tokens)), dtype=torch.long),
            past_key_values=self.cache,
            use_cache=True,
        )
        yield PhaseEvent("running", True, "torch forward")
        t0 = time.perf_counter()
        out = self.engine.model(**kwargs)
        logits = out.logits[:, -1].float().numpy()
        execute_ms = (time.perf_counter() - t0) * 1000
        yield PhaseEvent("running", False, "torch forward", execute_ms)
        token = self._sample_host(logits)
        shapes = {"input_ids": list(ids.shape), "attention_mask": [1, start + len(tokens)]}
        return StepResult(token, eager_record(execute_ms), shapes, (time.perf_counter() - t_wall) * 1000)

    def prefill(self, prompt_ids):
        return (yield from self._call(prompt_ids, 0))

    def decode(self, token, position):
        return (yield from self._call([token], position))


class TorchaxEagerMode(Mode):
    """torchax without jit: each ATen op is dispatched to JAX eagerly, one by one."""

    mode = "torchax-eager"

    def _call(self, tokens: list[int], start: int) -> StepGen:
        weights, fn = self.engine.jax_state()
        if start == 0:
            self.cache = self.engine.dynamic_cache()
            self._start_seen(tokens)
        t_wall = time.perf_counter()
        ids = _ids(tokens)
        mask = jnp.ones((1, start + len(tokens)), jnp.int32)
        yield PhaseEvent("running", True, "torchax eager forward")
        t0 = time.perf_counter()
        logits, self.cache = forward(fn, weights, self.cache, ids, _positions(start, len(tokens)), mask)
        logits = jax.block_until_ready(logits[:, -1])
        execute_ms = (time.perf_counter() - t0) * 1000
        yield PhaseEvent("running", False, "torchax eager forward", execute_ms)
        token = self._sample_host(logits)
        shapes = {"input_ids": list(ids.shape), "attention_mask": list(mask.shape)}
        return StepResult(token, eager_record(execute_ms), shapes, (time.perf_counter() - t_wall) * 1000)

    def prefill(self, prompt_ids):
        return (yield from self._call(prompt_ids, 0))

    def decode(self, token, position):
        return (yield from self._call([token], position))


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

    compiler = "xla"
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

    mode = "jit-dynamic"

    def prefill(self, prompt_ids):
        self.cache = FlatTree.of(self.engine.dynamic_cache())
        return (yield from self._call(prompt_ids, 0, "prefill"))

    def decode(self, token, position):
        return (yield from self._call([token], position, "decode"))

    def _call(self, tokens, start, kind):
        weights, _ = self.engine.jax_state()
        step = self._step(kind)
        ids = _ids(tokens)
        mask = jnp.ones((1, start + len(tokens)), jnp.int32)
        if start == 0:
            self.seen = jnp.asarray(self._start_seen(tokens))
        args = (weights, self.cache, ids, _positions(start, len(tokens)), mask, self.key, self.seen, *self.sampling)
        shapes = {"input_ids": list(ids.shape), "attention_mask": list(mask.shape), "kv_cache_len": [start]}
        return (yield from self._run(step, args, shapes))


class JitStaticMode(_JitMode):
    """Jitted prefill (prompt padded to a length bucket) and decode step over a ``StaticCache``, weights
    passed as arguments and the cache donated: two compiles, then every step reuses them. On a device
    mesh the cache's sharding is pinned inside the step (:func:`app.core.parallel.mesh.constrain_cache`)."""

    mode = "jit-static"
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
        ids = _ids(list(prompt_ids) + [self.engine.pad_id] * (bucket - n))
        self.mask = jnp.ones((1, self.max_cache_len), jnp.int32)
        step = self._step("prefill")
        seen = jnp.asarray(self._start_seen(prompt_ids))
        args = (weights, self.cache, ids, _positions(0, bucket), self.mask, jnp.int32(n), self.key, seen,
                *self.sampling)
        shapes = {"input_ids": [1, bucket], "attention_mask": [1, self.max_cache_len], "prompt_len": [n]}
        return (yield from self._run(step, args, shapes))

    def decode(self, token, position):
        weights, _ = self.engine.jax_state()
        step = self._step("decode")
        args = (weights, self.cache, _ids([token]), _positions(position, 1), self.mask, self.key, self.seen,
                *self.sampling)
        self.cache = None  # donated: the old buffers are invalid after the call
        shapes = {"input_ids": [1, 1], "attention_mask": [1, self.max_cache_len]}
        return (yield from self._run(step, args, shapes))


def prompt_bucket(n: int, max_cache_len: int) -> int:
    """Padded prefill length: the next power of two >= max(n, 16), capped at ``max_cache_len``.

    Prompts whose lengths fall in one bucket share one prefill executable (prefill length buckets, as JAX
    LLM servers do: AI-Hypercomputer/JetStream, ``jetstream/engine/token_utils.py``)."""
    bucket = 16
    while bucket < n:
        bucket *= 2
    return min(bucket, max_cache_len)


#: Mode name → class. ``torch-compile`` registers itself when :mod:`app.core.modes.torch_compile` is imported
#: (:func:`mode_class` does it on first use, so importing this module never loads torch.compile's machinery).
MODE_CLASSES: dict[str, type[Mode]] = {
    m.mode: m for m in (TorchMode, TorchaxEagerMode, JitDynamicMode, JitStaticMode)
}


def mode_class(name: str) -> type[Mode]:
    """The class of mode ``name`` (one of :data:`app.core.settings.MODES`). Raises KeyError otherwise."""
    if name not in MODE_CLASSES and name == "torch-compile":
        import app.core.modes.torch_compile  # noqa: F401 (registers TorchCompileMode)
    return MODE_CLASSES[name]
