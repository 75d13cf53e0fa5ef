"""The profiler on the user's program (issue 21): a :class:`app.core.profile.step.StepCall` of a program's entry
point, so :func:`app.core.profile.step.profile_call` measures it like a model step — time per HLO op, fusion
and source line, the lines naming the program's ``file:line``. No Qt; run it on the compute thread or the CLI::

    prepared = load_program("mine.py").prepare("selu")
    call, live_ir = program_step_call(prepared)
    profile = profile_call(call, "selu", n_steps=20)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.core.inspect.source_map import build_source_map
from app.core.profile.step import StepCall
from app.core.programs.ir import ir_from_stages
from app.core.programs.loader import PreparedCall
from app.core.programs.runner import ProgramRunner


def program_step_call(prepared: PreparedCall,
                      should_stop: Callable[[], bool] | None = None) -> tuple[StepCall, Any]:
    """Trace, lower and compile the entry point of ``prepared`` (a
    :class:`app.core.programs.loader.PreparedCall`) with its example arguments, once, in a runner of its own;
    returns the :class:`StepCall` (one call of the executable with the prepared arguments, waited for) and the
    entry point's live :class:`app.core.inspect.ir.StepIR` (its source map is the call's). Raises
    :class:`app.core.programs.errors.ProgramError` at the user's line."""
    import jax

    runner = ProgramRunner(prepared)
    args = prepared.args
    traced, lowered, compiled, _ = runner.stages(args, should_stop)
    live = ir_from_stages((traced, lowered, compiled), runner, args)
    static = prepared.static_argnums
    donate = prepared.donate_argnums

    def run() -> None:
        call_args = runner._fresh(args) if donate else args  # donated buffers: a fresh copy per call
        dynamic = tuple(a for i, a in enumerate(call_args) if i not in static)
        jax.block_until_ready(compiled(*dynamic))

    try:
        source_map = build_source_map(live, prepared.entry.name, None)
    except ValueError:
        source_map = None
    return StepCall(compiled, run, source_map), live
