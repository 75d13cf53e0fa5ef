"""GPT-2's ``Conv1D`` weights kept on JAX as ``nn.Linear`` keeps its own: ``(out_features, in_features)`` (issue 38).

transformers' ``Conv1D`` (``transformers/pytorch_utils.py``) stores its weight ``(in_features, out_features)`` and
runs ``torch.addmm(bias, x, weight)``, which torchax lowers to ``x @ W``: a dot that contracts the weight's major
dimension. A decode step multiplies one row by each weight, and XLA:CPU reads a weight faster when the product
contracts its minor dimension, each output a dot of two contiguous rows (``W @ x``, what ``nn.Linear``'s
``x @ W.T`` becomes): GPT-2-small's 12 layers of products ran in 17.7 ms that way against 20.2 ms (median of 6
rounds in turn, 27 Nov; the products are ~80 % of a GPT-2 decode step).

:func:`linear_layout` transposes each ``Conv1D`` weight once, when the weights are converted to JAX
(:func:`app.core.engine.load.to_jax`), and wraps the converted function so that, while it runs, each ``Conv1D``
computes ``F.linear(x, weight, bias)`` on the transposed weight. The PyTorch model itself is not changed: the
``torch`` and ``torch-compile`` modes run transformers' own ``Conv1D``. Every JAX mode and view sees the
weights as ``nn.Linear`` weights: shapes ``(out, in)`` in the argument labels, the ``tp`` mesh's Linear rules
(:func:`app.core.parallel.mesh.weight_spec`), and a projection's equations attributed, as a Llama's are, to the
model line that calls it (``self.c_attn(hidden_states)``), this file being excluded from JAX's user frames.
"""

from __future__ import annotations

import contextlib
import types
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from app.core.jax_private import exclude_from_tracebacks

if TYPE_CHECKING:
    import torch
    from transformers.pytorch_utils import Conv1D


def conv1d_modules(model: torch.nn.Module) -> dict[str, Any]:
    """``{module path: module}`` of every transformers ``Conv1D`` in ``model`` with a 2-D weight (none when
    transformers has no ``Conv1D``)."""
    try:
        from transformers.pytorch_utils import Conv1D
    except ImportError:  # pragma: no cover - transformers without Conv1D
        return {}
    return {name: m for name, m in model.named_modules()
            if isinstance(m, Conv1D) and getattr(m, "weight", None) is not None and m.weight.dim() == 2}


def _linear_forward(self: Conv1D, x: torch.Tensor) -> torch.Tensor:
    """A ``Conv1D``'s forward over its weight stored ``(out_features, in_features)``: ``x @ W.T + b``."""
    import torch

    return torch.nn.functional.linear(x, self.weight, self.bias)


@contextlib.contextmanager
def _as_linear(modules: list[Any]) -> Iterator[None]:
    """Each of ``modules`` runs :func:`_linear_forward` until the context ends (instance attributes, removed
    after: the class's own forward comes back)."""
    for m in modules:
        m.forward = types.MethodType(_linear_forward, m)
    try:
        yield
    finally:
        for m in modules:
            m.__dict__.pop("forward", None)


def linear_layout(model: torch.nn.Module, weights: dict[str, Any],
                  fn: Callable[..., Any]) -> tuple[dict[str, Any], Callable[..., Any]]:
    """``(weights, fn)`` of ``torchax.extract_jax(model)`` with every ``Conv1D`` weight transposed to
    ``(out_features, in_features)`` (a new array on the weight's device; the old one is dropped) and ``fn``
    running those modules as ``nn.Linear``; both unchanged when ``model`` has no ``Conv1D``.

    ``fn(weights, args, kwargs=None)`` keeps its signature; ``model`` must be the module that was converted."""
    modules = conv1d_modules(model)
    if not modules:
        return weights, fn
    exclude_from_tracebacks(__file__)  # a projection's source line is the model's call, not this file
    weights = dict(weights)
    chosen = {name: m for name, m in modules.items() if f"{name}.weight" in weights}  # a tied weight: one name
    for name in chosen:
        weights[f"{name}.weight"] = weights[f"{name}.weight"].T  # materialised row-major, (out, in)

    def run(states: object, args: object, kwargs: object = None) -> Any:
        with _as_linear(list(chosen.values())):
            return fn(states, args, kwargs)

    return weights, run
