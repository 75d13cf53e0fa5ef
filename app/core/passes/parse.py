"""Read what one recorded compile left behind: the dump directory (``xla_dump_to``) and the profiler's
XSpace. Pure parsing, JAX imported only to read the capture (``jax.profiler.ProfileData``).

Dump file names (XLA ``xla/service/dump.cc``, ``FilenameFor`` / ``DumpHloModuleBetweenPassesIfEnabled``)::

    module_0008.jit_mlp.0016.HLO_passes_after_layout_assignment.after_fusion.before_fusion-wrapper.txt
    module_0008.jit_mlp.0018.copy-insertion.after_adding_copies_to_resolve_interference.txt
    module_0008.jit_mlp.before_optimizations.txt / cpu_after_optimizations.txt
    module_0008.jit_mlp.tanh_reduce_fusion_kernel_module.ir-no-opt.ll / .ir-with-opt.ll

File names write a pipeline's spaces as underscores; the profiler's events keep the spaces
(``"HLO passes after layout assignment (jit_mlp)"``) and some pipelines have real underscores
(``post_scatter_expansion_simplification``), so names are matched with spaces and underscores equated.
"""

from __future__ import annotations

import os
import re
import zlib
from collections import Counter
from pathlib import Path

from app.core.backends import CPU, BackendFacts
from app.core.inspect.text_index import HLO_INSTRUCTION, HLO_KIND
from app.core.passes.model import BackendPhase, FusionIR, PassTime, PipelineTime, Snapshot

_PASS_FILE = re.compile(
    r"^module_(\d+)\.(.+?)\.(\d{4})\.([^.]+)\.after_(.+?)(?:\.before_(.+))?\.txt$")
_FINAL_FILE = re.compile(rf"^module_(\d+)\.(.+?)\.(before_optimizations|{CPU.final_dump})\.txt$")
_LLVM_FILE = re.compile(r"^module_(\d+)\.(.+?)\.(.+)_kernel_module\.ir-(no-opt|with-opt)\.ll$")
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


def read_profile(source: str | os.PathLike | bytes, module: str, snapshots: list[Snapshot],
                 backend_facts: BackendFacts = CPU):
    """Pass times, pipeline runs, backend phases and the client compile's ms for module ``module``.

    ``source``: an ``.xplane.pb`` path or its bytes. The compile is the first event named in
    ``backend_facts.client_compile_events`` (``CompileCpuExecutable`` on jax ≥ 0.11, ``PjRtCpuClient::Compile``
    on a ``PjRtCompilerThreadPool`` line before) on a line of the host plane that contains a pipeline span
    ``"… (<module>)"``; events of that line inside it are passes (innermost enclosing pipeline span gives their
    pipeline), pipeline spans, or backend phases (names with ``::``, ``Codegen``, ``SplitModule``); events on
    codegen lines (``xla-cpu-codegen``) inside it are backend phases. Python-tracer events (``$file.py:N f``)
    are left out. A pass event whose name is also a pipeline's (the pipeline run as a pass of its parent) is
    left out, so pass times do not count a pipeline twice.
    Returns ``(pass_times, pipelines, backend, client_ms)``; raises ``ValueError`` when no such compile
    event is in the capture."""
    from jax.profiler import ProfileData

    data = (ProfileData.from_serialized_xspace(bytes(source)) if isinstance(source, (bytes, bytearray))
            else ProfileData.from_file(os.fspath(source)))
    plane = data.find_plane_with_name(backend_facts.host_plane)
    if plane is None:
        raise ValueError(f"The capture has no {backend_facts.host_plane!r} plane (not an XLA:"
                         f"{backend_facts.platform.upper()} profile).")
    lines = [(line.name, [(e.name, e.start_ns, e.duration_ns) for e in line.events]) for line in plane.lines]
    suffix = f" ({module})"
    window = None
    compile_thread = ""
    compiler_events: list[tuple[str, float, float]] = []
    for event_name in backend_facts.client_compile_events:
        for name, events in lines:
            for ev in events:
                if ev[0] != event_name:
                    continue
                lo, hi = ev[1], ev[1] + ev[2]
                if any(e[0].endswith(suffix) and lo <= e[1] <= hi for e in events):
                    window, compile_thread = ev, _thread_kind(name)
                    compiler_events = [e for e in events if lo <= e[1] <= hi and e is not ev
                                       and not e[0].startswith(_PYTHON_TRACER)]
        if window is not None:
            break
    if window is None:
        raise ValueError(f"The capture has no {' or '.join(backend_facts.client_compile_events)} event of "
                         f"module {module!r}.")
    lo, hi = window[1], window[1] + window[2]
    spans = [(e[0][: -len(suffix)], e[1], e[1] + e[2]) for e in compiler_events if e[0].endswith(suffix)]
    pipeline_names = {s[0] for s in spans}
    run_backend = [(e[1], e[1] + e[2]) for e in compiler_events if e[0] == backend_facts.run_backend_event]
    pipelines: list[PipelineTime] = []
    for name, a, b in spans:
        depth = sum(1 for n2, a2, b2 in spans if a2 <= a and b <= b2 and (a2, b2) != (a, b))
        in_backend = any(a2 <= a and b <= b2 for a2, b2 in run_backend)
        pipelines.append(PipelineTime(name, (b - a) / 1e6, depth, a, in_backend))
    pipelines.sort(key=lambda p: p.start_ns)
    changed = Counter((norm(s.pipeline), norm(s.pass_name)) for s in snapshots if s.changed)
    passes: dict[tuple[str, str], PassTime] = {}
    backend: dict[str, BackendPhase] = {}
    for name, start, dur in compiler_events:
        if name.endswith(suffix) or name.startswith(_BOOKKEEPING) or name in pipeline_names:
            continue
        if "::" in name or name in backend_facts.backend_plain_events:
            _add_phase(backend, name, dur, compile_thread)
            continue
        inner = [s for s in spans if s[1] <= start <= s[2]]
        pipeline = min(inner, key=lambda s: s[2] - s[1])[0] if inner else ""
        key = (pipeline, name)
        if key not in passes:
            passes[key] = PassTime(pipeline, name, 0.0, 0, changed.get((norm(pipeline), norm(name)), 0), start)
        passes[key].ms += dur / 1e6
        passes[key].count += 1
    for name, events in lines:
        if backend_facts.codegen_line not in name:
            continue
        for ev_name, start, dur in events:
            if lo <= start <= hi and not ev_name.startswith(_BOOKKEEPING):
                _add_phase(backend, ev_name, dur, _thread_kind(name))
    return (sorted(passes.values(), key=lambda p: p.first_ns), pipelines, list(backend.values()), window[2] / 1e6)


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
