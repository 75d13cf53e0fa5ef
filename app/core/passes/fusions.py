"""The fusions of a recorded :class:`~app.core.passes.model.PassPipeline`'s final module, each with where it came
from (the pass that first defined it), what it absorbed, the fusion log's decisions and what the backend's
extra compile facts say of it (:meth:`~app.core.passes.model.BackendCompileFacts.fusion_facts`: on XLA:GPU its
backend config). Pure Python over the recorded texts."""

from __future__ import annotations

from dataclasses import dataclass

from app.core.inspect.text_index import HLO_KIND, hlo_instructions
from app.core.passes.history import first_appearance
from app.core.passes.model import PassPipeline


@dataclass
class FusionRow:
    """One fusion instruction of the final module: ``name``, ``kind`` (``kLoop``, ``kCustom``, …),
    ``created_in`` / ``created_by``: the label and pass of the first snapshot defining it (None if only the
    final module does), ``absorbed``: ``(name, opcode, "file:line")`` of the instructions of its fused
    computation (parameters left out; source from their metadata), ``source``: the fusion instruction's own
    ``"file:line"`` ("" when XLA left it no metadata, as for some ``fusion-wrapper`` fusions), ``decisions``: the
    fusion log's entries that went into it or were refused by it, ``has_llvm_ir``: its kernel's IR was dumped
    (LLVM IR on the CPU, PTX on XLA:GPU). From the backend's extra compile facts (XLA:GPU's; "" / False without
    them): ``config``: its backend config (``"__triton_nested_gemm_fusion: tile 64x16, 4 warps, 1 stage, 1 CTA"``,
    from the optimized module), ``autotuned``: the autotuner set or tried it."""

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
        if pipeline.extras is not None:  # the backend's columns (XLA:GPU's tuned configs)
            row.config, row.autotuned, row.has_llvm_ir = pipeline.extras.fusion_facts(ins.name, pipeline.fusion_ir)
        rows.append(row)
    return rows
