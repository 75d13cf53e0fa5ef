"""XLA:GPU's compile facts: :class:`GpuCompile`, what the GPU row's reader module (:mod:`app.core.passes.gpu_dumps`)
puts in :attr:`app.core.passes.model.PassPipeline.extras`, and how they read as text and JSON: the pipelines with
their ms, the autotuning phase (what was tuned, the chosen config, the time), the thunk sequence and PTX. One
formatter for the CLI (``passes --dumps``, ``--autotune``, ``--thunks``) and the window's Passes tab (its XLA:GPU
page), both reaching it through the slot. No Qt.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from app.core.backends import BACKENDS, GPU
from app.core.passes import query
from app.core.passes.model import Autotune, CompileFigures, FusionIR, PassPipeline, Thunk


@dataclass(kw_only=True)
class GpuCompile(CompileFigures):
    """What an XLA:GPU compile adds to a :class:`~app.core.passes.model.PassPipeline` (its
    :class:`~app.core.passes.model.BackendCompileFacts`: from the dump folder, :mod:`app.core.passes.gpu_dumps`,
    and the capture: the :class:`~app.core.passes.model.CompileFigures`).

    ``autotune``: :class:`~app.core.passes.model.Autotune`. ``thunks`` / ``thunks_after_passes``: the two thunk
    sequence dumps (:class:`~app.core.passes.model.Thunk`; empty when not dumped). ``kernel_ir_files``: how many
    ``.ptx`` files the folder held (0: PTX was not dumped). ``arch``: the compute capability prefix of the
    optimized module's file name (``sm_9.0a``)."""

    autotune: Autotune
    thunks: list[Thunk] = field(default_factory=list)
    thunks_after_passes: list[Thunk] = field(default_factory=list)
    kernel_ir_files: int = 0
    arch: str = ""
    #: ``{instruction: (kind, config summary)}`` of the optimized module's tuned configs (see
    #: :func:`app.core.passes.gpu_dumps.config_text`).
    final_configs: dict[str, tuple[str, str]] = field(default_factory=dict, repr=False)

    @property
    def title(self) -> str:
        return "XLA:GPU"

    @property
    def figures(self) -> CompileFigures:
        return self

    @property
    def thunk_sequence(self) -> list[Thunk]:
        return self.thunks_after_passes or self.thunks

    def fusion_facts(self, fusion: str, fusion_ir: dict[str, FusionIR]) -> tuple[str, bool, bool]:
        """Its tuned config (``"kind: summary"``), whether the autotuner chose or kept it, and whether its PTX was
        dumped (PTX files write an instruction's ``.N`` as ``_N``)."""
        kind, summary = self.final_configs.get(fusion, ("", ""))
        return (f"{kind}: {summary}" if summary else kind, any(c.fusion == fusion for c in self.autotune.choices),
                fusion in fusion_ir or fusion.replace(".", "_") in fusion_ir)

    def report_text(self, pipeline: PassPipeline) -> str:
        return gpu_report(pipeline, self)

    def report_json(self, pipeline: PassPipeline) -> list[dict]:
        """One ``pipeline`` event per top-level pipeline (ms, passes, autotune flag), the ``autotune`` phase, the
        ``thunks`` summary and ``kernel_ir`` (PTX files dumped or not)."""
        rows = [{"event": "pipeline", **r} for r in query.pipeline_rows(pipeline)]
        rows.append({"event": "autotune", **self.autotune.summary()})
        rows.append({"event": "thunks", "n": len(self.thunks), "n_after_passes": len(self.thunks_after_passes),
                     "kinds": thunk_kinds(self.thunk_sequence),
                     "command_buffers": sum(t.kind == "kCommandBuffer" for t in self.thunks_after_passes)})
        rows.append({"event": "kernel_ir", "kind": BACKENDS.get(pipeline.platform, GPU).kernel_ir,
                     "files": self.kernel_ir_files, "dumped": self.kernel_ir_files > 0, "arch": self.arch}
                    | ({"status": pipeline.kernel_ir} if pipeline.kernel_ir else {}))
        return rows

    def page_text(self, pipeline: PassPipeline) -> str:
        """The report's part, then the thunk sequence after the thunk passes."""
        return (gpu_report(pipeline, self).lstrip("\n") + "\nthunk sequence (after the thunk passes):\n"
                + thunks_text(self.thunk_sequence))


def thunk_kinds(thunks: list) -> dict[str, int]:
    """How many thunks of each kind (``kKernel``, ``kCommandBuffer``, ``kCopy`` …), in order of first appearance."""
    kinds: dict[str, int] = {}
    for t in thunks:
        kinds[t.kind] = kinds.get(t.kind, 0) + 1
    return kinds


def thunk_line(t: Thunk) -> str:
    """One thunk (:class:`app.core.passes.model.Thunk`), indented by its depth inside a command buffer:
    index, kind, name and, for a kernel, its launch dimensions and shared memory (bytes)."""
    launch = f"grid [{t.grid}] threads [{t.threads}] shared {t.shared_memory} B" if t.grid else ""
    return f"{'    ' * t.depth}{t.index:03d} {t.kind:<16} {t.name:<40} {launch}".rstrip()


def autotune_text(a: Autotune) -> str:
    """An autotuning phase (:class:`app.core.passes.model.Autotune`): its ms, the fusions tuned with the kind
    before → after, the chosen config, candidates and their compile and run ms."""
    ms = "no capture" if a.ms is None else f"{a.ms:,.1f} ms"
    lines = [f"autotune ({a.pipeline}): {ms}; {len(a.choices)} fusions tuned, {a.n_candidate_compiles} candidate "
             f"compiles ({a.candidate_compile_ms:,.1f} ms summed over threads), {a.device_events} device events "
             f"({a.device_ms:.1f} ms); {a.results_file or 'no autotune_results.pbtxt'}: {len(a.results)} results"]
    for c in a.choices:
        lines.append(f"    {c.fusion:<32} {c.before or '-':<16} → {c.kind or '-':<28} {c.config:<40} "
                     f"{c.candidates:>3} candidates {c.compile_ms:>8.1f} ms, {c.runs:>3} runs {c.run_ms:>6.2f} ms")
    return "\n".join(lines) + "\n"


def gpu_report(pipeline: PassPipeline, gpu: GpuCompile) -> str:
    """XLA:GPU's pipelines with their ms (when the compile's capture is there), the autotuning phase, the thunk
    sequence's size and kinds and whether PTX was dumped."""
    out = []
    if pipeline.has_capture:
        out.append(f"\npipelines (XLA:GPU{' ' + gpu.arch if gpu.arch else ''}, ms of the compiling thread):")
        for r in query.pipeline_rows(pipeline):
            mark = "  ← autotune" if r["autotune"] else ("  (backend)" if r["in_backend"] else "")
            out.append(f"  {r['pipeline'][:52]:<52} {r['ms']:>9.2f} ms {r[query.PASS_COUNT_FIELD]:>4} passes{mark}")
    out.append(autotune_text(gpu.autotune).rstrip("\n"))
    kinds = ", ".join(f"{k} {n}" for k, n in thunk_kinds(gpu.thunk_sequence).items())
    out.append(f"thunk sequence: {len(gpu.thunks)} thunks; after the thunk passes {len(gpu.thunks_after_passes)}"
               f"{' (' + kinds + ')' if kinds else ''}")
    kernel_ir = BACKENDS.get(pipeline.platform, GPU).kernel_ir
    out.append(f"{kernel_ir} per fusion: {f'{gpu.kernel_ir_files} files' if gpu.kernel_ir_files else 'not dumped'}")
    return "\n".join(out) + "\n"


def thunks_text(thunks: list[Thunk]) -> str:
    """A thunk sequence, one :func:`thunk_line` each (a sentence when it is empty)."""
    if not thunks:
        return "No thunk sequence in the dump folder (XLA:GPU writes thunk_sequence.txt).\n"
    return "\n".join(thunk_line(t) for t in thunks) + "\n"
