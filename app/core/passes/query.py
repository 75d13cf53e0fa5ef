"""Questions asked of a recorded :class:`~app.core.passes.model.PassPipeline`: the pass list, the pipeline runs
and the compile time taken apart, here; a diff of two snapshots (:mod:`.diff`), search across snapshots and one
instruction's history (:mod:`.history`) and the final module's fusions (:mod:`.fusions`), re-exported here. Pure
Python over the recorded texts and figures (nothing is estimated: every ms is a profiler event's)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.core.backends import BACKENDS, CPU, BackendFacts
from app.core.inspect.text_index import hlo_instructions
from app.core.passes.diff import DiffHunk as DiffHunk
from app.core.passes.diff import DiffLine as DiffLine
from app.core.passes.diff import SnapshotDiff as SnapshotDiff
from app.core.passes.diff import diff_rows as diff_rows
from app.core.passes.diff import diff_snapshots as diff_snapshots
from app.core.passes.diff import previous_snapshot as previous_snapshot
from app.core.passes.fusions import FusionRow as FusionRow
from app.core.passes.fusions import fusion_table as fusion_table
from app.core.passes.history import HistoryEvent as HistoryEvent
from app.core.passes.history import InstructionHistory as InstructionHistory
from app.core.passes.history import SearchHit as SearchHit
from app.core.passes.history import first_appearance as first_appearance
from app.core.passes.history import instruction_history as instruction_history
from app.core.passes.history import search as search
from app.core.passes.model import CompileFigures, PassPipeline, Snapshot
from app.core.passes.names import norm
from app.core.units import source_label


# ------------------------------------------------------------------------------------------ pass list
def pass_rows(pipeline: PassPipeline) -> list[dict]:
    """One row per pass name and pipeline, in order of first run: ``pipeline``, ``pass``, ``index`` (dump
    index of its last snapshot, None when it never changed the module), ``changed`` (snapshots it wrote),
    ``ms`` (summed over ``runs``), and the module's ``n_instructions``, ``n_fusions``, ``fusion_kinds``
    after it (from that snapshot; None for passes that changed nothing)."""
    last: dict[tuple[str, str], Snapshot] = {}
    for s in pipeline.snapshots:
        if s.changed:
            last[(norm(s.pipeline), norm(s.pass_name))] = s
    rows = []
    for t in pipeline.pass_times:
        snap = last.get((norm(t.pipeline), norm(t.pass_name)))
        rows.append({
            "pipeline": t.pipeline, "pass": t.pass_name, "index": snap.index if snap else None,
            "changed": t.changed, "ms": round(t.ms, 4), "runs": t.count,
            "n_instructions": snap.n_instructions if snap else None,
            "n_fusions": snap.n_fusions if snap else None,
            "fusion_kinds": dict(snap.fusion_kinds) if snap else None,
        })
    return rows


# ------------------------------------------------------------------------------------------ breakdown
@dataclass
class Part:
    """One share of the compile: ``label``, ``ms``, ``group`` (``HLO passes``, ``backend``, ``other``) and
    ``source``: the profiler events it was computed from."""

    label: str
    ms: float
    group: str
    source: str


@dataclass
class CompileBreakdown:
    """``total_ms`` (the recording's ``compile()`` wall time; for opened dumps the capture's client compile)
    split into :class:`Part` s that add up to it; ``fusion_compile_ms`` / ``n_fusion_compiles``: the per-kernel
    compile events named ``kernel_compile_event`` (the backend row's: ``FusionCompiler::Compile`` on the CPU's
    codegen threads, ``CompileSingleModule`` on XLA:GPU's compile thread pool), summed: concurrent with the parts,
    so not one of them. ``ptxas_ms`` / ``n_ptxas``: the row's ``assembler_event`` (XLA:GPU's ``PTX->CUBIN``)
    summed the same way (0 without one)."""

    total_ms: float
    parts: list[Part]
    fusion_compile_ms: float
    n_fusion_compiles: int
    kernel_compile_event: str = ""
    ptxas_ms: float = 0.0
    n_ptxas: int = 0
    assembler_event: str = ""

    def by_group(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for p in self.parts:
            out[p.group] = out.get(p.group, 0.0) + p.ms
        return out


def _pipeline_parts(pipeline: PassPipeline, top: list) -> list[Part]:
    """One ``HLO passes: <pipeline>`` part per top-level pipeline name (its runs summed), in order of first run."""
    parts: list[Part] = []
    seen: dict[str, Part] = {}
    for p in top:
        label = f"HLO passes: {p.pipeline}"
        if label in seen:
            seen[label].ms += p.ms
        else:
            seen[label] = Part(label, p.ms, "HLO passes", f'"{p.pipeline} ({pipeline.module})" span')
            parts.append(seen[label])
    return parts


def _backend_parts(pipeline: PassPipeline, row: BackendFacts) -> list[Part]:
    """The parts inside the row's ``run_backend_event``: its ``breakdown_phases`` (the first event found of each),
    then the capture's figures (:class:`~app.core.passes.model.CompileFigures`) of the events it names:
    ``scheduling_event`` minus its pipelines, ``codegen_window_event`` while no ``assembler_event`` runs and
    while one does."""
    phase = {b.name: b.ms for b in pipeline.backend}
    parts = [Part(label, next((phase[n] for n in names if n in phase), 0.0), "backend", names[0])
             for label, names in row.breakdown_phases]
    figures = pipeline.extras.figures if pipeline.extras is not None else CompileFigures()
    if row.scheduling_event:
        parts.append(Part("scheduling", figures.scheduling_ms, "backend", f"{row.scheduling_event} minus its pipelines"))
    if row.codegen_window_event:
        codegen = figures.codegen_ms or 0.0
        ptxas = min(figures.ptxas_wall_ms or 0.0, codegen)
        parts.append(Part("codegen (LLVM IR, LLVM, PTX)", codegen - ptxas, "codegen",
                          f"{row.codegen_window_event} while no {row.assembler_event} runs"))
        if row.assembler_event:
            parts.append(Part("ptxas", ptxas, "ptxas", f"{row.codegen_window_event} while a {row.assembler_event} runs"))
    return parts


def compile_breakdown(pipeline: PassPipeline) -> CompileBreakdown:
    """The recording's compile time taken apart from its profiler events, by the names of its backend's row
    (:mod:`app.core.backends`; every ms a profiler event's, wall time on the compiling thread unless said):

    - ``HLO passes: <pipeline>``: each top-level pipeline span (``"<pipeline> (<module>)"``) but the autotuner's,
      those before the backend and those inside it (``HLO passes after scheduling``, XLA:GPU's post-scheduling);
    - ``autotune``: the row's autotuning pipeline span (XLA:GPU's ``"config-assigner (<module>)"``: compiling
      candidate configs on the thread pool and timing them on the GPU) plus its ``autotune_events``;
    - the backend's parts (:func:`_backend_parts`): on the CPU ``thunk emission``
      (``ThunkEmitter::EmitEntryComputation``) and ``LLVM`` (``JitCompiler::Compile``, the ``Codegen`` span); on
      XLA:GPU ``scheduling`` (``ScheduleGpuModule`` minus its pipelines), ``codegen`` (``CompileModuleToLlvmIr``
      while no ``PTX->CUBIN`` runs: LLVM IR emission, LLVM, PTX) and ``ptxas`` (while one runs on the pool);
    - ``other backend``: the rest of the row's ``run_backend_event`` (``CpuCompiler::RunBackend``,
      ``CompileToBackendResult``: buffer assignment, scheduling, …);
    - ``other XLA``: the rest of the client compile (``client_compile_events``: ``CompileCpuExecutable``,
      ``PjRtCApiClient::CompileAndLoad``: program serialization, invariant checkers, command-buffer conversion, …);
    - ``outside XLA``: the compile call's wall time minus the client compile (JAX's Python side, dump writing; 0
      for opened dumps).

    The recording compiles with dumps on, so its times run somewhat above a plain first call's compile; trace and
    lower happen before the compile and are not in its capture. One opened without a capture has no parts."""
    row = BACKENDS.get(pipeline.platform, CPU)
    if not pipeline.has_capture:
        return CompileBreakdown(pipeline.compile_ms, [], 0.0, 0, row.kernel_compile_event,
                                assembler_event=row.assembler_event)
    phase = {b.name: b for b in pipeline.backend}
    top = [p for p in pipeline.pipelines if p.depth == 0]
    parts = _pipeline_parts(pipeline, [p for p in top if p.pipeline != row.autotune_pipeline])
    if row.autotune_pipeline:
        tuned = pipeline.extras.autotune if pipeline.extras is not None else None
        autotune = tuned.ms if tuned is not None else None
        parts.append(Part("autotune", autotune or 0.0, "autotune",
                          f'"{row.autotune_pipeline} ({pipeline.module})" span + {" + ".join(row.autotune_events)}'))
    inside = _backend_parts(pipeline, row)
    run_backend = phase[row.run_backend_event].ms if row.run_backend_event in phase else 0.0
    in_backend = sum(p.ms for p in top if p.in_backend) + sum(p.ms for p in inside)
    parts += [*inside, Part("other backend", max(run_backend - in_backend, 0.0), "backend",
                            f"{row.run_backend_event} minus the above")]
    client = pipeline.client_compile_ms or 0.0
    client_events = " / ".join(row.client_compile_events)
    parts += [
        Part("other XLA", max(client - sum(p.ms for p in parts), 0.0), "other", f"{client_events} minus the above"),
        Part("outside XLA", max(pipeline.compile_ms - client, 0.0), "other", f"compile() wall time minus {client_events}"),
    ]
    kernels, asm = phase.get(row.kernel_compile_event), phase.get(row.assembler_event)
    return CompileBreakdown(pipeline.compile_ms, parts, kernels.ms if kernels else 0.0, kernels.count if kernels else 0,
                            row.kernel_compile_event, asm.ms if asm else 0.0, asm.count if asm else 0,
                            row.assembler_event)


#: The field of a :func:`pipeline_rows` row counting the passes timed in the pipeline.
PASS_COUNT_FIELD = "passes"


def pipeline_rows(pipeline: PassPipeline) -> list[dict]:
    """One row per top-level pipeline run, in order: ``pipeline``, ``ms`` (its span), ``runs`` (spans of that
    name merged), ``passes`` (pass names timed in it, nested pipelines' included), ``in_backend`` and
    ``autotune`` (the backend row's autotuning pipeline, :mod:`app.core.backends`)."""
    rows: dict[str, dict] = {}
    tops = [p for p in pipeline.pipelines if p.depth == 0]
    tuner = BACKENDS.get(pipeline.platform, CPU).autotune_pipeline
    for p in tops:
        row = rows.setdefault(p.pipeline, {"pipeline": p.pipeline, "ms": 0.0, "runs": 0, PASS_COUNT_FIELD: 0,
                                           "in_backend": p.in_backend, "autotune": p.pipeline == tuner})
        row["ms"] += p.ms
        row["runs"] += 1
    nested: dict[str, str] = {}
    for p in pipeline.pipelines:  # a nested pipeline's passes count for the top-level pipeline it ran in
        if p.depth:
            outer = [t for t in tops if t.start_ns <= p.start_ns <= t.start_ns + t.ms * 1e6]
            if outer:
                nested[p.pipeline] = outer[-1].pipeline
    for t in pipeline.pass_times:
        name = t.pipeline if t.pipeline in rows else nested.get(t.pipeline)
        if name in rows:
            rows[name][PASS_COUNT_FIELD] += 1
    for row in rows.values():
        row["ms"] = round(row["ms"], 4)
    return list(rows.values())


def source_of_line(pipeline: PassPipeline, snapshot: int, line: str) -> tuple[str, str]:
    """``(instruction, "file:line")`` of the HLO instruction defined on ``line`` of snapshot ``snapshot`` (its
    own source metadata, else that of an instruction fused into it); ``("", "")`` when the line defines none,
    ``(name, "")`` when no metadata names a source line."""
    m = re.match(r"\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=", line)
    if m is None:
        return "", ""
    name = m.group(1)
    instructions = hlo_instructions(pipeline.snapshot(snapshot).text)
    hit = next((i for i in instructions if i.name == name and i.file), None) or next(
        (i for i in instructions if i.fusion == name and i.file), None)
    return name, source_label(hit.file, hit.line) if hit is not None else ""


def find_first(pipeline: PassPipeline, text: str) -> tuple[SearchHit | None, bool, int]:
    """Where ``text`` first appears: ``(hit, defined, n)`` — the first snapshot defining an instruction of
    that name (``defined``), else the first line containing it; ``n``: how many snapshots contain it."""
    hit = first_appearance(pipeline, text.lstrip("%"))
    hits = search(pipeline, text, first_only=True)
    defined = hit is not None
    if hit is None:
        hit = hits[0] if hits else None
    return hit, defined, len(hits)
