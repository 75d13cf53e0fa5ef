"""The IR of a program's entry point: a :class:`app.core.inspect.ir.StepIR` built by the same capture code as
a model step (``app.core.inspect.ir.capture``), so every IR view and the source map work on it. The jaxpr's
source lines name the program's file and line (torch and torchax frames are excluded for torch programs)."""

from __future__ import annotations

from typing import Any

from app.core.inspect.ir import StepIR, capture
from app.core.programs.loader import PreparedCall
from app.core.programs.runner import ProgramRunner, StopFn


def entry_ir(prepared: PreparedCall, args: tuple | None = None, should_stop: StopFn = None,
             runner: ProgramRunner | None = None) -> StepIR:
    """Trace, lower and compile the entry point for ``args`` (default: its prepared arguments) and capture
    jaxpr (with source lines), StableHLO (with debug locations), optimized HLO, cost analysis (flops,
    bytes accessed) and memory analysis (bytes). The result keeps the live ``traced_jaxpr`` for
    :func:`app.core.inspect.source_map.build_source_map`; call ``.plain()`` before sending it to another
    thread. Raises :class:`app.core.programs.errors.ProgramError` at the user's line, or
    :class:`app.core.programs.errors.ProgramStopped`."""
    runner = runner or ProgramRunner(prepared)
    args = prepared.args if args is None else args
    traced, lowered, compiled, _ = runner.stages(args, should_stop)
    return ir_from_stages((traced, lowered, compiled), runner, args)


def ir_from_stages(stages: tuple[Any, Any, Any], runner: ProgramRunner, args: tuple | None = None) -> StepIR:
    """A :class:`StepIR` from the ``(traced, lowered, compiled)`` of a compiling call (``RunResult.stages``)."""
    traced, lowered, compiled = stages
    return capture(traced, lowered, compiled, runner.input_labels(args))
