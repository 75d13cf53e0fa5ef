"""Read what one recorded compile left behind: the dump directory (``xla_dump_to``), here, and the profiler's
XSpace (:mod:`app.core.passes.compile_capture`, its readers re-exported here). Pure parsing.

Dump file names (XLA ``xla/service/dump.cc``, ``FilenameFor`` / ``DumpHloModuleBetweenPassesIfEnabled``)::

    module_0008.jit_mlp.0016.HLO_passes_after_layout_assignment.after_fusion.before_fusion-wrapper.txt
    module_0008.jit_mlp.0018.copy-insertion.after_adding_copies_to_resolve_interference.txt
    module_0008.jit_mlp.before_optimizations.txt / cpu_after_optimizations.txt
    module_0008.jit_mlp.tanh_reduce_fusion_kernel_module.ir-no-opt.ll / .ir-with-opt.ll

XLA:GPU (jax 0.11.2, CUDA) writes the same per-pass files (``…0053.nvptx_post-layout_assignment_part_1.after_pipeline-start.before_block-scaling-rewriter.txt``),
the optimized module with the compute capability first (``module_132355.jit_step.sm_9.0a_gpu_after_optimizations.txt``)
and files of its own (:data:`app.core.backends.GPU`): ``autotune_results.pbtxt``, ``before_config_assignment.txt``,
``thunk_sequence.txt``, ``thunk_sequence_after_thunk_passes.txt``, ``thunk_metadata.txt``, ``priority_fusion_dump.txt``.

File names write a pipeline's spaces as underscores, the profiler's events keep them: names are matched with
spaces and underscores equated (:mod:`app.core.passes.names`).
"""

from __future__ import annotations

import os
import re
import zlib
from collections import Counter
from pathlib import Path

from app.core.backends import BACKENDS
from app.core.inspect.text_index import HLO_INSTRUCTION, HLO_KIND

# The profiler side and XLA:GPU's dump parsers, read here by their older callers (the backend row names the latter)
from app.core.passes.compile_capture import Event as Event
from app.core.passes.compile_capture import read_compile as read_compile
from app.core.passes.compile_capture import read_profile as read_profile
from app.core.passes.gpu_dumps import config_text as config_text
from app.core.passes.gpu_dumps import parse_autotune_results as parse_autotune_results
from app.core.passes.gpu_dumps import parse_thunk_sequence as parse_thunk_sequence
from app.core.passes.model import FusionIR, Snapshot
from app.core.passes.names import norm as norm
from app.core.passes.names import rename_pipelines as rename_pipelines

_PASS_FILE = re.compile(
    r"^module_(\d+)\.(.+?)\.(\d{4})\.([^.]+)\.after_(.+?)(?:\.before_(.+))?\.txt$")
#: ``before_optimizations`` or a backend row's optimized module (``final_dump``), XLA:GPU's with the compute
#: capability first (``sm_9.0a_gpu_after_optimizations``; group 4 is that prefix).
_FINAL_FILE = re.compile(
    r"^module_(\d+)\.(.+?)\.(before_optimizations|(?:([\w.]+?)_)?(?:"
    + "|".join(re.escape(row.final_dump) for row in BACKENDS.values()) + r"))\.txt$")
_LLVM_FILE = re.compile(r"^module_(\d+)\.(.+?)\.(.+)_kernel_module\.ir-(no-opt|with-opt)\.ll$")
#: A kernel's (or the whole module's) IR in a backend row's other format (``kernel_ir_ext``: XLA:GPU's PTX, none
#: with the pass dump options alone).
_KERNEL_IR_FILE = re.compile(r"^module_(\d+)\.(.+?)\.(.+)\.(?:"
                             + "|".join(sorted({re.escape(r.kernel_ir_ext) for r in BACKENDS.values()} - {"ll"}))
                             + ")$")
_CUSTOM_TARGET = re.compile(r'custom_call_target="([^"]*)"')


def hlo_counts(text: str) -> tuple[int, dict[str, int], list[str]]:
    """``(instructions, {fusion kind: count}, custom-call targets)`` of an HLO module text, with the app's
    one HLO line pattern (:data:`app.core.inspect.text_index.HLO_INSTRUCTION`; fused computations'
    instructions counted, as :func:`~app.core.inspect.text_index.count_hlo` does)."""
    n = 0
    kinds: Counter[str] = Counter()
    targets: list[str] = []
    for s in text.splitlines():
        if m := HLO_INSTRUCTION.match(s):
            n += 1
            if m.group(3) == "fusion" and (k := HLO_KIND.search(m.group(4))):
                kinds[k.group(1)] += 1
            elif m.group(3) == "custom-call" and (t := _CUSTOM_TARGET.search(m.group(4))):
                targets.append(t.group(1))
    return n, dict(kinds), targets


def make_snapshot(index: int, pipeline: str, pass_name: str, next_pass: str, file: str, text: str) -> Snapshot:
    n, kinds, targets = hlo_counts(text)
    raw = text.encode("utf-8")
    return Snapshot(index, pipeline, pass_name, next_pass, file, n, kinds, targets, len(raw), zlib.compress(raw, 6))


def read_dumps(directory: str | os.PathLike):
    """Snapshots, before/final modules and LLVM IR of the module with the most files in ``directory``.

    A snapshot's pipeline is the file's with underscores read as spaces (:func:`rename_pipelines` puts the
    profiler's spelling back). Returns ``(module, snapshots, before, final, fusion_ir, dump_bytes)``. Raises ``FileNotFoundError``
    when the directory holds no per-pass dump (a persistent-cache hit dumps nothing)."""
    root = Path(directory)
    files = sorted(p.name for p in root.iterdir() if p.is_file())
    per_module = Counter(m.group(1) for f in files if (m := re.match(r"^module_(\d+)\.", f)))
    if not per_module:
        raise FileNotFoundError(f"No XLA dump in {root}: the compile wrote nothing (a persistent-cache hit?).")
    number = per_module.most_common(1)[0][0]
    module = ""
    snapshots: list[Snapshot] = []
    before = final = None
    fusion_ir: dict[str, FusionIR] = {}
    dump_bytes = 0
    for f in files:
        if not f.startswith(f"module_{number}."):
            continue
        path = root / f
        dump_bytes += path.stat().st_size
        if m := _PASS_FILE.match(f):
            module = m.group(2)
            pipeline = m.group(4).replace("_", " ")
            snapshots.append(make_snapshot(int(m.group(3)), pipeline, m.group(5), m.group(6) or "", f,
                                           path.read_text("utf-8", "replace")))
        elif m := _FINAL_FILE.match(f):
            module = m.group(2)
            text = path.read_text("utf-8", "replace")
            if m.group(3) == "before_optimizations":
                before = make_snapshot(-1, "", "before-optimizations", "", f, text)
            else:
                final = (m.group(3), f, text)
        elif (m := _KERNEL_IR_FILE.match(f)) and not _LLVM_FILE.match(f):
            fusion_ir.setdefault(m.group(3), FusionIR(m.group(3))).after_opt = zlib.compress(path.read_bytes(), 6)
        elif m := _LLVM_FILE.match(f):
            ir = fusion_ir.setdefault(m.group(3), FusionIR(m.group(3)))
            data = zlib.compress(path.read_bytes(), 6)
            if m.group(4) == "no-opt":
                ir.before_opt = data
            else:
                ir.after_opt = data
    if not snapshots:
        raise FileNotFoundError(f"No per-pass dump in {root} (xla_dump_hlo_pass_re not applied?).")
    snapshots.sort(key=lambda s: s.index)
    final_snap = None
    if final is not None:
        final_snap = make_snapshot(snapshots[-1].index + 1, "", "after-optimizations", "", final[1], final[2])
    return module, snapshots, before, final_snap, fusion_ir, dump_bytes
