"""The compute side of the Passes tab: record XLA's pass pipeline of a compiled step on the compute thread
(:func:`app.core.passes.record.record_pipeline`) and answer with a :class:`~app.core.session.requests.PassesReady`
whose tables are plain dicts (the window's widgets take lists of dicts). No Qt."""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from app.core.events import PhaseEvent
from app.core.passes import query
from app.core.passes.compare import parse_xla_flags, validate_xla_flags
from app.core.passes.lowered import lowered_for
from app.core.passes.model import PassPipeline, Snapshot, kernel_ir_lost
from app.core.passes.record import RecordingStopped, record_pipeline
from app.core.programs.runner import ProgramRunner
from app.core.requests import Handlers, Notice
from app.core.session import requests as rq

if TYPE_CHECKING:
    from app.core.engine.engine import Engine
    from app.core.programs.compute.service import ProgramService
    from app.core.recording.model import RecordedPasses


def find_lowered(engine: Any, step: str, mode: str = "") -> tuple[str, Any]:
    """``(mode, lowered)`` of the engine's compiled ``step`` (:func:`app.core.passes.lowered.lowered_for`)."""
    return lowered_for(engine, step, mode)


def passes_ready(request: rq.PassesRequest, mode: str, pipeline: Any, seconds: float) -> rq.PassesReady:
    """The :class:`PassesReady` of a recorded pipeline: the pass list, snapshots, compile split, fusions and
    decisions as dicts (what the window's tables show)."""
    rows = query.pass_rows(pipeline)
    snapshots = [s.summary() | {"label": s.label} for s in pipeline.all_snapshots()]
    b = query.compile_breakdown(pipeline)
    breakdown = {
        "total_ms": b.total_ms, "by_group": b.by_group(), "fusion_compile_ms": b.fusion_compile_ms,
        "n_fusion_compiles": b.n_fusion_compiles,
        "parts": [{"label": p.label, "ms": p.ms, "group": p.group, "source": p.source} for p in b.parts],
    }
    fusions = [{
        "name": f.name, "kind": f.kind, "created_by": f.created_by or "", "created_in": f.created_in or "",
        "source": f.source, "absorbed": [list(a) for a in f.absorbed],
        "decisions": [d.summary() for d in f.decisions], "has_llvm_ir": f.has_llvm_ir,
    } for f in query.fusion_table(pipeline)]
    for s in pipeline.all_snapshots():  # keep the texts compressed: the window decompresses what it shows
        s.__dict__.pop("text", None)
    return rq.PassesReady(request, request.step, mode, pipeline, rows, snapshots, breakdown, fusions,
                          [d.summary() for d in pipeline.fusion_log], seconds)


def record_passes(engine: Any, request: rq.PassesRequest, should_stop: Callable[[], bool],
                  on_live_phase: Callable[[Any], None] | None, lowered: tuple[str, Any] | None = None,
                  started: float | None = None) -> Iterator[Any]:
    """Record the step's pass pipeline (``lowered``: ``(mode, jax Lowered)`` given directly, e.g. a program's
    entry point; else the engine's compiled step); progress as live phases at each stage (flags checked,
    compile with dumps, dumps read). The recording's ``seconds`` count from ``started`` (``time.perf_counter()``
    when the request began, e.g. before a program was lowered; default: now), the whole wait the user saw.
    A stop (``should_stop``) ends it with a :class:`~app.core.requests.Notice`, not a failure. A
    program's entry point is recorded with its kernels' IR (in a child process: :mod:`app.core.passes.record`);
    when that IR is lost (the child aborted, a step on a device mesh) a :class:`Notice` with the pipeline's
    one-line ``kernel_ir`` note comes before the :class:`PassesReady`, which is complete without it."""
    t0 = started if started is not None else time.perf_counter()
    options = parse_xla_flags(request.xla_flags)
    kernel_ir = lowered is not None
    mode, lowered = lowered if lowered is not None else find_lowered(engine, request.step, request.mode)

    def progress(message: str) -> None:
        if on_live_phase is not None:
            on_live_phase(PhaseEvent("recording passes", True, f"{mode} · {request.step}: {message}"))

    if options:
        progress(f"asking XLA about {len(options)} flag{'s' if len(options) != 1 else ''}")
    validate_xla_flags(options)
    try:
        # a program's entry point (given directly) is small: its kernels' LLVM IR is dumped too, in a child process
        # (jax 0.12's XLA:CPU aborts while dumping kernels: app.core.backends.CPU); a model's step is not
        pipeline = record_pipeline(lowered, fusion_log=request.fusion_log, should_stop=should_stop,
                                   compiler_options=options, kernel_ir=kernel_ir, on_progress=progress)
    except RecordingStopped as exc:
        yield Notice(str(exc))
        return
    if kernel_ir_lost(pipeline):
        yield Notice(pipeline.kernel_ir)
    yield passes_ready(request, mode, pipeline, time.perf_counter() - t0)


def handlers(engine: Callable[[], Engine], programs: Callable[[], ProgramService]) -> Handlers:
    """The pass recording's entry in the compute service's table."""
    return {rq.PassesRequest: lambda r, stop, live: passes_events(r, engine, programs, stop, live)}


def passes_events(request: rq.PassesRequest, engine: Callable[[], Engine], programs: Callable[[], ProgramService],
                  should_stop: Callable[[], bool], on_live_phase: Callable[[Any], None] | None) -> Iterator[Any]:
    """Record XLA's pass pipeline of ``engine()``'s compiled step (:func:`record_passes`) or, with
    ``request.program``, of the program's entry point lowered anew (no model needed; the program kept warm by
    ``programs()``); the recording's seconds count the whole wait, a program's lowering included."""
    started = time.perf_counter()
    if request.program is not None:  # the user's program: lower its entry point
        _program, prepared, _runner = programs().prepare(request.program, should_stop)
        lowered = lowered_for(ProgramRunner(prepared), should_stop=should_stop)
        yield from record_passes(None, request, should_stop, on_live_phase, lowered=lowered, started=started)
        return
    yield from record_passes(engine(), request, should_stop, on_live_phase, started=started)


def recorded_passes_ready(passes: RecordedPasses, origin: str) -> rq.PassesReady | None:
    """The :class:`PassesReady` of a pass pipeline read from a session file (``passes``: its
    :class:`~app.core.recording.model.RecordedPasses`; ``origin``: ``"recorded on CPU × 1 · …"``): its pass list,
    chart, compile split and fusions as recorded, and of its snapshots only the module before the passes and the
    final one (a session keeps no others). None when it has no final module."""
    summaries = {s.get("index"): s for s in passes.snapshots}

    def snapshot(text: str | None, summary: dict | None, index: int, name: str) -> Snapshot | None:
        if text is None:
            return None
        s = summary or {}
        return Snapshot(index, s.get("pipeline", ""), s.get("pass", name), s.get("next", ""),
                        s.get("file", name), int(s.get("n_instructions") or 0), dict(s.get("fusion_kinds") or {}),
                        [], len(text.encode("utf-8")), zlib.compress(text.encode("utf-8")))

    indices = sorted(i for i in summaries if isinstance(i, int))
    first, last = (indices[0], indices[-1]) if indices else (-1, 0)
    before = snapshot(passes.initial_hlo, summaries.get(first), first, "before optimizations")
    final = snapshot(passes.final_hlo, summaries.get(last), last, "after optimizations")
    if final is None:
        return None
    pipeline = PassPipeline(passes.module, [], before, final, [], [], [], passes.compile_ms or 0.0, None,
                            in_child=bool(passes.decisions))
    request = rq.PassesRequest(step=passes.step, fusion_log=bool(passes.decisions), mode=passes.mode)
    return rq.PassesReady(request, passes.step, passes.mode, pipeline, passes.rows, passes.snapshots,
                          passes.breakdown or {"total_ms": 0.0, "parts": []}, passes.fusions, passes.decisions,
                          passes.seconds, origin=origin, recorded=True)
