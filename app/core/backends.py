"""What differs between XLA backends, one row per platform: the names a compile leaves in a profiler capture
and in XLA's dump folder, and where executed ops are found. Parsers read these rows, never literals.

The CPU row is tested on this machine, the GPU row on real captures from a lent H100 / H200 (copied into the
tests), the TPU row comes from public facts and is marked untested. The CPU row's names, read here:

- jax 0.10.2: the XLA compile is the ``PjRtCpuClient::Compile`` event on a ``tf_PjRtCompilerThreadPool/<id>``
  line; HLO passes, pipeline spans (``"simplification (jit_f)"``) and backend phases nest inside it.
- jax 0.12.0.1: the compile runs on the calling thread (the ``python`` line when the Python tracer is on); the
  XLA compile is ``CompileCpuExecutable`` (inside JAX's ``backend_compile_and_load``), with the same passes,
  pipeline spans and ``CpuCompiler::RunBackend`` nested in it. Codegen threads are ``tf_xla-cpu-codegen/<id>``
  in both.

jax 0.12 also needs ``xla_dump_emitter_re`` for the kernels' LLVM IR (see ``CPU.kernel_ir_options``). Dump names are
XLA's (``xla/service/dump.cc``): ``<module>.before_optimizations.txt`` and
``<module>.cpu_after_optimizations.txt``, LLVM IR per kernel ``<fusion>_kernel_module.ir-no-opt.ll`` /
``.ir-with-opt.ll``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BackendFacts:
    """One XLA backend's names. ``platform``: JAX's platform name (``jax.default_backend()``)."""

    platform: str
    #: Profiler plane with the host threads (compile events, and executed ops on CPU).
    host_plane: str
    #: Event names of XLA's whole compile of one module, newest JAX first (the first found wins).
    client_compile_events: tuple[str, ...]
    #: The backend part of the compile (after the HLO pipelines), whose pipelines are "in backend".
    run_backend_event: str
    #: Backend events without ``::`` in their name (the rest are recognised by ``::``).
    backend_plain_events: frozenset[str]
    #: Substring of the profiler lines whose events are code generation threads.
    codegen_line: str
    #: Suffix (after the module name) of the optimized module in the dump folder.
    final_dump: str
    #: What the per-kernel IR files hold (shown as the kernel IR's name).
    kernel_ir: str
    #: XLA ``DebugOptions`` that make a compile dump every pass (with ``xla_dump_to``).
    dump_options: tuple[tuple[str, object], ...]
    #: Further options that also dump each kernel's IR (see the CPU row for why they are not always on).
    kernel_ir_options: tuple[tuple[str, object], ...]
    #: Profiler planes of the devices that run the ops (``"/device:GPU:"`` + ordinal); None: ops run on host threads.
    device_plane_prefix: str | None = None
    #: Whether this row was checked against real captures (the TPU row is from public facts only).
    tested: bool = True
    #: Prefixes of further phase events (``"HLO Transforms:jit_step"``, ``"Compiling IR:LLVMDialectModule"``).
    phase_prefixes: tuple[str, ...] = ()
    #: Compile-thread event whose window holds the codegen threads' events of this compile ("": the whole
    #: client compile; XLA:GPU's thread pool also compiles autotuning candidates outside it).
    codegen_window_event: str = ""
    #: Codegen-thread events: one kernel module's whole compile, and its PTX → binary step (ptxas) ("": none).
    kernel_compile_event: str = "FusionCompiler::Compile"
    assembler_event: str = ""
    #: Backend event that schedules the module (its own time is the split's "scheduling"; "": none).
    scheduling_event: str = ""
    #: Names of the events of the pipeline that autotunes (its span ``"<name> (<module>)"``), and further
    #: compile-thread events that belong to autotuning (loading results). Empty: the backend does not autotune.
    autotune_pipeline: str = ""
    autotune_events: tuple[str, ...] = ()
    #: Events, on the codegen threads inside the autotuning window, of one candidate's compile; the suffix of
    #: a candidate module's execution event (``"gemm_fusion_dot:XLA GPU module"``).
    autotune_candidate_event: str = ""
    autotune_run_suffix: str = ""
    #: Dump file suffixes (after ``module_N.<module>.``): autotuning results, the module before the autotuner
    #: assigned configs, the thunk sequence before and after the thunk passes, a fusion pass's decision log.
    autotune_results_dump: str = ""
    before_autotune_dump: str = ""
    thunk_sequence_dumps: tuple[str, ...] = ()
    fusion_decisions_dump: str = ""
    #: Extension of the per-kernel IR files in the dump folder ("ll" for LLVM IR, "ptx").
    kernel_ir_ext: str = "ll"
    #: Substrings of dump file names that only this backend writes (how a dump folder's backend is told).
    dump_markers: tuple[str, ...] = ()


CPU = BackendFacts(
    platform="cpu",
    host_plane="/host:CPU",
    client_compile_events=("CompileCpuExecutable", "PjRtCpuClient::Compile"),
    run_backend_event="CpuCompiler::RunBackend",
    backend_plain_events=frozenset({"Codegen", "SplitModule", "CompileCpuExecutable"}),
    codegen_line="xla-cpu-codegen",
    final_dump="cpu_after_optimizations",
    kernel_ir="LLVM IR",
    dump_options=(("xla_dump_hlo_pass_re", ".*"), ("xla_dump_hlo_as_text", True)),
    # jax 0.12's XLA:CPU writes a kernel's LLVM IR (.ir-no-opt.ll / .ir-with-opt.ll) only with
    # xla_dump_emitter_re (0.10.2 wrote it with the pass dumps alone; 0.12 writes just the .o files then). With it
    # on, compiling pydoc-llama's decode step aborted the process ("pure virtual method called") 6 runs of 6, a
    # small MLP 0 of 5 (also with xla_cpu_parallel_codegen_split_count=1), 07_mlp_training.py's step 12 of 20
    # (SIGABRT, "double free or corruption (!prev)" too, or SIGSEGV): so it is asked for, not default, and a
    # compile with it always runs in a child process (app/core/passes/record.py), recorded again without it when
    # the child dies. Reproducer: tools/repro_kernel_ir_abort.py (jaxlib 0.12.0.1); when a jaxlib passes it, that
    # guard can go.
    kernel_ir_options=(("xla_dump_emitter_re", ".*"),),
    dump_markers=("cpu_after_optimizations",),
)

#: XLA:GPU (CUDA). Names read from captures on an NVIDIA H100 / H200 with jax 0.11.2 and the CUDA 13 plugin
#: (``tests/fixtures/gpu/passes/``, from ``../shared/fixtures/gpu/``). On the compiling (Python) thread:
#: ``PjRtCApiClient::CompileAndLoad(jit_step)`` > ``PJRT_Client_Compile`` > ``PjRtStreamExecutorClient::CompileInternal``
#: > ``LoadAutotuneResultsFromFile``, ``HLO Transforms:jit_step`` > ``OptimizeHloModule`` > pipeline spans
#: (``"nvptx post-layout_assignment part 1 (jit_step)"``, ``"fusion (jit_step)"`` > ``priority-fusion``,
#: ``"config-assigner (jit_step)"`` > ``config-assigner``: the autotuner), then ``CompileToBackendResult`` >
#: ``ScheduleGpuModule``, post-scheduling pipelines, ``CompileModuleToLlvmIr``; then ``CommandBufferConversionPass``.
#: On ``tf_pjrt_compile_thread_pool/<id>`` lines, inside ``CompileModuleToLlvmIr``: ``CompileSingleModule`` per
#: kernel module (39 for pydoc-llama's decode step) > ``Compiling IR:LLVMDialectModule`` and ``PTX->CUBIN``
#: (ptxas), in parallel. Inside the autotuner's span the same lines compile candidates (``CompileToBackendResult``
#: with spans ``"post-scheduling-passes (gemm_fusion_dot)"``) and run them (``"gemm_fusion_dot:XLA GPU module"``;
#: the candidates' kernels are on ``/device:GPU:0``). Dumps: ``<module>.sm_9.0a_gpu_after_optimizations.txt`` (the
#: compute capability first), ``before_config_assignment.txt``, ``autotune_results.pbtxt`` (``version: 3`` and
#: no result in both fixtures), ``thunk_sequence.txt`` / ``thunk_sequence_after_thunk_passes.txt``,
#: ``thunk_metadata.txt``, ``priority_fusion_dump.txt``; no ``.ptx`` with the pass dump options alone.
GPU = BackendFacts(
    platform="gpu",
    host_plane="/host:CPU",
    client_compile_events=("PjRtCApiClient::CompileAndLoad", "PjRtStreamExecutorClient::CompileInternal"),
    run_backend_event="CompileToBackendResult",
    backend_plain_events=frozenset({
        "CompileModuleToLlvmIr", "CompileSingleModule", "PTX->CUBIN", "CompileToBackendResult",
        "LoadAutotuneResultsFromFile", "OptimizeHloModule", "ScheduleGpuModule", "RunPreSchedulingPasses",
        "RunLatencyHidingSchedulerPasses", "RunPostSchedulingPipelines", "RunAsyncDotPasses", "RunInvariantCheckers",
        "CommandBufferConversionPass", "EvictCommandBuffers", "CreateMaybeOwningThreadPool", "CreateHloAnalysisOpts",
        "CreateRematOpts"}),
    codegen_line="pjrt_compile_thread_pool",
    final_dump="gpu_after_optimizations",
    kernel_ir="PTX",
    dump_options=(("xla_dump_hlo_pass_re", ".*"), ("xla_dump_hlo_as_text", True)),
    kernel_ir_options=(),
    device_plane_prefix="/device:GPU:",
    phase_prefixes=("HLO Transforms:", "Compiling IR:", "PJRT_Client_Compile"),
    codegen_window_event="CompileModuleToLlvmIr",
    kernel_compile_event="CompileSingleModule",
    assembler_event="PTX->CUBIN",
    scheduling_event="ScheduleGpuModule",
    autotune_pipeline="config-assigner",
    autotune_events=("LoadAutotuneResultsFromFile",),
    autotune_candidate_event="CompileToBackendResult",
    autotune_run_suffix=":XLA GPU module",
    autotune_results_dump="autotune_results.pbtxt",
    before_autotune_dump="before_config_assignment.txt",
    thunk_sequence_dumps=("thunk_sequence.txt", "thunk_sequence_after_thunk_passes.txt"),
    fusion_decisions_dump="priority_fusion_dump.txt",
    kernel_ir_ext="ptx",
    dump_markers=("gpu_after_optimizations", "gpu_target_config.pbtxt", "thunk_sequence.txt"),
)

#: Cloud TPU, from public facts only (XLA's TPU compiler is closed source; jax's profiler names the device planes
#: ``/device:TPU:<n>``): untested here, no TPU was lent to this project.
TPU = BackendFacts(
    platform="tpu",
    host_plane="/host:CPU",
    client_compile_events=("PjRtCApiClient::CompileAndLoad",),
    run_backend_event="",
    backend_plain_events=frozenset(),
    codegen_line="",
    final_dump="tpu_after_optimizations",
    kernel_ir="LLO",
    dump_options=(("xla_dump_hlo_pass_re", ".*"), ("xla_dump_hlo_as_text", True)),
    kernel_ir_options=(),
    device_plane_prefix="/device:TPU:",
    tested=False,
    kernel_compile_event="",
    dump_markers=("tpu_after_optimizations",),
)

#: Every row by platform name (JAX's ``jax.default_backend()`` / ``Device.platform``).
BACKENDS: dict[str, BackendFacts] = {row.platform: row for row in (CPU, GPU, TPU)}


def facts(platform: str) -> BackendFacts:
    """The row of ``platform`` (``"cpu"``); raises ``KeyError`` naming the platforms that have one."""
    try:
        return BACKENDS[platform]
    except KeyError:
        raise KeyError(f"No backend facts for platform {platform!r} (known: {', '.join(BACKENDS)}).") from None


def dumps_backend(file_names) -> BackendFacts:
    """The row whose :attr:`BackendFacts.dump_markers` the dump folder's file names hold (XLA:GPU writes
    ``<module>.sm_9.0a_gpu_after_optimizations.txt``, XLA:CPU ``<module>.cpu_after_optimizations.txt``); CPU when
    none does (a folder of per-pass snapshots only)."""
    names = list(file_names)
    for row in (GPU, TPU, CPU):
        if any(marker in name for name in names for marker in row.dump_markers):
            return row
    return CPU
