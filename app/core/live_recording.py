"""Live recording: which run of a :class:`app.core.session.model.Session` keeps which IR, source map, profile
and pass pipeline — the one list of recorded runs a front end following a session reads (the window's File ▸
Save session, exports, compare table, IR diff and replay write or show :meth:`LiveRecording.runs_on_plot`).

:class:`LiveRecording` connects to ``session.events`` itself. Each live run on the plot gets a
:class:`RecordedRun` from one :class:`RunRecorder` fed that run's events as they stream (plain data, on the
thread that calls the session); runs opened from session files are kept beside them
(:meth:`LiveRecording.begin_recorded`); a run that leaves the plot is freed. A model run is recorded under
the loaded model, with the prompt and settings the front end supplies (:data:`RunInfoSource`: the window's
form); a program run under the program's ``FILE.py:ENTRY``, with its request's settings, as the CLI's
``program`` records it. Nothing here imports Qt, JAX or torch.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.core.events import IREvent, PromptEvent
from app.core.programs.arguments import parse_static_values
from app.core.programs.compute.requests import ProgramLoaded, ProgramRequest
from app.core.programs.specs import SpecError
from app.core.recording.environment import environment, machine_name
from app.core.recording.model import RecordedRun, is_program_run
from app.core.recording.recorder import RunRecorder
from app.core.session.model import RunState, Session
from app.core.session.requests import PassesReady, ProfileReady
from app.core.settings import GenerationSettings


@dataclass(frozen=True)
class LiveRunInfo:
    """What a front end knows of a live model run that the session does not: the prompt as the user typed it
    and the generation settings of the run (None when they cannot be read any more: the run was validated, the
    form may have changed since — the run is then recorded without settings)."""

    prompt: str = ""
    settings: GenerationSettings | None = None


#: Asked when a live model run starts (not a program run, not a recorded one): the front end's prompt and
#: settings — the window's form.
RunInfoSource = Callable[[], LiveRunInfo]


def short_origin(run: RecordedRun, run_id: int = 0) -> str:
    """What the IR tabs' header names for a recorded run shown as run ``run_id``: ``"run 3 · jit-static · recorded
    on CPU × 1"`` (issue 55: every view names the run it shows; without ``run_id``, no number)."""
    number = f"run {run_id} · " if run_id else ""
    return f"{number}{run.mode} · recorded on {machine_name(run.environment)}"


def program_settings(request: ProgramRequest | None, args: str, mode: str) -> dict[str, Any]:
    """A program run's recorded settings — the window's (:class:`LiveRecording`) and the CLI's ``program``
    alike: ``mode``; ``calls``, the calls made (one per value with static values; None for a sweep: one
    per size, named in ``sweep``); ``args``, the argument spec or the description of the file's example arguments (``args``);
    ``static`` (the static argument indices asked for, None: the file's), ``static_values``, ``seed``,
    ``sweep`` (``"x=1:16"``) and ``bucket`` as in the request."""
    if request is None:
        return {"mode": mode, "calls": None}
    r = request
    calls = None if r.sweep else _static_calls(r.static_values) if r.static_values else r.n_calls
    return {"mode": mode, "calls": calls, "args": r.spec or args,
            "static": list(r.static) if r.static is not None else None, "static_values": list(r.static_values),
            "seed": r.seed, "sweep": r.sweep, "bucket": r.bucket}


def _static_calls(static_values: tuple[str, ...]) -> int | None:
    """The calls of a static-values run: one per value of the first list (None when it does not parse)."""
    try:
        return len(parse_static_values(static_values[0])[1])
    except SpecError:
        return None


class LiveRecording:
    """Records the runs of ``session`` as they stream and keeps the recorded run of each run on its plot.

    ``recorded``: the session's run id → its :class:`RecordedRun` (live runs and runs opened from files;
    only runs still on the plot); ``recorder``: the :class:`RunRecorder` of the live runs; ``pending``: the
    recorded run being shown while the session announces it (``runStarted`` of :meth:`begin_recorded`).
    ``run_info`` gives a live model run's prompt and settings; ``on_error`` is told (one line) what could not
    be kept."""

    def __init__(self, session: Session, run_info: RunInfoSource = LiveRunInfo,
                 on_error: Callable[[str], None] | None = None) -> None:
        self.session = session
        self.run_info = run_info
        self.on_error = on_error
        self.recorder = RunRecorder("")
        self.recorded: dict[int, RecordedRun] = {}
        self.pending: RecordedRun | None = None
        #: the session's race number → what a session file keeps of its steady-state verdicts (the phase's JSON
        #: form with ``race`` and ``environment``, :func:`app.core.recording.recorder.verdict_record`)
        self.verdicts: dict[int, dict[str, Any]] = {}
        self._live: RunState | None = None  # the live run being recorded
        self._program: ProgramLoaded | None = None  # the program whose runs stream (its file and entry)
        ev = session.events
        ev.runStarted.connect(self._on_run_started)
        ev.prompt.connect(self._feed)
        ev.records.connect(self._feed_all)
        ev.tokens.connect(self._feed_all)
        ev.ir.connect(self._feed)
        ev.runFinished.connect(self._on_run_finished)
        ev.sourceMap.connect(self._on_source_map)
        ev.profile.connect(self._on_profile)
        ev.passes.connect(self._on_passes)
        ev.programLoaded.connect(self._on_program_loaded)
        ev.verdicts.connect(self._on_verdicts)

    # -- the runs -----------------------------------------------------------------------------------------
    def recorded_of(self, state: RunState) -> RecordedRun | None:
        """The recorded run of ``state`` (the one being announced included), or None."""
        return self.recorded.get(state.run_id) or self.pending

    def live_runs(self) -> list[RecordedRun]:
        """The recorded runs of the live runs on the plot (not opened from files), oldest first."""
        return [self.recorded[s.run_id] for s in self.session.runs if not s.origin and s.run_id in self.recorded]

    def last_live(self, step: str | None = None) -> RecordedRun | None:
        """The newest recorded live run (the newest with IR of ``step`` if given and there is one)."""
        live = self.live_runs()
        if step is not None:
            live = [r for r in live if step in r.ir] or live
        return live[-1] if live else None

    def replayable(self) -> list[tuple[RunState, RecordedRun]]:
        """The plot's runs a replay can play, oldest first: finished live runs and runs opened from files (not
        replays themselves), with their recorded runs."""
        return [(s, self.recorded[s.run_id]) for s in self.session.runs
                if s.run_id in self.recorded and not s.replay and (s.finished is not None or s.origin)]

    def replay_groups(self) -> list[tuple[int | None, list[RecordedRun]]]:
        """What a replay can play, oldest first, as ``(race, runs)``: each recorded run on the plot (not a
        replay) on its own (race None), a race's lanes together (its number in the session)."""
        groups: list[tuple[int | None, list[RecordedRun]]] = []
        races: dict[int, list[RecordedRun]] = {}
        for state, run in self.replayable():
            if state.race is None:
                groups.append((None, [run]))
            elif state.race in races:
                races[state.race].append(run)
            else:
                groups.append((state.race, races.setdefault(state.race, [run])))
        return groups

    def replay_source(self) -> list[RecordedRun]:
        """What a replay plays by default: the newest recorded run on the plot, or all lanes of its race."""
        shown = self.replayable()
        if not shown:
            return []
        state, run = shown[-1]
        return [run] if state.race is None else [r for s, r in shown if s.race == state.race]

    def opened_machines(self) -> set[str]:
        """The machines of the runs on the plot opened from files."""
        opened = {s.run_id for s in self.session.runs if s.origin}
        return {run.machine for rid, run in self.recorded.items() if rid in opened}

    def runs_on_plot(self) -> list[RecordedRun]:
        """The recorded runs of the plot's runs, oldest first (what Save session and the exports write), each
        named by the session's run number, as the plot and the status line name it (issue 29, flaw 15): a run
        opened from a file keeps its recorded label after it (``run 1 · torch (recorded as run 3 · torch)``);
        a replay is what was replayed — a stopped replay only its calls and tokens so far."""
        return [as_shown(r, self.recorded[r.run_id]) for r in self.session.runs if r.run_id in self.recorded]

    def verdicts_of(self, runs: list[RecordedRun]) -> list[dict[str, Any]]:
        """What a session file of ``runs`` keeps of their races' steady-state verdicts, oldest race first."""
        races = {r.race for r in runs if r.race is not None}
        return [doc for race, doc in sorted(self.verdicts.items()) if race in races]

    def ir_origin(self, state: RunState) -> str:
        """The IR tabs' origin of a recorded run's IR (its mode and machine); a live run's label."""
        recorded = self.recorded_of(state)
        return short_origin(recorded, state.run_id) if recorded is not None else state.label

    def shown_as(self, run: RecordedRun) -> int:
        """The number the window shows the recorded ``run`` as (0 when it is not on the plot)."""
        return next((n for n, r in self.recorded.items() if r is run), 0)

    def prompt_of(self, state: RunState) -> str:
        """The prompt a recorded run was run with (``""`` when unknown)."""
        recorded = self.recorded_of(state)
        return recorded.prompt if recorded is not None else ""

    def begin_recorded(self, run: RecordedRun, label: str, race: int | None = None, replay: bool = False,
                       keep: int = 1) -> RunState | None:
        """Start showing ``run`` (from a session file) through the session (:meth:`Session.begin_recorded`:
        its events then go through :meth:`Session.apply_all`); None when the session refused (busy)."""
        self.pending = run  # read during runStarted (recorded_of)
        try:
            state = self.session.begin_recorded(label, run.mode, run.recorded_label, race, replay=replay,
                                                keep=keep, program=recorded_program(run))
        finally:
            self.pending = None
        if state is not None:
            self.recorded[state.run_id] = run
        return state

    # -- recording (the session's signals) ----------------------------------------------------------------
    def _on_run_started(self, run: RunState) -> None:
        on_plot = {r.run_id for r in self.session.runs}
        self.recorded = {k: v for k, v in self.recorded.items() if k in on_plot}  # the plot's runs only
        self.verdicts = {k: v for k, v in self.verdicts.items() if k in {r.race for r in self.session.runs}}
        kept = {id(r) for r in self.recorded.values()}
        self.recorder.runs = [r for r in self.recorder.runs if id(r) in kept]  # runs off the plot are freed
        if run.origin:
            self._live = None
            return
        if self.recorder.current is not None:  # a run that never finished (a stopped race lane)
            self.recorder.finish()
        settings = self._describe(run)
        self.recorded[run.run_id] = self.recorder.start(run.mode, label=run.label, race=run.race,
                                                        settings=settings)
        self._live = run

    def _describe(self, run: RunState) -> dict[str, Any]:
        """Set the recorder's model, model id, config and prompt for ``run`` and return its settings: the
        program's ``FILE.py:ENTRY`` and request for a program run, else the loaded model's label and the front
        end's prompt and settings (in the run's own mode: a race lane's)."""
        rec = self.recorder
        if run.program:
            loaded = self._program
            rec.model = f"{loaded.display_name}:{run.program}" if loaded is not None else run.program
            rec.model_id = loaded.path if loaded is not None else ""
            rec.config = {"backend": loaded.backend} if loaded is not None else {}
            rec.prompt = ""
            return program_settings(loaded.request if loaded is not None else None,
                                    loaded.args if loaded is not None else "", run.mode)
        model, info = self.session.loaded, self._info()
        rec.model = model.label if model is not None else ""
        rec.model_id = model.model_id if model is not None else ""
        rec.config = {}
        rec.prompt = info.prompt
        return {**dataclasses.asdict(info.settings), "mode": run.mode} if info.settings is not None else {}

    def _info(self) -> LiveRunInfo:
        try:
            return self.run_info()
        except Exception:  # noqa: BLE001 — the run was validated; the form may have changed since
            return LiveRunInfo()

    def _recording(self) -> bool:
        """The live run is the session's current one and still being recorded (events after its end, e.g. a
        trace as you type, are not its own)."""
        live = self._live
        current = self.recorder.current
        return (live is not None and live is self.session.current
                and current is not None and current is self.recorded.get(live.run_id))

    def _feed(self, event: PromptEvent | IREvent) -> None:
        if self._recording():
            self.recorder.feed(event)

    def _feed_all(self, events: list[Any]) -> None:
        if self._recording():
            for event in events:
                self.recorder.feed(event)

    def _on_run_finished(self, run: RunState) -> None:
        if run is self._live and self._recording():
            if run.finished is not None:
                self.recorder.feed(run.finished)
            else:
                self.recorder.finish()

    def _on_verdicts(self, race: int, doc: dict[str, Any]) -> None:
        """A race's verdicts (measured here: the machine is this one; read from a file: as it was recorded)."""
        self.verdicts[race] = {**doc, "race": race, "environment": doc.get("environment") or environment()}

    def _on_program_loaded(self, event: ProgramLoaded) -> None:
        self._program = event

    def _on_source_map(self, step: str, source_map: Any) -> None:
        run = self.session.current
        if run is None or run.origin:
            return  # a recorded run's own map (it has it already)
        target = self.last_live(step)
        if target is not None:
            self.recorder.add_source_map(step, source_map, run=target)

    def _on_profile(self, event: ProfileReady) -> None:
        """A profile measured here goes with the newest live run (with IR of its step if one has it); one
        opened from a capture made elsewhere (``origin``) is no run's."""
        if event.profile is None or event.origin:
            return
        target = self.last_live(getattr(event.profile, "step", None))
        if target is not None:
            self.recorder.add_profile(event.profile, run=target)

    def _on_passes(self, ready: PassesReady) -> None:
        """A pass pipeline recorded here goes with the newest live run of its mode (else the newest live run),
        so Save session writes it; one opened from dumps made elsewhere (``origin``) is no run's."""
        if ready.origin:
            return
        live = self.live_runs()
        target = next((r for r in reversed(live) if r.mode == ready.mode), live[-1] if live else None)
        if target is None:
            return
        try:
            self.recorder.add_passes(ready, run=target)
        except Exception as exc:  # noqa: BLE001 — a pipeline that cannot be kept leaves the run as it was
            if self.on_error is not None:
                self.on_error(f"The pass pipeline will not be saved with the session: {exc}")


def recorded_program(run: RecordedRun) -> str:
    """The entry point of a recorded program run (``"normalize"`` of ``"02_static_shapes.py:normalize"``, else
    its calls' step), ``""`` for a model run: a reopened program run's stats and key show calls, not tokens."""
    if not is_program_run(run):
        return ""
    return run.model.rsplit(":", 1)[-1] if ":" in run.model else (run.records[0].step if run.records else "call")


def as_shown(state: RunState, recorded: RecordedRun) -> RecordedRun:
    """``recorded`` named as the plot shows ``state`` (see :meth:`LiveRecording.runs_on_plot`), and a lane of
    the race the plot shows it in: a reopened race's lanes carry the session's race number, not the one in the
    file they came from (a file saved after opening the same race three times held three copies of "race 1",
    read back as one nine-lane race whose legend could not be merged: the walk, seed 336)."""
    number = f"run {state.run_id} · "
    if state.replay:
        return dataclasses.replace(recorded, label=f"{number}{state.mode} ▶ replay of {recorded.label}",
                                   records=list(state.records), tokens=list(state.tokens),
                                   finished=state.finished, race=state.race)
    if state.origin and not recorded.label.startswith(number):
        return dataclasses.replace(recorded, label=f"{number}{state.mode} (recorded as {recorded.label})",
                                   race=state.race)
    return recorded if recorded.race == state.race else dataclasses.replace(recorded, race=state.race)


def race_keys(runs: list[tuple[int, RecordedRun]]) -> list[tuple[int, int, int] | None]:
    """Per ``(file index, run)`` of files opened together, in order: the key of the race it is a lane of (None for
    a single run); lanes with the same key are one race on the plot. A race is ``(file, its number in the file,
    copy)``: a lane whose mode its race already has starts the next copy — files saved before each lane carried
    the plot's race number (:func:`as_shown`) held a race opened three times as three copies of one number."""
    keys: list[tuple[int, int, int] | None] = []
    modes: dict[tuple[int, int], tuple[int, set[str]]] = {}  # (file, race) -> (its newest copy, that copy's modes)
    for file_index, run in runs:
        if run.race is None:
            keys.append(None)
            continue
        copy, seen = modes.get((file_index, run.race), (0, set()))
        if run.mode in seen:
            copy, seen = copy + 1, set()
        seen.add(run.mode)
        modes[(file_index, run.race)] = (copy, seen)
        keys.append((file_index, run.race, copy))
    return keys


def reopened_verdicts(verdicts: list[list[dict[str, Any]]],
                      shown: dict[tuple[int, int, int], int]) -> list[tuple[int, dict[str, Any]]]:
    """``(race, doc)``: each file's race verdicts (``verdicts``: per file, in the order the files were opened) with
    the session's number of the race its lanes are shown as (``shown``: :func:`race_keys` key → race number; a
    race shown in several copies, its newest). A verdict whose race has no lane shown is left out."""
    out = []
    for i, docs in enumerate(verdicts):
        for doc in docs:
            keys = [k for k in shown if k[:2] == (i, doc.get("race"))]
            if keys:
                out.append((shown[max(keys)], doc))
    return out
