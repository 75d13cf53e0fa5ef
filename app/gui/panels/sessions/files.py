"""Session files in the window: File ▸ Save session / Open session / Open recent / Export ▸ Perfetto trace, a
compare table and an IR diff of recorded runs (:mod:`app.gui.panels.sessions.compare`), Demo ▸ Replay session
(:mod:`app.gui.panels.sessions.replay`). Which run keeps which IR, source map, profile and pass pipeline is core logic
(:class:`app.core.live_recording.LiveRecording`, fed by the window's Session; the window gives it the form's
prompt and settings). Opened runs go through the same session as live runs (their events through
:meth:`Session.apply_all`), so every view shows them as they ran, read-only and labelled with where they were
recorded (:mod:`app.gui.panels.sessions.views`). No JAX or torch here: a window opens a ``.session`` file without them.
A file keeps the Demo kit's newest settings race too; one read is shown on its trade-off plot.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDialog, QFileDialog, QMenu

from app.core.errors import SessionFileError
from app.core.live_recording import LiveRecording, LiveRunInfo, race_keys, reopened_verdicts
from app.core.recording import RecordedRun, RunRecorder, SessionFile, load_all
from app.core.recording.perfetto import write_trace
from app.core.recording.store import SUFFIX
from app.core.requests import SourceMapReady
from app.core.session.model import RunState
from app.gui.context import SessionViews, WindowContext
from app.gui.menus import find_menu, insert_before
from app.gui.panels.sessions.compare import CompareDialog, IRDiffDialog
from app.gui.panels.sessions.dialogs import ReplayDialog, SaveRunsDialog
from app.gui.panels.sessions.naming import named_lanes, replay_choices, shown_label
from app.gui.panels.sessions.replay import Replay
from app.gui.panels.sessions.views import machine_colours, show_ir, show_passes, show_profile, start_plot_run

if TYPE_CHECKING:
    from app.gui.panels.inspect import InspectWiring
    from app.gui.panels.passes.wiring import PassesWiring
    from app.gui.panels.profile.wiring import ProfileWiring

FILTER = f"torchax-playground session (*{SUFFIX})"
MAX_RECENT_SESSIONS = 8


class SessionFiles(QObject):
    """The window's session-file actions. ``live`` (:class:`LiveRecording`) keeps the recorded runs;
    ``recorded`` maps the session's run ids to their :class:`RecordedRun`; ``last_open_ms`` is ``(read,
    shown)`` of the last open (ms)."""

    def __init__(self, ctx: WindowContext, views: SessionViews, inspect: InspectWiring, profile: ProfileWiring,
                 passes: PassesWiring) -> None:
        """``views``: its widgets; ``inspect``, ``profile``, ``passes``: where a recorded run's IR, profile, passes go."""
        super().__init__(ctx.host)
        self.ctx, self.host, self.status, self.session = ctx, ctx.host, ctx.status, ctx.session
        self.views, self.inspect, self.profile, self.passes = views, inspect, profile, passes
        self.live = LiveRecording(self.session, self._run_info, on_error=self.status.error)
        self._machines: dict[str, str] = {}  # machine label -> colour (runs of several machines)
        self._dir = Path.home()
        self.opened: list[SessionFile] = []
        self.last_open_ms: tuple[float, float] | None = None
        self.replay = Replay(ctx, self)
        self.settings_race: Callable[[], dict | None] = lambda: None  # the Demo kit's newest race, as files keep it
        self.show_settings_race: Callable[[dict, str], None] = lambda _doc, _origin: None  # a read one, shown
        self._build_menus()
        self.session.events.busyChanged.connect(self.set_actions_enabled)
        self.session.events.sessionsRead.connect(self._on_sessions_read)

    # -- the recorded runs (core: LiveRecording) ----------------------------------------------------------
    def _run_info(self) -> LiveRunInfo:
        """The form's prompt and settings, for a live model run starting."""
        try:
            settings = self.ctx.actions.generation_settings()
        except Exception:  # noqa: BLE001 — the run was validated; the form may have changed since
            settings = None
        return LiveRunInfo(self.views.prompt.prompt(), settings)

    @property
    def recorder(self) -> RunRecorder:
        return self.live.recorder

    @property
    def recorded(self) -> dict[int, RecordedRun]:
        return self.live.recorded

    def runs_on_plot(self) -> list[RecordedRun]:
        """The recorded runs of the plot's runs as the plot names them (:meth:`LiveRecording.runs_on_plot`)."""
        return self.live.runs_on_plot()

    # -- menus ------------------------------------------------------------------------------------
    def _action(self, menu: QMenu, text: str, slot: Any, shortcut: str = "") -> QAction:
        action = QAction(text, self.host)
        if shortcut:
            action.setShortcut(QKeySequence(shortcut))
        action.triggered.connect(slot)
        menu.addAction(action)
        self.host.addAction(action)  # shortcuts keep working when the menu bar is hidden
        return action

    def _build_menus(self) -> None:
        file = find_menu(self.host, "&File")
        first = file.actions()[0] if file.actions() else None  # File ▸ Export (the demo kit's) stays below
        self.open_action = QAction("&Open session…", self.host, shortcut=QKeySequence("Ctrl+Shift+O"))
        self.open_action.triggered.connect(self.open_dialog)
        self.recent_menu = QMenu("Open &recent session", self.host)
        self.save_action = QAction("&Save session…", self.host, shortcut=QKeySequence("Ctrl+Alt+S"))
        self.save_action.triggered.connect(self.save_dialog)
        self.compare_action = QAction("&Compare recorded runs…", self.host)
        self.compare_action.triggered.connect(self.show_compare)
        self.diff_action = QAction("&Diff IR of two runs…", self.host)
        self.diff_action.triggered.connect(self.show_diff)
        for action in (self.open_action, self.save_action):
            self.host.addAction(action)
        insert_before(file, first, (self.open_action, self.recent_menu, self.save_action, self.compare_action,
                                    self.diff_action))
        if first is not None:
            file.insertSeparator(first)
        export = next((m for a in file.actions() if isinstance(m := a.menu(), QMenu) and "Export" in a.text()), None)
        export = export or file.addMenu("&Export")
        export.addSeparator()
        self.perfetto_action = self._action(export, "Perfetto trace…", self.export_perfetto_dialog)
        demo = find_menu(self.host, "&Demo")
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
        recent = [p for p in self.ctx.settings.recent_sessions if isinstance(p, str)]
        for path in recent:
            action = self.recent_menu.addAction(Path(path).name)
            action.setToolTip(path)
            action.setData(path)
            action.triggered.connect(self._open_recent)
        self.recent_menu.setEnabled(bool(recent))

    def _remember(self, paths: list[str]) -> None:
        s, paths = self.ctx.settings, [str(Path(p).resolve()) for p in paths]
        s.recent_sessions = paths + [p for p in s.recent_sessions if p not in paths]
        del s.recent_sessions[MAX_RECENT_SESSIONS:]
        self._refresh_recent()

    @Slot()
    def _open_recent(self) -> None:
        assert isinstance(action := self.sender(), QAction), "File ▸ Open recent session's actions call this"
        self.open_paths([action.data()], background=True)

    def set_actions_enabled(self, busy: bool) -> None:
        """Enable the session-file actions when not ``busy`` (the session's busyChanged, or a replay)."""
        for action in (self.open_action, self.save_action, self.perfetto_action, *self.replay_actions):
            action.setEnabled(not busy)
        self.stop_replay_action.setEnabled(self.replay.running)

    # -- saving and exporting ---------------------------------------------------------------------
    def _ask_save(self, title: str, default: str, filt: str) -> Path | None:
        path, _ = QFileDialog.getSaveFileName(self.host, title, str(self._dir / default), filt)
        if not path:
            return None
        self._dir = Path(path).parent
        return Path(path) if Path(path).suffix else Path(path).with_suffix(Path(default).suffix)

    def _savable(self) -> list[RecordedRun] | None:
        if self.session.busy:
            self.status.error("Wait for the run to end (or stop it) before saving.")
            return None
        runs = self.runs_on_plot()
        if not runs:
            self.status.error("No runs to save: run the prompt (Ctrl+Enter) or open a session first.")
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
            dialog = SaveRunsDialog(runs, self.host)
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
        chosen = None if runs is None else {r.label for r in runs}  # as shown: labels unique, copies new per call
        runs = [r for r in savable if chosen is None or r.label in chosen]
        if not runs:
            self.status.error("No runs chosen to save.")
            return 0
        try:
            race = self.settings_race()  # kept beside the runs (issue 40), as `tradeoff --save-session` keeps it
            size = SessionFile(runs=runs, settings_races=[race] if race else [],
                               verdicts=self.live.verdicts_of(runs)).save(path)  # the races' steady state
        except SessionFileError as exc:
            self.status.error(str(exc))
            return 0
        self._remember([str(path)])
        self.status.show(f"Saved {len(runs)} run{'s' if len(runs) != 1 else ''} to {path} ({size / 1e6:.2f} MB).")
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
        runs = self._savable()
        if runs is None:
            return False
        try:
            write_trace(path, runs)
        except (OSError, ValueError) as exc:
            self.status.error(f"Export failed: {exc}")
            return False
        self.status.show(f"Exported a Perfetto trace of {len(runs)} run{'s' if len(runs) != 1 else ''} "
                         f"to {path} (open it in ui.perfetto.dev).")
        return True

    # -- opening ----------------------------------------------------------------------------------
    @Slot()
    def open_dialog(self) -> None:
        """File ▸ Open session… (several files overlay)."""
        paths, _ = QFileDialog.getOpenFileNames(self.host, "Open session", str(self._dir), FILTER)
        if paths:
            self._dir = Path(paths[0]).parent
            self.open_paths(paths, background=True)

    def open_paths(self, paths: Sequence[str | Path], background: bool = False) -> bool:
        """Read the session files and show their runs beside those on the plot. A bad file (missing,
        truncated, corrupted, newer, not a session) is said on the status line (its details behind
        Details…) and nothing changes. Refused while a run is active. Returns True when shown — or, with
        ``background``, when the reading started: the files are read on the compute thread
        (:meth:`Session.open_sessions`: the window stays painted and says what it opens) and shown when read."""
        if not paths:
            return False
        if self.session.busy:
            self.status.error("Stop the run first: a session opens when the window is idle.")
            return False
        if background:
            names = ", ".join(Path(p).name for p in paths)
            self.status.show(f"Opening {names}…")
            return self.session.open_sessions([str(p) for p in paths])
        t0 = time.perf_counter()
        try:
            files = load_all(list(paths))
        except SessionFileError as exc:
            self.status.error(f"Could not open the session: {exc}", str(exc))
            return False
        return self._show_files(files, list(paths), (time.perf_counter() - t0) * 1000)

    @Slot(object)
    def _on_sessions_read(self, event: Any) -> None:
        """Session files read on the compute thread (GUI thread): show them, or say why not."""
        if event.error:
            self.views.busy.stop()
            self.status.error(f"Could not open the session: {event.error}", event.error)
            return
        self._show_files(event.files, list(event.request.paths), event.read_ms)

    def _show_files(self, files: list[SessionFile], paths: list[str | Path], read_ms: float) -> bool:
        t_read = time.perf_counter()
        runs = named_lanes([(i, run) for i, f in enumerate(files) for run in f.runs], files)  # lanes: settings
        races = [(race, Path(p).name) for f, p in zip(files, paths, strict=False) for race in f.settings_races]
        if not runs:
            self.views.busy.stop()
            if not races:
                self.status.error(f"{paths[0]}: holds no runs.")
                return False
            self.show_settings_race(*races[-1])  # `tradeoff --save-session`: a race and no run
            self.status.show(f"Opened {races[-1][1]}: a settings race of {len(races[-1][0]['lanes'])} settings.")
            return True
        self.show_runs(runs, [f.verdicts for f in files])
        for race, origin in races[-1:]:  # the newest file's last race on the Demo kit's trade-off, after its runs
            self.show_settings_race(race, origin)
        self.views.plot.redraw()
        self.views.busy.stop()  # shown at once: no phase is running
        self.last_open_ms = (read_ms, (time.perf_counter() - t_read) * 1000)
        self.opened = files
        self._remember([str(p) for p in paths])
        names = ", ".join(Path(p).name for p in paths)
        origins = list(dict.fromkeys(run.recorded_label for _, run in runs))
        where = origins[0] if len(origins) == 1 else f"recorded on {len(origins)} machines"
        self.host.setWindowTitle(f"torchax playground — {names} · {where} (read-only)")
        self.status.show(f"Opened {names}: {len(runs)} run{'s' if len(runs) != 1 else ''} · {where} "
                         f"(read-only; Demo ▸ Replay session plays it at its recorded pace)")
        return True

    def show_runs(self, runs: list[tuple[int, RecordedRun]], verdicts: Sequence[list[dict]] = ()) -> None:
        """Show recorded runs (``(file index, run)``, in order) through the session, as if they ran now, and
        their races' steady-state verdicts (``verdicts``: each file's, :attr:`SessionFile.verdicts`)."""
        machines = {r.machine for _, r in runs} | self.live.opened_machines()
        self._machines = machine_colours(machines)
        races: dict[tuple[int, int, int], int] = {}
        for (_file, run), key in zip(runs, race_keys(runs), strict=True):
            race = None if key is None else races.get(key) or races.setdefault(key, self.session.new_race_id())
            self.show_run(run, race, keep=len(runs))
        for race, doc in reopened_verdicts(list(verdicts), races):  # after their lanes, as a live race's
            self.session.show_verdicts(race, doc)
        with_ir = [run for _, run in runs if run.ir]
        if with_ir and not runs[-1][1].ir:  # the last run compiled nothing (torch, a race): show the newest IR
            show_ir(self.inspect, self.views.ir_tabs, with_ir[-1], self.live.shown_as(with_ir[-1]))
        profiled = [run for _, run in runs if run.profile is not None]
        if profiled:
            show_profile(self.profile, self.status, profiled[-1])
        with_passes = [run for _, run in runs if run.passes is not None]
        if with_passes:
            show_passes(self.passes, self.status, with_passes[-1])

    def show_run(self, run: RecordedRun, race: int | None = None, keep: int = 1) -> RunState | None:
        """One recorded run onto the plot, token view, IR tabs (with its source maps), compile log and race
        table."""
        state = self.begin(run, run.label, race, keep=keep)
        if state is None:
            return None
        events: list[Any] = run.events()
        events += [SourceMapReady(step, sm) for step, sm in run.source_maps.items() if step in run.ir]
        self.session.apply_all(events)
        self.session.end_recorded(state)
        return state

    def begin(self, run: RecordedRun, label: str, race: int | None, replay: bool = False,
              keep: int = 1) -> RunState | None:
        """Start showing recorded ``run`` (None when refused: busy), named as the plot shows it (shown_label)."""
        state = self.live.begin_recorded(run, label, race, replay=replay, keep=keep)
        if state is not None:
            state.label = shown_label(state, run)
        return state

    def start_plot_run(self, state: RunState) -> None:
        """The plot's curve of a recorded run (the window's runStarted; :func:`app.gui.panels.sessions.views.start_plot_run`)."""
        start_plot_run(self.views.plot, state, self.live.recorded_of(state), self._machines)

    # -- replay -----------------------------------------------------------------------------------
    def stop_replay(self) -> bool:
        """End a replay in progress (Stop, Esc); False when none is running."""
        return self.replay.stop()

    def replay_choices(self) -> list[tuple[str, list[RecordedRun]]]:
        """What Demo ▸ Replay session… offers (:func:`app.gui.panels.sessions.naming.replay_choices`)."""
        return replay_choices(self.live.replay_groups())

    @Slot()
    def replay_dialog(self) -> None:
        """Demo ▸ Replay session…: pick the recorded run (or race) and the speed, then replay it."""
        choices = self.replay_choices()
        if not choices:
            self.status.error("Nothing to replay: open a session (File ▸ Open session…, Ctrl+Shift+O) or run first.")
            return
        dialog = ReplayDialog(choices, self.host)
        self.replay_picker = dialog
        if dialog.exec() == QDialog.DialogCode.Accepted:
            runs, speed, skip = dialog.choice()
            self.replay.start(speed, skip, runs=runs)

    def replay_source(self) -> list[RecordedRun]:
        """What a replay plays: the newest recorded run on the plot, or all lanes of its race."""
        return self.live.replay_source()

    # -- compare and diff -------------------------------------------------------------------------
    @Slot()
    def show_compare(self) -> None:
        runs = self.runs_on_plot()
        if not runs:
            self.status.error("No runs to compare: open sessions (File ▸ Open session…) or run first.")
            return
        dialog = CompareDialog(runs, self.host)
        self.compare_dialog = dialog
        dialog.show()

    @Slot()
    def show_diff(self) -> None:
        runs = [r for r in self.runs_on_plot() if r.ir]
        if len(runs) < 2:
            self.status.error("The IR diff needs two runs with IR on the plot (a jit mode records it).")
            return
        dialog = IRDiffDialog(runs, self.host)
        self.diff_dialog = dialog
        dialog.show()
