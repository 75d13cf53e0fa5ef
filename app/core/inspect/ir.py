"""IR capture following JAX's stages API: ``jit(f).trace()`` → jaxpr, ``.lower()`` → StableHLO,
``.compile()`` → optimized HLO, cost and memory analysis (``jax/_src/stages.py``).

Every text or analysis is ``None`` when the backend cannot provide it (a method raises or returns
nothing); views show ``None`` as "not available on this backend".
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from app.core.inspect.text_index import count_hlo, count_stablehlo_ops
from app.core.inspect.views import MEMORY
from app.core.jax_private import exclude_from_tracebacks, jaxprs_in_params, open_jaxpr

if TYPE_CHECKING:
    import jax
    from jax.extend.core import Jaxpr

NOT_AVAILABLE = "not available on this backend"


@dataclass
class StepIR:
    """The IR of one compiled step (prefill or decode step).

    ``jaxpr`` is the closed jaxpr pretty-printed with name stacks (torchax's ``aten::`` scopes);
    ``jaxpr_source`` adds each equation's source location. ``stablehlo`` is the lowered module
    (``Lowered.as_text()``); ``stablehlo_debug`` the same module with source locations
    (``as_text(debug_info=True)``: each op line gains ``loc(#locN)`` and ``#loc`` alias lines surround the
    module; the other lines are those of ``stablehlo``, in order — see ``app/core/inspect/text_index.py``).
    ``hlo`` is the optimized HLO after XLA's passes (``Compiled.as_text()``).
    ``cost``: ``Compiled.cost_analysis()`` (keys such as ``flops``, ``bytes accessed``, float values).
    ``memory``: ``Compiled.memory_analysis()`` as bytes: ``argument``, ``output``, ``temp``,
    ``generated_code``, ``alias``. ``input_labels``: one readable name per flattened input of the jaxpr,
    in order (weight names, KV-cache leaves, ``input_ids``, …, ``PRNG key``).
    ``compiler`` is ``"xla"`` (the JAX modes) or ``"inductor"`` (``torch-compile``, whose step has
    ``fx_graph``: the FX graph Dynamo captured, and ``inductor_code``: the code Inductor generated).
    ``n_fusions``: fusion instructions in the optimized HLO; ``n_kernels``: kernels Inductor generated.
    """

    jaxpr: str | None = None
    jaxpr_source: str | None = None
    stablehlo: str | None = None
    stablehlo_debug: str | None = None
    hlo: str | None = None
    cost: dict[str, float] | None = None
    memory: dict[str, int] | None = None
    n_equations: int | None = None
    n_stablehlo_ops: int | None = None
    n_hlo_instructions: int | None = None
    input_labels: list[str] = field(default_factory=list)
    compiler: str = "xla"
    fx_graph: str | None = None
    inductor_code: str | None = None
    n_fusions: int | None = None
    n_kernels: int | None = None
    #: What ``Traced.jaxpr`` returned (a ``ClosedJaxpr`` up to jax 0.10, a closed ``Jaxpr`` since 0.11; its open
    #: jaxpr is :func:`app.core.jax_private.open_jaxpr`); None in :meth:`plain` copies.
    traced_jaxpr: Any = field(default=None, repr=False, compare=False)
    #: The live ``jax.stages.Lowered`` of an XLA step (None for Inductor, and in :meth:`plain` copies): what
    #: :func:`app.core.passes.record.record_pipeline` compiles again to record XLA's pass pipeline.
    lowered: Any = field(default=None, repr=False, compare=False)

    def text(self, which: str) -> str | None:
        """``which`` in ``jaxpr``, ``jaxpr_source``, ``stablehlo``, ``hlo``, ``fx_graph``, ``inductor_code``."""
        return getattr(self, which)

    def plain(self) -> StepIR:
        """This IR without the live jaxpr and ``Lowered`` objects: texts and figures only, safe to send to
        another thread."""
        return replace(self, traced_jaxpr=None, lowered=None)

    def summary(self) -> dict[str, Any]:
        """Plain figures for tables and JSON: flops, bytes accessed, memory bytes, op counts."""
        cost = self.cost or {}
        return {
            "flops": cost.get("flops"),
            "bytes_accessed": cost.get("bytes accessed"),
            MEMORY: self.memory,
            "n_equations": self.n_equations,
            "n_stablehlo_ops": self.n_stablehlo_ops,
            "n_hlo_instructions": self.n_hlo_instructions,
            "n_fusions": self.n_fusions,
            "n_kernels": self.n_kernels,
            "compiler": self.compiler,
            "jaxpr_chars": len(self.jaxpr or ""),
            "stablehlo_chars": len(self.stablehlo or ""),
            "hlo_chars": len(self.hlo or ""),
        }


_excluded = False


def attribute_to_model_source() -> None:
    """Make JAX's source attribution skip torchax and torch frames (idempotent).

    JAX summarises an equation's traceback as its first frame outside JAX itself; under torchax that frame
    is torchax's ATen lowering (``torchax/ops/jaten.py``). Excluding the torchax and torch directories
    (:func:`app.core.jax_private.exclude_from_tracebacks`) makes the summary land on the model's own line,
    e.g. ``transformers/models/llama/modeling_llama.py:245 (forward)``.
    """
    global _excluded
    if _excluded:
        return
    import torch
    import torchax

    for module in (torchax, torch):
        assert module.__file__ is not None, "a regular package (not a namespace one) has a file"
        exclude_from_tracebacks(os.path.dirname(module.__file__))
    exclude_app_drivers()
    _excluded = True


_drivers_excluded = False


def exclude_app_drivers() -> None:
    """Leave the app's driver files (:func:`app_driver_paths`) out of JAX's source attribution and of the HLO's
    stack-frame tables (idempotent; imports JAX, not torch). Call it before a trace: the model's engine and the
    program service do."""
    global _drivers_excluded
    if _drivers_excluded:
        return
    for path in app_driver_paths():
        exclude_from_tracebacks(path)
    _drivers_excluded = True


#: The app's files that call into a trace but create no equation of it (the command line, the window's worker,
#: the session, the engine's loop, the wrappers that call the model or the program), relative to ``app/``. The
#: app's step code that does create equations (``modes/jit.py``, ``modes/loop.py``, ``runtime/sampling.py``…)
#: is not here: its lines are the true source of those ops.
DRIVER_PATHS = ("__main__.py", "cli", "gui", "core/session", "core/engine/engine.py", "core/engine/loop.py",
                "core/modes/base.py", "core/runtime/compiled_step.py", "core/programs/runner.py",
                "core/programs/ir.py", "core/programs/lanes.py", "core/race.py", "core/steady.py",
                "core/compile_settings", "core/passes", "core/profile")


def app_driver_paths() -> list[str]:
    """The existing files and folders of :data:`DRIVER_PATHS`, absolute, and ``<frozen `` (Python's own
    frozen modules, e.g. ``<frozen runpy>`` under ``python -m``): frames JAX leaves out of the HLO's
    ``FileNames`` / ``StackFrames`` tables and of an equation's source line (issue 55: the HLO listed
    ``app/cli/parser.py``, ``app/core/engine/engine.py`` … beside the model's files)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # app/
    paths = [os.path.join(root, *p.split("/")) for p in DRIVER_PATHS]
    return ["<frozen ", *(p for p in paths if os.path.exists(p))]


def _safe(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except Exception:  # a backend that cannot answer returns None, never crashes the run
        return None


def count_equations(jaxpr: Jaxpr) -> int:
    """Equations in a jaxpr, counting those inside sub-jaxprs (pjit, scan, cond, custom_jvp…)."""
    total = 0
    for eqn in jaxpr.eqns:
        total += 1
        for sub in jaxprs_in_params(eqn.params):
            total += count_equations(sub)
    return total


def cost_dict(raw: Mapping[str, float] | list[Mapping[str, float]] | tuple[Mapping[str, float], ...] | None) -> dict[str, float] | None:
    """Normalise ``cost_analysis()`` output (a dict, or a list with one dict per device) to one dict."""
    if raw is None:
        return None
    if isinstance(raw, (list, tuple)):
        raw = raw[0] if raw else None
    if not raw:
        return None
    return {str(k): float(v) for k, v in dict(raw).items()}


def memory_dict(raw: object) -> dict[str, int] | None:
    if raw is None:
        return None
    names = ("argument", "output", "temp", "generated_code", "alias")
    out = {n: getattr(raw, f"{n}_size_in_bytes", None) for n in names}
    return {k: int(v) for k, v in out.items() if v is not None} or None


_EMPTY_SCOPE = re.compile(r"\n[ \t]*# \[\][ \t]*(?=\n|$)")


def drop_empty_scopes(text: str) -> str:
    """``text`` (a jaxpr printed with ``source_info=True``) without the ``# []`` lines JAX prints under an
    equation whose name stack is empty: a comment line that says nothing (issue 55). Other scopes stay
    (``# [blk]``)."""
    return _EMPTY_SCOPE.sub("", text)


def capture(traced: jax.stages.Traced, lowered: jax.stages.Lowered, compiled: jax.stages.Compiled, input_labels: list[str]) -> StepIR:
    """Build a :class:`StepIR` from the three stage objects of one step. Never raises."""
    closed = _safe(lambda: traced.jaxpr)
    jaxpr = _safe(lambda: closed.pretty_print(name_stack=True)) if closed is not None else None
    jaxpr_src = (
        _safe(lambda: drop_empty_scopes(closed.pretty_print(name_stack=True, source_info=True)))
        if closed is not None else None
    )
    stablehlo = _safe(lowered.as_text)
    stablehlo_debug = _safe(lowered.as_text, debug_info=True)
    hlo = _safe(compiled.as_text)
    return StepIR(
        jaxpr=jaxpr,
        jaxpr_source=jaxpr_src,
        stablehlo=stablehlo,
        stablehlo_debug=stablehlo_debug,
        hlo=hlo,
        cost=cost_dict(_safe(compiled.cost_analysis)),
        memory=memory_dict(_safe(compiled.memory_analysis)),
        n_equations=_safe(count_equations, open_jaxpr(closed)) if closed is not None else None,
        n_stablehlo_ops=count_stablehlo_ops(stablehlo) if stablehlo else None,
        n_hlo_instructions=count_hlo(hlo)[0] if hlo else None,
        n_fusions=count_hlo(hlo)[1] if hlo else None,
        input_labels=input_labels,
        traced_jaxpr=closed,
        lowered=lowered,
    )
