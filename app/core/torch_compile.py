"""The ``torch-compile`` mode: PyTorch with a transformers ``StaticCache``, prefill and decode through
``torch.compile`` (Dynamo → AOT autograd → Inductor, C++ kernels on CPU).

Prompts are right-padded to :func:`app.core.modes.prompt_bucket` like jit-static, positions are passed
explicitly (transformers 5 models derive the cache write position from each ``StaticLayer``'s
``cumulative_length`` tensor, reset to the true prompt length after prefill) and the attention mask is
``(1, max_cache_len)`` ones, so one prefill graph serves every prompt length of a bucket and one decode
graph serves every step. The compiled steps and the ``StaticCache`` live on the engine
(``engine._torch_compile_state``), so a second run compiles nothing.

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

import contextlib
import threading
import time
import types
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from app.core.events import CallRecord, PhaseEvent

if TYPE_CHECKING:
    from app.core.modes import StepGen

STATE_ATTR = "_torch_compile_state"
RECOMPILE_LIMIT = 64  # Dynamo's default (8) would be reached by a few buckets × cache lengths
# compilation_time_metrics keys, outermost first (each timer nests inside the previous one).
_FRAME, _BACKEND, _INDUCTOR, _CODEGEN, _LOAD = (
    "_compile.compile_inner", "OutputGraph.call_user_compiler", "compile_fx_inner",
    "GraphLowering.compile_to_module", "PyCodeCache.load_by_key_path",
)
PHASES = ("dynamo", "aot autograd", "inductor lowering", "inductor codegen", "c++ compile")
_CACHE_COUNTERS = (("inductor", "fxgraph_cache_hit"), ("inductor", "fxgraph_cache_miss"),
                   ("aot_autograd", "autograd_cache_hit"), ("aot_autograd", "autograd_cache_miss"))
_tls = threading.local()


# -- capture of what one call compiled ---------------------------------------------------------------
class _Capture:
    """What Dynamo and Inductor report during one call; installed per thread by :func:`_capturing`."""

    def __init__(self, label: str, emit: Any) -> None:
        self.label, self.emit = label, emit
        self.fx_graphs: list[str] = []
        self.output_code: list[str] = []
        self.break_reasons: list[str] = []
        self.op_counts: list[int] = []
        self.thread = threading.get_ident()

    def stage(self, name: str) -> None:
        """Forward a live ``compiling`` event (``detail`` names the stage) to ``emit_live`` if any."""
        if self.emit is not None and threading.get_ident() == self.thread:
            self.emit(PhaseEvent("compiling", True, f"{self.label}: {name}"))

    def add_graph(self, gm: Any) -> None:
        self.fx_graphs.append(gm.print_readable(print_output=False))
        self.op_counts.append(sum(1 for n in gm.graph.nodes if n.op in ("call_function", "call_method")))
        why = getattr(gm, "compile_subgraph_reason", None)
        if why is not None and why.graph_break:
            frame = why.user_stack[-1] if why.user_stack else None
            where = f" ({frame.filename}:{frame.lineno})" if frame is not None else ""
            self.break_reasons.append(f"{why.reason.strip().splitlines()[0]}{where}")


def _active() -> _Capture | None:
    return getattr(_tls, "capture", None)


def _backend(gm: Any, example_inputs: list) -> Any:
    """Dynamo backend: record the captured graph, then Inductor exactly as ``backend="inductor"``."""
    from torch._inductor.compile_fx import compile_fx

    cap = _active()
    if cap is not None:
        cap.add_graph(gm)
        cap.stage("AOT autograd")
    return compile_fx(gm, example_inputs, inner_compile=_inner_compile)


def _inner_compile(*args: Any, **kwargs: Any) -> Any:
    from torch._inductor.compile_fx import compile_fx_inner

    cap = _active()
    if cap is not None:
        cap.stage("Inductor lowering and code generation")
    return compile_fx_inner(*args, **kwargs)


@contextlib.contextmanager
def _capturing(cap: _Capture) -> Iterator[_Capture]:
    """Install ``cap`` for this thread, a Dynamo compile-start callback (torch/_dynamo/callback.py), the
    output-code hook and a raised recompile limit; all restored on exit, also after an exception."""
    import torch._dynamo
    from torch._inductor.graph import GraphLowering

    prev = GraphLowering.save_output_code

    def on_output_code(code: str) -> None:
        cap.output_code.append(code)
        cap.stage("C++ compile and load of the generated kernels")
        if prev is not None:
            prev(code)

    def on_start(args: Any) -> None:
        cap.stage("Dynamo tracing")

    GraphLowering.save_output_code = on_output_code
    torch._dynamo.callback_handler.register_start_callback(on_start)
    _tls.capture = cap
    try:
        with torch._dynamo.config.patch(recompile_limit=RECOMPILE_LIMIT), _without_torchax_accelerator():
            yield cap
    finally:
        _tls.capture = None
        torch._dynamo.callback_handler.remove_start_callback(on_start)
        GraphLowering.save_output_code = prev


@contextlib.contextmanager
def _without_torchax_accelerator() -> Iterator[None]:
    """torchax registers its ``jax`` device as PyTorch's privateuse1 accelerator with an ``is_available()``
    of True but no streams, and Dynamo's tracer asks ``torch.accelerator.current_stream()`` whenever an
    accelerator is available (torch/_dynamo/variables/streams.py, ``SymbolicStreamState``), which raises
    "PyTorch is not linked with support for jax devices". While compiling a CPU model, report the
    ``jax`` device module as unavailable; restored on exit."""
    import torch

    acc = torch.accelerator.current_accelerator()
    if acc is None or acc.type != "jax":
        yield
        return
    module = torch.get_device_module(acc)
    original = module.is_available
    module.is_available = lambda: False
    try:
        yield
    finally:
        module.is_available = original


# -- PyTorch's compile metrics around one call --------------------------------------------------------
def _snapshot() -> tuple[list, dict[str, int], dict[tuple[str, str], int]]:
    from torch._dynamo.utils import compilation_time_metrics, counters, get_compilation_metrics

    lengths = {k: len(v) for k, v in compilation_time_metrics.items()}
    counts = {c: counters[c[0]][c[1]] for c in _CACHE_COUNTERS}
    counts[("graph_break", "")] = counters["graph_break"].total()
    return get_compilation_metrics(), lengths, counts


def _since(before: tuple) -> dict[str, Any]:
    """New ``CompilationMetrics`` records, seconds per timer key, and deltas of the disk-cache counters and
    of ``counters["graph_break"]`` (``CompilationMetrics.num_graph_breaks`` is that counter's process
    total, torch/_inductor/compile_fx.py) since ``before``."""
    from torch._dynamo.utils import compilation_time_metrics, counters, get_compilation_metrics

    old_metrics, lengths, old_counts = before
    old_ids = {id(m) for m in old_metrics}
    metrics = [m for m in get_compilation_metrics() if id(m) not in old_ids and not m.is_runtime]
    seconds = {}
    for key in (_FRAME, _BACKEND, _INDUCTOR, _CODEGEN, _LOAD):
        values = compilation_time_metrics.get(key, [])
        start = lengths.get(key, 0) if len(values) >= lengths.get(key, 0) else 0
        seconds[key] = sum(values[start:])
    deltas = {c[1]: counters[c[0]][c[1]] - old_counts[c] for c in _CACHE_COUNTERS}
    deltas["graph_breaks"] = max(counters["graph_break"].total() - old_counts[("graph_break", "")], 0)
    return {"metrics": metrics, "seconds": seconds, "cache": deltas}


def compile_phases(seconds: dict[str, float]) -> dict[str, float]:
    """Exclusive compile phases in ms from the nested ``dynamo_timed`` totals (seconds) of one call.

    ``dynamo`` = frame compile − backend; ``aot autograd`` = backend − ``compile_fx_inner``; ``inductor
    lowering`` = ``compile_fx_inner`` − ``compile_to_module`` (graph passes, lowering; on an FX-graph-cache
    hit the lookup and load); ``inductor codegen`` = ``compile_to_module`` − module load (scheduling,
    C++/Python code generation); ``c++ compile`` = loading the output module, which builds its C++
    kernels (``async_compile.wait`` inside). The phases sum to the frame compile time."""
    frame, backend, inductor = seconds[_FRAME], seconds[_BACKEND], seconds[_INDUCTOR]
    codegen = seconds[_CODEGEN]
    load = min(seconds[_LOAD], codegen)  # a cache hit loads outside compile_to_module: no C++ compile
    parts = (frame - backend, backend - inductor, inductor - codegen, codegen - load, load)
    return {name: max(float(value), 0.0) * 1000 for name, value in zip(PHASES, parts)}


# -- per-engine state ----------------------------------------------------------------------------------
def _state(engine: Any) -> dict:
    """``engine._torch_compile_state``: ``("cache", max_cache_len)`` → ``StaticCache`` and
    ``("step", kind)`` → :class:`_Step`, created on first use."""
    state = getattr(engine, STATE_ATTR, None)
    if state is None:
        state = {}
        setattr(engine, STATE_ATTR, state)
    return state


def clear_torch_compile(engine: Any) -> None:
    """Drop the engine's compiled steps and static caches and reset Dynamo (``torch._dynamo.reset()``:
    every compiled frame and guard of the process), so the next run traces and compiles again (Inductor's
    disk caches may still serve it; see :mod:`app.core.inductor_cache`)."""
    import torch._dynamo

    setattr(engine, STATE_ATTR, {"cleared": True})
    torch._dynamo.reset()


def _step_fn(model: Any, input_ids: Any, position_ids: Any, attention_mask: Any, cache: Any) -> Any:
    return model(input_ids=input_ids, position_ids=position_ids, attention_mask=attention_mask,
                 past_key_values=cache, use_cache=True).logits


class _Step:
    """One compiled step kind. ``fn`` runs a private copy of :func:`_step_fn`'s code object: Dynamo keys
    its cache by code object, so steps of different engines or kinds never share guards or counts."""

    def __init__(self, kind: str, fullgraph: bool) -> None:
        import torch

        code = _step_fn.__code__.replace(co_name=f"torch_compile_{kind}")
        self.kind, self.fullgraph = kind, fullgraph
        raw = types.FunctionType(code, _step_fn.__globals__, code.co_name)
        self.fn = torch.compile(raw, backend=_backend, fullgraph=fullgraph, dynamic=False)
        self.seen: set[tuple] = set()
        self.n_compiles = 0
        self.forced_breaks: list[str] = []


def static_cache(engine: Any, max_cache_len: int) -> Any:
    """The engine's ``StaticCache`` of ``max_cache_len`` positions, zeroed in place (same tensors, so no
    recompile). Built once: sliding-window layers become full ``StaticLayer`` s (as in
    :mod:`app.core.kv_cache`) and one eager 1-token forward allocates the tensors outside the graph."""
    import torch
    from transformers import StaticCache
    from transformers.cache_utils import StaticLayer, StaticSlidingWindowLayer

    state = _state(engine)
    cache = state.get(("cache", max_cache_len))
    if cache is None:
        cache = StaticCache(config=engine.model.config, max_cache_len=max_cache_len)
        for i, layer in enumerate(cache.layers):
            if isinstance(layer, StaticSlidingWindowLayer):
                cache.layers[i] = StaticLayer(max_cache_len=max_cache_len)
        with torch.no_grad():
            engine.model(input_ids=torch.tensor([[engine.pad_id]]), position_ids=torch.tensor([[0]]),
                         past_key_values=cache, use_cache=True)
        state[("cache", max_cache_len)] = cache
    cache.reset()
    return cache


def _set_length(cache: Any, length: int) -> None:
    """After a padded prefill, each layer's write position is the true prompt length (in place)."""
    for layer in cache.layers:
        value = getattr(layer, "cumulative_length", None)
        if isinstance(value, int):
            layer.cumulative_length = length
        elif value is not None:
            value.fill_(length)


class TorchCompileSteps:
    """The ``torch-compile`` mode's behaviour; :data:`TorchCompileMode` is this class over
    :class:`app.core.modes.Mode` (see :func:`__getattr__` for why it is assembled on first use).

    ``torch.compile`` (Inductor, CPU) over a ``StaticCache``: one prefill graph per prompt bucket, one
    decode graph, then every step reuses them. Sampling is ``Mode._sample_host`` on the last real
    position's logits, as in ``torch`` mode.

    After a compiling call, ``ir_texts[kind]`` = ``{"fx_graph": str, "inductor_code": str}`` and
    ``ir_summary[kind]`` = ``{"kernels", "extern_calls", "graphs", "graph_breaks", "break_reasons",
    "fullgraph", "fx_ops"}``, and the step's ``capture_ir()`` returns them as an
    :class:`app.core.ir.StepIR` (``compiler="inductor"``). Compile stages go to ``emit_live`` live."""

    mode = "torch-compile"
    compiler = "inductor"

    def __init__(self, engine: Any, settings: Any, max_cache_len: int) -> None:
        from app.core.inductor_cache import ensure_inductor_cache

        super().__init__(engine, settings, max_cache_len)  # type: ignore[call-arg]  (Mode.__init__)
        ensure_inductor_cache()
        self.ir_texts: dict[str, dict[str, str]] = {}
        self.ir_summary: dict[str, dict[str, Any]] = {}

    def prefill(self, prompt_ids):
        import torch

        from app.core.modes import prompt_bucket

        self.cache = static_cache(self.engine, self.max_cache_len)
        n = len(prompt_ids)
        bucket = prompt_bucket(n, self.max_cache_len)
        ids = torch.tensor([list(prompt_ids) + [self.engine.pad_id] * (bucket - n)], dtype=torch.long)
        self.mask = torch.ones((1, self.max_cache_len), dtype=torch.long)
        shapes = {"input_ids": [1, bucket], "attention_mask": [1, self.max_cache_len], "prompt_len": [n]}
        return (yield from self._call("prefill", ids, 0, n - 1, shapes))

    def decode(self, token, position):
        import torch

        ids = torch.tensor([[token]], dtype=torch.long)
        shapes = {"input_ids": [1, 1], "attention_mask": [1, self.max_cache_len]}
        return (yield from self._call("decode", ids, position, 0, shapes))

    def _step(self, kind: str) -> _Step:
        state = _state(self.engine)
        step = state.get(("step", kind))
        if step is None:
            step = state[("step", kind)] = _Step(kind, fullgraph=True)
        return step

    def _call(self, kind: str, ids: Any, start: int, last: int, shapes: dict) -> StepGen:
        import torch

        from app.core.modes import StepResult

        t_wall = time.perf_counter()
        step = self._step(kind)
        positions = torch.arange(start, start + ids.shape[1])[None, :]
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
        if kind == "prefill":
            _set_length(self.cache, last + 1)
        token = self._sample_host(logits[:, last].float().numpy())
        capture = self._capture_ir(kind) if record.compiled and kind in self.ir_texts else None
        return StepResult(token, record, shapes, (time.perf_counter() - t_wall) * 1000, capture)

    def _run(self, step: _Step, args: tuple, detail: str) -> tuple[Any, dict, _Step]:
        """Call the compiled step; if Dynamo cannot capture one graph (``fullgraph=True`` raises
        ``torch._dynamo.exc.Unsupported``), replace it by a ``fullgraph=False`` step and call again."""
        import torch._dynamo

        cap = _Capture(detail, getattr(self, "emit_live", None))
        before = _snapshot()
        t0 = time.perf_counter()
        with _capturing(cap):
            try:
                logits = step.fn(*args)
            except torch._dynamo.exc.Unsupported as exc:
                if not step.fullgraph:
                    raise
                reason = str(exc).strip().splitlines()[0]
                step = _Step(step.kind, fullgraph=False)
                step.forced_breaks.append(reason)
                _state(self.engine)[("step", step.kind)] = step
                logits = step.fn(*args)
        info = _since(before)
        info.update(wall_ms=(time.perf_counter() - t0) * 1000, capture=cap)
        return logits, info, step

    def _record(self, step: _Step, info: dict) -> CallRecord:
        """Timing fields of the call (the engine fills in index, mode, shapes, wall). ``compile_ms`` is
        Dynamo's frame-compile time (all phases); ``execute_ms`` the call's wall time minus it."""
        metrics, cap = info["metrics"], info["capture"]
        if not metrics:
            return CallRecord(0, step.kind, "", {}, info["wall_ms"], info["wall_ms"])
        compile_ms = info["seconds"][_FRAME] * 1000
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

    def _remember(self, step: _Step, breaks: int, cap: _Capture) -> None:
        sep = "\n\n# " + "-" * 30 + " next graph " + "-" * 30 + "\n\n"
        code = sep.join(cap.output_code)
        self.ir_texts[step.kind] = {"fx_graph": sep.join(cap.fx_graphs), "inductor_code": code}
        self.ir_summary[step.kind] = {
            "kernels": code.count("async_compile.cpp_pybinding(") + code.count("async_compile.cpp("),
            "extern_calls": code.count("extern_kernels."),
            "graphs": len(cap.fx_graphs),
            "graph_breaks": max(breaks, len(cap.break_reasons)),
            "break_reasons": list(dict.fromkeys(step.forced_breaks + cap.break_reasons)),
            "fullgraph": step.fullgraph,
            "fx_ops": sum(cap.op_counts),
        }

    def _capture_ir(self, kind: str) -> Any:
        from app.core.ir import StepIR

        texts, summary = dict(self.ir_texts[kind]), dict(self.ir_summary[kind])
        return lambda: StepIR(compiler="inductor", fx_graph=texts["fx_graph"],
                              inductor_code=texts["inductor_code"], n_kernels=summary["kernels"])


def __getattr__(name: str) -> Any:
    """``TorchCompileMode`` (alias ``TorchCompileRunner``, its name before runners.py became modes.py):
    :class:`TorchCompileSteps` over :class:`app.core.modes.Mode`, made once on first access (PEP 562).
    ``app.core.modes`` imports this module at its end to list the mode, so importing ``modes`` at the top
    here would be circular whenever this module loads first (``Engine.clear_compiled`` imports
    :func:`clear_torch_compile` before any run)."""
    if name in ("TorchCompileMode", "TorchCompileRunner"):
        from app.core.modes import Mode

        attrs = {"__module__": __name__, "__qualname__": "TorchCompileMode", "__doc__": TorchCompileSteps.__doc__}
        cls = type("TorchCompileMode", (TorchCompileSteps, Mode), attrs)
        globals().update(TorchCompileMode=cls, TorchCompileRunner=cls)
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
