"""XLA:GPU's own dump files, the parser module its backend row names (:attr:`app.core.backends.BackendFacts.dump_parser`):
the thunk sequences, ``autotune_results.pbtxt``, the autotuner's choices (``before_config_assignment.txt`` against
the optimized module), the tuned backend configs, and the capture's figures put on them. Names of the files come
from the row (:data:`app.core.backends.GPU`). Pure text parsing.

A reader module gives :func:`read_extras` (the dump folder → ``PassPipeline.extras``, a
:class:`~app.core.passes.model.BackendCompileFacts`: here :class:`~app.core.passes.gpu_text.GpuCompile`) and
:func:`apply_capture` (a capture's figures → the extras); :func:`app.core.passes.dumps.build_pipeline` calls them
for a row that names it.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import fields
from pathlib import Path

from app.core.backends import BackendFacts
from app.core.passes.compile_capture import CompileCapture
from app.core.passes.gpu_text import GpuCompile
from app.core.passes.model import Autotune, AutotuneChoice, CompileFigures, FusionIR, Snapshot, Thunk

_THUNK_LINE = re.compile(r"^(\s*)(\d+): (\w+) \[[^\]]*\]\s*(.*)$")
_LAUNCH = re.compile(r"^(\S+) grid: \[([^\]]*)\] threads: \[([^\]]*)\]\s*shared_memory: (\d+) bytes")
#: The field of an ``AutotuneResults`` entry holding its HLO (XLA's proto name; :func:`parse_autotune_results`).
AUTOTUNE_HLO_FIELD = "hlo"
_BACKEND_CONFIG = re.compile(r"^\s+(?:ROOT )?%?([\w.\-#]+) = .*?\bbackend_config=\{")


def parse_thunk_sequence(text: str) -> list[Thunk]:
    """XLA:GPU's ``thunk_sequence*.txt`` dump, one :class:`~app.core.passes.model.Thunk` per line
    (``003: kCustomKernel [prev=002 (1)  | next=006 (3)] input_reduce_fusion_34 grid: [32, 1, 1] threads: [256, 1, 1]
    shared_memory: 0 bytes``; nested lines, indented by 4, are a command buffer's)."""
    out = []
    for line in text.splitlines():
        if not (m := _THUNK_LINE.match(line)):
            continue
        rest = m.group(4).strip()
        t = Thunk(int(m.group(2)), m.group(3), rest.split(" ", 1)[0] if rest else "", len(m.group(1)) // 4,
                  detail=rest)
        if launch := _LAUNCH.match(rest):
            t.name, t.shared_memory = launch.group(1), int(launch.group(4))
            t.grid, t.threads = (",".join(x.strip() for x in launch.group(i).split(",")) for i in (2, 3))
        out.append(t)
    return out


def backend_configs(text: str) -> dict[str, dict]:
    """``{instruction: backend_config}`` of every instruction of an HLO text with a JSON ``backend_config``
    (the brace-matched object after ``backend_config=``; unparsable ones left out)."""
    out: dict[str, dict] = {}
    decoder = json.JSONDecoder()
    for line in text.splitlines():
        if "backend_config={" not in line or not (m := _BACKEND_CONFIG.match(line)):
            continue
        try:
            out[m.group(1)] = decoder.raw_decode(line, line.index("backend_config={") + len("backend_config="))[0]
        except ValueError:
            continue
    return out


def config_text(config: dict) -> tuple[str, str]:
    """``(kind, summary)`` of one XLA:GPU ``backend_config``: a fusion's ``fusion_backend_config`` kind
    (``__triton_nested_gemm_fusion``) with its block-level tiling (``"tile 64x16, 4 warps, 1 stage, 1 CTA"``) or
    Triton gemm config (``block_m`` …), a cuBLAS call's ``selected_algorithm``; ``("", "")`` for neither."""
    fusion = config.get("fusion_backend_config") or {}
    if fusion:
        kind = fusion.get("kind", "")
        if block := fusion.get("block_level_fusion_config"):
            tiles = " + ".join("x".join(str(s) for s in t.get("sizes", [])) or "scalar"
                               for t in block.get("output_tiles", []))
            parts = [f"tile {tiles}" if tiles else "", f"{block.get('num_warps', '?')} warps",
                     f"{block.get('num_stages', '?')} stage{'s' if str(block.get('num_stages')) != '1' else ''}",
                     f"{block.get('num_ctas', '?')} CTA"]
            if block.get("is_tma_allowed"):
                parts.append("TMA")
            return kind, ", ".join(p for p in parts if p)
        if gemm := fusion.get("triton_gemm_config"):
            return kind, ", ".join(f"{k} {v}" for k, v in gemm.items())
        if custom := fusion.get("custom_fusion_config"):
            return kind, ", ".join(f"{k} {v}" for k, v in custom.items())
        return kind, ""
    if gemm := config.get("gemm_backend_config"):
        if "selected_algorithm" in gemm:
            return "cublas", f"algorithm {gemm['selected_algorithm']}"
    if conv := config.get("cudnn_conv_backend_config"):
        if algo := conv.get("algorithm"):
            return "cudnn", f"algorithm {algo.get('algo_id', algo)}"
    return "", ""


def autotune_choices(before_text: str | None, final_text: str) -> list[AutotuneChoice]:
    """The fusions and calls whose backend config the autotuner set: those of the optimized module whose config
    differs from the one they had in ``before_config_assignment.txt`` (``before_text``; None: every one with a
    tuned config, a cuBLAS algorithm or a Triton tiling), in text order."""
    before = backend_configs(before_text) if before_text is not None else {}
    out = []
    for name, config in backend_configs(final_text).items():
        kind, summary = config_text(config)
        if not kind:
            continue
        if before_text is not None:
            if name not in before or before[name] == config:
                continue
            old_kind = config_text(before[name])[0]
        else:
            old_kind = ""
        out.append(AutotuneChoice(name, old_kind, kind, summary))
    return out


def parse_autotune_results(text: str) -> list[dict]:
    """Entries of an ``autotune_results.pbtxt`` (``AutotuneResults`` text proto, ``version: 3``): one dict per
    top-level ``results { … }`` block with its ``device`` and ``hlo`` strings (when present) and ``result``,
    the rest of the block on one line."""
    out = []
    depth, current = 0, None
    for line in text.splitlines():
        stripped = line.strip()
        if depth == 0 and stripped.startswith("results {"):
            current, depth = [], 1
            continue
        if current is None:
            continue
        depth += stripped.count("{") - stripped.count("}")
        if depth <= 0:
            body = " ".join(current)
            entry: dict = {}
            for key in ("device", AUTOTUNE_HLO_FIELD):
                if m := re.search(rf'\b{key}: "((?:[^"\\]|\\.)*)"', body):
                    entry[key] = m.group(1)
            m = re.search(r"\bresult \{(.*)\}\s*$", body)
            entry["result"] = (m.group(1) if m else body).strip()
            out.append(entry)
            current, depth = None, 0
        else:
            current.append(stripped)
    return out


def read_extras(directory: str | os.PathLike, module: str, final: Snapshot | None,
                backend_facts: BackendFacts, fusion_ir: dict[str, FusionIR]) -> GpuCompile:
    """XLA:GPU's own dump files of ``module`` in ``directory`` (names from ``backend_facts``): the thunk
    sequences, ``autotune_results.pbtxt``, the autotuner's choices (``before_config_assignment.txt`` against the
    optimized module ``final``), the compute capability of the optimized module's name (``sm_9.0a``), and how
    many PTX files ``fusion_ir`` holds. Times come later from the capture (:func:`apply_capture`)."""
    f = backend_facts
    root = Path(directory)
    names = sorted(p.name for p in root.iterdir() if p.is_file() and f".{module}." in p.name)

    def read(suffix: str) -> tuple[str, str | None]:
        hit = next((n for n in names if suffix and n.endswith(f".{module}.{suffix}")), None)
        return (hit, (root / hit).read_text("utf-8", "replace")) if hit else ("", None)

    results_file, results = read(f.autotune_results_dump)
    autotune = Autotune(None, pipeline=f.autotune_pipeline, results_file=results_file,
                        results=parse_autotune_results(results) if results is not None else [])
    seqs = [parse_thunk_sequence(t) if (t := read(s)[1]) is not None else [] for s in f.thunk_sequence_dumps]
    seqs += [[] for _ in range(2 - len(seqs))]
    arch, configs = "", {}
    if final is not None:
        autotune.choices = autotune_choices(read(f.before_autotune_dump)[1], final.text)
        final_name = re.compile(rf"^module_\d+\.{re.escape(module)}\.(?:([\w.]+?)_)?{re.escape(f.final_dump)}\.txt$")
        arch = (m.group(1) or "") if (m := final_name.match(final.file)) else ""
        configs = {n: kc for n, c in backend_configs(final.text).items() if (kc := config_text(c))[0]}
    return GpuCompile(autotune=autotune, thunks=seqs[0], thunks_after_passes=seqs[1], arch=arch,
                      kernel_ir_files=sum(1 for ir in fusion_ir.values() if ir.after_opt), final_configs=configs)


def apply_capture(gpu: GpuCompile, capture: CompileCapture) -> None:
    """Put a capture's figures on ``gpu``: every :class:`~app.core.passes.model.CompileFigures` field (codegen,
    ptxas and kernel compiles, scheduling), the autotuning phase's ms, candidates and device events, and per choice
    its candidate compiles and runs."""
    for name in (f.name for f in fields(CompileFigures)):
        setattr(gpu, name, getattr(capture, name))
    a = gpu.autotune
    a.ms = None if capture.autotune_ms is None else capture.autotune_ms + capture.autotune_load_ms
    a.load_ms = capture.autotune_load_ms
    a.n_candidate_compiles, a.candidate_compile_ms = capture.n_candidate_compiles, capture.candidate_compile_ms
    a.device_events, a.device_ms = capture.device_events, capture.device_ms
    known = {c.fusion for c in a.choices}
    for fusion in list(capture.candidates) + list(capture.runs):
        if fusion not in known:  # candidates compiled and run, but the config it had before was kept
            kind, summary = gpu.final_configs.get(fusion, ("", ""))
            a.choices.append(AutotuneChoice(fusion, kind, kind, f"kept: {summary}" if summary else "kept"))
            known.add(fusion)
    for c in a.choices:
        c.candidates, c.compile_ms = capture.candidates.get(c.fusion, [0, 0.0])
        c.runs, c.run_ms = capture.runs.get(c.fusion, [0, 0.0])
