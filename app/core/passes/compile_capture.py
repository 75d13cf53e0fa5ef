"""Read one compile from the profiler's XSpace (:func:`read_compile`): its passes' times, pipeline spans, backend
phases, codegen threads and XLA:GPU's autotuning, by the event names of the backend's row
(:mod:`app.core.backends`). JAX imported only to read the capture (``jax.profiler.ProfileData``); the dump
directory's side is :mod:`app.core.passes.parse`."""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from app.core.backends import CPU, BackendFacts
from app.core.passes.model import BackendPhase, CompileFigures, PassTime, PipelineTime, Snapshot
from app.core.passes.names import norm

_PIPELINE_SPAN = re.compile(r"^(.*) \((.+)\)$")
#: Compiler-thread events that are bookkeeping, not a pass (``tsl/profiler`` threadpool listener).
_BOOKKEEPING = ("ThreadpoolListener::",)
#: Events of JAX's Python tracer (``$stages.py:674 compile``) on the compiling thread since jax 0.11.
_PYTHON_TRACER = "$"

#: One profiler event: ``(name, start_ns, duration_ns)``.
Event = tuple[str, float, float]


@dataclass(kw_only=True)
class CompileCapture(CompileFigures):
    """What a profiler capture of one compile says (:func:`read_compile`): ``pass_times``, ``pipelines``,
    ``backend`` (phases), ``client_ms`` (the client compile event), ``compile_thread`` (the profiler line kind that
    compiled), the :class:`~app.core.passes.model.CompileFigures`, and the autotuning pipeline's (zero / None /
    empty where the row names none): ``autotune_ms`` (its spans; None without one), ``autotune_load_ms``,
    ``candidates`` (``{fusion: [compiles, ms]}``), ``runs`` (``{fusion: [runs, ms]}``), ``n_candidate_compiles`` /
    ``candidate_compile_ms`` (every candidate compile inside its span, summed), ``device_events`` / ``device_ms``
    (device plane events inside it, summed)."""

    pass_times: list[PassTime]
    pipelines: list[PipelineTime]
    backend: list[BackendPhase]
    client_ms: float
    compile_thread: str = ""
    autotune_ms: float | None = None
    autotune_load_ms: float = 0.0
    candidates: dict[str, list] = field(default_factory=dict)
    runs: dict[str, list] = field(default_factory=dict)
    n_candidate_compiles: int = 0
    candidate_compile_ms: float = 0.0
    device_events: int = 0
    device_ms: float = 0.0


def _thread_kind(line_name: str) -> str:
    base = line_name.split("/")[0]
    return base[3:] if base.startswith("tf_") else base


def _is_event(name: str, wanted: str) -> bool:
    """``name`` is event ``wanted``, or ``wanted`` with the module in parentheses (XLA:GPU's
    ``PjRtCApiClient::CompileAndLoad(jit_step)``)."""
    return name == wanted or (name.startswith(wanted + "(") and name.endswith(")"))


def _union_ms(intervals: list[tuple[float, float]], lo: float, hi: float) -> float:
    """Wall time (ms) covered by at least one of ``intervals`` (ns), clipped to ``[lo, hi]``."""
    total, cur = 0.0, None
    for a, b in sorted((max(a, lo), min(b, hi)) for a, b in intervals if b > lo and a < hi):
        if cur is None or a > cur[1]:
            total += (cur[1] - cur[0]) if cur else 0.0
            cur = [a, b]
        else:
            cur[1] = max(cur[1], b)
    total += (cur[1] - cur[0]) if cur else 0.0
    return total / 1e6


def read_profile(source: str | os.PathLike | bytes, module: str, snapshots: list[Snapshot],
                 backend_facts: BackendFacts = CPU):
    """Pass times, pipeline runs, backend phases and the client compile's ms for module ``module``:
    ``(pass_times, pipelines, backend, client_ms)`` of :func:`read_compile` (see there); raises ``ValueError``
    when no such compile event is in the capture."""
    c = read_compile(source, module, snapshots, backend_facts)
    return c.pass_times, c.pipelines, c.backend, c.client_ms


def read_compile(source: str | os.PathLike | bytes, module: str, snapshots: list[Snapshot],
                 backend_facts: BackendFacts = CPU) -> CompileCapture:
    """Read one compile of module ``module`` from a profiler capture (``source``: an ``.xplane.pb`` path or its
    bytes), with the names of ``backend_facts`` (:mod:`app.core.backends`).

    The compile is the first event named in ``backend_facts.client_compile_events`` (``CompileCpuExecutable`` on
    jax ≥ 0.11 CPU, ``PjRtCpuClient::Compile`` before; ``PjRtCApiClient::CompileAndLoad(<module>)`` on XLA:GPU)
    on a line of the host plane that holds a pipeline span ``"… (<module>)"`` inside it. Events of that line
    inside it are, by name: pipeline spans ``"<pipeline> (<module>)"``; backend phases (names with ``::``,
    ``backend_plain_events``, ``phase_prefixes``), unless nested in a pass; passes: the other events directly
    inside a pipeline span (their pipeline). Left out: Python-tracer events (``$file.py:N f``), a pass event
    wrapping the pipeline of the same name (the pipeline run as a pass of its parent, so no time counts twice),
    events nested in a pass (XLA:GPU's autotuner allocating and copying), and spans of other modules with all
    they hold (``"fusion (triton_softmax_computation.8)"``, ``"cublaslt_rewriter_pipeline (gemm_fusion_dot_computation)"``:
    sub-compiles whose time is their parent pass's). Events on codegen lines (``codegen_line``) inside the compile
    (inside ``codegen_window_event`` where the row names one) are backend phases of their thread. The row's
    further events give the :class:`~app.core.passes.model.CompileFigures` and the autotuning phase
    (:class:`CompileCapture`). Raises ``ValueError`` when no such compile event is in the
    capture."""
    from jax.profiler import ProfileData

    f = backend_facts
    data = (ProfileData.from_serialized_xspace(bytes(source)) if isinstance(source, (bytes, bytearray))
            else ProfileData.from_file(os.fspath(source)))
    plane = data.find_plane_with_name(f.host_plane)
    if plane is None:
        raise ValueError(f"The capture has no {f.host_plane!r} plane (not an XLA:{f.platform.upper()} profile).")
    lines = [(line.name, [(e.name, e.start_ns, e.duration_ns) for e in line.events]) for line in plane.lines]
    found = _find_compile(lines, module, f)
    if found is None:
        raise ValueError(f"The capture has no {' or '.join(f.client_compile_events)} event of module {module!r}.")
    window, compile_line, events = found
    tree = _CompileTree(events, module)
    capture = CompileCapture(pass_times=[], pipelines=tree.pipeline_times(f.run_backend_event), backend=[],
                             client_ms=window[2] / 1e6, compile_thread=_thread_kind(compile_line))
    backend = _read_passes(capture, tree, snapshots, f)
    codegen = [(name, evs) for name, evs in lines if name != compile_line and f.codegen_line in name]
    _read_codegen(capture, backend, codegen, tree, f, (window[1], window[1] + window[2]))
    _read_figures(capture, tree, f)
    _read_autotune(capture, data, codegen, tree, f)
    capture.backend = list(backend.values())
    return capture


def _find_compile(lines: list[tuple[str, list[Event]]], module: str,
                  f: BackendFacts) -> tuple[Event, str, list[Event]] | None:
    """The client compile of ``module`` (see :func:`read_compile`): its event, its line's name and the line's
    events inside it (Python-tracer and bookkeeping events left out) in start order, outer first; None when
    there is none. The first of ``f.client_compile_events`` found wins; of its events, the last."""
    suffix = f" ({module})"
    for event_name in f.client_compile_events:
        found = None
        for name, events in lines:
            for ev in events:
                lo, hi = ev[1], ev[1] + ev[2]
                if _is_event(ev[0], event_name) and any(e[0].endswith(suffix) and lo <= e[1] <= hi for e in events):
                    inside = [e for e in events if lo <= e[1] <= hi and e is not ev
                              and not e[0].startswith(_PYTHON_TRACER) and not e[0].startswith(_BOOKKEEPING)]
                    found = (ev, name, sorted(inside, key=lambda e: (e[1], -e[2])))
        if found is not None:
            return found
    return None


class _CompileTree:
    """The events inside one client compile (``events``, start order) with, per event, its innermost enclosing
    event (``parent``; None: directly inside the client compile) and whether it lies in another module's span
    (``foreign``: a sub-compile's); ``spans``: this module's pipeline spans ``(pipeline, start_ns, end_ns)``."""

    def __init__(self, events: list[Event], module: str) -> None:
        self.events, self.module, self.suffix = events, module, f" ({module})"
        self.parent: list[int | None] = []
        self.foreign: list[bool] = []
        stack: list[int] = []
        for i, (name, start, dur) in enumerate(events):
            while stack and not (start + dur <= events[stack[-1]][1] + events[stack[-1]][2]):
                stack.pop()
            par = stack[-1] if stack else None
            self.parent.append(par)
            self.foreign.append(self._foreign_span(name) or (par is not None and self.foreign[par]))
            stack.append(i)
        self.spans = [(e[0][: -len(self.suffix)], e[1], e[1] + e[2]) for i, e in enumerate(events)
                      if self.is_span(e[0]) and not self.foreign[i]]

    def is_span(self, name: str) -> bool:
        return name.endswith(self.suffix)

    def _foreign_span(self, name: str) -> bool:
        m = _PIPELINE_SPAN.match(name)
        return bool(m) and "::" not in name and m.group(2) != self.module

    def pipeline_times(self, run_backend_event: str) -> list[PipelineTime]:
        """Every pipeline span, in start order, with its depth and whether it ran inside ``run_backend_event``."""
        run_backend = [(e[1], e[1] + e[2]) for e in self.events if e[0] == run_backend_event]
        out = []
        for name, a, b in self.spans:
            depth = sum(1 for _, a2, b2 in self.spans if a2 <= a and b <= b2 and (a2, b2) != (a, b))
            out.append(PipelineTime(name, (b - a) / 1e6, depth, a, any(a2 <= a and b <= b2 for a2, b2 in run_backend)))
        return sorted(out, key=lambda p: p.start_ns)

    def top_spans(self) -> list[tuple[float, float]]:
        """``(start_ns, end_ns)`` of the pipeline spans inside no other."""
        return [(a, b) for _, a, b in self.spans
                if not any(a2 <= a and b <= b2 and (a2, b2) != (a, b) for _, a2, b2 in self.spans)]


def _read_passes(capture: CompileCapture, tree: _CompileTree, snapshots: list[Snapshot],
                 f: BackendFacts) -> dict[str, BackendPhase]:
    """Sort the compile line's events (:func:`read_compile`): the passes' times go on ``capture``; returns the
    backend phases by name."""
    def is_phase(name: str) -> bool:
        return "::" in name or name in f.backend_plain_events or name.startswith(f.phase_prefixes)

    changed = Counter((norm(s.pipeline), norm(s.pass_name)) for s in snapshots if s.changed)
    passes: dict[tuple[str, str], PassTime] = {}
    backend: dict[str, BackendPhase] = {}
    kinds: list[str] = []  # "span", "phase", "wrapper", "pass", "nested", "" (left out), per event
    for i, (name, start, dur) in enumerate(tree.events):
        par = tree.parent[i]
        par_kind = kinds[par] if par is not None else "compile"
        if tree.foreign[i] or par_kind in ("pass", "nested"):
            kind = "nested"
        elif tree.is_span(name):
            kind = "span"
        elif is_phase(name):
            kind = "phase"
            _add_phase(backend, name, dur, capture.compile_thread)
        elif any(s[0] == name and start <= s[1] <= start + dur for s in tree.spans):
            kind = "wrapper"
        elif par_kind != "span" or par is None:
            kind = ""
        else:
            kind = "pass"
            pipeline = tree.events[par][0][: -len(tree.suffix)]
            t = passes.setdefault((pipeline, name), PassTime(pipeline, name, 0.0, 0,
                                                             changed.get((norm(pipeline), norm(name)), 0), start))
            t.ms += dur / 1e6
            t.count += 1
        kinds.append(kind)
    capture.pass_times = sorted(passes.values(), key=lambda p: p.first_ns)
    return backend


def _read_codegen(capture: CompileCapture, backend: dict[str, BackendPhase], lines: list[tuple[str, list[Event]]],
                  tree: _CompileTree, f: BackendFacts, window: tuple[float, float]) -> None:
    """The codegen lines' events inside the compile (inside ``codegen_window_event`` where the row names one):
    backend phases of their thread, and the figures of the kernel compiles and the assembler (ptxas)."""
    windows = ([(e[1], e[1] + e[2]) for e in tree.events if e[0] == f.codegen_window_event]
               if f.codegen_window_event else [window])
    asm: list[tuple[float, float]] = []
    kernel_threads: set[str] = set()
    for name, events in lines:
        for ev_name, start, dur in events:
            if ev_name.startswith(_BOOKKEEPING) or not any(a <= start <= b for a, b in windows):
                continue
            _add_phase(backend, ev_name, dur, _thread_kind(name))
            if f.assembler_event and ev_name == f.assembler_event:
                asm.append((start, start + dur))
                capture.ptxas_ms += dur / 1e6
                capture.n_ptxas += 1
            if f.kernel_compile_event and ev_name == f.kernel_compile_event and f.codegen_window_event:
                capture.kernel_compile_ms += dur / 1e6
                capture.n_kernel_compiles += 1
                kernel_threads.add(name)
    capture.threads = len(kernel_threads)
    if f.codegen_window_event and any(e[0] == f.codegen_window_event for e in tree.events):
        capture.codegen_ms = sum(b - a for a, b in windows) / 1e6
        capture.ptxas_wall_ms = sum(_union_ms(asm, a, b) for a, b in windows)


def _read_figures(capture: CompileCapture, tree: _CompileTree, f: BackendFacts) -> None:
    """The compile line's figures: ``scheduling_event`` minus the top-level pipelines inside it, and the
    ``transforms_event`` spans."""
    top = tree.top_spans()
    for name, start, dur in tree.events:
        if f.scheduling_event and name == f.scheduling_event:
            inner = sum(b - a for a, b in top if start <= a and b <= start + dur)
            capture.scheduling_ms += (dur - inner) / 1e6
    transforms = [e for e in tree.events if f.transforms_event and e[0].startswith(f.transforms_event)]
    if transforms:
        capture.hlo_transforms_ms = sum(e[2] for e in transforms) / 1e6


def _read_autotune(capture: CompileCapture, data: Any, lines: list[tuple[str, list[Event]]],
                   tree: _CompileTree, f: BackendFacts) -> None:
    """The autotuning phase, where the row names an autotuning pipeline: its spans, the result loading, the
    candidates compiled and run on the codegen ``lines`` (:func:`_read_candidates`) and the device plane's events
    inside its spans."""
    if not f.autotune_pipeline:
        return
    windows = [(a, b) for name, a, b in tree.spans if name == f.autotune_pipeline]
    capture.autotune_load_ms = sum(e[2] for e in tree.events if e[0] in f.autotune_events) / 1e6
    if not windows:
        return
    capture.autotune_ms = sum(b - a for a, b in windows) / 1e6
    for _, events in lines:
        _read_candidates(capture, events, windows, f)
    for dev in data.planes if f.device_plane_prefix else []:
        if dev.name.startswith(f.device_plane_prefix):
            for e in (e for line in dev.lines for e in line.events):
                if any(a <= e.start_ns <= b for a, b in windows):
                    capture.device_events += 1
                    capture.device_ms += e.duration_ns / 1e6


def _read_candidates(capture: CompileCapture, events: list[Event], windows: list[tuple[float, float]],
                     f: BackendFacts) -> None:
    """Autotuning candidates on one compile-thread-pool line: ``autotune_candidate_event`` events inside the
    autotuning spans (the fusion: the module of a span ``"… (<fusion>)"`` inside the event) and executions
    ``"<fusion>:XLA GPU module"``."""
    inside = [e for e in events if any(a <= e[1] <= b for a, b in windows)]
    for name, start, dur in inside:
        if name == f.autotune_candidate_event:
            capture.n_candidate_compiles += 1
            capture.candidate_compile_ms += dur / 1e6
            fusion = next((m.group(2) for e in inside if start <= e[1] <= start + dur
                           and (m := _PIPELINE_SPAN.match(e[0])) and "::" not in e[0]), "")
            if fusion:
                row = capture.candidates.setdefault(fusion, [0, 0.0])
                row[0] += 1
                row[1] += dur / 1e6
        elif f.autotune_run_suffix and name.endswith(f.autotune_run_suffix):
            row = capture.runs.setdefault(name[: -len(f.autotune_run_suffix)], [0, 0.0])
            row[0] += 1
            row[1] += dur / 1e6


def _add_phase(backend: dict[str, BackendPhase], name: str, dur_ns: float, thread: str) -> None:
    phase = backend.setdefault(name, BackendPhase(name, 0.0, 0, thread))
    phase.ms += dur_ns / 1e6
    phase.count += 1
