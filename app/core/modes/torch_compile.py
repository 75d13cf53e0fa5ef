"""The ``torch-compile`` mode: PyTorch with a transformers ``StaticCache``, prefill and decode through
``torch.compile`` (Dynamo → AOT autograd → Inductor: C++ kernels on CPU, Triton kernels on CUDA).

On the engine's torch device (:func:`app.core.modes.base.torch_device_of`). Which ``torch.compile`` mode
(:func:`compile_mode`): ``"default"`` on the CPU; ``"reduce-overhead"`` on CUDA, which records each step as a
CUDA graph (Inductor's cudagraph trees) and replays it, so a batch-1 decode step is not bound by one kernel
launch per op from Python — the same thing XLA:GPU does for jit-static with its command buffers (CUDA graphs),
so a race on a GPU compares like with like. ``PLAYGROUND_TORCH_COMPILE_MODE=default`` (or
``max-autotune-no-cudagraphs``, …) picks another ``torch.compile`` mode.

Prompts are right-padded to :func:`app.core.modes.base.prompt_bucket` like jit-static, positions are passed
explicitly (transformers 5 models derive the cache write position from each ``StaticLayer``'s
``cumulative_length`` tensor, reset to the true prompt length after prefill) and the attention mask is
``(1, max_cache_len)`` ones, so one prefill graph serves every prompt length of a bucket and one decode
graph serves every step. The compiled steps and the ``StaticCache`` live on the engine
(this mode's :meth:`app.core.engine.engine.Engine.mode_state`), so a second run compiles nothing.

Every figure comes from PyTorch's own reporting (torch/_dynamo/utils.py):

- compile time and its phases: the nested ``dynamo_timed`` timers in ``compilation_time_metrics``
  (``_compile.compile_inner`` ⊃ ``OutputGraph.call_user_compiler`` ⊃ ``compile_fx_inner`` ⊃
  ``GraphLowering.compile_to_module`` ⊃ ``PyCodeCache.load_by_key_path``), made exclusive by subtraction;
- why it compiled: ``CompilationMetrics.recompile_reason`` (the failed Dynamo guard); graph breaks:
  ``counters["graph_break"]`` and each graph's ``GraphModule.compile_subgraph_reason`` (what
  ``torch._dynamo.explain`` reports);
- disk-cache hits: ``counters["inductor"]["fxgraph_cache_hit"]`` and
  ``counters["aot_autograd"]["autograd_cache_hit"]``.

The backend wraps ``torch._inductor.compile_fx.compile_fx`` to keep each Dynamo graph's readable code;
Inductor's output module (Python wrapper with the C++ kernels inline) is captured through
``GraphLowering.save_output_code`` (torch/_inductor/graph.py), which Inductor calls on a fresh compile and
on an FX-graph-cache hit.
"""

from __future__ import annotations

import os
import time
import types
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from app.core import compile_options
from app.core.backends import TORCH_CUDA
from app.core.compile_cache.inductor import ensure_inductor_cache
from app.core.errors import InvalidSettingsError
from app.core.events import CallRecord, PhaseEvent
from app.core.inspect.ir import StepIR
from app.core.inspect.views import FX_GRAPH, INDUCTOR_CODE
from app.core.mode_catalog import mode_name_of
from app.core.modes.base import (
    Mode,
    ModeHost,
    StepGen,
    StepResult,
    prompt_bucket,
    torch_device_of,
    torch_sync,
)
from app.core.modes.torch_compile_capture import (
    FRAME,
    Capture,
    backend_for_mode,
    capturing,
    compile_phases,
    since,
    snapshot,
)
from app.core.runtime.kv_cache import torch_static_cache
from app.core.steps import DECODE, PREFILL

if TYPE_CHECKING:
    import torch
    from transformers import Cache

    from app.core.settings import GenerationSettings

#: Environment variable that overrides :func:`compile_mode` (a ``torch.compile`` mode name).
MODE_ENV = "PLAYGROUND_TORCH_COMPILE_MODE"
#: ``torch.compile`` modes accepted in :data:`MODE_ENV` (``torch._inductor.list_mode_options``).
COMPILE_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


def compile_mode(device: str) -> str:
    """The ``torch.compile`` mode on torch device ``device``: a settings race's Inductor lane's
    (:func:`app.core.compile_options.torch_compile_mode`), else :data:`MODE_ENV` if set, else
    ``"reduce-overhead"`` on CUDA (CUDA graphs, as XLA:GPU's command buffers) and ``"default"`` elsewhere.
    Raises :class:`app.core.errors.InvalidSettingsError` for a value not in :data:`COMPILE_MODES`."""
    raced = compile_options.torch_compile_mode()
    if raced is not None:
        return raced

    chosen = os.environ.get(MODE_ENV, "").strip()
    if chosen:
        if chosen not in COMPILE_MODES:
            raise InvalidSettingsError(f"{MODE_ENV}={chosen!r}: choose one of {', '.join(COMPILE_MODES)}.")
        return chosen
    return "reduce-overhead" if device.startswith(TORCH_CUDA) else "default"


# -- per-engine state ----------------------------------------------------------------------------------
def _state(engine: ModeHost) -> dict:
    """This mode's state on ``engine`` (:meth:`app.core.engine.engine.Engine.mode_state`): ``("cache", max_cache_len)`` →
    ``StaticCache`` and ``("step", kind)`` → :class:`_Step`, created on first use."""
    return engine.mode_state(mode_name_of(TorchCompileMode))


def clear_torch_compile(engine: ModeHost) -> None:
    """Drop the engine's compiled steps and static caches of this mode and reset Dynamo (see
    :meth:`TorchCompileMode.clear_state`), so the next run traces and compiles again and says why."""
    TorchCompileMode.clear_state(engine)
    _state(engine).clear()
    _state(engine)["cleared"] = True


def _step_fn(model: torch.nn.Module, input_ids: torch.Tensor, position_ids: torch.Tensor, attention_mask: torch.Tensor,
             cache: Cache) -> torch.Tensor:
    return model(input_ids=input_ids, position_ids=position_ids, attention_mask=attention_mask,
                 past_key_values=cache, use_cache=True).logits


class _Step:
    """One compiled step kind. ``fn`` runs a private copy of :func:`_step_fn`'s code object: Dynamo keys
    its cache by code object, so steps of different engines or kinds never share guards or counts."""

    def __init__(self, kind: str, fullgraph: bool, mode: str = "default") -> None:
        import torch

        code = _step_fn.__code__.replace(co_name=f"torch_compile_{kind}")
        self.kind, self.fullgraph, self.mode = kind, fullgraph, mode
        raw = types.FunctionType(code, _step_fn.__globals__, code.co_name)
        self.fn = torch.compile(raw, backend=backend_for_mode(mode), fullgraph=fullgraph, dynamic=False)
        self.seen: set[tuple] = set()
        self.n_compiles = 0
        self.forced_breaks: list[str] = []


def static_cache(engine: ModeHost, max_cache_len: int) -> Any:
    """The engine's ``StaticCache`` of ``max_cache_len`` positions, zeroed in place (same tensors, so no
    recompile). Built once from :func:`app.core.runtime.kv_cache.torch_static_cache` (sliding-window layers
    as full ``StaticLayer`` s, tensors allocated by one eager 1-token forward outside the graph, on the
    engine's torch device)."""
    import torch

    state = _state(engine)
    cache = state.get(("cache", max_cache_len))
    if cache is None:
        with torch.device(torch_device_of(engine)):
            cache = torch_static_cache(engine.model, max_cache_len, engine.pad_id)
        state[("cache", max_cache_len)] = cache
    cache.reset()
    return cache


class _LayeredCache(Protocol):
    """What :func:`_set_length` reads of a ``StaticCache``: its layers (a static layer keeps its write position in
    ``cumulative_length``, an int or a tensor; transformers' ``Cache`` types its layers as a union of layer kinds)."""

    @property
    def layers(self) -> Sequence[Any]: ...


def _set_length(cache: _LayeredCache, length: int) -> None:
    """After a padded prefill, each layer's write position is the true prompt length (in place)."""
    for layer in cache.layers:
        value = getattr(layer, "cumulative_length", None)
        if isinstance(value, int):
            layer.cumulative_length = length
        elif value is not None:
            value.fill_(length)


class TorchCompileMode(Mode):
    """The ``torch-compile`` execution mode.

    ``torch.compile`` (Inductor; on CUDA with ``mode="reduce-overhead"``, :func:`compile_mode`) over a
    ``StaticCache`` on the engine's torch device: one prefill graph per prompt bucket, one
    decode graph, then every step reuses them. Sampling is ``Mode._sample_host`` on the last real
    position's logits, as in ``torch`` mode.

    After a compiling call, ``ir_texts[kind]`` = ``{"fx_graph": str, "inductor_code": str}`` and
    ``ir_summary[kind]`` = ``{"kernels", "extern_calls", "graphs", "graph_breaks", "break_reasons",
    "fullgraph", "fx_ops"}``, and the step's ``capture_ir()`` returns them as an
    :class:`app.core.inspect.ir.StepIR` (``compiler="inductor"``). Compile stages go to ``emit_live`` live."""

    def __init__(self, engine: ModeHost, settings: GenerationSettings, max_cache_len: int) -> None:
        super().__init__(engine, settings, max_cache_len)  # type: ignore[call-arg]  (Mode.__init__)
        ensure_inductor_cache()
        self.device = torch_device_of(engine)
        self.compile_mode = compile_mode(self.device)
        self.ir_texts: dict[str, dict[str, str]] = {}
        self.ir_summary: dict[str, dict[str, Any]] = {}

    @classmethod
    def clear_state(cls, engine: ModeHost) -> None:
        """Reset Dynamo (``torch._dynamo.reset()``: every compiled frame and guard of the process); the
        engine drops this mode's steps and static caches (Inductor's disk caches may still serve the next
        compile; see :mod:`app.core.compile_cache.inductor`)."""
        import torch._dynamo

        torch._dynamo.reset()

    def prefill(self, prompt_ids):
        import torch

        self.cache = static_cache(self.engine, self.max_cache_len)
        self.start_seen(prompt_ids)
        n = len(prompt_ids)
        bucket = prompt_bucket(n, self.max_cache_len)
        ids = torch.tensor([list(prompt_ids) + [self.engine.pad_id] * (bucket - n)], dtype=torch.long,
                           device=self.device)
        self.mask = torch.ones((1, self.max_cache_len), dtype=torch.long, device=self.device)
        shapes = {"input_ids": [1, bucket], "attention_mask": [1, self.max_cache_len], "prompt_len": [n]}
        return (yield from self._call(PREFILL, ids, 0, n - 1, shapes))

    def decode(self, token, position):
        import torch

        ids = torch.tensor([[token]], dtype=torch.long, device=self.device)
        shapes = {"input_ids": [1, 1], "attention_mask": [1, self.max_cache_len]}
        return (yield from self._call(DECODE, ids, position, 0, shapes))

    def _step(self, kind: str) -> _Step:
        state = _state(self.engine)
        step = state.get(("step", kind))
        if step is None or step.mode != self.compile_mode:
            step = state[("step", kind)] = _Step(kind, fullgraph=True, mode=self.compile_mode)
        return step

    def _call(self, kind: str, ids: torch.Tensor, start: int, last: int, shapes: dict) -> StepGen:
        import torch


        t_wall = time.perf_counter()
        step = self._step(kind)
        positions = torch.arange(start, start + ids.shape[1], device=self.device)[None, :]
        signature = (tuple(ids.shape), self.max_cache_len)
        detail = f"torch.compile {kind} step"
        expect = signature not in step.seen
        if expect:
            yield PhaseEvent("compiling", True, detail)
        logits, info, step = self._run(step, (self.engine.model, ids, positions, self.mask, self.cache), detail)
        step.seen.add(signature)
        record = self._record(step, info)
        if record.compiled:
            if not expect:
                yield PhaseEvent("compiling", True, detail)
            yield PhaseEvent("compiling", False, detail, record.compile_ms)
        elif expect:
            yield PhaseEvent("compiling", False, detail, 0.0)
        if kind == PREFILL:
            _set_length(self.cache, last + 1)
        token = self._sample_host(logits[:, last].float().cpu().numpy())
        capture = self._capture_ir(kind) if record.compiled and kind in self.ir_texts else None
        return StepResult(token, record, shapes, (time.perf_counter() - t_wall) * 1000, capture)

    def _run(self, step: _Step, args: tuple, detail: str) -> tuple[Any, dict, _Step]:
        """Call the compiled step; if Dynamo cannot capture one graph (``fullgraph=True`` raises
        ``torch._dynamo.exc.Unsupported``), replace it by a ``fullgraph=False`` step and call again."""
        import torch._dynamo.exc

        cap = Capture(detail, getattr(self, "emit_live", None))
        before = snapshot()
        t0 = time.perf_counter()
        with capturing(cap):
            try:
                logits = step.fn(*args)
            except torch._dynamo.exc.Unsupported as exc:
                if not step.fullgraph:
                    raise
                reason = str(exc).strip().splitlines()[0]
                step = _Step(step.kind, fullgraph=False, mode=step.mode)
                step.forced_breaks.append(reason)
                _state(self.engine)[("step", step.kind)] = step
                logits = step.fn(*args)
            torch_sync(self.device)  # CUDA runs asynchronously: the timed call ends with its kernels
        info = since(before)
        info.update(wall_ms=(time.perf_counter() - t0) * 1000, capture=cap)
        return logits, info, step

    def _record(self, step: _Step, info: dict) -> CallRecord:
        """Timing fields of the call (the engine fills in index, mode, shapes, wall). ``compile_ms`` is
        Dynamo's frame-compile time (all phases); ``execute_ms`` the call's wall time minus it."""
        metrics, cap = info["metrics"], info["capture"]
        if not metrics:
            return CallRecord(0, step.kind, "", {}, info["wall_ms"], info["wall_ms"])
        compile_ms = info["seconds"][FRAME] * 1000
        execute_ms = max(info["wall_ms"] - compile_ms, 0.0)
        cache = info["cache"]
        hits = cache["fxgraph_cache_hit"] + cache["autograd_cache_hit"]
        reason = self._reason(step, metrics)
        step.n_compiles += 1
        if cap.fx_graphs or cap.output_code:
            self._remember(step, cache["graph_breaks"], cap)
        return CallRecord(
            0, step.kind, "", {}, info["wall_ms"], execute_ms, compiled=True, compile_ms=compile_ms,
            persistent_cache_hit=hits > 0 and cache["fxgraph_cache_miss"] == 0, compile_reason=reason,
            compile_phases=compile_phases(info["seconds"]),
        )

    def _reason(self, step: _Step, metrics: list) -> str:
        guards = [m.recompile_reason for m in metrics if m.recompile_reason]
        if guards:
            reason = "Dynamo guard failed: " + guards[0]
        elif step.n_compiles == 0:
            cleared = _state(self.engine).get("cleared")
            reason = "first call after caches were cleared" if cleared else "first call"
        else:
            reason = "new Dynamo frame, no guard failed (e.g. after torch._dynamo.reset())"
        if step.forced_breaks and step.n_compiles == 0:
            reason += f"; fullgraph=False after a graph break: {step.forced_breaks[0]}"
        return reason

    def _remember(self, step: _Step, breaks: int, cap: Capture) -> None:
        sep = "\n\n# " + "-" * 30 + " next graph " + "-" * 30 + "\n\n"
        code = sep.join(cap.output_code)
        self.ir_texts[step.kind] = {FX_GRAPH: sep.join(cap.fx_graphs), INDUCTOR_CODE: code}
        self.ir_summary[step.kind] = {
            "kernels": (code.count("async_compile.cpp_pybinding(") + code.count("async_compile.cpp(")
                        + code.count("async_compile.triton(")),
            "extern_calls": code.count("extern_kernels."),
            "graphs": len(cap.fx_graphs),
            "graph_breaks": max(breaks, len(cap.break_reasons)),
            "break_reasons": list(dict.fromkeys(step.forced_breaks + cap.break_reasons)),
            "fullgraph": step.fullgraph,
            "fx_ops": sum(cap.op_counts),
            "compile_mode": step.mode,
            "device": self.device,
        }

    def _capture_ir(self, kind: str) -> Any:
        texts, summary = dict(self.ir_texts[kind]), dict(self.ir_summary[kind])
        return lambda: StepIR(compiler="inductor", fx_graph=texts[FX_GRAPH],
                              inductor_code=texts[INDUCTOR_CODE], n_kernels=summary["kernels"])
