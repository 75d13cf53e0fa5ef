"""What a recorded pass pipeline holds: plain data, no JAX import (safe to send to another thread).

Where each fact comes from (jax 0.10.2 / the XLA in jaxlib 0.10.2, CPU):

- :class:`Snapshot`: one file that ``--xla_dump_hlo_pass_re=.*`` wrote (``xla/service/dump.cc``,
  ``DumpHloModuleBetweenPassesIfEnabled``): XLA dumps the module after a pass only when the pass reported a
  change, plus once at each pipeline's start (``after_pipeline-start``).
- :class:`PassTime`: the profiler's ``TraceMe`` events of ``HloPassPipeline::RunPassesInternal``
  (``xla/hlo/pass/hlo_pass_pipeline.cc``): one event per pass run, named like the pass, changed or not;
  one span per pipeline run named ``"<pipeline> (<module>)"``.
- :class:`BackendPhase`: the CPU backend's events (``xla/service/cpu/cpu_compiler.cc``:
  ``CpuCompiler::RunBackend``, ``ThunkEmitter::EmitEntryComputation``, ``Codegen`` / ``JitCompiler::Compile``;
  ``FusionCompiler::Compile`` per fusion on ``xla-cpu-codegen`` threads).
- :class:`FusionDecision`: XLA's log with ``TF_CPP_VMODULE=cpu_instruction_fusion=2,instruction_fusion=2``
  (``xla/service/instruction_fusion.cc``, ``xla/service/cpu/cpu_instruction_fusion.cc``).

All times are milliseconds of wall clock on the thread that ran them.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from functools import cached_property
from typing import Protocol

from app.core.backends import CPU


@dataclass
class Snapshot:
    """The module after one pass that changed it (or at a pipeline's start).

    ``index``: position in the dump order (XLA's 4-digit counter ``SSSS`` in
    ``module_NNNN.<module>.SSSS.<pipeline>.after_<pass>.before_<next>.txt``); ``pipeline`` with spaces
    (``HLO passes after layout assignment``); ``pass_name``: the pass that ran before the dump
    (``pipeline-start`` for a pipeline's first snapshot); ``next_pass``: the pass that runs next ("" when
    the file name does not say). ``file``: the dump file's name. ``n_instructions`` and ``fusion_kinds``
    (``{"kLoop": 2, "kCustom": 3}``) are counted with :func:`app.core.inspect.text_index.count_hlo`'s pattern;
    ``custom_calls``: targets of ``custom-call`` instructions in order of appearance. ``size``: bytes of the
    uncompressed text. The text itself is kept zlib-compressed and decompressed on first use of :attr:`text`.
    """

    index: int
    pipeline: str
    pass_name: str
    next_pass: str
    file: str
    n_instructions: int
    fusion_kinds: dict[str, int]
    custom_calls: list[str]
    size: int
    compressed: bytes = field(repr=False)

    @property
    def n_fusions(self) -> int:
        return sum(self.fusion_kinds.values())

    @property
    def changed(self) -> bool:
        """True for a pass's own snapshot; False for a pipeline-start snapshot (no pass ran yet)."""
        return self.pass_name != "pipeline-start"

    @cached_property
    def text(self) -> str:
        return zlib.decompress(self.compressed).decode("utf-8")

    @property
    def label(self) -> str:
        return f"{self.index:04d} {self.pipeline} / {self.pass_name}"

    def summary(self) -> dict:
        return {"index": self.index, "pipeline": self.pipeline, "pass": self.pass_name, "next": self.next_pass,
                "changed": self.changed, "n_instructions": self.n_instructions, "n_fusions": self.n_fusions,
                "fusion_kinds": dict(self.fusion_kinds), "custom_calls": len(self.custom_calls),
                "bytes": self.size, "file": self.file}


@dataclass
class PassTime:
    """Compile time of one HLO pass name inside one pipeline, summed over its runs (``count``: how many runs
    the profiler recorded; a fixpoint pipeline such as ``simplification`` runs ``algsimp`` several times).
    ``changed``: how many snapshots that pass wrote in that pipeline (0 = it never changed the module).
    ``first_ns``: start of its first run (profiler clock), for ordering."""

    pipeline: str
    pass_name: str
    ms: float
    count: int
    changed: int
    first_ns: float

    def summary(self) -> dict:
        return {"pipeline": self.pipeline, "pass": self.pass_name, "ms": round(self.ms, 4), "count": self.count,
                "changed": self.changed}


@dataclass
class PipelineTime:
    """One pipeline run (``"simplification (jit_f)"`` span): ``depth`` 0 for a top-level pipeline, 1 for one
    nested in another (``simplification`` inside ``HLO passes through layout assignment``); ``in_backend``:
    it ran inside ``CpuCompiler::RunBackend`` (``HLO passes after scheduling``)."""

    pipeline: str
    ms: float
    depth: int
    start_ns: float
    in_backend: bool = False


@dataclass
class BackendPhase:
    """A backend event summed by name: ``ms`` total over ``count`` events, ``thread`` the profiler line kind
    (``PjRtCompilerThreadPool`` or ``xla-cpu-codegen``; codegen threads run concurrently, so their sums can
    exceed the wall time of their parent)."""

    name: str
    ms: float
    count: int
    thread: str


@dataclass
class FusionIR:
    """One fusion kernel's LLVM IR files (``<kernel>_kernel_module.ir-no-opt.ll`` / ``.ir-with-opt.ll``,
    written by XLA's CPU backend with ``xla_dump_to``), compressed like snapshot texts."""

    kernel: str
    before_opt: bytes | None = field(default=None, repr=False)
    after_opt: bytes | None = field(default=None, repr=False)

    def text(self, optimized: bool = True) -> str | None:
        raw = self.after_opt if optimized else self.before_opt
        return zlib.decompress(raw).decode("utf-8", "replace") if raw is not None else None


@dataclass
class FusionDecision:
    """One "Evaluating fusion: producer 'P' into consumer 'C'" of XLA's fusion log and what followed it.

    ``fused``: a "Fusing %P … into %C" line followed; ``reason``: the reason lines logged in between
    ("Fusing: consumer is elementwise or fusible.", "Producer is not loop-fusible.", joined by "; "; empty
    when XLA logged none, e.g. a refusal of a ``tuple`` consumer decided before the CPU fusion's checks);
    ``fusion``: the fusion the producer went into (the new fusion's name from "created new fusion: %name",
    or the consumer when it already was a fusion), ``kind`` its ``kind=k…`` when logged; ``order``: position
    in the log."""

    order: int
    producer: str
    consumer: str
    fused: bool
    reason: str
    fusion: str = ""
    kind: str = ""

    def summary(self) -> dict:
        return {"order": self.order, "producer": self.producer, "consumer": self.consumer, "fused": self.fused,
                "reason": self.reason, "fusion": self.fusion, "kind": self.kind}


@dataclass
class Thunk:
    """One line of XLA:GPU's thunk sequence dump (``<module>.thunk_sequence.txt``, and
    ``thunk_sequence_after_thunk_passes.txt`` where the command-buffer pass has wrapped kernels in a
    ``kCommandBuffer``, a CUDA graph): ``index`` (the dump's 3-digit number), ``kind`` (``kCustomKernel``,
    ``kCommandBuffer``, ``kGemm``, …), ``name`` (the kernel, an HLO instruction with ``.N`` written ``_N``; "" for a
    command buffer), ``depth`` (0 at top level, 1 inside a command buffer), ``grid`` / ``threads`` (``"32,1,1"``;
    "" when not a kernel launch), ``shared_memory`` (bytes), ``detail``: the rest of the line."""

    index: int
    kind: str
    name: str
    depth: int
    grid: str = ""
    threads: str = ""
    shared_memory: int = 0
    detail: str = ""

    def summary(self) -> dict:
        return {"index": self.index, "kind": self.kind, "name": self.name, "depth": self.depth, "grid": self.grid,
                "threads": self.threads, "shared_memory": self.shared_memory}


@dataclass
class AutotuneChoice:
    """A fusion (or custom call) whose backend config the autotuning pipeline set: ``before`` its kind before
    (``__triton_gemm``, from ``before_config_assignment.txt``; "" when it had none), ``kind`` and ``config`` after
    (from the optimized module's ``backend_config``: ``__triton_nested_gemm_fusion`` with ``"tile 64x16, 4 warps,
    1 stage, 1 CTA"``; a cuBLAS call's ``selected_algorithm``). ``candidates``: candidate compiles of this fusion
    the capture holds (``CompileToBackendResult`` on the compile thread pool with a span of module ``<fusion>``),
    ``compile_ms`` their summed time (concurrent, on several threads); ``runs`` / ``run_ms``: executions of
    the candidates (``"<fusion>:XLA GPU module"`` events) and their summed host time."""

    fusion: str
    before: str
    kind: str
    config: str
    candidates: int = 0
    compile_ms: float = 0.0
    runs: int = 0
    run_ms: float = 0.0

    def summary(self) -> dict:
        return {"fusion": self.fusion, "before": self.before, "kind": self.kind, "config": self.config,
                "candidates": self.candidates, "compile_ms": round(self.compile_ms, 3), "runs": self.runs,
                "run_ms": round(self.run_ms, 3)}


@dataclass
class Autotune:
    """XLA:GPU's autotuning as its own phase. ``ms``: wall time of the autotuning pipeline's span(s)
    (``"config-assigner (<module>)"``) plus ``load_ms`` (``LoadAutotuneResultsFromFile``), on the compiling
    thread (None without a capture). ``choices``: what was tuned and what was chosen (:class:`AutotuneChoice`;
    empty when no config changed). ``n_candidate_compiles`` / ``candidate_compile_ms``: every candidate compile
    inside the span (summed over the thread pool, concurrent); ``device_events`` / ``device_ms``: events on the
    device plane inside the span (the candidates' kernels, redzone checks, copies) and their summed time.
    ``results_file``: the dump's ``autotune_results.pbtxt`` name ("" if absent); ``results``: its entries, one
    dict per ``results { … }`` block (``{"hlo": …, "result": "gemm { algorithm: 13 }"}``), empty for a file with
    only ``version: 3``."""

    ms: float | None
    load_ms: float = 0.0
    choices: list[AutotuneChoice] = field(default_factory=list)
    n_candidate_compiles: int = 0
    candidate_compile_ms: float = 0.0
    device_events: int = 0
    device_ms: float = 0.0
    results_file: str = ""
    results: list[dict] = field(default_factory=list)
    pipeline: str = "config-assigner"

    def summary(self) -> dict:
        return {"pipeline": self.pipeline, "ms": None if self.ms is None else round(self.ms, 3),
                "load_ms": round(self.load_ms, 3), "choices": [c.summary() for c in self.choices],
                "candidate_compiles": self.n_candidate_compiles,
                "candidate_compile_ms": round(self.candidate_compile_ms, 3), "device_events": self.device_events,
                "device_ms": round(self.device_ms, 3), "results_file": self.results_file,
                "results": list(self.results)}


@dataclass
class CompileFigures:
    """What a capture says of a compile beyond its pass and phase times, by the backend row's event names (all ms;
    zero / None where the row names no such event or there is no capture): ``hlo_transforms_ms``
    (``transforms_event``: ``HLO Transforms:<module>``), ``codegen_ms`` (``codegen_window_event``:
    ``CompileModuleToLlvmIr``, wall), ``ptxas_wall_ms`` (wall time inside it during which at least one
    ``assembler_event``, ``PTX->CUBIN``, ran on the compile thread pool), ``ptxas_ms`` / ``n_ptxas`` (those events
    summed, in parallel), ``kernel_compile_ms`` / ``n_kernel_compiles`` (``kernel_compile_event``:
    ``CompileSingleModule``, LLVM → PTX → cubin of one kernel module, summed), ``threads``: how many thread-pool
    lines ran them, ``scheduling_ms``: ``scheduling_event`` (``ScheduleGpuModule``) minus the pipelines inside it."""

    hlo_transforms_ms: float | None = None
    codegen_ms: float | None = None
    ptxas_wall_ms: float | None = None
    ptxas_ms: float = 0.0
    n_ptxas: int = 0
    kernel_compile_ms: float = 0.0
    n_kernel_compiles: int = 0
    threads: int = 0
    scheduling_ms: float = 0.0


class BackendCompileFacts(Protocol):
    """The backend-neutral slot :attr:`PassPipeline.extras`: what the files and capture events only one backend
    writes add to a recording, filled by the reader module its backend row names
    (:attr:`app.core.backends.BackendFacts.dump_parser`: ``read_extras(…)`` returns one, ``apply_capture(…)``
    puts a capture's figures on it). Consumers ask it for what it has, never which backend made it: the compile
    split (``figures``, ``autotune``), the fusion table (``fusion_facts``), ``passes --autotune`` / ``--thunks``,
    the passes report's text and JSON lines (``report_text``, ``report_json``) and the Passes tab's page
    (``title``, ``page_text``). XLA:GPU's is :class:`app.core.passes.gpu_text.GpuCompile`."""

    @property
    def title(self) -> str:
        """The name of its page in the Passes tab (``"XLA:GPU"``)."""
        ...

    @property
    def figures(self) -> CompileFigures:
        """The capture's figures the compile split reads (zero / None where there is no capture)."""
        ...

    @property
    def autotune(self) -> Autotune | None:
        """The autotuning phase; None: this backend does not autotune."""
        ...

    @property
    def thunk_sequence(self) -> list[Thunk]:
        """The thunk sequence after the thunk passes, else as emitted; empty when none was dumped."""
        ...

    def fusion_facts(self, fusion: str, fusion_ir: dict[str, FusionIR]) -> tuple[str, bool, bool]:
        """``(config, autotuned, has kernel IR)`` of one fusion of the final module (:class:`FusionRow
        <app.core.passes.fusions.FusionRow>`'s backend columns): its tuned backend config ("" for none), whether
        the autotuner set or tried it, whether ``fusion_ir`` holds its kernel's IR."""
        ...

    def report_text(self, pipeline: PassPipeline) -> str:
        """Its part of the ``passes`` text report, after the snapshots ("": nothing; else starting with a newline
        and ending with one)."""
        ...

    def report_json(self, pipeline: PassPipeline) -> list[dict]:
        """Its JSON-lines events of the ``passes --json`` report (each with an ``"event"`` key; a ``"kernel_ir"``
        one stands for the report's own)."""
        ...

    def page_text(self, pipeline: PassPipeline) -> str:
        """Its page in the Passes tab, plain text ("": no page)."""
        ...


#: :attr:`PassPipeline.kernel_ir` of a recording whose compile dumped each kernel's IR.
KERNEL_IR_DUMPED = "dumped"
#: :attr:`PassPipeline.kernel_ir` of a recording that did not ask for it.
KERNEL_IR_NOT_REQUESTED = "not requested"


@dataclass
class PassPipeline:
    """Everything one recording gathered about one compile.

    ``module``: the HLO module name (``jit_step``). ``snapshots`` in dump order; ``before`` the module before
    optimizations and ``final`` the optimized module (``cpu_after_optimizations.txt``), both as snapshots
    with ``index`` −1 and len(snapshots). ``pass_times``: every pass name per pipeline with its summed time
    (ordered by first run); ``pipelines``: every pipeline run. ``backend``: backend phases by name.
    ``compile_ms``: wall time of the recording's ``compile()`` call (perf_counter around it, in the process
    that compiled); ``client_compile_ms``: the row's client compile event (XLA's whole compile).
    ``fusion_ir``: per fusion kernel its LLVM IR. ``kernel_ir``: what happened to the kernels' IR, one line:
    :data:`KERNEL_IR_DUMPED`, :data:`KERNEL_IR_NOT_REQUESTED`, "" (not said: opened from a dump folder or a
    session file, or a backend row without kernel-IR options: XLA:GPU counts its ``.ptx`` files in ``extras``) or
    a note saying why it is not in this recording (the kernel-IR compile's child process died, a step on a
    device mesh; :func:`kernel_ir_lost`). ``fusion_log``: parsed decisions (empty unless recorded with
    ``fusion_log=True``); ``log_lines``: how many log lines were read. ``in_child``: the compile ran in a child
    process with the fusion log (from the StableHLO text; a kernel-IR compile also runs in a child,
    :mod:`app.core.passes.record`, but logs nothing and leaves this False). ``dump_bytes``: size of every dump
    file read.
    ``compiler_options``: the extra XLA options the recording compiled with (``--xla-flags``; {} for none).
    ``platform``: the backend row's platform (:mod:`app.core.backends`: ``"cpu"``, ``"gpu"``), told from the dump
    folder's file names. ``extras``: what the backend's own dumps and capture events add
    (:class:`BackendCompileFacts`; None when its row names no reader module, as on the CPU). ``source``: the folder
    the pipeline was opened from (``passes --dumps``; "" when recorded in this process), ``has_capture``: a profiler
    capture of the compile was read (without one there are snapshots but no times).
    """

    module: str
    snapshots: list[Snapshot]
    before: Snapshot | None
    final: Snapshot | None
    pass_times: list[PassTime]
    pipelines: list[PipelineTime]
    backend: list[BackendPhase]
    compile_ms: float
    client_compile_ms: float | None
    fusion_ir: dict[str, FusionIR] = field(default_factory=dict)
    kernel_ir: str = ""
    fusion_log: list[FusionDecision] = field(default_factory=list)
    log_lines: int = 0
    in_child: bool = False
    dump_bytes: int = 0
    compiler_options: dict = field(default_factory=dict)
    platform: str = CPU.platform
    extras: BackendCompileFacts | None = None
    source: str = ""
    has_capture: bool = True

    def all_snapshots(self) -> list[Snapshot]:
        """``before``, the per-pass snapshots, then ``final`` (those present)."""
        out = [self.before] if self.before else []
        return out + self.snapshots + ([self.final] if self.final else [])

    def snapshot(self, key: int | str) -> Snapshot:
        """A snapshot by dump index, or by pass name (its first snapshot). Raises ``KeyError``."""
        for s in self.all_snapshots():
            if (isinstance(key, int) and s.index == key) or (isinstance(key, str) and s.pass_name == key):
                return s
        raise KeyError(f"No snapshot {key!r}: indexes {[s.index for s in self.all_snapshots()]}")

    @property
    def passes_ms(self) -> float:
        """Sum of every pass's time (ms)."""
        return sum(p.ms for p in self.pass_times)


def kernel_ir_lost(pipeline: PassPipeline) -> bool:
    """The recording asked for the kernels' IR and has none: :attr:`PassPipeline.kernel_ir` is a note saying why."""
    return pipeline.kernel_ir not in ("", KERNEL_IR_DUMPED, KERNEL_IR_NOT_REQUESTED)


def kernel_ir_line(pipeline: PassPipeline) -> str:
    """One line saying whether the kernels' IR is in the recording ("" when the recording does not say):
    ``kernel IR: dumped (12 kernels)``, ``kernel IR: not requested``, or the note of a lost one."""
    if pipeline.kernel_ir == KERNEL_IR_DUMPED:
        n = len(pipeline.fusion_ir)
        return f"kernel IR: dumped ({n} kernel{'s' if n != 1 else ''})"
    if pipeline.kernel_ir == KERNEL_IR_NOT_REQUESTED:
        return "kernel IR: not requested"
    return pipeline.kernel_ir
