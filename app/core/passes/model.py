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
class PassPipeline:
    """Everything one recording gathered about one compile.

    ``module``: the HLO module name (``jit_step``). ``snapshots`` in dump order; ``before`` the module before
    optimizations and ``final`` the optimized module (``cpu_after_optimizations.txt``), both as snapshots
    with ``index`` −1 and len(snapshots). ``pass_times``: every pass name per pipeline with its summed time
    (ordered by first run); ``pipelines``: every pipeline run. ``backend``: backend phases by name.
    ``compile_ms``: wall time of the recording's ``compile()`` call (perf_counter around it, in the process
    that compiled); ``client_compile_ms``: the ``PjRtCpuClient::Compile`` event (XLA's whole compile).
    ``fusion_ir``: per fusion kernel its LLVM IR. ``fusion_log``: parsed decisions (empty unless recorded
    with ``fusion_log=True``); ``log_lines``: how many log lines were read. ``in_child``: the compile ran in
    a child process (from the StableHLO text). ``dump_bytes``: size of every dump file read.
    ``compiler_options``: the extra XLA options the recording compiled with (``--xla-flags``; {} for none).
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
    fusion_log: list[FusionDecision] = field(default_factory=list)
    log_lines: int = 0
    in_child: bool = False
    dump_bytes: int = 0
    compiler_options: dict = field(default_factory=dict)

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
