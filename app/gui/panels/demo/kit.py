"""The demo kit of the main window: mode race, why it compiled, caches, phases, presentation, export.

:class:`DemoKit` adds two docks to the bottom area, tabbed with "What JAX sees" (``Demo kit``: race
controls, compilation-cache controls, race summary; ``Compile log``: why each call compiled, phase
breakdown), a File ▸ Export menu, a View menu (presentation mode, full screen, docks) and a Demo menu. It subscribes to the window's
:class:`app.core.session.model.Session` (the runs, the race, the cache state live there) and sends its requests
through it to the compute thread.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, Signal, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication, QMenu, QTabWidget, QVBoxLayout, QWidget

from app.core.compile_cache.xla import default_cache_dir
from app.core.events import CallRecord
from app.core.mode_catalog import CATALOG, MODE_NAMES
from app.core.race import EAGER_TOKENS
from app.core.report.columns import COMPILE_COLUMNS, RACE_COLUMNS, call_compile_rows
from app.core.session.model import RunState
from app.core.session.requests import CacheInfo
from app.gui.context import DemoParts, WindowContext
from app.gui.layout import card, card_title, dock_widget, keep_page_in_sight, pinned_above
from app.gui.menus import MODE_COLOURS, find_menu
from app.gui.panels.demo import exports
from app.gui.panels.demo.export_actions import ExportActions
from app.gui.panels.demo.settings_race import SettingsRace
from app.gui.panels.demo.verdicts import SteadyVerdicts
from app.gui.presentation import Presentation
from widgets.common.dock_action import ShowDockAction
from widgets.common.splitters import splitter
from widgets.demo.cache_panel import CachePanel
from widgets.demo.compile_log import CompileLog
from widgets.demo.phase_bars import PhaseBars
from widgets.demo.race_controls import RaceControls
from widgets.demo.race_table import RaceTable

MODE_HELP = {info.name: info.help for info in CATALOG}
CAPPED_MODE = next((info.name for info in CATALOG if info.token_cap is not None), None)
#: The most of the window's width the presentation's race summary keeps for values it may show (issue 55), and the
#: most it takes for the values it shows: five or six lanes scroll sideways, the plot keeping half the window
SUMMARY_SHARE = 0.38
SUMMARY_LIMIT = 0.4
#: The race-summary rows the presentation shows beside the plot (the story of a race in four numbers).
STAGE_KEYS = ("ttft_ms", "compile_ms", "steady_ms_per_token", "speedup_vs_torch", "speedup_ci")
EXPORTS = (  # (action text, dialog filter, default file name, DemoKit method)
    ("Plot as PNG…", "PNG image (*.png)", "latency.png", "export_plot"),
    ("Plot as SVG…", "SVG image (*.svg)", "latency.svg", "export_plot"),
    ("Plot as PDF…", "PDF document (*.pdf)", "latency.pdf", "export_plot"),
    ("Call records as CSV…", "CSV (*.csv)", "calls.csv", "export_records"),
    ("Call records as JSON…", "JSON (*.json)", "calls.json", "export_records"),
    ("Run report (Markdown)…", "Markdown (*.md)", "run-report.md", "export_report"),
    *((f"Trade-off as {kind}…", f"{kind} (*.{ext})", f"tradeoff.{ext}", "export_tradeoff")
      for kind, ext in (("PNG", "png"), ("SVG", "svg"), ("PDF", "pdf"), ("CSV", "csv"), ("JSON", "json"))),
)


class DemoKit(QObject, ExportActions):
    """Lives on the GUI thread; every slot is fed by the compute thread's signals or by the user. File ▸ Export's
    actions: :class:`ExportActions`; the race's steady-state phase and verdicts: :attr:`verdicts`."""

    #: Presentation mode is about to turn on (True) or has turned off (False): the window shows the Run
    #: workspace first (presenting is the plot and the stream). GUI thread.
    presenting = Signal(bool)

    def __init__(self, ctx: WindowContext, parts: DemoParts) -> None:
        """``parts``: the window's widgets the kit drives (the plot, the main area's splitters, the run's inputs…)."""
        super().__init__(ctx.host)
        ui = self.parts = parts
        self.ctx, self.host = ctx, ctx.host
        self.session = ctx.session
        self.controls = RaceControls(MODE_NAMES, MODE_HELP, MODE_COLOURS, CAPPED_MODE, EAGER_TOKENS)
        self.table = RaceTable(RACE_COLUMNS[1:])
        self.stage_table = RaceTable([c for c in RACE_COLUMNS if c.key in STAGE_KEYS])  # presentation
        self.stage_table.setObjectName("stageRaceTable")
        self.cache = CachePanel(str(default_cache_dir()))
        self.log = CompileLog(COMPILE_COLUMNS)
        self.phases = PhaseBars()
        self.settings_race = SettingsRace(ctx, parts)  # compiler settings: the trade-off plot, its stage in presentation
        self.verdicts = SteadyVerdicts(ctx, self.controls, parts.busy, parts.plot)  # the steady-state phase: setting, progress, verdicts
        self.settings_race.steady_plan = self.verdicts.plan  # a settings race's paired rounds: the same setting
        self.last_cache_message = ""  # result of the last cache request (e.g. bytes freed)
        self._export_dir = Path.home()
        self._build_docks()
        self.stage_card = card(self.stage_table, title="Race summary", stretch_last=True)
        self.stage_card.setVisible(False)  # shown beside the plot while presenting, once a race has run
        ui.stream_split.addWidget(self.stage_card)
        ui.top_split.addWidget(self.settings_race.stage_card)  # on stage in the latency plot's place
        plot_title = card_title(ui.plot_card)
        self.presentation = Presentation(
            ctx.host,
            ui.plot,
            show=[self.stage_card, self.settings_race.stage_card],
            hide=[ui.prompt.examples, plot_title],  # the plot's key says it
            sizes={ui.top_split: [32, 68, 0], ui.stream_split: [2, 5, 3]},
        )
        self._build_menus()
        self._connect()
        self.restore(ctx.settings.demo)
        self.session.cache("refresh", self.cache.directory())
        ctx.host.installEventFilter(self)  # leave presentation mode before the window saves its layout

    # -- settings ---------------------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        """What the user settings remember: race modes, eager token cap, the steady-state phase and its budget,
        cache directory and toggle, docks."""
        return {
            "modes": self.controls.modes(),
            "eager_tokens": self.controls.eager_token_cap(),
            "cache_dir": self.cache.directory(),
            "persistent_cache": self.cache.is_enabled(),
            "hidden_docks": [d.objectName() for d in (self.demo_dock, self.why_dock) if d.isHidden()],
            **self.settings_race.state(),
            **self.verdicts.state(),
        }

    def restore(self, state: dict[str, Any]) -> None:
        if isinstance(state.get("modes"), list):
            self.controls.set_modes([m for m in state["modes"] if m in MODE_NAMES])
        self.settings_race.restore(state)
        self.verdicts.restore(state)
        if isinstance(state.get("eager_tokens"), int):
            self.controls.eager_tokens.setValue(state["eager_tokens"])
        if isinstance(state.get("cache_dir"), str) and state["cache_dir"]:
            self.cache.dir_edit.setText(state["cache_dir"])
        if state.get("persistent_cache") is True:
            self.cache.toggle.setChecked(True)  # queues the change on the compute thread
        else:  # off means off for both compilers (Inductor would otherwise use its default disk cache)
            self.set_persistent(False, self.cache.directory())
        for dock in (self.demo_dock, self.why_dock):
            dock.setVisible(dock.objectName() not in (state.get("hidden_docks") or []))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        try:
            window = self.parent()
        except RuntimeError:  # the C++ object is being destroyed
            return False
        closing = window is not None and watched is window and event.type() == QEvent.Type.Close
        if closing and self.presentation.is_on():
            self.presentation_action.setChecked(False)
        return False

    # -- building ---------------------------------------------------------------------------------
    def _build_docks(self) -> None:
        """Two docks tabbed with "What JAX sees" under the main area: one shows at a time, so the token
        stream and the plot keep their room; each can be dragged out or docked beside another."""
        self.results = QTabWidget()  # the mode race's table; the settings race's controls and trade-off plot
        self.results.setObjectName("demoResults")
        self.results.addTab(self.verdicts.page(self.table), "Race summary")  # the table over the verdicts
        self.results.addTab(self.settings_race.page, "Settings race")
        column = QWidget()
        box = QVBoxLayout(column)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(6)
        box.addWidget(card(self.controls, title="Mode race"))
        box.addWidget(card(self.cache, title="Compilation cache"))
        box.addStretch(1)
        panel = splitter(Qt.Orientation.Horizontal,
                         pinned_above(self.controls.bar, column, "demoScroll"),  # Race in sight in a short dock
                         card(self.results, stretch_last=True), stretch=[0, 1], name="demoSplit")
        self.tabs = QTabWidget()
        self.tabs.setObjectName("whyTabs")
        self.tabs.addTab(self.log, "Why it compiled")
        self.tabs.addTab(self.phases, "Phase breakdown")
        bottom = Qt.DockWidgetArea.BottomDockWidgetArea
        win, ir_dock = self.host, self.parts.ir_dock
        self.demo_dock = dock_widget(win, "Demo kit", "demoDock", panel, bottom)
        self.why_dock = dock_widget(win, "Compile log", "whyDock", card(self.tabs, stretch_last=True), bottom)
        keep_page_in_sight(self.results)  # a narrow dock scrolls sideways to the tab just chosen
        win.tabifyDockWidget(ir_dock, self.demo_dock)
        win.tabifyDockWidget(self.demo_dock, self.why_dock)
        ir_dock.raise_()

    def _action(self, menu: QMenu, text: str, slot: Any, shortcut: str = "", checkable: bool = False) -> QAction:
        action = QAction(text, self.host, checkable=checkable)
        if shortcut:
            action.setShortcut(QKeySequence(shortcut))
        (action.toggled if checkable else action.triggered).connect(slot)
        menu.addAction(action)
        self.host.addAction(action)  # shortcuts keep working when panels or the menu bar are hidden
        return action

    def _build_menus(self) -> None:
        export = find_menu(self.host, "&File").addMenu("&Export")
        self.export_actions = {}
        for text, filt, default, method in EXPORTS:
            action = self._action(export, text, self._on_export)
            action.setData((filt, default, method))
            self.export_actions[text] = action
        view = find_menu(self.host, "&View")
        self.presentation_action = self._action(
            view, "&Presentation mode", self.set_presentation, "Ctrl+Shift+P", checkable=True
        )
        self.fullscreen_action = self._action(
            view, "&Full screen", self.set_full_screen, "F11", checkable=True
        )
        view.addSeparator()
        ui = self.parts
        #: the docks' View actions (app.gui.workspaces sends a dock's key pressed in Inspect or Code to Run)
        self.dock_actions: list[ShowDockAction] = []
        for dock, keys in (
            (ui.controls_dock, "Ctrl+B"),
            (ui.ir_dock, "Ctrl+Alt+1"),
            (self.demo_dock, "Ctrl+Alt+2"),
            (self.why_dock, "Ctrl+Alt+3"),
        ):
            action = ShowDockAction(dock, keys, self.host)  # a dock behind a tab is raised, not closed (issue 55)
            view.addAction(action)
            self.host.addAction(action)
            self.dock_actions.append(action)
        demo = find_menu(self.host, "&Demo")
        self.race_action = self._action(demo, "&Race checked modes", self.race_checked, "Ctrl+R")
        self.settings_race.add_actions(demo, self._action)  # Ctrl+Alt+R races the settings, Ctrl+Alt+P: in the plot area
        self.replay_action = self._action(demo, "Replay &cold start", self.replay, "Ctrl+Shift+R")
        self.clear_action = self._action(demo, "Clear &in-memory caches", self.clear_memory)

    def _connect(self) -> None:
        ev = self.session.events
        ev.busyChanged.connect(self._set_running)
        ev.runStarted.connect(self.on_run_started)
        ev.records.connect(self.on_records)
        ev.runFinished.connect(self.on_run_finished)
        ev.runsDropped.connect(self._on_runs_dropped)
        ev.verdicts.connect(self._on_verdicts)  # × torch and its 95 % CI come from the steady-state rounds
        ev.cache.connect(self.on_cache_info)
        self.controls.raceRequested.connect(self.start_race)
        self.controls.replayRequested.connect(self.replay)
        self.settings_race.stageChanged.connect(self._on_tradeoff)
        self.cache.persistentChanged.connect(self.set_persistent)
        self.cache.directoryChanged.connect(self.refresh_cache)
        self.cache.clearMemoryRequested.connect(self.clear_memory)
        self.cache.clearDiskRequested.connect(self.clear_disk)

    # -- requests from the user -------------------------------------------------------------------
    @Slot(list)
    def start_race(self, modes: list[str]) -> None:
        """Race ``modes`` with the prompt and settings of the window (loading the picked model first)."""
        if modes and not self.session.busy:
            self.ctx.actions.run(race=list(modes))

    @Slot()
    def race_checked(self) -> None:
        self.start_race(self.controls.modes())

    @Slot()
    def replay(self) -> None:
        """Clear the in-memory caches, then rerun the last run (or race) with its prompt and settings."""
        self.session.replay()

    @Slot()
    def clear_memory(self) -> None:
        if not self.session.busy:
            self.session.cache("clear_memory", self.cache.directory())

    @Slot(str)
    def clear_disk(self, directory: str) -> None:
        if not self.session.busy:
            self.session.cache("clear_disk", directory)

    @Slot(bool, str)
    def set_persistent(self, enabled: bool, directory: str) -> None:
        self.session.cache("persistent_on" if enabled else "persistent_off", directory)

    @Slot(str)
    def refresh_cache(self, directory: str) -> None:
        self.session.cache("refresh", directory)

    @Slot(bool)
    def set_presentation(self, on: bool) -> None:
        if on:
            self.presenting.emit(True)  # the window shows the Run workspace first
        else:
            self.parts.plot_card.setVisible(True)  # before the splitters get their sizes back
        self.presentation.set_on(on)
        if not on:
            self.presenting.emit(False)
        self._show_stage()
        tokens = self.parts.tokens  # the answer, not the (chat-formatted) prompt, after the font change
        tokens.verticalScrollBar().setValue(tokens.verticalScrollBar().maximum())
        self.fullscreen_action.setChecked(self.host.isFullScreen())

    def _show_stage(self) -> None:
        """The race summary under the token stream while presenting; the trade-off in the plot's place (presenting, or Show in the plot area checked)."""
        sr, presenting = self.settings_race, self.presentation.is_on()
        trade = sr.on_stage and (presenting or sr.plot_area())  # the trade-off in the plot's place
        show = presenting and self.stage_table.columnCount() > 0 and not trade
        # the whole summary, never behind a vertical scroll bar, while presenting; room kept for its values within
        # SUMMARY_SHARE of the window, its width within SUMMARY_LIMIT (more lanes scroll sideways: the plot keeps
        # the rest)
        width = self.host.width()
        self.stage_table.fit_rows(show, int(SUMMARY_SHARE * width) - 24, int(SUMMARY_LIMIT * width) - 24)
        top, plot_card = self.parts.top_split, self.parts.plot_card
        # in the plot's place, the plot card's least width: a window too narrow for the prompt column's and the
        # plot's least widths squeezes the prompt column as much whichever is shown (issue 55, the walk, seed 1 at
        # 1024x600: the trade-off asked 41 px less and Run/Stop moved 30 px right)
        sr.stage_card.setMinimumWidth(plot_card.minimumSizeHint().width())
        before = top.sizes()
        want = {self.stage_card: show, sr.stage_card: trade, plot_card: not trade}
        if top.indexOf(plot_card) < 0:  # the Code workspace has the plot: it stays shown there (issue 55)
            del want[plot_card]
        changed = [w for w, on in want.items() if w.isHidden() == on]
        for w in changed:
            w.setVisible(want[w])
        if not presenting and plot_card in want and (sr.stage_card in changed or plot_card in changed):
            # the shown one takes the room
            i, j, sizes = top.indexOf(plot_card), top.indexOf(sr.stage_card), list(before)
            sizes[i], sizes[j] = (0, before[i] + before[j]) if trade else (before[i] + before[j], 0)
            top.setSizes(sizes)
        if sr.stage_plot.font_size() != (size := round(QApplication.font().pointSizeF()) if presenting else 0):
            sr.stage_plot.set_font_size(size)  # talk-sized while presenting, the window's own size after
        if changed:
            self.presentation.sizes[top] = [32, 0, 68] if trade else [32, 68, 0]
            self.presentation.apply_sizes()

    def show_stage(self) -> None:
        """The trade-off or the latency plot in the plot's place, as the newest race wants (the Run workspace has
        its plot back from the Code workspace)."""
        self._show_stage()

    @Slot(bool)
    def _on_tradeoff(self, on: bool) -> None:
        """A settings race started (the Demo kit shows its plot) or a mode race or run is the newest."""
        self.results.setCurrentIndex(1 if on else 0)
        if on:
            self.demo_dock.raise_()
        self._show_stage()

    @Slot(bool)
    def set_full_screen(self, on: bool) -> None:
        if on != self.host.isFullScreen():
            self.host.showFullScreen() if on else self.host.showNormal()

    # -- session events -----------------------------------------------------------------------------
    def on_run_started(self, run: RunState) -> None:
        lanes = [r for r in self.session.runs if r.race == run.race] if run.race is not None else [run]
        if len(lanes) == 1:
            self.table.clear_rows()
            self.stage_table.clear_rows()
            self._show_stage()

    def on_records(self, records: list[CallRecord]) -> None:
        run = self.session.current
        assert run is not None, "the session announces call records of its current run only"
        for row in [row for r in records for row in call_compile_rows(run.label.removeprefix("run "), r)]:
            self.log.add_row(row)  # a call's own compile and those it made inside it (a program run as written)

    def on_run_finished(self, run: RunState) -> None:
        current = [r for r in self.session.runs if r.race == run.race] if run.race is not None else [run]
        self.table.set_rows(self.session.race_rows(), MODE_COLOURS)
        self.stage_table.set_rows(self.session.race_rows(), MODE_COLOURS)
        self._show_stage()
        self.phases.set_calls(exports.phase_calls(current))

    def _on_verdicts(self, _race: int, _doc: dict) -> None:
        rows = self.session.race_rows()
        for table in (self.table, self.stage_table):
            table.set_rows(rows, MODE_COLOURS) if rows else table.clear_rows()

    def _on_runs_dropped(self, _run_ids: list[int]) -> None:
        """Runs left the plot: the race summary is of the session's newest race or run, or empty."""
        rows = self.session.race_rows()
        for table in (self.table, self.stage_table):
            table.set_rows(rows, MODE_COLOURS) if rows else table.clear_rows()
        self._show_stage()
        run = self.session.current
        lanes = [] if run is None else [r for r in self.session.runs if r.race == run.race] if run.race else [run]
        self.phases.set_calls(exports.phase_calls(lanes))

    def on_cache_info(self, info: CacheInfo) -> None:
        self.cache.set_info(info.enabled, info.n_files, info.n_bytes, info.message)
        if info.message:
            self.last_cache_message = info.message
            if not self.session.busy:
                self._status(info.message)

    # -- helpers ------------------------------------------------------------------------------------
    def _set_running(self, running: bool) -> None:
        self.controls.set_running(running)
        self.cache.set_running(running)
        for action in (self.race_action, self.settings_race.race_action, self.replay_action, self.clear_action):
            action.setEnabled(not running)

    def _status(self, text: str) -> None:
        self.ctx.status.show(text)
