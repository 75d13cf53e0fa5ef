"""What one ``torch.compile`` call compiled, from PyTorch's own reporting (torch/_dynamo/utils.py).

- compile time and its phases: the nested ``dynamo_timed`` timers in ``compilation_time_metrics``
  (``_compile.compile_inner`` ⊃ ``OutputGraph.call_user_compiler`` ⊃ ``compile_fx_inner`` ⊃
  ``GraphLowering.compile_to_module`` ⊃ ``PyCodeCache.load_by_key_path``), made exclusive by subtraction;
- graph breaks: ``counters["graph_break"]``; disk-cache hits: ``counters["inductor"]["fxgraph_cache_hit"]``
  and ``counters["aot_autograd"]["autograd_cache_hit"]``;
- the FX graph of each Dynamo graph (a backend wrapping ``torch._inductor.compile_fx.compile_fx``) and
  Inductor's output module (``GraphLowering.save_output_code``, torch/_inductor/graph.py).

Used by :mod:`app.core.modes.torch_compile`; no Qt.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from app.core.events import PhaseEvent

if TYPE_CHECKING:
    from typing import Unpack

    from torch._dynamo.callback import CallbackArgs
    from torch._inductor.compile_fx import _CompileFxKwargs
    from torch._inductor.output_code import OutputCode
    from torch._inductor.utils import InputType
    from torch.fx import GraphModule

RECOMPILE_LIMIT = 64  # Dynamo's default (8) would be reached by a few buckets × cache lengths
# compilation_time_metrics keys, outermost first (each timer nests inside the previous one).
FRAME, _BACKEND, _INDUCTOR, _CODEGEN, _LOAD = (
    "_compile.compile_inner", "OutputGraph.call_user_compiler", "compile_fx_inner",
    "GraphLowering.compile_to_module", "PyCodeCache.load_by_key_path",
)
PHASES = ("dynamo", "aot autograd", "inductor lowering", "inductor codegen", "c++ compile")
_CACHE_COUNTERS = (("inductor", "fxgraph_cache_hit"), ("inductor", "fxgraph_cache_miss"),
                   ("aot_autograd", "autograd_cache_hit"), ("aot_autograd", "autograd_cache_miss"))
_tls = threading.local()


# -- capture of what one call compiled ---------------------------------------------------------------
class Capture:
    """What Dynamo and Inductor report during one call; installed per thread by :func:`capturing`."""

    def __init__(self, label: str, emit: Callable[[PhaseEvent], None] | None) -> None:
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

    def add_graph(self, gm: GraphModule) -> None:
        self.fx_graphs.append(gm.print_readable(print_output=False))
        self.op_counts.append(sum(1 for n in gm.graph.nodes if n.op in ("call_function", "call_method")))
        why = getattr(gm, "compile_subgraph_reason", None)
        if why is not None and why.graph_break:
            frame = why.user_stack[-1] if why.user_stack else None
            where = f" ({frame.filename}:{frame.lineno})" if frame is not None else ""
            self.break_reasons.append(f"{why.reason.strip().splitlines()[0]}{where}")


def _active() -> Capture | None:
    return getattr(_tls, "capture", None)


def backend(gm: GraphModule, example_inputs: list, config_patches: dict[str, Any] | None = None) -> Any:
    """Dynamo backend: record the captured graph, then Inductor exactly as ``backend="inductor"`` (with
    ``config_patches``, as ``torch.compile(mode=...)`` passes its mode's Inductor options)."""
    from torch._inductor.compile_fx import compile_fx

    cap = _active()
    if cap is not None:
        cap.add_graph(gm)
        cap.stage("AOT autograd")
    if config_patches:
        return compile_fx(gm, example_inputs, inner_compile=_inner_compile, config_patches=config_patches)
    return compile_fx(gm, example_inputs, inner_compile=_inner_compile)


def backend_for_mode(mode: str) -> Any:
    """The Dynamo backend of :func:`backend` with the Inductor options of ``torch.compile(mode=mode)``
    (``torch._inductor.list_mode_options``: ``"reduce-overhead"`` → ``{"triton.cudagraphs": True}``, CUDA graphs
    through cudagraph trees); ``"default"`` → :func:`backend` itself. A custom backend cannot be combined with
    ``torch.compile(mode=...)``, hence the options here."""
    if mode == "default":
        return backend
    from torch._inductor import list_mode_options

    options = dict(list_mode_options(mode))

    def backend_with_mode(gm: GraphModule, example_inputs: list) -> Any:
        return backend(gm, example_inputs, config_patches=options)

    return backend_with_mode


def _inner_compile(gm: GraphModule, example_inputs: Sequence[InputType], compile_region_name: str | None = None,
                   **kwargs: Unpack[_CompileFxKwargs]) -> OutputCode:
    """``compile_fx_inner`` (its signature, torch/_inductor/compile_fx.py), announced as a live stage."""
    from torch._inductor.compile_fx import compile_fx_inner

    cap = _active()
    if cap is not None:
        cap.stage("Inductor lowering and code generation")
    return compile_fx_inner(gm, example_inputs, compile_region_name, **kwargs)


@contextlib.contextmanager
def capturing(cap: Capture) -> Iterator[Capture]:
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

    def on_start(args: CallbackArgs) -> None:
        cap.stage("Dynamo tracing")

    GraphLowering.save_output_code = on_output_code
    # callback_handler: torch._dynamo imports it from .callback without re-exporting it (no __all__ entry)
    torch._dynamo.callback_handler.register_start_callback(on_start)  # pyright: ignore[reportPrivateImportUsage]
    _tls.capture = cap
    try:
        with torch._dynamo.config.patch(recompile_limit=RECOMPILE_LIMIT), _without_torchax_accelerator():
            yield cap
    finally:
        _tls.capture = None
        torch._dynamo.callback_handler.remove_start_callback(on_start)  # pyright: ignore[reportPrivateImportUsage]
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
    module: Any = torch.get_device_module(acc)  # torch 2.15 types it as a plain ModuleType
    original = module.is_available
    module.is_available = lambda: False
    try:
        yield
    finally:
        module.is_available = original


# -- PyTorch's compile metrics around one call --------------------------------------------------------
def snapshot() -> tuple[list, dict[str, int], dict[tuple[str, str], int]]:
    from torch._dynamo.utils import compilation_time_metrics, counters, get_compilation_metrics

    lengths = {k: len(v) for k, v in compilation_time_metrics.items()}
    counts = {c: counters[c[0]][c[1]] for c in _CACHE_COUNTERS}
    counts[("graph_break", "")] = counters["graph_break"].total()
    return get_compilation_metrics(), lengths, counts


def since(before: tuple) -> dict[str, Any]:
    """New ``CompilationMetrics`` records, seconds per timer key, and deltas of the disk-cache counters and
    of ``counters["graph_break"]`` (``CompilationMetrics.num_graph_breaks`` is that counter's process
    total, torch/_inductor/compile_fx.py) since ``before``."""
    from torch._dynamo.utils import compilation_time_metrics, counters, get_compilation_metrics

    old_metrics, lengths, old_counts = before
    old_ids = {id(m) for m in old_metrics}
    metrics = [m for m in get_compilation_metrics() if id(m) not in old_ids and not m.is_runtime]
    seconds = {}
    for key in (FRAME, _BACKEND, _INDUCTOR, _CODEGEN, _LOAD):
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
    frame, backend, inductor = seconds[FRAME], seconds[_BACKEND], seconds[_INDUCTOR]
    codegen = seconds[_CODEGEN]
    load = min(seconds[_LOAD], codegen)  # a cache hit loads outside compile_to_module: no C++ compile
    parts = (frame - backend, backend - inductor, inductor - codegen, codegen - load, load)
    return {name: max(float(value), 0.0) * 1000 for name, value in zip(PHASES, parts)}


