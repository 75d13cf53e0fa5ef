"""What differs between XLA backends, one row per platform: the names a compile leaves in a profiler capture
and in XLA's dump folder (and the module that parses the dumps only one backend writes), the compile split's
events, where executed ops are found, how the roofline's bandwidth and peak FLOP/s are measured, and what runs
there (the torch device). Parsers and callers read these rows, never platform names: :data:`BACKENDS` is the one
list of platforms, and only this module and the device chooser (:mod:`app.core.engine.device`) compare them.

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
    #: The module that reads the dump files only this backend writes: ``read_extras(…)`` → ``PassPipeline.extras``
    #: (a :class:`app.core.passes.model.BackendCompileFacts`: the row's extra compile facts, which the passes report
    #: and the Passes tab show), ``apply_capture(…)``; :func:`app.core.passes.dumps.build_pipeline`. "": none.
    dump_parser: str = ""
    #: Compile-thread event (prefix) of the whole HLO optimization (``HLO Transforms:<module>``; "": none).
    transforms_event: str = ""
    #: Parts of the compile split read from backend events, ``(label, event names)``: the first name found counts
    #: (:func:`app.core.passes.query.compile_breakdown`; XLA:GPU's parts come from the capture's figures).
    breakdown_phases: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: XLA modules whose verbose log (``TF_CPP_VMODULE=<module>=2``) holds the fusion decisions; their source files
    #: are ``<module>.cc`` (:mod:`app.core.passes.fusion_log`). Empty: no fusion log is read on this backend.
    fusion_log_modules: tuple[str, ...] = ()
    #: The one line of a device plane whose events are ops, where the plane also has lines of whole module runs or
    #: steps ("": every line; a GPU plane has one line per stream, each of them kernels and memcpys).
    device_op_line: str = ""
    #: The XLA flag (``XLA_FLAGS``) that turns command buffers off (an empty list of command types; "": none).
    command_buffer_flag: str = ""
    #: How the roofline's figures are measured (:data:`app.core.profile.capture.PROBES`): the memory bandwidth
    #: (``"host read"``: NumPy sums on every core or an XLA matrix-vector product, the faster; ``"device copy"``:
    #: a jitted ``x + 1`` on the device) and the peak FLOP/s (``"device matmul"``; "": none).
    bandwidth_probe: str = "device copy"
    peak_flops_probe: str = "device matmul"
    #: The torch device of the PyTorch modes (``"cpu"``, ``"cuda:0"`` when torch has CUDA); "": torch does not run
    #: here (no torch_xla).
    torch_device: str = ""
    #: What a machine without this platform needs (the device chooser's error).
    install_hint: str = ""
    #: What records call the device instead of its kind ("": the device kind, ``"NVIDIA H100 80GB HBM3"``).
    device_name: str = ""
    #: A warning for a bfloat16 model on this backend ("": none).
    bfloat16_note: str = ""


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
    breakdown_phases=(("thunk emission", ("ThunkEmitter::EmitEntryComputation",)),
                      ("LLVM", ("JitCompiler::Compile", "Codegen"))),
    fusion_log_modules=("cpu_instruction_fusion", "instruction_fusion"),
    bandwidth_probe="host read",
    peak_flops_probe="",
    torch_device="cpu",
    install_hint="JAX always has a CPU unless JAX_PLATFORMS leaves it out",
    device_name="CPU",
    bfloat16_note="bfloat16 on XLA:CPU is about 10x slower than float32 (each weight is converted to float32 every "
                  "step); use float32 on CPU.",
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
    dump_parser="app.core.passes.gpu_dumps",
    transforms_event="HLO Transforms:",
    command_buffer_flag="--xla_gpu_enable_command_buffer=",
    torch_device="cuda:0",
    install_hint="a GPU needs an NVIDIA driver and jax's CUDA plugin (pip install 'jax[cuda13]')",
)

#: Cloud TPU, from public facts only (XLA's TPU compiler is closed source; jax's profiler names the device planes
#: ``/device:TPU:<n>``, and XProf describes their lines ``XLA Modules``, ``XLA Ops``, ``Steps``): untested here, no
#: TPU was lent to this project.
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
    device_op_line="XLA Ops",
    install_hint="a TPU needs a TPU VM with libtpu (pip install 'jax[tpu]')",
)

#: torch's device type of an NVIDIA GPU (``torch.device("cuda:0").type``; the GPU row's ``torch_device``).
TORCH_CUDA = "cuda"

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
    for row in BACKENDS.values():  # the rows' markers are disjoint: the order does not matter
        if any(marker in name for name in names for marker in row.dump_markers):
            return row
    return CPU


#: The roofline's probes (``bandwidth_probe``, ``peak_flops_probe``) of an accelerator JAX names without a row here.
DEVICE_PROBES = ("device copy", "device matmul")


def roofline_probes(platform: str) -> tuple[str, str]:
    """``(bandwidth probe, peak FLOP/s probe)`` of ``platform``'s row (:attr:`BackendFacts.bandwidth_probe`), or
    :data:`DEVICE_PROBES` for a platform without one (a device plugin's)."""
    row = BACKENDS.get(platform)
    return (row.bandwidth_probe, row.peak_flops_probe) if row is not None else DEVICE_PROBES
