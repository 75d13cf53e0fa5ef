"""The IR-view catalog and the step vocabulary: one :class:`IRView` row per view of a compiled step, and the
names of a model's steps, each written once.

Everything that lists IR views reads :data:`IR_VIEWS`: the IR tabs (``widgets/ir/ir_tabs.py``: a panel per row
with a ``widget``), ``inspect --what`` (``app/cli/inspect.py``: every row's ``cli`` name, per compiler),
``show-session --ir`` and the session comparison (:data:`app.core.recording.compare.IR_TEXTS`: the
``diffable`` rows; ``--align source``: the ``source_lines`` rows), the source-map tab's jump buttons (the
``mapped`` rows with a tab), what a session file keeps of a step's IR (the ``recorded`` rows). Adding a view is
a row here plus its capture (a :class:`app.core.inspect.ir.StepIR` field); docs/architecture.md, "Add an IR
view", lists the rest.

Pure data: this module imports nothing of the app but the step vocabulary (:mod:`app.core.steps`), so every
layer may read it (the widgets too: ``pyproject.toml``'s import-linter contract lets them import this one module
of ``app.core.inspect``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# The step vocabulary lives one floor down (app/core/steps.py: events read it too); re-exported here for the
# widgets, which may import this one module of the app's core.
from app.core.steps import DECODE, DEFAULT_STEP, MODEL_STEPS, PREFILL, STEP_CHOICES, StepKind, is_model_step  # noqa: F401, E402

Compiler = Literal["xla", "inductor", "both"]
#: ``text``: an IR text of :class:`StepIR` (``StepIR.text(key)``); ``figures``: a dict of :class:`StepIR`
#: printed as JSON; ``derived``: computed from another view (the HLO's collectives); ``passes``: recorded by
#: compiling the step once more with per-pass dumps (``app.core.passes``).
Kind = Literal["text", "figures", "derived", "passes"]


@dataclass(frozen=True)
class IRView:
    """One view of a compiled step.

    ``key``: its name in the core (the :class:`app.core.inspect.ir.StepIR` attribute, a session file's key, the
    IR tabs' panel key, ``show-session --ir``); ``title``: what the window calls it; ``compiler``: whose step
    has it (``"xla"``: the jax.jit modes, ``"inductor"``: torch-compile, ``"both"``); ``cli``: its
    ``inspect --what`` name; ``kind``: see :data:`Kind`; ``lexer``: the highlighter the widgets use for it
    (``"ir"``: ``widgets.ir.ir_lexer``, no Pygments; ``""``: no widget shows it as code); ``recorded``: a session
    file keeps it with the step's IR; ``source_lines``: each of its lines carries its own source location
    (``show-session --align source``); ``mapped``: the source map links its lines to the PyTorch source lines;
    ``diffable``: two recorded runs' texts can be diffed (``show-session --diff-ir``, the Sessions tab);
    ``ext``: the default file extension of Save as…; ``widget``: the object name of its IR tab's code view
    (``""``: no tab of its own — ``jaxpr_source`` is the jaxpr tab with its "source lines" column)."""

    key: str
    title: str
    compiler: Compiler
    cli: str
    kind: Kind = "text"
    lexer: str = ""
    recorded: bool = False
    source_lines: bool = False
    mapped: bool = False
    diffable: bool = False
    ext: str = "txt"
    widget: str = ""


def _text(key: str, title: str, compiler: Compiler, ext: str, widget: str, **more: bool) -> IRView:
    """An IR text: highlighted with ``widgets.ir.ir_lexer``, kept in session files, diffable."""
    return IRView(key, title, compiler, key.replace("_", "-"), "text", "ir", recorded=True, diffable=True,
                  ext=ext, widget=widget, **more)


#: The keys of the views code names one by one (``panels[HLO]``, ``view == STABLEHLO``).
JAXPR, JAXPR_SOURCE, STABLEHLO, HLO = "jaxpr", "jaxpr_source", "stablehlo", "hlo"
COST, MEMORY, FX_GRAPH, INDUCTOR_CODE = "cost", "memory", "fx_graph", "inductor_code"

#: Every view, in the order the CLI lists them and the IR tabs show them.
IR_VIEWS: tuple[IRView, ...] = (
    _text(JAXPR, "jaxpr", "xla", "jaxpr.txt", "jaxprView", mapped=True),
    _text(JAXPR_SOURCE, "jaxpr with source lines", "xla", "jaxpr.txt", "", mapped=True, source_lines=True),
    _text(STABLEHLO, "StableHLO", "xla", "mlir", "stablehloView", mapped=True),
    _text(HLO, "optimized HLO", "xla", "hlo.txt", "hloView", mapped=True, source_lines=True),
    IRView(COST, "cost analysis", "xla", "cost", "figures", recorded=True, ext="json"),
    IRView(MEMORY, "memory analysis", "xla", "memory", "figures", recorded=True, ext="json"),
    IRView("collectives", "collectives", "xla", "collectives", "derived"),
    IRView("passes", "pass pipeline", "xla", "passes", "passes"),
    IRView("fusions", "fusions", "xla", "fusions", "passes"),
    IRView("pass_hlo", "HLO after a pass", "xla", "pass-hlo", "passes", ext="hlo.txt"),
    IRView("compile_phases", "compile phases", "xla", "compile-phases", "passes"),
    _text(FX_GRAPH, "FX graph", "inductor", "fx.py", "fxGraphView"),
    _text(INDUCTOR_CODE, "Inductor code", "inductor", "inductor.py", "inductorCodeView"),
)

_BY_KEY = {v.key: v for v in IR_VIEWS}
_BY_CLI = {v.cli: v for v in IR_VIEWS}


def view(key: str) -> IRView:
    """The row of ``key`` (``"hlo"``). Raises KeyError naming the keys."""
    try:
        return _BY_KEY[key]
    except KeyError:
        raise KeyError(f"unknown IR view {key!r} (one of {', '.join(_BY_KEY)})") from None


def view_for_cli(name: str) -> IRView:
    """The row whose ``inspect --what`` name is ``name`` (``"jaxpr-source"``). Raises KeyError naming them."""
    try:
        return _BY_CLI[name]
    except KeyError:
        raise KeyError(f"unknown --what {name!r} (one of {', '.join(_BY_CLI)})") from None


def views(compiler: str | None = None, **match: object) -> tuple[IRView, ...]:
    """The rows, in catalog order, of ``compiler`` (a ``"both"`` row counts for either) whose fields equal
    ``match`` (``views(diffable=True)``); an unknown field raises AttributeError."""
    return tuple(v for v in IR_VIEWS if (compiler is None or v.compiler in (compiler, "both"))
                 and all(getattr(v, name) == value for name, value in match.items()))


def keys(compiler: str | None = None, **match: object) -> tuple[str, ...]:
    """The ``key`` of each of :func:`views`' rows (``keys(diffable=True)``: the IR texts a diff compares)."""
    return tuple(v.key for v in views(compiler, **match))


def cli_names(compiler: str | None = None, **match: object) -> tuple[str, ...]:
    """The ``inspect --what`` name of each of :func:`views`' rows, the compiler's default first."""
    return tuple(v.cli for v in views(compiler, **match))


def tab_views() -> tuple[IRView, ...]:
    """The views with an IR tab of their own (a ``widget`` name), in tab order."""
    return tuple(v for v in IR_VIEWS if v.widget)
