"""The IR-view catalog and the step vocabulary: one :class:`IRView` row per view of a compiled step, and the
names of a model's steps, each written once.

Everything that lists, names or counts IR views reads :data:`IR_VIEWS`: the IR tabs (``widgets/ir/ir_tabs.py``:
a panel per row with a ``widget``, its ``help`` as the tab's tooltip, the summary line's figures and counts),
Help ▸ Help (``app/gui/panels/help.py``: each row's ``help``), ``inspect --what`` (``app/cli/inspect.py``: every
row's ``cli`` name, per compiler), ``program --what`` (the ``program`` rows), ``show-session --ir`` and the
session comparison (:data:`app.core.recording.compare.IR_TEXTS`: the ``diffable`` rows; ``--align source``: the
``source_lines`` rows), the live diff's units and figures (:mod:`app.core.programs.live`), a structural diff's
names and units (:mod:`app.core.inspect.hlo_diff`, :mod:`app.core.compare.text`), the source-map tab's jump
buttons (the ``mapped`` rows with a tab), what a session file keeps of a step's IR (the ``recorded`` rows). No
view's key is written as a literal elsewhere (``tests/core/test_catalog_literals.py``). Adding a view is a row
here plus its capture (a :class:`app.core.inspect.ir.StepIR` field); docs/architecture.md, "Add an IR view",
lists the rest.

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
#: The kinds by name (``views(kind=KIND_PASSES)``: the views a pass recording answers).
KIND_TEXT: Kind = "text"
KIND_FIGURES: Kind = "figures"
KIND_DERIVED: Kind = "derived"
KIND_PASSES: Kind = "passes"


@dataclass(frozen=True)
class Figure:
    """One figure of a ``figures`` view (the cost and memory summary): ``label`` as the window and the live
    diff write it (``"bytes accessed"``), ``key`` in the view's dict (XLA's name, ``"bytes accessed"``),
    ``kind`` ``"count"`` (printed with :func:`app.core.units.si`) or ``"bytes"`` (:func:`app.core.units.nbytes`)."""

    label: str
    key: str
    kind: Literal["count", "bytes"] = "count"


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
    (``""``: no tab of its own — ``jaxpr_source`` is the jaxpr tab with its "source lines" column);
    ``program``: ``program --what`` prints it for an entry point.

    What it is called and counted in: ``help``: what it shows, one sentence (Help ▸ Help's "What am I looking
    at?", its IR tab's tooltip; ``""``: not listed); ``short``: its name in a line of figures (``"HLO"``;
    ``""``: the title); ``unit`` / ``unit_abbr``: what one of its elements is called, in full
    (``"instructions"``: a comparison's summary) and abbreviated (``"instrs"``: the live diff, the IR tabs'
    figures); ``count``: the :class:`StepIR` field counting them; ``figures``: a ``figures`` view's
    :class:`Figure` s, in the order the IR tabs and the live diff show them."""

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
    program: bool = False
    help: str = ""
    short: str = ""
    unit: str = ""
    unit_abbr: str = ""
    count: str = ""
    figures: tuple[Figure, ...] = ()

    @property
    def short_title(self) -> str:
        """Its name in a line of figures: ``short``, else the title."""
        return self.short or self.title


def _text(key: str, title: str, compiler: Compiler, ext: str, widget: str, *, mapped: bool = False,
          source_lines: bool = False, program: bool = False, help: str = "", short: str = "", unit: str = "",
          unit_abbr: str = "", count: str = "") -> IRView:
    """An IR text: highlighted with ``widgets.ir.ir_lexer``, kept in session files, diffable; its ``--what`` is
    its key with dashes."""
    return IRView(key, title, compiler, key.replace("_", "-"), KIND_TEXT, "ir", recorded=True,
                  source_lines=source_lines, mapped=mapped, diffable=True, ext=ext, widget=widget,
                  program=program, help=help, short=short, unit=unit, unit_abbr=unit_abbr, count=count)


#: The keys of the views code names one by one (``panels[HLO]``, ``view == STABLEHLO``).
JAXPR, JAXPR_SOURCE, STABLEHLO, HLO = "jaxpr", "jaxpr_source", "stablehlo", "hlo"
COST, MEMORY, COLLECTIVES = "cost", "memory", "collectives"
PASSES, FUSIONS, PASS_HLO, COMPILE_PHASES = "passes", "fusions", "pass_hlo", "compile_phases"
FX_GRAPH, INDUCTOR_CODE = "fx_graph", "inductor_code"

#: Every view, in the order the CLI lists them and the IR tabs show them.
IR_VIEWS: tuple[IRView, ...] = (
    _text(JAXPR, "jaxpr", "xla", "jaxpr.txt", "jaxprView", mapped=True, program=True,
          help="the program JAX traced from the PyTorch model through torchax: one equation per primitive, "
               "inside aten:: name scopes; 'source lines' shows the transformers line of each equation.",
          unit="equations", unit_abbr="eqns", count="n_equations"),
    _text(JAXPR_SOURCE, "jaxpr with source lines", "xla", "jaxpr.txt", "", mapped=True, source_lines=True,
          program=True),
    _text(STABLEHLO, "StableHLO", "xla", "mlir", "stablehloView", mapped=True, program=True,
          help="the lowered MLIR module handed to XLA (before any optimization).",
          unit="ops", unit_abbr="ops", count="n_stablehlo_ops"),
    _text(HLO, "optimized HLO", "xla", "hlo.txt", "hloView", mapped=True, source_lines=True, program=True,
          help="what XLA compiled after its passes: fusions, layouts, and on a device mesh the collectives it "
               "inserted.",
          short="HLO", unit="instructions", unit_abbr="instrs", count="n_hlo_instructions"),
    IRView(COST, "cost analysis", "xla", "cost", KIND_FIGURES, recorded=True, ext="json", program=True,
           figures=(Figure("FLOPs", "flops"), Figure("bytes accessed", "bytes accessed", "bytes"))),
    IRView(MEMORY, "memory analysis", "xla", "memory", KIND_FIGURES, recorded=True, ext="json", program=True,
           figures=(Figure("args", "argument", "bytes"), Figure("outputs", "output", "bytes"),
                    Figure("temp", "temp", "bytes"))),
    IRView(COLLECTIVES, "collectives", "xla", "collectives", KIND_DERIVED),
    IRView(PASSES, "pass pipeline", "xla", "passes", KIND_PASSES, program=True),
    IRView(FUSIONS, "fusions", "xla", "fusions", KIND_PASSES, program=True),
    IRView(PASS_HLO, "HLO after a pass", "xla", "pass-hlo", KIND_PASSES, ext="hlo.txt"),
    IRView(COMPILE_PHASES, "compile phases", "xla", "compile-phases", KIND_PASSES, program=True),
    _text(FX_GRAPH, "FX graph", "inductor", "fx.py", "fxGraphView",
          help="torch-compile only: the graph Dynamo captured."),
    _text(INDUCTOR_CODE, "Inductor code", "inductor", "inductor.py", "inductorCodeView",
          help="torch-compile only: the Python/C++ code Inductor generated from the FX graph."),
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
