"""Questions asked of a recorded :class:`~app.core.passes.model.PassPipeline`: the pass list, a diff of two
snapshots, search across snapshots, one instruction's history, and the compile time taken apart. Pure
Python over the recorded texts and figures (nothing is estimated: every ms is a profiler event's)."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

from app.core.backends import BACKENDS, CPU, BackendFacts
from app.core.inspect.text_index import HLO_INSTRUCTION, HLO_KIND, hlo_instructions
from app.core.passes.model import CompileFigures, PassPipeline, Snapshot
from app.core.passes.parse import norm


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


# ----------------------------------------------------------------------------------------------- diff
@dataclass
class DiffLine:
    """``tag``: ``" "`` unchanged, ``"-"`` only in the older text, ``"+"`` only in the newer; ``old`` / ``new``:
    1-based line numbers in each text (None on the side the line is not in)."""

    tag: str
    old: int | None
    new: int | None
    text: str


@dataclass
class DiffHunk:
    """A changed region with ``context`` unchanged lines around it; ``folded_before``: unchanged lines
    between the previous hunk (or the start) and this one, hidden."""

    old_start: int
    old_len: int
    new_start: int
    new_len: int
    lines: list[DiffLine]
    folded_before: int

    @property
    def header(self) -> str:
        return f"@@ -{self.old_start},{self.old_len} +{self.new_start},{self.new_len} @@"


@dataclass
class SnapshotDiff:
    """Diff of ``old`` → ``new`` (snapshot labels): hunks, added/removed line counts, ``folded_after``
    (unchanged lines after the last hunk)."""

    old: str
    new: str
    hunks: list[DiffHunk]
    added: int
    removed: int
    folded_after: int = 0

    def unified(self) -> str:
        """The diff as unified-diff text (``difflib.unified_diff`` layout)."""
        out = [f"--- {self.old}", f"+++ {self.new}"]
        for h in self.hunks:
            out.append(h.header)
            out.extend(f"{ln.tag}{ln.text}" for ln in h.lines)
        return "\n".join(out) + "\n"


def diff_snapshots(old: Snapshot, new: Snapshot, context: int = 3) -> SnapshotDiff:
    """Line diff of two snapshots' HLO texts (``difflib.SequenceMatcher``, grouped with ``context`` lines)."""
    a, b = old.text.splitlines(), new.text.splitlines()
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    hunks: list[DiffHunk] = []
    added = removed = 0
    shown_to = 0  # old lines up to here are shown or folded already
    for group in matcher.get_grouped_opcodes(context):
        i1, j1 = group[0][1], group[0][3]
        i2, j2 = group[-1][2], group[-1][4]
        lines: list[DiffLine] = []
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                lines += [DiffLine(" ", a1 + k + 1, b1 + k + 1, a[a1 + k]) for k in range(a2 - a1)]
                continue
            if tag in ("replace", "delete"):
                lines += [DiffLine("-", k + 1, None, a[k]) for k in range(a1, a2)]
                removed += a2 - a1
            if tag in ("replace", "insert"):
                lines += [DiffLine("+", None, k + 1, b[k]) for k in range(b1, b2)]
                added += b2 - b1
        hunks.append(DiffHunk(i1 + 1, i2 - i1, j1 + 1, j2 - j1, lines, i1 - shown_to))
        shown_to = i2
    return SnapshotDiff(old.label, new.label, hunks, added, removed, len(a) - shown_to if hunks else len(a))


def previous_snapshot(pipeline: PassPipeline, snapshot: Snapshot) -> Snapshot | None:
    """The snapshot before ``snapshot`` in :meth:`PassPipeline.all_snapshots` order (None for the first)."""
    snaps = pipeline.all_snapshots()
    for i, s in enumerate(snaps):
        if s is snapshot:
            return snaps[i - 1] if i > 0 else None
    return None


# --------------------------------------------------------------------------------------------- search
@dataclass
class SearchHit:
    """``snapshot`` (dump index), its label, the 1-based ``line`` and its text."""

    snapshot: int
    label: str
    line: int
    text: str


def search(pipeline: PassPipeline, text: str, *, regex: bool = False, first_only: bool = True) -> list[SearchHit]:
    """Lines containing ``text`` (a substring, or a regular expression with ``regex``) in every snapshot,
    in pipeline order; with ``first_only`` one hit per snapshot (its first line). Raises ``re.error`` for a
    bad expression."""
    pattern = re.compile(text) if regex else None
    hits = []
    for s in pipeline.all_snapshots():
        for i, line in enumerate(s.text.splitlines()):
            if (pattern.search(line) if pattern else text in line):
                hits.append(SearchHit(s.index, s.label, i + 1, line))
                if first_only:
                    break
    return hits


def _definition(text: str, name: str) -> tuple[int, str] | None:
    define = re.compile(rf"^\s+(?:ROOT )?%?{re.escape(name)} = ")
    for i, line in enumerate(text.splitlines()):
        if define.match(line):
            return i + 1, line
    return None


def first_appearance(pipeline: PassPipeline, name: str) -> SearchHit | None:
    """Where instruction ``name`` (``fusion.12``, ``ynn_fusion.3``) is first defined: the first snapshot
    whose text has a line ``%name = …``, and that line; None when no snapshot defines it."""
    for s in pipeline.all_snapshots():
        if found := _definition(s.text, name):
            return SearchHit(s.index, s.label, found[0], found[1])
    return None


# -------------------------------------------------------------------------------------------- history
@dataclass
class HistoryEvent:
    """What happened to an instruction at snapshot ``snapshot`` (its label; ``pass_name`` the pass that
    wrote it): ``what`` is ``created``, ``opcode`` (changed), ``moved`` (into another computation, e.g. a
    fused computation: ``detail`` names the computation and the fusion that calls it) or ``removed``."""

    snapshot: int
    label: str
    pass_name: str
    what: str
    detail: str = ""


@dataclass
class InstructionHistory:
    """An instruction's path through the pipeline; ``decisions``: fusion log entries naming it as producer
    or consumer (empty without a fusion log)."""

    name: str
    events: list[HistoryEvent]
    decisions: list = field(default_factory=list)

    @property
    def created_by(self) -> HistoryEvent | None:
        return next((e for e in self.events if e.what == "created"), None)


def _locate(text: str, name: str) -> tuple[str, str] | None:
    """(opcode, computation) of instruction ``name`` in a module text, or None."""
    lines = text.splitlines()
    define = re.compile(rf"^\s+(?:ROOT )?%?{re.escape(name)} = ")
    for i, line in enumerate(lines):
        if define.match(line):
            m = HLO_INSTRUCTION.match(line)
            comp = ""
            for j in range(i - 1, -1, -1):
                if lines[j] and not lines[j][0].isspace() and lines[j].rstrip().endswith("{"):
                    comp = lines[j].split(" ", 1)[0] if not lines[j].startswith("ENTRY") else "ENTRY"
                    break
            return (m.group(3) if m else ""), comp.lstrip("%")
    return None


def _caller(text: str, computation: str) -> str:
    m = re.search(rf"^\s+(?:ROOT )?%?([\w.\-]+) = .*\bcalls=%?{re.escape(computation)}\b", text, re.M)
    return m.group(1) if m else ""


def instruction_history(pipeline: PassPipeline, name: str) -> InstructionHistory:
    """Each snapshot where instruction ``name`` appears, changes opcode, moves to another computation (a
    fusion absorbing it) or disappears, with the pass that wrote that snapshot; and the fusion decisions
    about it."""
    events: list[HistoryEvent] = []
    prev: tuple[str, str] | None = None
    for s in pipeline.all_snapshots():
        if name not in s.text:
            now = None
        else:
            now = _locate(s.text, name)
        if now and not prev:
            events.append(HistoryEvent(s.index, s.label, s.pass_name, "created", f"{now[0]} in {now[1]}"))
        elif prev and not now:
            events.append(HistoryEvent(s.index, s.label, s.pass_name, "removed"))
        elif prev and now and now[0] != prev[0]:
            events.append(HistoryEvent(s.index, s.label, s.pass_name, "opcode", f"{prev[0]} → {now[0]}"))
        if prev and now and now[1] != prev[1]:
            caller = _caller(s.text, now[1])
            events.append(HistoryEvent(s.index, s.label, s.pass_name, "moved",
                                       f"into {now[1]}" + (f" (called by {caller})" if caller else "")))
        prev = now
    decisions = [d for d in pipeline.fusion_log if name in (d.producer, d.consumer, d.fusion)]
    return InstructionHistory(name, events, decisions)


# ------------------------------------------------------------------------------------------- fusions
@dataclass
class FusionRow:
    """One fusion instruction of the final module: ``name``, ``kind`` (``kLoop``, ``kCustom``, …),
    ``created_in`` / ``created_by``: the label and pass of the first snapshot defining it (None if only the
    final module does), ``absorbed``: ``(name, opcode, "file:line")`` of the instructions of its fused
    computation (parameters left out; source from their metadata), ``source``: the fusion instruction's own
    ``"file:line"`` ("" when XLA left it no metadata, as for some ``fusion-wrapper`` fusions), ``decisions``: the fusion log's
    entries that went into it or were refused by it, ``has_llvm_ir``: its kernel's IR was dumped (LLVM IR on
    the CPU, PTX on XLA:GPU). XLA:GPU only: ``config``: its backend config (``"__triton_nested_gemm_fusion: tile
    64x16, 4 warps, 1 stage, 1 CTA"``, from the optimized module), ``autotuned``: the autotuner set or tried it."""

    name: str
    kind: str
    created_in: str | None
    created_by: str | None
    absorbed: list[tuple[str, str, str]]
    source: str
    decisions: list
    has_llvm_ir: bool
    config: str = ""
    autotuned: bool = False


def fusion_table(pipeline: PassPipeline) -> list[FusionRow]:
    """Every fusion of the final module, in text order, with where it came from (see :class:`FusionRow`).
    Empty when the recording has no final module."""
    if pipeline.final is None:
        return []
    text = pipeline.final.text
    instructions = hlo_instructions(text)
    inside: dict[str, list[tuple[str, str, str]]] = {}

    def where(ins) -> str:
        return f"{ins.file.rsplit('/', 1)[-1]}:{ins.line}" if ins.file else ""

    for ins in instructions:
        if ins.fusion and ins.opcode != "parameter":
            inside.setdefault(ins.fusion, []).append((ins.name, ins.opcode, where(ins)))
    lines = text.splitlines()
    rows = []
    for ins in instructions:
        if ins.opcode != "fusion":
            continue
        kind = m.group(1) if (m := HLO_KIND.search(lines[ins.text_line - 1])) else ""
        first = first_appearance(pipeline, ins.name)
        created = None if first is None or first.snapshot == pipeline.final.index else first
        by = pipeline.snapshot(created.snapshot).pass_name if created else None
        decisions = [d for d in pipeline.fusion_log if ins.name in (d.fusion, d.consumer)]
        row = FusionRow(ins.name, kind, created.label if created else None, by, inside.get(ins.name, []),
                        where(ins), decisions, ins.name in pipeline.fusion_ir)
        if pipeline.gpu is not None:
            k, summary = pipeline.gpu.final_configs.get(ins.name, ("", ""))
            row.config = f"{k}: {summary}" if summary else k
            row.autotuned = any(c.fusion == ins.name for c in pipeline.gpu.autotune.choices)
            row.has_llvm_ir = ins.name in pipeline.fusion_ir or ins.name.replace(".", "_") in pipeline.fusion_ir
        rows.append(row)
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
    figures = pipeline.gpu or CompileFigures()
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
        autotune = pipeline.gpu.autotune.ms if pipeline.gpu is not None else None
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


def pipeline_rows(pipeline: PassPipeline) -> list[dict]:
    """One row per top-level pipeline run, in order: ``pipeline``, ``ms`` (its span), ``runs`` (spans of that
    name merged), ``passes`` (pass names timed in it, nested pipelines' included), ``in_backend`` and
    ``autotune`` (the backend row's autotuning pipeline, :mod:`app.core.backends`)."""
    rows: dict[str, dict] = {}
    tops = [p for p in pipeline.pipelines if p.depth == 0]
    tuner = BACKENDS.get(pipeline.platform, CPU).autotune_pipeline
    for p in tops:
        row = rows.setdefault(p.pipeline, {"pipeline": p.pipeline, "ms": 0.0, "runs": 0, "passes": 0,
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
            rows[name]["passes"] += 1
    for row in rows.values():
        row["ms"] = round(row["ms"], 4)
    return list(rows.values())
