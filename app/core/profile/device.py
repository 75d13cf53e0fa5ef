"""Which HLO instruction each kernel of a device capture ran for: the join of a GPU/TPU profile's kernel events
(:func:`app.core.profile.capture.read_capture` on a device plane) with the optimized HLO module
(:mod:`app.core.profile.hlo`). No Qt, no JAX.

Rules, in order, for the kernels of the profiled module:

1. ``hlo_op`` — the kernel's ``hlo_op`` stat names an instruction of the module: that instruction (XLA:GPU
   annotates each kernel launch with its instruction when it launches kernels one by one).
2. ``schedule`` — otherwise (XLA ran the module as a *command buffer*, a CUDA graph: every kernel's ``hlo_op``
   is ``command_buffer_1``) the kernels of one run, in start order, are aligned with the entry computation's
   instructions that run on the device (a scheduled module prints them in execution order). A kernel matches the
   next instruction it is compatible with: the kernel is named after it (``input_reduce_fusion_34`` is
   ``input_reduce_fusion.34``, the ``.N`` suffix written ``_N``), or after an instruction of the same kind,
   opcode and shape (XLA compiles identical fusions once and launches that kernel, named after the first, for
   each of them: in the H200 capture ``input_reduce_fusion_34`` runs for ``input_reduce_fusion.33``, ``.32``,
   …), or it is a memcpy node (``memcpy32_post``) and the instruction a ``copy``, or it has a library's name
   (a cuBLAS gemm) and the instruction is a ``custom-call``.
3. ``kernel name`` — a kernel left over is the instruction its name gives, when there is one.

Anything else keeps its kernel name and a label (:attr:`app.core.profile.capture.Capture.labels`).
Memcpys outside the program and other programs' kernels are labelled by the reader.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from app.core.backends import GPU
from app.core.profile.capture import Capture, OpEvent
from app.core.profile.hlo import NO_WORK, HloModuleInfo, HloOp

#: The XLA flag (``XLA_FLAGS``) that turns command buffers (CUDA graphs) off: an empty list of command types
#: (``DebugOptions.xla_gpu_enable_command_buffer``, read by XLA:GPU's command buffer conversion pass; the GPU row's
#: ``command_buffer_flag``).
COMMAND_BUFFER_FLAG = GPU.command_buffer_flag
_SUFFIX = re.compile(r"_(\d+)$")
_COMMAND_BUFFER = re.compile(r"^command_buffer(?:_\d+)?$")


@dataclass
class KernelJoin:
    """How the kernels of a device capture were joined: ``kernels`` of the profiled module; per rule (``hlo_op``,
    ``schedule``, ``kernel name``) how many it named; ``unmatched`` kernel names left as they are;
    ``command_buffers``: the ``hlo_op`` stats that name a command buffer (``command_buffer_1``)."""

    kernels: int = 0
    by_rule: dict[str, int] = field(default_factory=dict)
    unmatched: list[str] = field(default_factory=list)
    command_buffers: list[str] = field(default_factory=list)

    @property
    def matched(self) -> int:
        return sum(self.by_rule.values())


def kernel_instruction(kernel: str, info: HloModuleInfo) -> str | None:
    """The instruction a kernel is named after: ``input_reduce_fusion_34`` → ``input_reduce_fusion.34``
    (or the name itself, ``loop_add_fusion``); None when the module has neither."""
    if kernel in info.ops:
        return kernel
    m = _SUFFIX.search(kernel)
    if m is not None:
        name = f"{kernel[:m.start()]}.{m.group(1)}"
        if name in info.ops:
            return name
    return None


def device_schedule(info: HloModuleInfo) -> list[str]:
    """The entry computation's instructions that run on the device, in schedule order (those that do work:
    no parameter, constant, bitcast, tuple, get-tuple-element)."""
    return [n for n in info.entry if info.ops[n].opcode not in NO_WORK]


def _compatible(kernel: str, op: HloOp, info: HloModuleInfo) -> bool:
    named = kernel_instruction(kernel, info)
    if named == op.name:
        return True
    if named is not None:
        other = info.ops[named]
        return (other.opcode, other.kind, other.shape) == (op.opcode, op.kind, op.shape)
    if kernel.lower().startswith("memcpy"):
        return op.opcode == "copy"
    return op.opcode == "custom-call"


def align(kernels: list[str], schedule: list[str], info: HloModuleInfo) -> list[str | None]:
    """The instruction of each kernel of one or more runs of the module (``kernels`` in start order) by rule 2
    (module docstring): each kernel takes the next compatible instruction of ``schedule`` after the previous
    match (starting over from the first when none follows: the next run); None when no instruction is."""
    out: list[str | None] = []
    pos = 0
    for kernel in kernels:
        found = next((j for j in range(pos, len(schedule)) if _compatible(kernel, info.ops[schedule[j]], info)), None)
        if found is None:
            found = next((j for j in range(0, pos) if _compatible(kernel, info.ops[schedule[j]], info)), None)
        out.append(schedule[found] if found is not None else None)
        if found is not None:
            pos = found + 1
    return out


def join_kernels(capture: Capture, info: HloModuleInfo) -> KernelJoin:
    """Rename the profiled module's kernel events of ``capture`` (a device capture) to their instructions, by the
    module docstring's rules; label those left over (``capture.labels``) and add a note where command buffers
    hid the ops (``capture.notes``). Returns how the join went."""
    join = KernelJoin()
    schedule = device_schedule(info)
    by_step: dict[int, list[OpEvent]] = {}
    for ev in capture.events:
        if ev.name in capture.labels:
            continue
        join.kernels += 1
        if ev.hlo_op in info.ops:
            _rename(ev, ev.hlo_op, "hlo_op", join)
            continue
        if _COMMAND_BUFFER.match(ev.hlo_op) and ev.hlo_op not in join.command_buffers:
            join.command_buffers.append(ev.hlo_op)
        by_step.setdefault(ev.step, []).append(ev)
    for events in by_step.values():
        events.sort(key=lambda e: e.start_ns)
        for ev, name in zip(events, align([e.kernel for e in events], schedule, info)):
            if name is not None:
                _rename(ev, name, "schedule", join)
            elif (named := kernel_instruction(ev.kernel, info)) is not None:
                _rename(ev, named, "kernel name", join)
            else:
                capture.labels[ev.name] = (f"<kernel without an HLO instruction: {ev.kernel}>", "unmatched", "kernel")
                if ev.kernel not in join.unmatched:
                    join.unmatched.append(ev.kernel)
    capture.notes += join_notes(join, capture.module)
    return join


def _rename(ev: OpEvent, name: str, rule: str, join: KernelJoin) -> None:
    ev.name = name
    join.by_rule[rule] = join.by_rule.get(rule, 0) + 1


def join_notes(join: KernelJoin, module: str) -> list[str]:
    """What a profile should say about the join: command buffers that hid the ops (and the flag that turns them
    off for a profile), kernels no instruction was found for."""
    notes = []
    if join.command_buffers:
        notes.append(
            f"XLA ran {module} as a command buffer ({', '.join(join.command_buffers)}, a CUDA graph): the kernels' "
            f"hlo_op stat names the command buffer, not the op, so {join.by_rule.get('schedule', 0)} of "
            f"{join.kernels} kernels and memcpy nodes were matched to their HLO instructions by schedule order and kernel name "
            "(identical fusions share one kernel). For a profile with per-op annotations and per-kernel launch "
            f"gaps, run with XLA_FLAGS={COMMAND_BUFFER_FLAG} (an empty list turns command buffers off; "
            "the step then launches each kernel from the host and runs slower).")
    if join.unmatched:
        notes.append(f"{len(join.unmatched)} kernel name(s) match no HLO instruction of {module}: "
                     + ", ".join(join.unmatched[:8]) + ("…" if len(join.unmatched) > 8 else ""))
    return notes
