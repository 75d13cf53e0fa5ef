"""XLA:GPU's extras of a recorded or opened pass pipeline as text: the pipelines with their ms, the autotuning
phase (what was tuned, the chosen config, the time), the thunk sequence and PTX. One formatter for the CLI
(``passes --dumps``, ``--autotune``, ``--thunks``) and the window's Passes tab (its XLA:GPU page). No Qt.
"""

from __future__ import annotations

from typing import Any

from app.core.backends import BACKENDS, GPU
from app.core.passes import query
from app.core.passes.model import PassPipeline


def thunk_kinds(thunks: list) -> dict[str, int]:
    """How many thunks of each kind (``kKernel``, ``kCommandBuffer``, ``kCopy`` …), in order of first appearance."""
    kinds: dict[str, int] = {}
    for t in thunks:
        kinds[t.kind] = kinds.get(t.kind, 0) + 1
    return kinds


def thunk_line(t: Any) -> str:
    """One thunk (:class:`app.core.passes.model.Thunk`), indented by its depth inside a command buffer:
    index, kind, name and, for a kernel, its launch dimensions and shared memory (bytes)."""
    launch = f"grid [{t.grid}] threads [{t.threads}] shared {t.shared_memory} B" if t.grid else ""
    return f"{'    ' * t.depth}{t.index:03d} {t.kind:<16} {t.name:<40} {launch}".rstrip()


def autotune_text(pipeline: Any) -> str:
    """The autotuning phase of ``pipeline`` (:class:`app.core.passes.model.PassPipeline` with ``gpu``): its ms,
    the fusions tuned with the kind before → after, the chosen config, candidates and their compile and run ms."""
    a = pipeline.gpu.autotune
    ms = "no capture" if a.ms is None else f"{a.ms:,.1f} ms"
    lines = [f"autotune ({a.pipeline}): {ms}; {len(a.choices)} fusions tuned, {a.n_candidate_compiles} candidate "
             f"compiles ({a.candidate_compile_ms:,.1f} ms summed over threads), {a.device_events} device events "
             f"({a.device_ms:.1f} ms); {a.results_file or 'no autotune_results.pbtxt'}: {len(a.results)} results"]
    for c in a.choices:
        lines.append(f"    {c.fusion:<32} {c.before or '-':<16} → {c.kind or '-':<28} {c.config:<40} "
                     f"{c.candidates:>3} candidates {c.compile_ms:>8.1f} ms, {c.runs:>3} runs {c.run_ms:>6.2f} ms")
    return "\n".join(lines) + "\n"


def gpu_report(pipeline: PassPipeline) -> str:
    """XLA:GPU's pipelines with their ms (when the compile's capture is there), the autotuning phase, the thunk
    sequence's size and kinds and whether PTX was dumped; ``""`` for a pipeline that is not XLA:GPU's."""
    gpu = getattr(pipeline, "gpu", None)
    if gpu is None:
        return ""
    out = []
    if pipeline.has_capture:
        out.append(f"\npipelines (XLA:GPU{' ' + gpu.arch if gpu.arch else ''}, ms of the compiling thread):")
        for r in query.pipeline_rows(pipeline):
            mark = "  ← autotune" if r["autotune"] else ("  (backend)" if r["in_backend"] else "")
            out.append(f"  {r['pipeline'][:52]:<52} {r['ms']:>9.2f} ms {r['passes']:>4} passes{mark}")
    out.append(autotune_text(pipeline).rstrip("\n"))
    after = gpu.thunks_after_passes or gpu.thunks
    kinds = ", ".join(f"{k} {n}" for k, n in thunk_kinds(after).items())
    out.append(f"thunk sequence: {len(gpu.thunks)} thunks; after the thunk passes {len(gpu.thunks_after_passes)}"
               f"{' (' + kinds + ')' if kinds else ''}")
    kernel_ir = BACKENDS.get(getattr(pipeline, "platform", ""), GPU).kernel_ir
    out.append(f"{kernel_ir} per fusion: {f'{gpu.kernel_ir_files} files' if gpu.kernel_ir_files else 'not dumped'}")
    return "\n".join(out) + "\n"


def thunks_text(pipeline: PassPipeline) -> str:
    """The thunk sequence after XLA's thunk passes (else as emitted), one :func:`thunk_line` each."""
    gpu = getattr(pipeline, "gpu", None)
    thunks = (gpu.thunks_after_passes or gpu.thunks) if gpu is not None else []
    if not thunks:
        return "No thunk sequence in the dump folder (XLA:GPU writes thunk_sequence.txt).\n"
    return "\n".join(thunk_line(t) for t in thunks) + "\n"
