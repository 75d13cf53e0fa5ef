"""A program's entries in the compute service's one dispatch table (:data:`app.core.requests.Handlers`): a run or
a trace, the Code workspace's live compile and the settings race of an entry point, each on the one
:class:`app.core.programs.compute.service.ProgramService` (its program kept warm), made on first use."""

from __future__ import annotations

from collections.abc import Callable

from app.core.programs.compute.race import program_race_events
from app.core.programs.compute.requests import (
    ProgramCompileRequest,
    ProgramRequest,
    ProgramSettingsRaceRequest,
)
from app.core.programs.compute.service import ProgramService
from app.core.requests import Handlers


def handlers(programs: Callable[[], ProgramService]) -> Handlers:
    """The table entries of a program's requests; ``programs()``: the service's one :class:`ProgramService`."""
    return {
        ProgramRequest: lambda r, stop, _live: programs().handle(r, stop),
        ProgramCompileRequest: lambda r, stop, _live: programs().handle(r, stop),  # the Code workspace's live compile
        ProgramSettingsRaceRequest: lambda r, stop, _live: program_race_events(programs(), r, stop),
    }
