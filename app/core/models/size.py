"""How big a model is before it is loaded: parameters counted on PyTorch's ``meta`` device, and a check that
its weights fit in free memory. No Qt, no JAX."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.core.errors import InsufficientMemoryError, UnsupportedModelError
from app.core.models.kinds import check_model_kind

if TYPE_CHECKING:
    from transformers import PretrainedConfig

DTYPE_BYTES = {"float32": 4, "bfloat16": 2}


def parameter_count(config: PretrainedConfig) -> int:
    """Number of parameters, counted on the ``meta`` device (no memory allocated). Raises
    :class:`UnsupportedModelError` for a model that is not a decoder-only causal LM (:func:`check_model_kind`)."""
    import torch
    import transformers

    check_model_kind(config)
    try:
        with torch.device("meta"):
            model = transformers.AutoModelForCausalLM.from_config(config)
    except ValueError as exc:
        raise UnsupportedModelError(
            f"{type(config).__name__} ({getattr(config, 'model_type', '?')}) is not a causal language model "
            "that AutoModelForCausalLM can build: pick a decoder-only LM."
        ) from exc
    return sum(p.numel() for p in model.parameters())


def available_memory_bytes() -> int | None:
    """``MemAvailable`` from ``/proc/meminfo`` in bytes, or None where it cannot be read."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def check_memory(n_params: int, dtype: str, label: str) -> int:
    """Refuse a model whose weights (kept twice: PyTorch and JAX copies) cannot fit in free memory.

    Returns the parameter bytes. Raises :class:`InsufficientMemoryError` with the figures.
    """
    param_bytes = n_params * DTYPE_BYTES[dtype]
    needed = 2 * param_bytes
    free = available_memory_bytes()
    if free is not None and needed > free:
        raise InsufficientMemoryError(
            f"{label} has {n_params / 1e6:,.0f} M parameters: {param_bytes / 2**30:.1f} GiB in {dtype}, "
            f"{needed / 2**30:.1f} GiB with the PyTorch and JAX copies, but only {free / 2**30:.1f} GiB is free. "
            "Pick a smaller model, use bfloat16, or close other programs."
        )
    return param_bytes
