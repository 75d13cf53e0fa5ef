"""Read what one recorded compile left behind: the dump directory (``xla_dump_to``) and the profiler's
XSpace. Pure parsing, JAX imported only to read the capture (``jax.profiler.ProfileData``).

Dump file names (XLA ``xla/service/dump.cc``, ``FilenameFor`` / ``DumpHloModuleBetweenPassesIfEnabled``)::

    module_0008.jit_mlp.0016.HLO_passes_after_layout_assignment.after_fusion.before_fusion-wrapper.txt
    module_0008.jit_mlp.0018.copy-insertion.after_adding_copies_to_resolve_interference.txt
    module_0008.jit_mlp.before_optimizations.txt / cpu_after_optimizations.txt
    module_0008.jit_mlp.tanh_reduce_fusion_kernel_module.ir-no-opt.ll / .ir-with-opt.ll

XLA:GPU (jax 0.11.2, CUDA) writes the same per-pass files (``…0053.nvptx_post-layout_assignment_part_1.after_pipeline-start.before_block-scaling-rewriter.txt``),
the optimized module with the compute capability first (``module_132355.jit_step.sm_9.0a_gpu_after_optimizations.txt``)
and files of its own (:data:`app.core.backends.GPU`): ``autotune_results.pbtxt``, ``before_config_assignment.txt``,
``thunk_sequence.txt``, ``thunk_sequence_after_thunk_passes.txt``, ``thunk_metadata.txt``, ``priority_fusion_dump.txt``.

File names write a pipeline's spaces as underscores; the profiler's events keep the spaces
(``"HLO passes after layout assignment (jit_mlp)"``) and some pipelines have real underscores
(``post_scatter_expansion_simplification``), so names are matched with spaces and underscores equated.
"""

from __future__ import annotations

import json
import os
import re
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from app.core.backends import CPU, BackendFacts
from app.core.inspect.text_index import HLO_INSTRUCTION, HLO_KIND
from app.core.passes.model import (
    Autotune,
    AutotuneChoice,
    BackendPhase,
    FusionIR,
    GpuCompile,
    PassTime,
    PipelineTime,
    Snapshot,
    Thunk,
)

_PASS_FILE = re.compile(
    r"^module_(\d+)\.(.+?)\.(\d{4})\.([^.]+)\.after_(.+?)(?:\.before_(.+))?\.txt$")
#: ``before_optimizations`` or a backend's optimized module, XLA:GPU's with the compute capability first
#: (``sm_9.0a_gpu_after_optimizations``; group 4 is that prefix).
_FINAL_FILE = re.compile(
    r"^module_(\d+)\.(.+?)\.(before_optimizations|(?:([\w.]+?)_)?(?:cpu|gpu|tpu)_after_optimizations)\.txt$")
_LLVM_FILE = re.compile(r"^module_(\d+)\.(.+?)\.(.+)_kernel_module\.ir-(no-opt|with-opt)\.ll$")
#: A kernel's (or the whole module's) PTX, as XLA:GPU names its dumps (none with the pass dump options alone).
_PTX_FILE = re.compile(r"^module_(\d+)\.(.+?)\.(.+)\.ptx$")
_CUSTOM_TARGET = re.compile(r'custom_call_target="([^"]*)"')
_PIPELINE_SPAN = re.compile(r"^(.*) \((.+)\)$")
#: Compiler-thread events that are bookkeeping, not a pass (``tsl/profiler`` threadpool listener).
_BOOKKEEPING = ("ThreadpoolListener::",)
#: Events of JAX's Python tracer (``$stages.py:674 compile``) on the compiling thread since jax 0.11.
_PYTHON_TRACER = "$"


def norm(name: str) -> str:
    """A pipeline or pass name with spaces and underscores equated (file names vs profiler names)."""
    return name.replace(" ", "_")


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
        elif (m := _PTX_FILE.match(f)) and not _LLVM_FILE.match(f):
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


# ------------------------------------------------------------------------------------------- profile
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


@dataclass
class CompileCapture:
    """What a profiler capture of one compile says (:func:`read_compile`). ``pass_times``, ``pipelines``,
    ``backend`` and ``client_ms`` as :func:`read_profile` returns them; ``compile_thread``: the profiler line kind
    that compiled. XLA:GPU only (zero / None / empty elsewhere; ms of host wall clock, summed ms of parallel
    events where said): ``hlo_transforms_ms`` (``HLO Transforms:<module>``), ``codegen_ms``
    (``CompileModuleToLlvmIr``), ``ptxas_wall_ms`` (wall time inside it with a ``PTX->CUBIN`` running),
    ``ptxas_ms`` / ``n_ptxas`` (summed), ``kernel_compile_ms`` / ``n_kernel_compiles`` (``CompileSingleModule``,
    summed), ``threads`` (thread-pool lines that compiled kernels), ``scheduling_ms`` (``scheduling_event`` minus
    the pipeline spans inside it); autotuning: ``autotune_ms`` (the autotuning
    pipeline's spans; None when the capture has none), ``autotune_load_ms``, ``candidates`` (``{fusion:
    [compiles, ms]}``), ``runs`` (``{fusion: [runs, ms]}``), ``n_candidate_compiles`` / ``candidate_compile_ms``
    (every candidate compile inside the autotuning span, summed), ``device_events`` / ``device_ms`` (device plane
    events inside it, summed)."""

    pass_times: list[PassTime]
    pipelines: list[PipelineTime]
    backend: list[BackendPhase]
    client_ms: float
    compile_thread: str = ""
    hlo_transforms_ms: float | None = None
    codegen_ms: float | None = None
    ptxas_wall_ms: float | None = None
    ptxas_ms: float = 0.0
    n_ptxas: int = 0
    kernel_compile_ms: float = 0.0
    n_kernel_compiles: int = 0
    threads: int = 0
    scheduling_ms: float = 0.0
    autotune_ms: float | None = None
    autotune_load_ms: float = 0.0
    candidates: dict[str, list] = field(default_factory=dict)
    runs: dict[str, list] = field(default_factory=dict)
    n_candidate_compiles: int = 0
    candidate_compile_ms: float = 0.0
    device_events: int = 0
    device_ms: float = 0.0


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
    (inside ``codegen_window_event`` where the row names one) are backend phases of their thread. XLA:GPU's
    autotuning, ptxas and kernel compiles are read as :class:`CompileCapture` says.
    Raises ``ValueError`` when no such compile event is in the capture."""
    from jax.profiler import ProfileData

    f = backend_facts
    data = (ProfileData.from_serialized_xspace(bytes(source)) if isinstance(source, (bytes, bytearray))
            else ProfileData.from_file(os.fspath(source)))
    plane = data.find_plane_with_name(f.host_plane)
    if plane is None:
        raise ValueError(f"The capture has no {f.host_plane!r} plane (not an XLA:{f.platform.upper()} profile).")
    lines = [(line.name, [(e.name, e.start_ns, e.duration_ns) for e in line.events]) for line in plane.lines]
    suffix = f" ({module})"
    window = None
    compile_line = ""
    compiler_events: list[tuple[str, float, float]] = []
    for event_name in f.client_compile_events:
        for name, events in lines:
            for ev in events:
                if not _is_event(ev[0], event_name):
                    continue
                lo, hi = ev[1], ev[1] + ev[2]
                if any(e[0].endswith(suffix) and lo <= e[1] <= hi for e in events):
                    window, compile_line = ev, name
                    compiler_events = [e for e in events if lo <= e[1] <= hi and e is not ev
                                       and not e[0].startswith(_PYTHON_TRACER) and not e[0].startswith(_BOOKKEEPING)]
        if window is not None:
            break
    if window is None:
        raise ValueError(f"The capture has no {' or '.join(f.client_compile_events)} event of module {module!r}.")
    compile_thread = _thread_kind(compile_line)
    lo, hi = window[1], window[1] + window[2]
    compiler_events.sort(key=lambda e: (e[1], -e[2]))

    def is_span(name: str) -> bool:
        return name.endswith(suffix)

    def is_foreign_span(name: str) -> bool:
        m = _PIPELINE_SPAN.match(name)
        return bool(m) and "::" not in name and m.group(2) != module

    def is_phase(name: str) -> bool:
        return "::" in name or name in f.backend_plain_events or name.startswith(f.phase_prefixes)

    # each event's innermost enclosing event on the compile line (None: directly inside the client compile)
    parent: list[int | None] = []
    foreign: list[bool] = []
    stack: list[int] = []
    for i, (name, start, dur) in enumerate(compiler_events):
        while stack and not (start + dur <= compiler_events[stack[-1]][1] + compiler_events[stack[-1]][2]):
            stack.pop()
        par = stack[-1] if stack else None
        parent.append(par)
        foreign.append(is_foreign_span(name) or (par is not None and foreign[par]))
        stack.append(i)
    spans = [(e[0][: -len(suffix)], e[1], e[1] + e[2]) for i, e in enumerate(compiler_events)
             if is_span(e[0]) and not foreign[i]]
    run_backend = [(e[1], e[1] + e[2]) for e in compiler_events if e[0] == f.run_backend_event]
    pipelines: list[PipelineTime] = []
    for name, a, b in spans:
        depth = sum(1 for n2, a2, b2 in spans if a2 <= a and b <= b2 and (a2, b2) != (a, b))
        in_backend = any(a2 <= a and b <= b2 for a2, b2 in run_backend)
        pipelines.append(PipelineTime(name, (b - a) / 1e6, depth, a, in_backend))
    pipelines.sort(key=lambda p: p.start_ns)
    changed = Counter((norm(s.pipeline), norm(s.pass_name)) for s in snapshots if s.changed)
    passes: dict[tuple[str, str], PassTime] = {}
    backend: dict[str, BackendPhase] = {}
    kinds: list[str] = []  # "span", "phase", "pass", "" (left out), per event
    for i, (name, start, dur) in enumerate(compiler_events):
        par = parent[i]
        par_kind = kinds[par] if par is not None else "compile"
        if foreign[i] or par_kind in ("pass", "nested"):
            kinds.append("nested")
            continue
        if is_span(name):
            kinds.append("span")
            continue
        if is_phase(name):
            kinds.append("phase")
            _add_phase(backend, name, dur, compile_thread)
            continue
        wraps = any(s[0] == name and start <= s[1] <= start + dur for s in spans)
        if wraps:
            kinds.append("wrapper")
            continue
        if par_kind != "span":
            kinds.append("")
            continue
        kinds.append("pass")
        pipeline = compiler_events[par][0][: -len(suffix)]
        key = (pipeline, name)
        if key not in passes:
            passes[key] = PassTime(pipeline, name, 0.0, 0, changed.get((norm(pipeline), norm(name)), 0), start)
        passes[key].ms += dur / 1e6
        passes[key].count += 1
    capture = CompileCapture([], pipelines, [], window[2] / 1e6, compile_thread)
    codegen_windows = ([(e[1], e[1] + e[2]) for e in compiler_events if e[0] == f.codegen_window_event]
                       if f.codegen_window_event else [(lo, hi)])
    autotune_windows = [(a, b) for name, a, b in spans if f.autotune_pipeline and name == f.autotune_pipeline]
    asm: list[tuple[float, float]] = []
    kernel_threads: set[str] = set()
    for name, events in lines:
        if name == compile_line or f.codegen_line not in name:
            continue
        inside = [ev for ev in events if any(a <= ev[1] <= b for a, b in codegen_windows)
                  and not ev[0].startswith(_BOOKKEEPING)]
        for ev_name, start, dur in inside:
            _add_phase(backend, ev_name, dur, _thread_kind(name))
            if f.assembler_event and ev_name == f.assembler_event:
                asm.append((start, start + dur))
                capture.ptxas_ms += dur / 1e6
                capture.n_ptxas += 1
            if f.kernel_compile_event and ev_name == f.kernel_compile_event and f.codegen_window_event:
                capture.kernel_compile_ms += dur / 1e6
                capture.n_kernel_compiles += 1
                kernel_threads.add(name)
        if autotune_windows:
            _read_candidates(capture, events, autotune_windows, f)
    capture.threads = len(kernel_threads)
    if f.codegen_window_event and any(e[0] == f.codegen_window_event for e in compiler_events):
        capture.codegen_ms = sum(b - a for a, b in codegen_windows) / 1e6
        capture.ptxas_wall_ms = sum(_union_ms(asm, a, b) for a, b in codegen_windows)
    top_spans = [(a, b) for name, a, b in spans
                 if not any(a2 <= a and b <= b2 and (a2, b2) != (a, b) for _, a2, b2 in spans)]
    for name, start, dur in compiler_events:
        if f.scheduling_event and name == f.scheduling_event:
            inner = sum(b - a for a, b in top_spans if start <= a and b <= start + dur)
            capture.scheduling_ms += (dur - inner) / 1e6
    transforms = [e for e in compiler_events if e[0].startswith("HLO Transforms:")]
    if transforms:
        capture.hlo_transforms_ms = sum(e[2] for e in transforms) / 1e6
    if f.autotune_pipeline:
        if autotune_windows:
            capture.autotune_ms = sum(b - a for a, b in autotune_windows) / 1e6
        capture.autotune_load_ms = sum(e[2] for e in compiler_events if e[0] in f.autotune_events) / 1e6
        if f.device_plane_prefix and autotune_windows:
            for dev in data.planes:
                if not dev.name.startswith(f.device_plane_prefix):
                    continue
                for line in dev.lines:
                    for e in line.events:
                        if any(a <= e.start_ns <= b for a, b in autotune_windows):
                            capture.device_events += 1
                            capture.device_ms += e.duration_ns / 1e6
    capture.pass_times = sorted(passes.values(), key=lambda p: p.first_ns)
    capture.backend = list(backend.values())
    return capture


def _read_candidates(capture: CompileCapture, events: list[tuple[str, float, float]],
                     windows: list[tuple[float, float]], f: BackendFacts) -> None:
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


def rename_pipelines(snapshots: list[Snapshot], pipelines: list[PipelineTime]) -> None:
    """Give snapshots the profiler's spelling of their pipeline (``post_scatter_expansion_simplification``
    keeps its underscores; ``HLO passes after layout assignment`` its spaces)."""
    names = {norm(p.pipeline): p.pipeline for p in pipelines}
    for s in snapshots:
        s.pipeline = names.get(norm(s.pipeline), s.pipeline)


# --------------------------------------------------------------------------------------- XLA:GPU dumps
_THUNK_LINE = re.compile(r"^(\s*)(\d+): (\w+) \[[^\]]*\]\s*(.*)$")
_LAUNCH = re.compile(r"^(\S+) grid: \[([^\]]*)\] threads: \[([^\]]*)\]\s*shared_memory: (\d+) bytes")
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
            for key in ("device", "hlo"):
                if m := re.search(rf'\b{key}: "((?:[^"\\]|\\.)*)"', body):
                    entry[key] = m.group(1)
            m = re.search(r"\bresult \{(.*)\}\s*$", body)
            entry["result"] = (m.group(1) if m else body).strip()
            out.append(entry)
            current, depth = None, 0
        else:
            current.append(stripped)
    return out


def read_gpu_dumps(directory: str | os.PathLike, module: str, final: Snapshot | None,
                   backend_facts: BackendFacts, fusion_ir: dict[str, FusionIR]) -> GpuCompile:
    """XLA:GPU's own dump files of ``module`` in ``directory`` (names from ``backend_facts``): the thunk
    sequences, ``autotune_results.pbtxt``, the autotuner's choices (``before_config_assignment.txt`` against the
    optimized module ``final``), the compute capability of the optimized module's name (``sm_9.0a``), and how
    many PTX files ``fusion_ir`` holds. Times come later from the capture (:func:`apply_capture`)."""
    f = backend_facts
    root = Path(directory)
    names = sorted(p.name for p in root.iterdir() if p.is_file() and f".{module}." in p.name)

    def find(suffix: str) -> Path | None:
        hit = next((n for n in names if suffix and n.endswith(f".{module}.{suffix}")), None)
        return root / hit if hit else None

    def read(suffix: str) -> str | None:
        path = find(suffix)
        return path.read_text("utf-8", "replace") if path else None

    results_path = find(f.autotune_results_dump)
    autotune = Autotune(None, pipeline=f.autotune_pipeline, results_file=results_path.name if results_path else "",
                        results=parse_autotune_results(results_path.read_text("utf-8", "replace"))
                        if results_path else [])
    if final is not None:
        autotune.choices = autotune_choices(read(f.before_autotune_dump), final.text)
    seqs = [parse_thunk_sequence(t) if (t := read(s)) is not None else [] for s in f.thunk_sequence_dumps]
    seqs += [[] for _ in range(2 - len(seqs))]
    arch = ""
    if final is not None and (m := _FINAL_FILE.match(final.file)):
        arch = m.group(4) or ""
    configs = {}
    if final is not None:
        configs = {n: kc for n, c in backend_configs(final.text).items() if (kc := config_text(c))[0]}
    return GpuCompile(autotune, seqs[0], seqs[1], kernel_ir_files=sum(1 for ir in fusion_ir.values() if ir.after_opt),
                      arch=arch, final_configs=configs)


def apply_capture(gpu: GpuCompile, capture: CompileCapture) -> None:
    """Put a capture's XLA:GPU times (:class:`CompileCapture`) on ``gpu``: codegen, ptxas and kernel compiles,
    the autotuning phase's ms, candidates and device events, and per choice its candidate compiles and runs."""
    for name in ("hlo_transforms_ms", "codegen_ms", "ptxas_wall_ms", "ptxas_ms", "n_ptxas", "kernel_compile_ms",
                 "n_kernel_compiles", "threads", "scheduling_ms"):
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
