"""The step vocabulary: the names of a model run's steps, written once. Pure data at the lowest floor of the
core (pyproject.toml's layers), so the typed events (:mod:`app.core.events`) and the IR-view catalog
(:mod:`app.core.inspect.views`, which re-exports these names for the widgets) both read it.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

#: A model run's step kinds; a program's calls are named after its entry point instead.
StepKind = Literal["prefill", "decode"]
#: The steps of a model run, in the order they run: ``("prefill", "decode")``.
MODEL_STEPS: tuple[StepKind, StepKind] = get_args(StepKind)
#: The steps by name, for code that means one of them (``step == DECODE``).
PREFILL: Final = "prefill"
DECODE: Final = "decode"


#: The step a picker of model steps (the CLI's ``--step``, the window's step boxes) starts on: decode, the
#: step repeated once per token.
DEFAULT_STEP: StepKind = DECODE
#: The model steps as the pickers list them: the default first, ``("decode", "prefill")``.
STEP_CHOICES: tuple[StepKind, ...] = (DEFAULT_STEP, *(s for s in MODEL_STEPS if s != DEFAULT_STEP))


def is_model_step(step: str) -> bool:
    """``step`` is one of a model's steps (:data:`MODEL_STEPS`), not a program's entry point."""
    return step in MODEL_STEPS
