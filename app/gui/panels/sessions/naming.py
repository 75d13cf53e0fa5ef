"""How reopened and replayed runs are named (issue 55): a settings race's lane keeps its setting's name ("O3", not
the jit-static mode its decode step ran in), a run whose file number the window had used says which it was
(``"run 3 · O3 (as run 2)"``, on the plot and in every view that names the run), and a replay's status names the
number the plot gives it. Plain functions over :class:`app.core.recording.RecordedRun` and the session's
:class:`app.core.session.runs.RunState` (GUI thread)."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from app.core.recording import RecordedRun

_NUMBER = re.compile(r"run (\d+)\b")


def setting_names(files: list[Any]) -> set[str]:
    """The settings raced in ``files``' settings races (:attr:`app.core.recording.SessionFile.settings_races`)."""
    return {str(lane.get("name")) for f in files for race in f.settings_races for lane in race.get("lanes", [])}


def lane_named(run: RecordedRun, names: set[str]) -> RecordedRun:
    """``run`` with its setting's name as its mode when it is a settings race's lane: its label names one of
    ``names`` (``"run 2 · O3"``) while its recorded mode is the step's (``"jit-static"``); else ``run`` itself."""
    parts = run.label.split(" · ")
    name = parts[1] if len(parts) > 1 and _NUMBER.match(parts[0]) else ""
    return dataclasses.replace(run, mode=name) if name in names and name != run.mode else run


def named_lanes(runs: list[tuple[int, RecordedRun]], files: list[Any]) -> list[tuple[int, RecordedRun]]:
    """``runs`` (``(file index, run)``) with each settings-race lane named by its setting (:func:`lane_named`)."""
    names = setting_names(files)
    return [(i, lane_named(run, names)) for i, run in runs] if names else runs


def own_number(label: str) -> int | None:
    """The run number a label starts with (``"run 4 · jit"`` → 4), None without one."""
    own = _NUMBER.match(label)
    return int(own.group(1)) if own else None


def renumbered(state: Any, recorded: RecordedRun) -> str:
    """The label of ``state`` (a reopened run shown as run ``state.run_id``): ``"run 3 · O3 (as run 2)"`` when
    the file's number (2) was taken, else the file's label; the mode part is the shown run's (a lane's setting)."""
    own = own_number(recorded.label)
    parts = recorded.label.split(" · ")
    rest = " · ".join([state.mode, *parts[2:]]) if own is not None and len(parts) > 1 else recorded.label
    if own is None or own == state.run_id:
        return f"run {state.run_id} · {rest}" if own is not None else recorded.label
    return f"run {state.run_id} · {rest} (as run {own})"


def replay_label(state: Any, recorded: RecordedRun) -> str:
    """What a replay's status calls it: the number the plot uses, then what it replays
    (``"run 5 (replay of run 2 · O3)"``)."""
    return f"run {state.run_id} (replay of {recorded.label})"


def shown_label(state: Any, recorded: RecordedRun) -> str:
    """The label of a recorded run shown as ``state``: :func:`renumbered`, or for a replay
    ``"run 5 · O3 ▶ replay"`` (the number the plot gives it)."""
    return f"run {state.run_id} · {state.mode} ▶ replay" if state.replay else renumbered(state, recorded)


def replay_choices(groups: list[tuple[int | None, list[RecordedRun]]]) -> list[tuple[str, list[RecordedRun]]]:
    """What Demo ▸ Replay session… offers, oldest first: ``(title, runs)`` per recorded run on the plot (not a
    replay), a race as one choice with all its lanes (``groups``: :meth:`app.core.live_recording.LiveRecording.
    replay_groups`)."""
    from app.gui.panels.sessions.dialogs import run_title  # noqa: PLC0415 - heavy: pyqtgraph, Qt

    return [(run_title(runs[0]) if race is None else f"race · {len(runs)} lane{'s' if len(runs) != 1 else ''} "
             f"({', '.join(r.mode for r in runs)}) · {runs[0].machine}", runs) for race, runs in groups]
