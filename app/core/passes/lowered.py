"""The one lookup of the ``jax.stages.Lowered`` whose passes, kernels or optimized HLO a command wants: a model's
compiled step (``prefill`` / ``decode`` of the engine's latest XLA mode, or the mode asked for) or a program's entry
point (lowered once more by a runner of its prepared call). Used by the window's Passes tab, ``passes``, ``inspect
--what passes`` and ``program --what passes`` alike. No Qt."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from app.core.errors import PlaygroundError
from app.core.steps import DECODE

if TYPE_CHECKING:
    from app.core.engine.engine import Engine

#: The mode named for a program's entry point (it is lowered as ``jax.jit`` would).
PROGRAM_MODE = "jit"


@runtime_checkable
class Lowerable(Protocol):
    """What lowers a program's entry point anew: :class:`app.core.programs.runner.ProgramRunner` (the programs
    package stands above this one: it races and profiles with the passes)."""

    def lower(self, args: tuple | None = None, should_stop: Callable[[], bool] | None = None) -> Any: ...


def lowered_for(source: Engine | Lowerable, step: str = DECODE, mode: str = "",
                should_stop: Callable[[], bool] | None = None) -> tuple[str, Any]:
    """``(mode, jax Lowered)``. ``source``: an :class:`~app.core.engine.engine.Engine` — its compiled ``step`` in
    ``mode`` when that mode compiled it with XLA, else in the most recently compiled XLA mode that has it — or a
    :class:`Lowerable` (a program's :class:`~app.core.programs.runner.ProgramRunner`) — its entry point traced and
    lowered anew with its prepared arguments (``step`` and ``mode`` unused; ``should_stop`` reaches the user's code
    while tracing). Raises :class:`PlaygroundError` saying what to do (no compiled step yet; a step compiled by
    Inductor, not XLA) and the program's :class:`~app.core.programs.errors.ProgramError` for an error in the user's
    code."""
    if isinstance(source, Lowerable):  # a program's runner
        return PROGRAM_MODE, source.lower(should_stop=should_stop)
    return _engine_step(source, step, mode)


def _engine_step(engine: Any, step: str, mode: str) -> tuple[str, Any]:
    irs = getattr(engine, "ir", {}) or {}
    candidates = sorted((k for k in reversed(list(irs)) if k[1] == step), key=lambda k: k[0] != mode)
    for key in candidates:
        ir = irs[key]
        lowered = getattr(ir, "lowered", None)
        if lowered is not None and getattr(ir, "compiler", "xla") == "xla":
            return key[0], lowered
    if candidates:
        raise PlaygroundError(f"The {step} step of {candidates[0][0]} was not compiled by XLA (torch-compile "
                              "steps are compiled by Inductor): run a JAX mode (jit-static, jit-dynamic) to "
                              "record XLA's passes.")
    raise PlaygroundError(f"No compiled {step} step yet: run the prompt (Ctrl+Enter) in a JAX mode, then record.")
