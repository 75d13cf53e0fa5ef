"""The session's signals (:class:`SessionEvents`), declared and typed, that views connect to."""

from __future__ import annotations

from psygnal import Signal, SignalGroup

from app.core.compile_settings.progress import SettingsRaceLanes
from app.core.events import IREvent, PhaseEvent, PromptEvent, SteadyBlockEvent, SteadyRoundEvent
from app.core.programs.compute.requests import ProgramCompiled, ProgramFailed, ProgramLoaded
from app.core.requests import RequestFailed
from app.core.session import requests as rq
from app.core.session.figures import LiveFigures
from app.core.session.runs import RunState


class SessionEvents(SignalGroup):
    """The session's signals, declared and typed (``psygnal``, the signal library napari's models use:
    https://psygnal.readthedocs.io): a reader, a type checker and an IDE see every signal and its arguments.
    Arguments are plain data; every signal is emitted on the thread that calls the session (the GUI thread
    in the window). Connect with ``session.events.<name>.connect(callback)``.
    """

    #: A model starts loading: its name.
    loadStarted = Signal(str)
    #: A model finished loading.
    modelLoaded = Signal(rq.ModelLoaded)
    #: The compute worker became busy (True) or idle (False).
    busyChanged = Signal(bool)
    #: A run starts (also once per race lane).
    runStarted = Signal(RunState)
    #: The prompt as the model sees it (chat template applied).
    prompt = Signal(PromptEvent)
    #: New call records of the run in progress (a batch).
    records = Signal(list)
    #: New token events of the run in progress (a batch).
    tokens = Signal(list)
    #: The stats strip's figures changed.
    figures = Signal(LiveFigures)
    #: A phase starts or ends (loading, tracing, compiling, …).
    phase = Signal(PhaseEvent)
    #: The IR of a newly compiled step.
    ir = Signal(IREvent)
    #: A run (or lane) ended.
    runFinished = Signal(RunState)
    #: Rows of :func:`app.core.race.summary_rows` for the race or run in progress.
    raceSummary = Signal(list)
    #: Runs left the plot (the cap, Keep the last N runs, Clear plot): their run ids. Views keep only
    #: ``Session.runs``; with none left, they show nothing of a run.
    runsDropped = Signal(list)
    #: A block of a race's steady-state phase starts (its round, mode and elapsed time: a progress line).
    steadyProgress = Signal(SteadyBlockEvent)
    #: A round of a race's steady-state phase ended.
    steadyRound = Signal(SteadyRoundEvent)
    #: A race's steady-state verdicts (its number and the phase's JSON form: ``pairs``, ``rounds``, ``aa_noise``,
    #: ``noisy``, …): measured here, or read from a session file (``Session.race_verdicts``).
    verdicts = Signal(int, dict)
    #: The worker is idle again: a message saying what finished.
    idle = Signal(str)
    #: A request failed.
    error = Signal(RequestFailed)
    #: A message to show without failing anything.
    notice = Signal(str)
    #: A step's source map: ``(step, SourceMap)``.
    sourceMap = Signal(str, object)
    #: A measured profile.
    profile = Signal(rq.ProfileReady)
    #: A recorded pass pipeline (the Passes tab).
    passes = Signal(rq.PassesReady)
    #: A step's collectives: ``(step, list[Collective])``.
    collectives = Signal(str, list)
    #: The devices present (list of device descriptions).
    devices = Signal(list)
    #: the JAX platforms this machine has (``["cpu", "gpu"]``) and the one the engine runs on
    platforms = Signal(list, str)
    #: The mesh changed.
    mesh = Signal(rq.MeshChanged)
    #: The compilation caches' state.
    cache = Signal(rq.CacheInfo)
    #: A status-bar message.
    status = Signal(str)
    #: The compute thread is finishing a run abandoned during a compile (True), or is free again (False).
    background = Signal(bool)
    #: Session files read on the compute thread (:meth:`Session.open_sessions`), or the first bad file's error.
    sessionsRead = Signal(rq.SessionsRead)
    #: A settings race's lanes so far and the lane starting (:class:`SettingsRaceLanes`).
    settingsRace = Signal(SettingsRaceLanes)
    #: Where two raced settings part (:class:`app.core.session.compute.settings_race.SettingsParted`).
    settingsParted = Signal(object)
    #: The user's program loaded (its entry points, the one run).
    programLoaded = Signal(ProgramLoaded)
    #: An error in the user's program, at its line (sent before the request's ``error``).
    programFailed = Signal(ProgramFailed)
    #: A live compile of the Code workspace: what changed since the previous good compile.
    programCompiled = Signal(ProgramCompiled)
