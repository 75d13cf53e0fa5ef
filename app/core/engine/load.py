"""Loading a model for the engine and converting it to JAX: the ``loading`` and ``converting`` phases of
:func:`app.core.engine.engine.load_engine` (:func:`load_torch`, :func:`phase`), the conversion of the PyTorch
module to JAX weights and a function over them (:func:`to_jax`), and the placement of new arrays on the
engine's device (:func:`on_device`, :func:`place`)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from app.core.backends import CPU
from app.core.engine.device import Device
from app.core.events import Phase, PhaseEvent
from app.core.models.sources import LoadedModel, ModelSpec, load_model
from app.core.runtime.linear_layout import linear_layout

if TYPE_CHECKING:
    import torch


@contextlib.contextmanager
def phase(emit: Callable[[PhaseEvent], None], name: Phase, detail: str) -> Iterator[None]:
    """Announce phase ``name`` around the block: a start event, then (when the block did not raise) an end
    event with its ``elapsed_ms``."""
    emit(PhaseEvent(name, True, detail))
    t0 = time.perf_counter()
    yield
    emit(PhaseEvent(name, False, detail, (time.perf_counter() - t0) * 1000))


def load_torch(spec: ModelSpec, device: Device, emit: Callable[[PhaseEvent], None]) -> LoadedModel:
    """The PyTorch model and tokenizer of ``spec`` (the ``loading`` phase, its progress messages as phase
    events). Random weights for a GPU are initialised on CUDA (:func:`app.core.models.sources.load_model`'s
    ``init_device``). Raises what :func:`app.core.models.sources.load_model` raises."""
    init_device = device.torch_device if device.torch_device not in (None, CPU.torch_device) else None
    with phase(emit, "loading", spec.label):
        return load_model(spec, on_progress=lambda msg: emit(PhaseEvent("loading", True, msg)), init_device=init_device)


def to_jax(model: torch.nn.Module, device: Device) -> tuple[Any, Any]:
    """``(weights, fn)`` from ``torchax.extract_jax(model)``, the weights on ``device``.

    ``weights`` is a dict of jax arrays keyed by parameter name; ``fn(weights, args, kwargs)`` runs the
    module on jax arrays. Weights are passed as arguments, never closed over (a closure would embed them
    as constants in the lowered module)."""
    import torchax

    from app.core.runtime.cache_update import register as register_cache_update  # noqa: PLC0415 - heavy: jax
    from app.core.runtime.moe_ops import register as register_moe_ops  # noqa: PLC0415 - heavy: jax

    register_moe_ops()  # issue 42: MoE models (aten::_grouped_mm)
    register_cache_update()  # issue 38: a decode step's KV write in place (aten::index_put at one position)
    with on_device(device):
        weights, fn = linear_layout(model, *torchax.extract_jax(model))  # issue 38: GPT-2's Conv1D as nn.Linear
    return place(weights, device), fn


def on_device(device: Device) -> Any:
    """A context in which new JAX arrays land on ``device`` (``jax.default_device``), and torch factory
    functions on its torch device (``torch.device``); nothing changes on the default device."""
    if device.is_default and device.torch_device in (None, CPU.torch_device):
        return contextlib.nullcontext()
    import jax
    import torch

    stack = contextlib.ExitStack()
    if not device.is_default:
        stack.enter_context(jax.default_device(device.jax_device))
    if device.torch_device not in (None, CPU.torch_device):
        stack.enter_context(torch.device(device.torch_device))
    return stack


def place(tree: object, device: Device) -> Any:
    """``tree``'s jax arrays committed to ``device``'s JAX device (as they are on the default device)."""
    if device.is_default:
        return tree
    import jax

    return jax.device_put(tree, device.jax_device)
