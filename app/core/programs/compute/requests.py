"""A program's requests to the compute service and its answers (plain data: no Qt, no JAX): run the user's program
(:class:`ProgramRequest`), the Code workspace's live compile (issue 41, :class:`ProgramCompileRequest`), race its entry
point under compiler settings (:class:`ProgramSettingsRaceRequest`); answered by :class:`ProgramLoaded`,
:class:`ProgramCompiled`, :class:`ProgramFailed` beside the engine events and :mod:`app.core.requests`' answers. The
compute thread's service (:class:`app.core.session.compute.service.ComputeService`) dispatches them by type like every
request; :class:`app.core.programs.compute.service.ProgramService` runs them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.core.requests import Request


@dataclass(frozen=True)
class ProgramRequest(Request):
    """Run the user's program (:mod:`app.core.programs`): ``source`` is the editor's text of the file ``path``
    (``""`` for text never saved, compiled as ``name``); ``entry`` the entry point (``""``: the first);
    ``spec`` an argument spec (``""``: the file's ``X_args()``); ``n_calls`` timed calls in ``mode``
    (``"jit"``, ``"no-jit"`` or ``"compare"``: the jit run, then the no-jit run, as two runs); ``sweep`` a
    shape sweep of one argument's first axis (``"1:16"``: the first array argument; ``"x=1:16"`` / ``"1=1:16"``:
    the one named; ``""``: none), with ``bucket`` the same sweep padded to power-of-two buckets as a second run;
    ``static_values`` one call per value of static arguments; ``static`` the static argument indices instead of
    the file's; ``seed`` the seed of the random data of ``spec`` and of the sweep. The lanes follow
    :func:`app.core.programs.lanes.plan_lanes`, as the CLI's ``program`` does. ``trace_only``: no timed calls, only the entry point's trace, lower
    and compile for the IR views and the source map (the editor's "as you type")."""

    source: str
    path: str = ""
    name: str = "untitled.py"
    entry: str = ""
    spec: str = ""
    n_calls: int = 10
    mode: str = "jit"
    sweep: str = ""
    bucket: bool = False
    seed: int = 0
    trace_only: bool = False
    #: ``--static-values`` texts (``"n=3,4,4"``, one per static argument varied): one call per value
    static_values: tuple[str, ...] = ()
    #: static argument indices (``--static``; the window's Static field) instead of the file's; None: the file's
    static: tuple[int, ...] | None = None
    label = "program"


@dataclass(frozen=True)
class ProgramEntryInfo:
    """One entry point of a loaded program: ``name``, ``kind`` (``"function"``, ``"jit-function"``,
    ``"module"``), 1-based ``line``, first line of its docstring, and whether the file gives its example
    arguments (``has_args``; else an argument spec is needed)."""

    name: str
    kind: str
    line: int = 0
    doc: str = ""
    has_args: bool = True


@dataclass(frozen=True)
class ProgramLoaded:
    """The program of ``request`` loaded: ``path`` the file its code was compiled from (the jaxpr's source
    lines name it), ``entries`` its entry points, ``entry`` the one run, ``args`` its arguments as a spec
    (``f32[1000,1000]``), ``backend`` ``"jax"`` or ``"torchax"``."""

    request: ProgramRequest
    path: str
    display_name: str
    entries: tuple[ProgramEntryInfo, ...]
    entry: str = ""
    args: str = ""
    backend: str = "jax"


@dataclass(frozen=True)
class ProgramFailed:
    """An error in the user's program (:class:`app.core.programs.errors.ProgramError` as plain data), sent
    before the request's :class:`RequestFailed`: ``file`` / ``line`` / ``column`` where it is (``""`` / 0 when
    no frame was in the program), ``stage`` (``"load"``, ``"args"``, ``"trace"``, ``"lower"``, ``"compile"``,
    ``"execute"``), ``error_type`` (``"SyntaxError"``, ``"TracerBoolConversionError"``…), ``message`` JAX's or
    Python's text, ``headline`` one line, ``details`` the traceback."""

    request: ProgramRequest
    message: str
    error_type: str
    file: str = ""
    line: int = 0
    column: int = 0
    stage: str = "load"
    entry: str = ""
    headline: str = ""
    details: str = ""


@dataclass(frozen=True)
class ProgramCompileRequest(ProgramRequest):
    """A live compile of the Code workspace (issue 41): the editor's text traced, lowered and compiled for the IR
    views with the current argument specs, never run (``trace_only``). ``generation``: the edit it compiles
    (:class:`app.core.programs.live.Generations`: an older generation's answer is dropped); ``previous``: the
    :class:`app.core.programs.live.Snapshot` of the last good compile, compared on the compute thread; answered
    by ``ProgramLoaded``, ``IREvent``, :class:`ProgramCompiled`, ``SourceMapReady`` (or ``ProgramFailed``)."""

    trace_only: bool = True
    generation: int = 0
    previous: Any = None
    label = "live compile"


@dataclass(frozen=True)
class ProgramCompiled:
    """A live compile's result beside its ``IREvent`` (``step``: the entry point, the IR tabs' step):
    ``snapshot`` (:class:`app.core.programs.live.Snapshot`, the next compile's ``previous``), ``comparison`` with the previous good compile
    (:class:`app.core.programs.live.Comparison`), ``phases`` trace / lower / compile ms."""

    request: ProgramCompileRequest
    step: str
    snapshot: Any
    comparison: Any
    phases: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class ProgramSettingsRaceRequest(ProgramRequest):
    """Race the entry point of the user's program (the :class:`ProgramRequest` fields: its text, entry point,
    argument spec, ``n_calls`` calls per lane) under the compiler settings ``names`` (as
    :class:`app.core.session.requests.SettingsRaceRequest` names them; Inductor's are refused by name: a JAX program has nothing for it)
    (:func:`app.core.programs.compute.race.program_settings_race`): each lane a program run named after its
    setting, followed by :class:`app.core.compile_settings.progress.SettingsRaceLanes` (lanes with ``unit == "call"``). It is a program request: no
    model needed, its errors are the program's (:class:`ProgramFailed` at the user's line). With ``steady`` (a
    :class:`app.core.steady.SteadyPlan`), paired rounds of the settings' executables state each "vs baseline" ratio."""

    names: tuple[str, ...] = ()
    #: the paired rounds after the lanes (an :class:`app.core.steady.SteadyPlan`; None: the lanes alone)
    steady: Any = None
    label = "settings race"
