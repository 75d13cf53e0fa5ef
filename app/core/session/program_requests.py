"""The Code workspace's live compile (issue 41) as a request and its answer, beside
:mod:`app.core.session.requests` (whose :class:`~app.core.session.requests.ProgramRequest` it extends): the
compute thread's service dispatches it by type like every request."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.core.session.requests import ProgramRequest


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
