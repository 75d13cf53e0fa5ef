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
    # small MLP 0 of 5 (also with xla_cpu_parallel_codegen_split_count=1): so it is asked for, not default.
    kernel_ir_options=(("xla_dump_emitter_re", ".*"),),
)

#: XLA:GPU (CUDA). Names read from captures on an NVIDIA H100 / H200 with jax 0.11.2 and the CUDA 13 plugin
#: (``../shared/fixtures/gpu/``): the compile is ``PjRtCApiClient::CompileAndLoad(jit_step)`` >
#: ``PjRtStreamExecutorClient::CompileInternal`` > ``HLO Transforms:jit_step`` / ``OptimizeHloModule`` (nvptx
#: pipelines, ``priority-fusion``) > ``CompileToBackendResult`` > ``CompileModuleToLlvmIr`` / ``CompileSingleModule``
#: / ``PTX->CUBIN``; the optimized module is ``<module>.sm_9.0a_gpu_after_optimizations.txt``; kernels run on the
#: ``/device:GPU:<n>`` planes (one line per stream).
GPU = BackendFacts(
    platform="gpu",
    host_plane="/host:CPU",
    client_compile_events=("PjRtCApiClient::CompileAndLoad", "PjRtStreamExecutorClient::CompileInternal"),
    run_backend_event="CompileToBackendResult",
    backend_plain_events=frozenset({"CompileModuleToLlvmIr", "CompileSingleModule", "PTX->CUBIN",
                                    "CompileToBackendResult", "LoadAutotuneResultsFromFile"}),
    codegen_line="",
    final_dump="gpu_after_optimizations",
    kernel_ir="PTX",
    dump_options=(("xla_dump_hlo_pass_re", ".*"), ("xla_dump_hlo_as_text", True)),
    kernel_ir_options=(),
    device_plane_prefix="/device:GPU:",
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
)

#: Every row by platform name (JAX's ``jax.default_backend()`` / ``Device.platform``).
BACKENDS: dict[str, BackendFacts] = {row.platform: row for row in (CPU, GPU, TPU)}


def facts(platform: str) -> BackendFacts:
    """The row of ``platform`` (``"cpu"``); raises ``KeyError`` naming the platforms that have one."""
    try:
        return BACKENDS[platform]
    except KeyError:
        raise KeyError(f"No backend facts for platform {platform!r} (known: {', '.join(BACKENDS)}).") from None
