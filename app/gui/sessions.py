"""Session files in the window: every run recorded as it streams, File ▸ Save session / Open session /
Open recent / Export ▸ Perfetto trace, a compare table and an IR diff of recorded runs, and Demo ▸ Replay
session (:mod:`app.gui.replay`).

Recording: a :class:`app.core.recording.RunRecorder` is fed on the GUI thread from the window's
:class:`app.core.session.model.Session` signals (plain data), so each run on the plot has a
:class:`RecordedRun` (``recorded[run_id]``). Opening: the file's runs go through the same session as live
runs (:meth:`Session.begin_recorded`, their events through :meth:`Session.apply_all`, their source maps as
:class:`SourceMapReady`), so the plot, token view, IR tabs with cross links, compile log and race table show
them as they ran, read-only and labelled with where they were recorded. Nothing here imports JAX or torch:
a window started on a ``.session`` file with neither installed shows it (tested).
"""

from __future__ import annotations

import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPlainTextEdit,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from app.core.errors import SessionFileError
from app.core.recording import RecordedRun, RunRecorder, SessionFile, load_all
from app.core.recording.compare import COMPARE_COLUMNS, IR_TEXTS, compare_rows, ir_diff
from app.core.recording.environment import machine_name
from app.core.recording.store import SUFFIX
from app.core.session.model import RunState
from app.core.session.requests import SourceMapReady
from app.gui.demo import MODE_COLOURS, MODE_SYMBOLS, find_menu
from app.gui.replay import Replay
from app.gui.session_dialogs import ReplayDialog, SaveRunsDialog, run_title

FILTER = f"torchax-playground session (*{SUFFIX})"
#: Colours of the machines when runs of more than one machine are on the plot.
MACHINE_COLOURS = ("#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2")
MAX_RECENT_SESSIONS = 8


def short_origin(run: RecordedRun) -> str:
    """What the IR tabs' header names for a recorded run: ``"jit-static · recorded on CPU × 1"``."""
    return f"{run.mode} · recorded on {machine_name(run.environment)}"


class SessionFiles(QObject):
    """The window's session-file actions. ``recorded`` maps the session's run ids to their
    :class:`RecordedRun`; ``last_open_ms`` is ``(read, shown)`` of the last open (ms)."""

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.session = window.session
        self.recorder = RunRecorder("")
        self.recorded: dict[int, RecordedRun] = {}
        self._live: RunState | None = None  # the live run being recorded
        self._pending: RecordedRun | None = None  # the recorded run being started (during runStarted)
        self._machines: dict[str, str] = {}  # machine label -> colour (runs of several machines)
        self._dir = Path.home()
        self.opened: list[SessionFile] = []
        self.last_open_ms: tuple[float, float] | None = None
        self.replay = Replay(window, self)
        self._build_menus()
        ev = self.session.events
        ev.runStarted.connect(self._on_run_started)
        ev.prompt.connect(self._feed)
        ev.records.connect(self._feed_all)
        ev.tokens.connect(self._feed_all)
        ev.ir.connect(self._feed)
        ev.runFinished.connect(self._on_run_finished)
        ev.sourceMap.connect(self._on_source_map)
        ev.profile.connect(self._on_profile)
        ev.passes.connect(self._on_passes)
        ev.busyChanged.connect(self._on_busy)
        ev.sessionsRead.connect(self._on_sessions_read)

    @property
    def window(self) -> Any:
        return self.parent()

    # -- menus ------------------------------------------------------------------------------------
    def _action(self, menu: QMenu, text: str, slot: Any, shortcut: str = "") -> QAction:
        action = QAction(text, self.window)
        if shortcut:
            action.setShortcut(QKeySequence(shortcut))
        action.triggered.connect(slot)
        menu.addAction(action)
        self.window.addAction(action)  # shortcuts keep working when the menu bar is hidden
        return action

    def _build_menus(self) -> None:
        file = find_menu(self.window, "&File")
        first = file.actions()[0] if file.actions() else None  # File ▸ Export (the demo kit's) stays below
        self.open_action = QAction("&Open session…", self.window, shortcut=QKeySequence("Ctrl+Shift+O"))
        self.open_action.triggered.connect(self.open_dialog)
        self.recent_menu = QMenu("Open &recent session", self.window)
        self.save_action = QAction("&Save session…", self.window, shortcut=QKeySequence("Ctrl+Alt+S"))
        self.save_action.triggered.connect(self.save_dialog)
        self.compare_action = QAction("&Compare recorded runs…", self.window)
        self.compare_action.triggered.connect(self.show_compare)
        self.diff_action = QAction("&Diff IR of two runs…", self.window)
        self.diff_action.triggered.connect(self.show_diff)
        for action in (self.open_action, self.save_action):
            self.window.addAction(action)
        file.insertAction(first, self.open_action)
        file.insertMenu(first, self.recent_menu)
        file.insertAction(first, self.save_action)
        file.insertAction(first, self.compare_action)
        file.insertAction(first, self.diff_action)
        if first is not None:
            file.insertSeparator(first)
        export = next((a.menu() for a in file.actions() if a.menu() is not None and "Export" in a.text()), None)
        export = export or file.addMenu("&Export")
        export.addSeparator()
        self.perfetto_action = self._action(export, "Perfetto trace…", self.export_perfetto_dialog)
        demo = find_menu(self.window, "&Demo")
        demo.addSeparator()
        self.replay_actions = [
            self._action(demo, "&Replay session…", self.replay_dialog),
            self._action(demo, "Replay session at recorded &pace", lambda: self.replay.start(1.0), "Ctrl+Shift+Y"),
            self._action(demo, "Replay session &4×", lambda: self.replay.start(4.0)),
            self._action(demo, "Replay session, &skipping the compile wait", lambda: self.replay.start(1.0, True)),
        ]
        self.stop_replay_action = self._action(demo, "S&top replay", self.stop_replay)
        self.stop_replay_action.setEnabled(False)
        self._refresh_recent()

    def _refresh_recent(self) -> None:
        self.recent_menu.clear()
        recent = [p for p in self.window.settings.recent_sessions if isinstance(p, str)]
        for path in recent:
            action = self.recent_menu.addAction(Path(path).name)
            action.setToolTip(path)
            action.setData(path)
            action.triggered.connect(self._open_recent)
        self.recent_menu.setEnabled(bool(recent))

    def _remember(self, paths: list[str]) -> None:
        s = self.window.settings
        paths = [str(Path(p).resolve()) for p in paths]
        s.recent_sessions = paths + [p for p in s.recent_sessions if p not in paths]
        del s.recent_sessions[MAX_RECENT_SESSIONS:]
        self._refresh_recent()

    @Slot()
    def _open_recent(self) -> None:
        self.open_paths([self.sender().data()], background=True)

    def _on_busy(self, busy: bool) -> None:
        for action in (self.open_action, self.save_action, self.perfetto_action, *self.replay_actions):
            action.setEnabled(not busy)
        self.stop_replay_action.setEnabled(self.replay.running)

    # -- recording (live runs) --------------------------------------------------------------------
    def _on_run_started(self, run: RunState) -> None:
        live = {r.run_id for r in self.session.runs}
        self.recorded = {k: v for k, v in self.recorded.items() if k in live}  # the plot's runs only
        kept = {id(r) for r in self.recorded.values()}
        self.recorder.runs = [r for r in self.recorder.runs if id(r) in kept]  # runs off the plot are freed
        if run.origin:
            self._live = None
            return
        window, loaded = self.window, self.session.loaded
        try:
            settings = {**asdict(window.generation_settings()), "mode": run.mode}  # a race lane's own mode
        except Exception:  # noqa: BLE001 — the run was validated; the form may have changed since
            settings = {}
        if self.recorder.current is not None:  # a run that never finished (a stopped race lane)
            self.recorder.finish()
        rec = self.recorder
        rec.model = loaded.label if loaded else ""
        rec.model_id = loaded.model_id if loaded else ""
        rec.prompt = window.ui.prompt.prompt()
        self.recorded[run.run_id] = rec.start(run.mode, label=run.label, race=run.race, settings=settings)
        self._live = run

    def _recording(self) -> bool:
        return self._live is not None and self._live is self.session.current

    def _feed(self, event: Any) -> None:
        if self._recording():
            self.recorder.feed(event)

    def _feed_all(self, events: list[Any]) -> None:
        if self._recording():
            for event in events:
                self.recorder.feed(event)

    def _on_run_finished(self, run: RunState) -> None:
        if run is self._live and run.run_id in self.recorded and self.recorder.current is not None:
            if run.finished is not None:
                self.recorder.feed(run.finished)
            else:
                self.recorder.finish()

    def _last_live(self, step: str | None = None) -> RecordedRun | None:
        """The newest recorded live run (with IR of ``step`` if given)."""
        live = [self.recorded[r.run_id] for r in self.session.runs if not r.origin and r.run_id in self.recorded]
        if step is not None:
            live = [r for r in live if step in r.ir] or live
        return live[-1] if live else None

    def _on_source_map(self, step: str, source_map: Any) -> None:
        run = self.session.current
        if run is None or run.origin:
            return  # a recorded run's own map (it has it already)
        target = self._last_live(step)
        if target is not None:
            self.recorder.add_source_map(step, source_map, run=target)

    def _on_profile(self, event: Any) -> None:
        target = self._last_live()
        if target is not None and getattr(event, "profile", None) is not None:
            self.recorder.add_profile(event.profile, run=target)

    def _on_passes(self, ready: Any) -> None:
        """A pass pipeline recorded in the Passes tab goes with the newest live run of its mode (else the
        newest live run), so Save session writes it."""
        live = [self.recorded[r.run_id] for r in self.session.runs if not r.origin and r.run_id in self.recorded]
        target = next((r for r in reversed(live) if r.mode == getattr(ready, "mode", None)), live[-1] if live else None)
        if target is not None:
            try:
                self.recorder.add_passes(ready, run=target)
            except Exception as exc:  # noqa: BLE001 — a pipeline that cannot be kept leaves the run as it was
                self.window.status.error(f"The pass pipeline will not be saved with the session: {exc}")

    def runs_on_plot(self) -> list[RecordedRun]:
        """The recorded runs of the plot's runs, oldest first (what Save session and the exports write), each
        named by this window's run number, as the plot and the status line name it (issue 29, flaw 15: the file,
        the plot, the status line and the Perfetto trace numbered them differently): a run opened from a file
        keeps its recorded label after it (``run 1 · torch (recorded as run 3 · torch)``); a replay is what
        was replayed — a stopped replay only its calls and tokens so far."""
        return [self._as_shown(r, self.recorded[r.run_id]) for r in self.session.runs if r.run_id in self.recorded]

    @staticmethod
    def _as_shown(state: RunState, recorded: RecordedRun) -> RecordedRun:
        import dataclasses

        number = f"run {state.run_id} · "
        if state.replay:
            return dataclasses.replace(recorded, label=f"{number}{state.mode} ▶ replay of {recorded.label}",
                                       records=list(state.records), tokens=list(state.tokens),
                                       finished=state.finished)
        if state.origin and not recorded.label.startswith(number):
            return dataclasses.replace(recorded, label=f"{number}{state.mode} (recorded as {recorded.label})")
        return recorded

    def ir_origin(self, run: RunState) -> str:
        """The IR tabs' origin of a recorded run's IR (its mode and machine)."""
        recorded = self.recorded.get(run.run_id) or self._pending
        return short_origin(recorded) if recorded is not None else run.label

    def prompt_of(self, run: RunState) -> str:
        recorded = self.recorded.get(run.run_id) or self._pending
        return recorded.prompt if recorded is not None else ""

    # -- saving and exporting ---------------------------------------------------------------------
    def _ask_save(self, title: str, default: str, filt: str) -> Path | None:
        path, _ = QFileDialog.getSaveFileName(self.window, title, str(self._dir / default), filt)
        if not path:
            return None
        path = Path(path)
        self._dir = path.parent
        return path if path.suffix else path.with_suffix(Path(default).suffix)

    def _savable(self) -> list[RecordedRun] | None:
        if self.session.busy:
            self.window.status.error("Wait for the run to end (or stop it) before saving.")
            return None
        runs = self.runs_on_plot()
        if not runs:
            self.window.status.error("No runs to save: run the prompt (Ctrl+Enter) or open a session first.")
            return None
        return runs

    @Slot()
    def save_dialog(self) -> None:
        """File ▸ Save session…: asks which runs on the plot to save (all checked; no question for one run),
        then where."""
        runs = self._savable()
        if runs is None:
            return
        if len(runs) > 1:
            dialog = SaveRunsDialog(runs, self.window)
            self.save_runs_dialog = dialog
            if dialog.exec() != QDialog.DialogCode.Accepted or not dialog.selected():
                return
            runs = dialog.selected()
        path = self._ask_save("Save session", f"runs{SUFFIX}", FILTER)
        if path is not None:
            self.save(path, runs)

    def save(self, path: str | Path, runs: list[RecordedRun] | None = None) -> int:
        """Write ``runs`` (default: all runs on the plot) to ``path``; returns the bytes written (0 when
        nothing was written: the status line says why)."""
        savable = self._savable()
        if savable is None:
            return 0
        runs = savable if runs is None else [r for r in runs if any(r is s for s in savable)]
        if not runs:
            self.window.status.error("No runs chosen to save.")
            return 0
        try:
            size = SessionFile(runs=runs).save(path)
        except SessionFileError as exc:
            self.window.status.error(str(exc))
            return 0
        self._remember([str(path)])
        self.window.status.show(f"Saved {len(runs)} run{'s' if len(runs) != 1 else ''} to {path} "
                                f"({size / 1e6:.2f} MB).")
        return size

    @Slot()
    def export_perfetto_dialog(self) -> None:
        if self._savable() is None:
            return
        path = self._ask_save("Export Perfetto trace", "trace.json", "Chrome / Perfetto trace (*.json *.json.gz)")
        if path is not None:
            self.export_perfetto(path)

    def export_perfetto(self, path: str | Path) -> bool:
        """Write a Chrome / Perfetto trace of the runs on the plot (opens in ui.perfetto.dev)."""
        from app.core.recording.perfetto import write_trace

        runs = self._savable()
        if runs is None:
            return False
        try:
            write_trace(path, runs)
        except (OSError, ValueError) as exc:
            self.window.status.error(f"Export failed: {exc}")
            return False
        self.window.status.show(f"Exported a Perfetto trace of {len(runs)} run{'s' if len(runs) != 1 else ''} "
                                f"to {path} (open it in ui.perfetto.dev).")
        return True

    # -- opening ----------------------------------------------------------------------------------
    @Slot()
    def open_dialog(self) -> None:
        """File ▸ Open session… (several files overlay)."""
        paths, _ = QFileDialog.getOpenFileNames(self.window, "Open session", str(self._dir), FILTER)
        if paths:
            self._dir = Path(paths[0]).parent
            self.open_paths(paths, background=True)

    def open_paths(self, paths: list[str | Path], background: bool = False) -> bool:
        """Read the session files and show their runs beside those on the plot. A bad file (missing,
        truncated, corrupted, newer, not a session) is said on the status line (its details behind
        Details…) and nothing changes. Refused while a run is active. Returns True when shown — or, with
        ``background``, when the reading started: the files are read on the compute thread
        (:meth:`Session.open_sessions`: the window stays painted and says what it opens) and shown when read."""
        if not paths:
            return False
        if self.session.busy:
            self.window.status.error("Stop the run first: a session opens when the window is idle.")
            return False
        if background:
            names = ", ".join(Path(p).name for p in paths)
            self.window.status.show(f"Opening {names}…")
            return self.session.open_sessions([str(p) for p in paths])
        t0 = time.perf_counter()
        try:
            files = load_all(list(paths))
        except SessionFileError as exc:
            self.window.status.error(f"Could not open the session: {exc}", str(exc))
            return False
        return self._show_files(files, list(paths), (time.perf_counter() - t0) * 1000)

    @Slot(object)
    def _on_sessions_read(self, event: Any) -> None:
        """Session files read on the compute thread (GUI thread): show them, or say why not."""
        if event.error:
            self.window.ui.busy.stop()
            self.window.status.error(f"Could not open the session: {event.error}", event.error)
            return
        self._show_files(event.files, list(event.request.paths), event.read_ms)

    def _show_files(self, files: list[SessionFile], paths: list[str | Path], read_ms: float) -> bool:
        t_read = time.perf_counter()
        runs = [(i, run) for i, f in enumerate(files) for run in f.runs]
        if not runs:
            self.window.ui.busy.stop()
            self.window.status.error(f"{paths[0]}: holds no runs.")
            return False
        self.show_runs(runs)
        self.window.ui.plot.redraw()
        self.window.ui.busy.stop()  # shown at once: no phase is running
        t_shown = time.perf_counter()
        self.last_open_ms = (read_ms, (t_shown - t_read) * 1000)
        self.opened = files
        self._remember([str(p) for p in paths])
        names = ", ".join(Path(p).name for p in paths)
        origins = list(dict.fromkeys(run.recorded_label for _, run in runs))
        where = origins[0] if len(origins) == 1 else f"recorded on {len(origins)} machines"
        self.window.setWindowTitle(f"torchax playground — {names} · {where} (read-only)")
        self.window.status.show(f"Opened {names}: {len(runs)} run{'s' if len(runs) != 1 else ''} · {where} "
                                f"(read-only; Demo ▸ Replay session plays it at its recorded pace)")
        return True

    def show_runs(self, runs: list[tuple[int, RecordedRun]]) -> None:
        """Show recorded runs (``(file index, run)``, in order) through the session, as if they ran now."""
        machines = {r.machine for _, r in runs} | {
            rec.machine for rid, rec in self.recorded.items()
            if any(s.run_id == rid and s.origin for s in self.session.runs)}
        self._machines = ({m: MACHINE_COLOURS[i % len(MACHINE_COLOURS)] for i, m in enumerate(sorted(machines))}
                          if len(machines) > 1 else {})
        races: dict[tuple[int, int], int] = {}
        for file_index, run in runs:
            race = None
            if run.race is not None:
                key = (file_index, run.race)
                race = races.get(key) or races.setdefault(key, self.session.new_race_id())
            self.show_run(run, race, keep=len(runs))
        with_ir = [run for _, run in runs if run.ir]
        if with_ir and not runs[-1][1].ir:  # the last run compiled nothing (torch, a race): show the newest IR
            self.show_ir(with_ir[-1])
        profiled = [run for _, run in runs if run.profile is not None]
        if profiled:
            self.show_profile(profiled[-1])
        with_passes = [run for _, run in runs if run.passes is not None]
        if with_passes:
            self.show_passes(with_passes[-1])

    def show_passes(self, run: RecordedRun) -> bool:
        """Show ``run``'s recorded pass pipeline in the Passes tab (read-only)."""
        if run.passes is None:
            return False
        try:
            return self.window.passes.show_recorded(run.passes, run.recorded_label)
        except Exception as exc:  # noqa: BLE001 — a malformed recorded pipeline must not stop the open
            self.window.status.error(f"The recorded pass pipeline of {run.label} could not be shown: {exc}")
            return False

    def show_profile(self, run: RecordedRun) -> bool:
        """Show ``run``'s recorded profile in the Profile tab (read-only, labelled with where it was
        recorded): its rows aggregated as a live profile's, its timeline, links to its HLO and source map.
        False when the run has none or it cannot be shown (said on the status line)."""
        from dataclasses import replace

        from app.core.profile.build import BY, aggregate
        from app.core.session.requests import ProfileReady

        if run.profile is None:
            return False
        try:
            profile = replace(run.profile, source_map=run.source_maps.get(run.profile.step))
            rows = {by: [r.to_dict() for r in aggregate(profile, by, fold_layers=(by == "module"))] for by in BY}
            ready = ProfileReady(profile, rows, profile.timeline.to_dict(), run.ir.get(profile.step))
            self.window.profile.show_recorded(ready, run.recorded_label)
        except Exception as exc:  # noqa: BLE001 — a malformed recorded profile must not stop the open
            self.window.status.error(f"The recorded profile of {run.label} could not be shown: {exc}")
            return False
        return True

    def show_ir(self, run: RecordedRun) -> None:
        """Put ``run``'s IR and source maps in the IR tabs (linked), labelled with where it was recorded."""
        window = self.window
        origin = short_origin(run)
        for step, ir in run.ir.items():
            window.inspect.ir_arrived(step)
            window.ui.ir_tabs.set_ir(step, ir, origin)
        for step, source_map in run.source_maps.items():
            if step in run.ir:
                window.inspect.on_source_map(step, source_map)

    def show_run(self, run: RecordedRun, race: int | None = None, keep: int = 1) -> RunState | None:
        """One recorded run onto the plot, token view, IR tabs (with its source maps), compile log and race
        table."""
        state = self._begin(run, run.label, race, keep=keep)
        if state is None:
            return None
        events: list[Any] = run.events()
        events += [SourceMapReady(step, sm) for step, sm in run.source_maps.items() if step in run.ir]
        self.session.apply_all(events)
        self.session.end_recorded(state)
        return state

    def _begin(self, run: RecordedRun, label: str, race: int | None, replay: bool = False,
               keep: int = 1) -> RunState | None:
        self._pending = run  # read by start_plot_run / prompt_of during runStarted
        state = self.session.begin_recorded(label, run.mode, run.recorded_label, race, replay=replay, keep=keep)
        self._pending = None
        if state is not None:
            self.recorded[state.run_id] = run
        return state

    def start_plot_run(self, state: RunState) -> None:
        """The plot's curve of a recorded run (the window's runStarted): coloured by machine when runs of
        several machines are shown, else as a live run would be; ``▶ replay`` marks a replay."""
        run = self.recorded.get(state.run_id) or self._pending
        plot = self.window.ui.plot
        machine = run.machine if run is not None else ""
        machine_label = machine_name(run.environment) if run is not None else ""
        model = f" · {run.model}" if run is not None and run.model else ""  # names its model or program:entry
        where = f"{state.mode} · {machine_label}{model}"
        if state.replay:  # the mode first: a race lane's steady-decode key is named by it
            where = f"{state.mode} ▶ replay · {machine_label}{model}"
        label = where if state.replay else f"{where} (recorded)"  # the plot adds "run N · "
        colour = self._machines.get(machine)
        if state.race is not None:
            plot.start_run(label, colour=colour or MODE_COLOURS.get(state.mode), fade=False,
                           symbol=MODE_SYMBOLS.get(state.mode), run_id=state.run_id, group=state.race)
        else:
            plot.start_run(label, colour=colour, run_id=state.run_id)

    # -- replay -----------------------------------------------------------------------------------
    def stop_replay(self) -> bool:
        """End a replay in progress (Stop, Esc); False when none is running."""
        return self.replay.stop()

    def replay_choices(self) -> list[tuple[str, list[RecordedRun]]]:
        """What Demo ▸ Replay session… offers, oldest first: ``(title, runs)`` per recorded run on the plot
        (not a replay), a race as one choice with all its lanes."""
        shown = [(s, self.recorded[s.run_id]) for s in self.session.runs
                 if s.run_id in self.recorded and not s.replay and (s.finished is not None or s.origin)]
        choices: list[tuple[str, list[RecordedRun]]] = []
        races: dict[int, list[RecordedRun]] = {}
        for state, run in shown:
            if state.race is None:
                choices.append((run_title(run), [run]))
            elif state.race in races:
                races[state.race].append(run)
            else:
                races[state.race] = [run]
                choices.append(("", races[state.race]))
        return [(title or f"race · {len(runs)} lanes ({', '.join(r.mode for r in runs)}) · {runs[0].machine}", runs)
                for title, runs in choices]

    @Slot()
    def replay_dialog(self) -> None:
        """Demo ▸ Replay session…: pick the recorded run (or race) and the speed, then replay it."""
        choices = self.replay_choices()
        if not choices:
            self.window.status.error("Nothing to replay: open a session (File ▸ Open session…, Ctrl+Shift+O) "
                                     "or run first.")
            return
        dialog = ReplayDialog(choices, self.window)
        self.replay_picker = dialog
        if dialog.exec() == QDialog.DialogCode.Accepted:
            runs, speed, skip = dialog.choice()
            self.replay.start(speed, skip, runs=runs)

    def replay_source(self) -> list[RecordedRun]:
        """What a replay plays: the newest recorded run on the plot, or all lanes of its race."""
        shown = [(s, self.recorded[s.run_id]) for s in self.session.runs
                 if s.run_id in self.recorded and not s.replay and (s.finished is not None or s.origin)]
        if not shown:
            return []
        state, run = shown[-1]
        if state.race is None:
            return [run]
        return [r for s, r in shown if s.race == state.race]

    # -- compare and diff -------------------------------------------------------------------------
    @Slot()
    def show_compare(self) -> None:
        runs = self.runs_on_plot()
        if not runs:
            self.window.status.error("No runs to compare: open sessions (File ▸ Open session…) or run first.")
            return
        dialog = CompareDialog(runs, self.window)
        self.compare_dialog = dialog
        dialog.show()

    @Slot()
    def show_diff(self) -> None:
        runs = [r for r in self.runs_on_plot() if r.ir]
        if len(runs) < 2:
            self.window.status.error("The IR diff needs two runs with IR on the plot (a jit mode records it).")
            return
        dialog = IRDiffDialog(runs, self.window)
        self.diff_dialog = dialog
        dialog.show()


class CompareDialog(QDialog):
    """The summaries of recorded runs side by side, one row per run, labelled by machine
    (:data:`app.core.recording.compare.COMPARE_COLUMNS`)."""

    def __init__(self, runs: list[RecordedRun], parent: Any = None) -> None:
        super().__init__(parent)
        self.setObjectName("compareDialog")
        self.setWindowTitle("Compare recorded runs")
        rows = compare_rows(runs)
        self.table = QTableWidget(len(rows), len(COMPARE_COLUMNS))
        self.table.setObjectName("compareTable")
        self.table.setHorizontalHeaderLabels([c.header for c in COMPARE_COLUMNS])
        for i, row in enumerate(rows):
            for j, column in enumerate(COMPARE_COLUMNS):
                item = QTableWidgetItem(column.text(row))
                if column.help:
                    item.setToolTip(column.help)
                self.table.setItem(i, j, item)
        self.table.resizeColumnsToContents()
        self.table.verticalHeader().setVisible(False)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        layout.addWidget(buttons)
        self.resize(1000, 300)

    def cell(self, row: int, key: str) -> str:
        col = [c.key for c in COMPARE_COLUMNS].index(key)
        return self.table.item(row, col).text()


class IRDiffDialog(QDialog):
    """A line diff of two recorded runs' IR of one step (:func:`app.core.recording.compare.ir_diff`)."""

    def __init__(self, runs: list[RecordedRun], parent: Any = None) -> None:
        super().__init__(parent)
        self.setObjectName("irDiffDialog")
        self.setWindowTitle("Diff the IR of two runs")
        self.runs = runs
        self.a, self.b = QComboBox(), QComboBox()
        for combo in (self.a, self.b):
            for run in runs:
                combo.addItem(f"{run.label} · {run.machine}")
        self.a.setCurrentIndex(len(runs) - 2)
        self.b.setCurrentIndex(len(runs) - 1)
        self.step = QComboBox()
        self.step.addItems(["decode", "prefill"])
        self.which = QComboBox()
        self.which.addItems(list(IR_TEXTS))
        self.which.setCurrentText("hlo")
        self.align = QComboBox(objectName="irDiffAlign")
        self.align.addItem("text order", "text")
        self.align.addItem("source line", "source")
        self.align.setToolTip("Pair the two runs' lines in text order, or by their source location (file:line "
                              "of the jaxpr_source comments or the HLO metadata)")
        self.text = QPlainTextEdit(readOnly=True)
        self.text.setObjectName("irDiffText")
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        bar = QHBoxLayout()
        for w in (QLabel("run"), self.a, QLabel("vs"), self.b, QLabel("step"), self.step, QLabel("IR"), self.which,
                  QLabel("align by"), self.align):
            bar.addWidget(w)
        bar.addStretch(1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(self.text, 1)
        layout.addWidget(buttons)
        for combo in (self.a, self.b, self.step, self.which, self.align):
            combo.currentIndexChanged.connect(self.refresh)
        self.resize(1000, 640)
        self.refresh()

    @Slot()
    def refresh(self) -> None:
        a, b = self.runs[self.a.currentIndex()], self.runs[self.b.currentIndex()]
        try:
            self.text.setPlainText(ir_diff(a, b, self.step.currentText(), self.which.currentText(),
                                           align=self.align.currentData()))
        except KeyError as exc:
            self.text.setPlainText(str(exc.args[0] if exc.args else exc))
