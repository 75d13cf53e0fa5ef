"""The compute service's protocol, below every concept that has requests: the :class:`Request` base and the answers
any request may get (plain data: no Qt, no JAX). Every request ends with exactly one :class:`RequestDone`; a failure
adds one :class:`RequestFailed` naming the request; :class:`Notice` and :class:`SourceMapReady` come with model and
program runs alike. A concept's own requests and answers live with it: a model's in :mod:`app.core.session.requests`,
a program's in :mod:`app.core.programs.compute.requests`. Each concept hands the compute service its entries of the
one dispatch table (:data:`Handlers`: request type → :data:`Handler`), e.g.
:func:`app.core.programs.compute.handlers.handlers`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

#: ``should_stop``: polled by a request's work (the worker's stop flag)
StopFn = Callable[[], bool]
#: ``on_live_phase``: a live phase (:class:`app.core.events.PhaseEvent`) said at once, not in the stream; None: none
LivePhase = Callable[[Any], None] | None
#: One entry of the compute service's table: ``(request, should_stop, on_live_phase)`` → the request's events
Handler = Callable[[Any, StopFn, LivePhase], Iterator[Any]]
#: A concept's entries: request type → its handler
Handlers = dict[type, Handler]


class Request:
    """Base of every request. ``label`` names it in messages (``"load"``, ``"run"``, ``"race"``, …)."""

    label = "request"


@dataclass(frozen=True)
class RequestFailed:
    """``request`` failed: ``message`` is one line saying what to do; ``details`` a traceback; ``field``
    the input at fault, where the window shows the message inline: ``"model"``, ``"prompt"``, ``"mesh"``,
    ``"settings"``, ``"program"`` (the editor marks the line of the :class:`ProgramFailed` before it) or
    ``""`` (no one input)."""

    request: Request
    message: str
    details: str = ""
    field: str = ""


@dataclass(frozen=True)
class RequestDone:
    """``request`` is finished, successfully or not (always the last answer to a request)."""

    request: Request


@dataclass(frozen=True)
class Notice:
    """Something optional failed (a source map, bytes per device); the request itself went on."""

    text: str


@dataclass(frozen=True)
class SourceMapReady:
    """The :class:`app.core.inspect.source_map.SourceMap` of a step whose IR arrived in the run, built after the
    run's last token (so building it never counts in the run's timings)."""

    step: str
    source_map: Any
