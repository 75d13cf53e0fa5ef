"""The eager modes: PyTorch itself (``torch``) and torchax dispatching every ATen op to JAX one by one
(``torchax-eager``). Nothing compiles; each call is timed as execute time."""

from __future__ import annotations

import time

import jax  # noqa: TID253 - a heavy module: its users import it inside functions
import jax.numpy as jnp  # noqa: TID253 - a heavy module: its users import it inside functions

from app.core.events import PhaseEvent
from app.core.modes.base import (
    Mode,
    StepGen,
    StepResult,
    eager_record,
    forward,
    ids_array,
    positions_array,
    torch_device_of,
)


class TorchMode(Mode):
    """PyTorch eager reference: our own loop over the HF module with a ``DynamicCache``, on the engine's
    torch device (the CPU, or ``cuda:0`` on a GPU: :func:`app.core.modes.base.torch_device_of`). The timed
    region ends with the logits on the host (``.cpu()``), so it holds the device's kernels too."""

    def _call(self, tokens: list[int], start: int) -> StepGen:
        import torch
        from transformers import DynamicCache

        if start == 0:
            self.cache = DynamicCache(config=self.engine.config)
            self.start_seen(tokens)
        device = torch_device_of(self.engine)
        t_wall = time.perf_counter()
        ids = torch.tensor([tokens], dtype=torch.long, device=device)
        kwargs = dict(
            input_ids=ids,
            position_ids=torch.arange(start, start + len(tokens), device=device)[None, :],
            attention_mask=torch.ones((1, start + len(tokens)), dtype=torch.long, device=device),
            past_key_values=self.cache,
            use_cache=True,
        )
        yield PhaseEvent("running", True, "torch forward")
        t0 = time.perf_counter()
        out = self.engine.model(**kwargs)
        logits = out.logits[:, -1].float().cpu().numpy()
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
    """torchax without jit: each ATen op is dispatched to JAX eagerly, one by one, on the engine's JAX device
    (its weights are committed there; torchax's env treats torch's ``cuda`` device as JAX's)."""

    def _call(self, tokens: list[int], start: int) -> StepGen:
        weights, fn = self.engine.jax_state()
        if start == 0:
            self.cache = self.engine.dynamic_cache()
            self.start_seen(tokens)
        t_wall = time.perf_counter()
        ids = ids_array(tokens)
        mask = jnp.ones((1, start + len(tokens)), jnp.int32)
        yield PhaseEvent("running", True, "torchax eager forward")
        t0 = time.perf_counter()
        logits, self.cache = forward(fn, weights, self.cache, ids, positions_array(start, len(tokens)), mask)
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
