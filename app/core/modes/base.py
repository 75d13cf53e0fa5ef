"""What every execution mode shares: a prefill call, then one decode step per token.

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

from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import jax  # noqa: TID253 - a heavy module: its users import it inside functions
import jax.numpy as jnp  # noqa: TID253 - a heavy module: its users import it inside functions
import numpy as np  # noqa: TID253 - a heavy module: its users import it inside functions

from app.core.backends import CPU, TORCH_CUDA
from app.core.events import CallRecord, PhaseEvent
from app.core.runtime.sampling import jitted_pick_token, sampling_args, seen_mask
from app.core.steps import PREFILL

if TYPE_CHECKING:
    from app.core.runtime.compiled_step import CompiledStep
    from app.core.settings import GenerationSettings


class ModeHost(Protocol):
    """What a mode needs of the engine that drives it (:class:`app.core.engine.engine.Engine` is one): the
    model, its JAX weights, the compiled steps and caches kept across runs, and per-mode state. A
    ``Protocol`` so that modes do not import the engine (which imports them)."""

    model: Any  # the Hugging Face module (torch)
    config: Any  # its PretrainedConfig
    pad_id: int
    mesh: Any  # jax.sharding.Mesh or None
    mesh_spec: Any  # app.core.parallel.mesh.MeshSpec or None
    device: Any  # app.core.engine.device.Device: where the run executes

    @property
    def vocab_size(self) -> int: ...

    def jax_state(self) -> tuple[Any, Any]: ...

    def compiled_step(self, mode: str, kind: str, greedy: bool, build: Callable[[], CompiledStep]) -> CompiledStep: ...

    def dynamic_cache(self) -> Any: ...

    def static_cache(self, max_cache_len: int) -> Any: ...

    def mode_state(self, mode: str) -> dict: ...


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
    return CallRecord(index=0, step=PREFILL, mode="", input_shapes={}, wall_ms=execute_ms, execute_ms=execute_ms)


StepGen = Generator[PhaseEvent, None, StepResult]


def ids_array(tokens: list[int]) -> jax.Array:
    """``(1, n)`` int32, built in NumPy and transferred: ``jnp`` indexing or ``arange`` would each launch a
    tiny XLA program per token (measured: 1.31 → 0.84 ms/token on a small Llama)."""
    return jax.device_put(np.asarray(tokens, dtype=np.int32)[None, :])


def positions_array(start: int, length: int) -> jax.Array:
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


def torch_device_of(engine: object) -> str:
    """The torch device the PyTorch modes of ``engine`` run on (``"cpu"``, ``"cuda:0"``): its
    ``device.torch_device``, the CPU for a host without one."""
    return getattr(getattr(engine, "device", None), "torch_device", None) or CPU.torch_device


def torch_sync(device: str) -> None:
    """Wait for the torch device's queued work (``torch.cuda.synchronize``; nothing on the CPU, whose ops
    finish before they return), so a timed region holds the kernels and not only their launches."""
    if device.startswith(TORCH_CUDA):
        import torch

        torch.cuda.synchronize(device)


def _no_live_event(event: PhaseEvent) -> None:
    pass


def _never_stop() -> bool:
    return False


class Mode:
    """Per-run state of one execution mode. ``engine`` owns the model, the JAX weights and the compiled
    steps (kept across runs); ``emit_live(PhaseEvent)`` reports a phase while a call blocks (a compiler
    that runs for seconds inside one call), from the compute thread. Its name, help and capabilities are in
    the catalog (:func:`app.core.mode_catalog.mode_info`)."""

    emit_live: Callable[[PhaseEvent], None] = staticmethod(_no_live_event)
    #: The run's Stop flag (the engine sets it to ``generate``'s ``should_stop``), for a mode that runs ahead of
    #: the engine's loop (jit-loop polls it while it waits for a token); polled on the compute thread only.
    should_stop: Callable[[], bool] = staticmethod(_never_stop)

    def __init__(self, engine: ModeHost, settings: GenerationSettings, max_cache_len: int) -> None:
        #: This mode's name (:data:`app.core.mode_catalog.CATALOG`): the class was looked up by it.
        self.mode = settings.mode
        self.engine = engine
        self.settings = settings
        self.max_cache_len = max_cache_len
        self.key = jax.random.key(settings.seed)
        self.sampling = sampling_args(
            settings.temperature, settings.top_k, settings.top_p, settings.repetition_penalty
        )
        self.seen: Any = None  # (1, vocab) bool: tokens of the prompt and the generated text

    def start_seen(self, prompt_ids: list[int]) -> Any:
        """The repetition-penalty mask of the prompt (numpy; the jitted modes move it to the device)."""
        self.seen = seen_mask(list(prompt_ids), self.engine.vocab_size)
        return self.seen

    @classmethod
    def clear_state(cls, engine: ModeHost) -> None:
        """Drop what this mode made outside the engine's compiled steps (called by
        :meth:`app.core.engine.engine.Engine.clear_compiled` before it resets :meth:`Engine.mode_state`)."""

    def finish(self) -> None:
        """The run ended (every finish reason, Stop and errors included): release what outlives a step (jit-loop
        stops and joins its loop's thread). Called by the engine on the compute thread; nothing here by default."""

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


def prompt_bucket(n: int, max_cache_len: int) -> int:
    """Padded prefill length: the next power of two >= max(n, 16), capped at ``max_cache_len``.

    Prompts whose lengths fall in one bucket share one prefill executable (prefill length buckets, as JAX
    LLM servers do: AI-Hypercomputer/JetStream, ``jetstream/engine/token_utils.py``)."""
    bucket = 16
    while bucket < n:
        bucket *= 2
    return min(bucket, max_cache_len)
