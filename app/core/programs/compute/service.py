"""Program runs on the compute thread: a :class:`app.core.programs.compute.requests.ProgramRequest` becomes the same
event stream as a model run, so the latency plot, the stats strip, the IR tabs, the source map and the compile
log work unchanged:

``ProgramLoaded`` → per run (lane, :class:`app.core.programs.lanes.LaneRun`: the CLI's ``program`` runs the same
lanes): ``LaneEvent`` (sent with the run's first record, so a program that fails
on its first call starts no run and the views keep the last good result), one ``CallRecord`` per call,
``IREvent`` (the entry point's :class:`app.core.inspect.ir.StepIR`, step = the entry point's name) after the
first compiling call, ``FinishedEvent`` (``"calls"``, ``"stopped"`` or ``"error"``) → after the last run the
source map (``SourceMapReady``). A ``trace_only`` request (the editor's "as you type") starts no run: its
``ProgramLoaded``, then the ``IREvent`` and ``SourceMapReady`` of one trace, lower and compile; a
:class:`ProgramCompileRequest` (the Code workspace's live mode) adds its
``ProgramCompiled`` (what changed since the previous good compile) after the ``IREvent``. An error in the user's code is a :class:`ProgramFailed` at the user's line,
then raised again so the service adds its :class:`RequestFailed`. Stop: ``should_stop`` reaches the user's
code through :func:`app.core.programs.interrupt.stoppable` (a ``sys.settrace`` hook on the program's lines),
so a Python loop stuck while loading or tracing ends at its next line.

A loaded program and its :class:`app.core.programs.runner.ProgramRunner` are kept while the text, entry point
and arguments stay the same: running again is warm, like a model run; an edit re-traces.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from app.core.events import IREvent
from app.core.inspect.ir import exclude_app_drivers
from app.core.inspect.source_map import build_source_map
from app.core.profile.step import profile_call
from app.core.programs.compute.profile import program_step_call
from app.core.programs.compute.requests import (
    ProgramCompiled,
    ProgramCompileRequest,
    ProgramEntryInfo,
    ProgramFailed,
    ProgramLoaded,
    ProgramRequest,
)
from app.core.programs.errors import ProgramError
from app.core.programs.ir import entry_ir, ir_from_stages
from app.core.programs.lanes import LaneRun, plan_lanes
from app.core.programs.live import Snapshot, compare
from app.core.programs.loader import load_program
from app.core.programs.runner import NO_JIT, ProgramRunner
from app.core.programs.specs import SpecError
from app.core.requests import Notice, SourceMapReady

if TYPE_CHECKING:
    from app.core.inspect.ir import StepIR
    from app.core.programs.loader import PreparedCall, Program
    from app.core.programs.runner import ProgramRunner

StopFn = Callable[[], bool]


def entry_infos(program: Program) -> tuple[ProgramEntryInfo, ...]:
    return tuple(ProgramEntryInfo(e.name, e.kind, e.line, e.doc.splitlines()[0] if e.doc else "",
                                     bool(e.args_function)) for e in program.entries.values())


def failed(request: ProgramRequest, exc: ProgramError) -> ProgramFailed:
    """The :class:`ProgramFailed` of a :class:`app.core.programs.errors.ProgramError`."""
    return ProgramFailed(request, exc.message, exc.error_type, exc.file, exc.line, exc.column, exc.stage,
                            exc.entry, exc.headline, exc.traceback_text)


def plan_request(prepared: PreparedCall, request: ProgramRequest) -> list[Any]:
    """The lanes (:class:`app.core.programs.lanes.Lane`) of ``request`` on its prepared call: the one rule of
    :func:`app.core.programs.lanes.plan_lanes`, read from the request's fields — the window's service and the
    CLI's ``program`` both call this. Raises :class:`app.core.programs.specs.SpecError`."""
    return plan_lanes(prepared, n_calls=request.n_calls, mode=request.mode, sweep=request.sweep,
                      bucket=request.bucket, static_values=request.static_values)


class ProgramService:
    """Runs program requests; keeps the last program, its prepared call and runner for a warm rerun.
    Use from the compute thread only."""

    def __init__(self) -> None:
        self._key: tuple | None = None
        self._prepared: Any = None
        self._runner: Any = None
        self._program: Any = None

    def handle(self, request: ProgramRequest, should_stop: StopFn) -> Iterator[Any]:
        try:
            yield from self._handle(request, should_stop)
        except ProgramError as exc:
            yield failed(request, exc)
            raise

    def prepare(self, request: ProgramRequest, should_stop: StopFn,
                exact_entry: bool = False) -> tuple[Any, Any, Any]:
        """``(program, prepared call, runner)`` of ``request``: the kept ones while its text, entry point and
        arguments are unchanged (a warm rerun), else loaded and prepared anew. An entry point the text no longer
        has runs the first one (the editor's picker after an edit), unless ``exact_entry`` (the CLI's
        ``FILE.py:ENTRY``). Raises the program's :class:`~app.core.programs.errors.ProgramError` or
        :class:`~app.core.programs.specs.SpecError`."""
        exclude_app_drivers()  # the HLO names the program's files, not the service's or the CLI's (issue 55)
        key = (request.source, request.path, request.name, request.entry, request.spec, request.seed, request.static)
        if (self._key is not None and self._prepared is not None and key != self._key
                and key[:4] == self._key[:4] and key[5:] == self._key[5:]):
            # only the argument spec changed (e.g. a static value 3 → 4): the same program and entry point, so
            # the runner and its executables stay, and the next compile says which argument changed and how
            # (issue 29, flaw 24: a fresh runner said "first call")
            prepared = self._program.prepare(self._prepared.entry.name, request.spec or None, request.seed,
                                             request.static, should_stop=should_stop)
            if prepared.fn is self._prepared.fn and prepared.static_argnums == self._prepared.static_argnums:
                self._runner.prepared = prepared
                self._prepared, self._key = prepared, key
                return self._program, self._prepared, self._runner
        if key != self._key or self._prepared is None:
            self._key = None
            if request.path:
                program = load_program(request.path, source=request.source, should_stop=should_stop)
            else:
                program = load_program(source=request.source, name=request.name or "untitled.py",
                                       should_stop=should_stop)
            self._program = program
            entry = request.entry or None
            if entry is not None and entry not in program.entries and program.entries and not exact_entry:
                try:
                    program.entry(entry)  # any function of the file may be named
                except ProgramError:
                    entry = None  # the name picked before an edit is gone: the first entry point runs
            prepared = program.prepare(entry, request.spec or None, request.seed, request.static,
                                       should_stop=should_stop)
            self._prepared, self._runner, self._key = prepared, ProgramRunner(prepared), key
        return self._program, self._prepared, self._runner

    def profile(self, request: ProgramRequest, n_steps: int, should_stop: StopFn,
                progress: Callable[[str], None]) -> tuple[Any, Any]:
        """``(profile, live IR)`` of ``n_steps`` calls of ``request``'s entry point under ``jax.profiler``
        (:func:`app.core.programs.compute.profile.program_step_call`, then :func:`app.core.profile.step.profile_call`:
        an :class:`app.core.profile.model.StepProfile` labelled ``file:entry``, its rows naming the program's
        ``file:line``, and the entry point's :class:`app.core.inspect.ir.StepIR`); ``progress`` gets each stage's
        line. Raises the program's :class:`~app.core.programs.errors.ProgramError`."""
        progress("loading and tracing the program")
        program, prepared, _ = self.prepare(request, should_stop)
        progress(f"compiling {prepared.entry.name}")
        call, live = program_step_call(prepared, should_stop)
        profile = profile_call(call, prepared.entry.name, n_steps, on_progress=progress,
                               label=f"{program.display_name}:{prepared.entry.name}")
        return profile, live

    def _handle(self, request: ProgramRequest, should_stop: StopFn) -> Iterator[Any]:
        try:
            program, prepared, runner = self.prepare(request, should_stop)
        except ProgramError as exc:
            if exc.stage == "args" or exc.stage == "load" and exc.error_type == "NoEntryPoint":
                yield from self._entries_despite(request, load_program)
            raise
        except SpecError as exc:
            raise ProgramError(str(exc), error_type="SpecError", stage="args") from None
        yield ProgramLoaded(request, program.path, program.display_name, entry_infos(program),
                               prepared.entry.name, prepared.describe_args(), prepared.backend)
        entry = prepared.entry.name
        if isinstance(request, ProgramCompileRequest):  # live: the IR views and what changed, never run
            yield from self._live_compile(request, prepared, entry, should_stop)
            return
        if request.trace_only:  # as you type: the IR views only, with a fresh runner (a later Run compiles cold)
            live = yield from self._ir_without_run(prepared, ProgramRunner(prepared), entry, should_stop)
            yield from self._source_map(live, entry)
            return
        try:
            plan = plan_request(prepared, request)
        except SpecError as exc:
            raise ProgramError(str(exc), error_type="SpecError", stage="args", entry=entry) from None
        # a cold lane (a sweep, jit vs no-jit, no-jit) gets a fresh runner; a plain jit run reuses the executables
        run = LaneRun(prepared, plan, runner, should_stop, capture_ir=True)
        yield from run
        live_ir = run.ir
        if live_ir is None and not should_stop() and any(lane.mode == NO_JIT for lane in plan):
            live_ir = yield from self._ir_without_run(prepared, runner, entry, should_stop)
        if live_ir is not None:
            yield from self._source_map(live_ir, entry)

    def _entries_despite(self, request: ProgramRequest, load_program: Callable[..., Program]) -> Iterator[Any]:
        """The file loads but its arguments fail: still say which entry points it has (the picker fills)."""
        program = self._program
        if program is None or program.source != request.source:
            return
        yield ProgramLoaded(request, program.path, program.display_name, entry_infos(program),
                               request.entry, "", "")

    def _ir_without_run(self, prepared: PreparedCall, runner: ProgramRunner | None, entry: str, should_stop: StopFn) -> Iterator[Any]:
        """A no-jit run compiles nothing: trace, lower and compile once after it, so the IR views show what jit
        would run."""
        live = entry_ir(prepared, should_stop=should_stop, runner=runner)
        yield IREvent(entry, "jit", live.plain())
        return live

    def ir_events(self, prepared: PreparedCall, entry: str, should_stop: StopFn) -> Iterator[Any]:
        """The entry point traced, lowered and compiled once more under the settings in force (outside any run's
        timings): its :class:`IREvent` and source map, e.g. after a settings race, whose lanes capture none."""
        live = yield from self._ir_without_run(prepared, None, entry, should_stop)
        yield from self._source_map(live, entry)

    def _live_compile(self, request: ProgramCompileRequest, prepared: PreparedCall, entry: str,
                      should_stop: StopFn) -> Iterator[Any]:
        """Trace, lower and compile the entry point with a fresh runner (a later Run compiles cold), then the IR,
        its comparison with ``request.previous`` (:func:`app.core.programs.live.compare`, here: the texts can be
        megabytes) and the source map. Never calls the compiled program."""
        from app.core.runtime.compiled_step import COMPILE_DELAY_ENV  # noqa: PLC0415 - heavy: jax

        runner = ProgramRunner(prepared)
        traced, lowered, compiled, phases = runner.stages(prepared.args, should_stop)
        delay = float(os.environ.get(COMPILE_DELAY_ENV) or 0)  # tests: a compile made long on purpose
        if delay > 0:
            time.sleep(delay)
        live = ir_from_stages((traced, lowered, compiled), runner, prepared.args)
        plain = live.plain()
        yield IREvent(entry, "jit", plain)
        snapshot = Snapshot.of(plain)
        yield ProgramCompiled(request, entry, snapshot, compare(request.previous, snapshot), phases)
        yield from self._source_map(live, entry)

    def _source_map(self, live_ir: StepIR, entry: str) -> Iterator[Any]:
        try:
            yield SourceMapReady(entry, build_source_map(live_ir, entry, None))
        except Exception as exc:  # noqa: BLE001
            yield Notice(f"No source map for {entry}: {type(exc).__name__}: {exc}")
