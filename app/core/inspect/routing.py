"""Which experts each token went to in a mixture-of-experts model, recorded from the run itself (issue 42).

transformers 5 gives every MoE layer a router module (``MixtralTopKRouter``, ``Qwen3MoeTopKRouter``, … — a
class named ``*TopKRouter``) whose forward returns ``(router_logits, top_k_weights, top_k_indices)``:
``(tokens, experts)`` float, ``(tokens, k)`` float, ``(tokens, k)`` int. :class:`RoutingRecorder` hangs a torch
forward hook on each router, which keeps its top-k weights and indices, and one on the decoder (``model.model``),
which hands those of every layer to the host when its forward returns. The hooks are part of whatever runs the model:

- in the JAX modes the model's forward is traced, so the decoder hook's ``jax.debug.callback`` becomes one
  equation of the step (after the last layer; its operands are the routers' own ``top_k`` outputs) and every call
  of the compiled step hands them to the host while it runs — nothing is computed again. One callback per step,
  not one per layer: a host callback costs ~0.1 ms on XLA:CPU (measured here: two per-layer callbacks were 55 % of
  a tiny model's op time);
- in the ``torch`` mode it receives PyTorch's tensors of the eager forward;
- under ``torch.compile`` (Dynamo tracing) it does nothing: that mode records no routing (the engine does not
  annotate its records);
- the engine's eager 1-token forward that shapes a static cache runs inside :meth:`RoutingRecorder.paused`.

Records queue up in call order; :meth:`RoutingRecorder.annotate` gives each :class:`CallRecord` of a run the
oldest one (``experts``: ``[layer][token][k]`` expert ids, ``expert_weights`` the same layout, the router's
normalised top-k weights). A prefill keeps the prompt's rows (its padding is cut), a decode step its one token. jit-loop's on-device loop calls back once per iteration, so its per-token records line
up the same way. No Qt.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from app.core.events import CallRecord
from app.core.jax_private import exclude_from_tracebacks
from app.core.steps import PREFILL

if TYPE_CHECKING:
    import torch

#: Suffix of transformers' router classes whose forward returns ``(logits, top_k_weights, top_k_indices)``.
ROUTER_SUFFIX = "TopKRouter"
#: Calls' records kept: a profiler that calls a step hundreds of times keeps only the latest ones.
MAX_QUEUED = 1024


def router_modules(model: torch.nn.Module) -> list[tuple[str, Any]]:
    """``(name, module)`` of every MoE router of ``model`` (a torch module), in layer order; ``[]`` for a dense
    model."""
    return [(name, m) for name, m in model.named_modules() if type(m).__name__.endswith(ROUTER_SUFFIX)]


def _body(model: torch.nn.Module, routers: list[str]) -> Any:
    """The module whose forward holds every router and is called as a submodule (``model.model``, the decoder
    under the LM head): torchax calls the top module's ``forward`` itself, which skips that module's hooks."""
    head = routers[0].split(".", 1)[0]
    if head and all(r.split(".", 1)[0] == head for r in routers) and "." in routers[0]:
        return model.get_submodule(head)
    return model


def _split(out: object) -> tuple[Any, Any] | None:
    """``(weights, indices)`` of a router's output tuple (the last two items), None when it is not one."""
    if not isinstance(out, tuple) or len(out) < 2:
        return None
    return out[-2], out[-1]


class RoutingRecorder:
    """Forward hooks on a model's routers that record each call's top-k experts (see the module docstring).
    Thread-safe: the JAX callbacks arrive on XLA's runtime threads. ``layers``: the routers' names;
    ``num_experts`` / ``top_k``: from the model's config (0 when it does not say)."""

    def __init__(self, model: torch.nn.Module) -> None:
        exclude_from_tracebacks(__file__)  # the callback's equation belongs to the line that called the model
        routers = router_modules(model)
        self.layers = [name for name, _ in routers]
        config = getattr(model, "config", None)
        self.num_experts = int(getattr(config, "num_local_experts", None) or getattr(config, "num_experts", 0) or 0)
        self.top_k = int(getattr(config, "num_experts_per_tok", 0) or 0)
        self._queue: deque[list[tuple[Any, Any]]] = deque(maxlen=MAX_QUEUED)
        self._lock = threading.Lock()
        self._forward: list[tuple[Any, Any]] = []  # the routers' outputs of the forward in progress
        self._paused = 0  # > 0 inside :meth:`paused`
        self._handles = [m.register_forward_hook(self._on_router) for _, m in routers]
        body = _body(model, self.layers)
        self._handles.append(body.register_forward_pre_hook(self._on_start))
        self._handles.append(body.register_forward_hook(self._on_end))

    @classmethod
    def attach(cls, model: torch.nn.Module) -> RoutingRecorder | None:
        """A recorder on ``model``'s routers, or None for a model without any."""
        return cls(model) if router_modules(model) else None

    def detach(self) -> None:
        """Remove the hooks (steps traced before keep their callbacks)."""
        for handle in self._handles:
            handle.remove()
        self._handles = []

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Record nothing inside: a forward that is no call of a run (the engine's eager 1-token forward that
        gives a static cache its shapes)."""
        self._paused += 1
        try:
            yield
        finally:
            self._paused -= 1

    def _on_start(self, _module: torch.nn.Module, _args: tuple[object, ...]) -> None:
        self._forward = []

    def _on_router(self, _module: torch.nn.Module, _args: tuple[object, ...], out: object) -> None:
        import torch

        parts = _split(out)
        if parts is not None and not torch.compiler.is_compiling():  # Dynamo: no side effect to trace
            self._forward.append(parts)

    def _on_end(self, _module: torch.nn.Module, _args: tuple[object, ...], _out: object) -> None:
        """The model's forward returns: one host callback with every layer's ``(weights, indices)``."""
        import torch

        pairs, self._forward = self._forward, []
        if not pairs or self._paused or torch.compiler.is_compiling():
            return
        flat = [x for pair in pairs for x in pair]
        as_jax = [j for j in (getattr(x, "jax", None) for x in flat) if callable(j)]
        if len(as_jax) == len(flat):  # torchax tensors: traced (one equation of the step) or eager
            import jax

            jax.debug.callback(self._sink, *(j() for j in as_jax))
        else:  # PyTorch's own tensors (the torch mode): converted when taken
            self._sink(*(x.detach() for x in flat))

    def _sink(self, *flat: object) -> None:
        with self._lock:
            self._queue.append(list(zip(flat[0::2], flat[1::2])))

    def clear(self) -> None:
        """Forget every record (a run starts)."""
        with self._lock:
            self._queue.clear()

    def pending(self) -> int:
        """Calls recorded and not taken yet."""
        with self._lock:
            return len(self._queue)

    def take(self, rows: int | None = None) -> tuple[list, list] | None:
        """The oldest call's ``(experts, weights)``: ``[layer][token][k]`` int expert ids and float weights
        (rounded to 4 digits); ``rows`` keeps the first rows (a prefill's prompt). None when none is left."""
        import numpy as np

        with self._lock:
            if not self._queue:
                return None
            taken = self._queue.popleft()
        experts, weights = [], []
        for w, i in taken:
            idx, wts = np.asarray(_numpy(i)), np.asarray(_numpy(w), dtype=np.float32)
            k = idx.shape[-1]
            experts.append(idx.reshape(-1, k)[:rows].astype(int).tolist())
            weights.append(np.round(wts.reshape(-1, k)[:rows].astype(np.float64), 4).tolist())
        return experts, weights

    def annotate(self, events: Iterator[Any], prompt_len: int) -> Iterator[Any]:
        """``events`` with each :class:`CallRecord` given its call's routing (``experts``, ``expert_weights``);
        a record whose call left none (``torch-compile``) passes unchanged."""
        for event in events:
            if isinstance(event, CallRecord):
                routed = self.take(prompt_len if event.step == PREFILL else None)
                if routed is not None:
                    event = replace(event, experts=routed[0], expert_weights=routed[1])
            yield event


def _numpy(x: Any) -> Any:
    """A torch tensor or an array as numpy (a torch tensor on any device is copied to the host)."""
    to_numpy = getattr(x, "numpy", None)
    if callable(to_numpy) and hasattr(x, "cpu"):
        return x.cpu().float().numpy() if x.is_floating_point() else x.cpu().numpy()
    return x
