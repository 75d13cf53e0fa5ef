"""Demo ▸ Replay session: a recorded run streamed again at its recorded pace (or N× faster, or without the
compile wait), for a talk where the model, the accelerator or the time for a compile is missing.

The events of :func:`app.core.recording.timing.replay_schedule` (the run's calls, tokens, IR and its
compile phases at the times they happened) are handed to the window's session by a single-shot
:class:`QTimer` at their times, so every view streams them as it did live; the plot's legend says
``▶ replay``, the title and the status line say so too, and Stop (Esc) ends it. A race replays lane after
lane. GUI thread only; no JAX.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QObject, Qt, QTimer, Slot

from app.core.recording.timing import replay_schedule
from app.core.requests import SourceMapReady
from app.gui.context import WindowContext
from app.gui.panels.sessions.naming import replay_label

if TYPE_CHECKING:
    from app.core.recording import RecordedRun
    from app.core.session.model import RunState


class RecordedRuns(Protocol):
    """What a replay uses of the session files (:class:`app.gui.panels.sessions.files.SessionFiles`): the runs it plays by
    default, a recorded run shown through the session, and its actions' enabled state."""

    def replay_source(self) -> list[RecordedRun]: ...

    def begin(self, run: RecordedRun, label: str, race: int | None, replay: bool = False,
              keep: int = 1) -> RunState | None: ...

    def set_actions_enabled(self, busy: bool) -> None: ...


def speed_text(speed: float, skip_compile: bool) -> str:
    pace = "at recorded pace" if speed == 1 else f"at {speed:g}×"
    return pace + (", compile wait skipped" if skip_compile else "")


class Replay(QObject):
    """Plays recorded runs through ``files`` (:class:`app.gui.panels.sessions.files.SessionFiles`)."""

    def __init__(self, ctx: WindowContext, files: RecordedRuns) -> None:
        super().__init__(ctx.host)
        self.files = files
        self.host, self.status = ctx.host, ctx.status
        self.session = ctx.session
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        # precise: Qt's default coarse timer may fire 5 % of its interval late (25 ms of a 505 ms gap: the replay's
        # pace is its claim, and a late token shortened the next gap; the clean-clone CI run of 7 Dec)
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.timeout.connect(self._tick)
        self._queue: list[Any] = []
        self._run: Any = None
        self._state: Any = None
        self._schedule: list[tuple[float, Any]] = []
        self._i = 0
        self._t0 = 0.0
        self._race: int | None = None
        self._title = ""
        self.speed, self.skip_compile = 1.0, False
        #: ``(emitted at ms since the lane's start, event)`` of the last replay (tests compare the pace).
        self.emitted: list[tuple[float, Any]] = []

    @property
    def running(self) -> bool:
        return self._state is not None

    def start(self, speed: float = 1.0, skip_compile: bool = False, runs: list[Any] | None = None) -> bool:
        """Replay ``runs`` (lanes of one race, or one run; default the newest recorded run on the plot, all
        lanes of its race). False, with a status line, when there is none or the window is busy."""
        if self.running or self.session.busy:
            self.status.error("A run or replay is in progress: stop it first (Esc).")
            return False
        runs = list(runs) if runs else self.files.replay_source()
        if not runs:
            self.status.error("Nothing to replay: open a session (File ▸ Open session…, Ctrl+Shift+O) "
                                "or run first.")
            return False
        self.speed, self.skip_compile = speed, skip_compile
        self._queue = list(runs)
        self._race = self.session.new_race_id() if len(runs) > 1 or runs[0].race is not None else None
        self._title = self.host.windowTitle()
        self.emitted = []
        return self._next_lane()

    def _next_lane(self) -> bool:
        run = self._queue.pop(0)
        self._run = run
        self._schedule = replay_schedule(run, self.speed, self.skip_compile)
        self._i = 0
        state = self.files.begin(run, run.label, self._race, replay=True)
        if state is None:
            self._queue = []
            return False
        self._state = state
        pace = speed_text(self.speed, self.skip_compile)
        self.host.setWindowTitle(f"{self._title.split(' — ▶')[0]} — ▶ replay {pace}")
        self.status.show(f"▶ Replaying {replay_label(state, run)} {pace} · {run.recorded_label} (Esc stops)")
        self.files.set_actions_enabled(True)
        self._t0 = time.perf_counter()
        self._tick()
        return True

    @Slot()
    def _tick(self) -> None:
        if self._state is None:
            return
        now = (time.perf_counter() - self._t0) * 1000
        due = []
        while self._i < len(self._schedule) and self._schedule[self._i][0] <= now:
            due.append(self._schedule[self._i][1])
            self._i += 1
        if due:
            self.emitted += [(now, e) for e in due]
            self.session.apply_all(due)
        if self._i < len(self._schedule):
            self.timer.start(max(0, int(self._schedule[self._i][0] - (time.perf_counter() - self._t0) * 1000)))
            return
        run, state = self._run, self._state
        self.session.apply_all([SourceMapReady(s, m) for s, m in run.source_maps.items() if s in run.ir])
        self._state = None
        if self._queue:
            self.session.end_recorded(state)
            self._next_lane()
            return
        self.host.setWindowTitle(self._title)
        done = f"Replay done: {replay_label(state, run)} {speed_text(self.speed, self.skip_compile)}"
        self.session.end_recorded(state, f"{done} · {run.recorded_label}")
        self.files.set_actions_enabled(self.session.busy)

    def stop(self) -> bool:
        """End the replay now (its run ends as stopped); False when none is running."""
        if self._state is None:
            return False
        self.timer.stop()
        state, self._state, self._queue = self._state, None, []
        self.host.setWindowTitle(self._title)
        self.session.end_recorded(state, "Replay stopped.")
        self.files.set_actions_enabled(self.session.busy)
        return True
