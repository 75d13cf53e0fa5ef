"""The main window: wires the widgets to the session model and the compute thread.

Data flows one way: the user's intent goes to :class:`app.core.session.model.Session`, which sends typed
requests to the one compute worker (:class:`app.gui.worker.ComputeThread`); the worker's events come back
on the GUI thread into :meth:`Session.apply_all`, and the session's signals feed the widgets (token view,
latency plot, IR tabs, stats strip). The window keeps no run state of its own.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import time
from typing import Any

from PySide6.QtCore import QByteArray, Qt, Slot
from PySide6.QtGui import QCloseEvent, QKeySequence, QShortcut, QShowEvent
from PySide6.QtWidgets import QApplication, QMainWindow, QWidget

from app.core.models.sources import BUILTIN_MODELS, RANDOM_PREFIX, SHAPE_PRESETS, default_model
from app.core.paths import assets_dir
from app.core.requests import RequestFailed
from app.core.session.model import Session
from app.core.session.requests import LoadRequest, ModelLoaded
from app.core.settings import GenerationSettings
from app.gui.context import DemoParts, RunViews, SessionViews, WindowContext, WorkspaceParts
from app.gui.first_paint import HoldUntilPainted
from app.gui.layout import DockLayout, ScreenFit, WindowParts
from app.gui.lazy_compute import DeferUntilModel
from app.gui.panels.demo.kit import DemoKit
from app.gui.panels.help import WindowMenus
from app.gui.panels.inspect import InspectWiring
from app.gui.panels.mesh import MeshWiring
from app.gui.panels.passes.wiring import PassesWiring
from app.gui.panels.plot_actions import PlotActions
from app.gui.panels.profile.wiring import ProfileWiring
from app.gui.panels.programs.wiring import ProgramWiring
from app.gui.panels.run_view import RunView
from app.gui.panels.sessions.compare_runs import CompareRuns
from app.gui.panels.sessions.files import SessionFiles
from app.gui.status import StatusLine
from app.gui.user_settings import UserSettings
from app.gui.worker import ComputeThread
from app.gui.workspaces import CODE, RUN, Workspaces
from widgets.ir.find_bar import FindBar

ASSETS = assets_dir()
DEFAULT_PROMPT = "What is the capital of France?"  # the default model is a chat model


def load_examples() -> list[dict[str, str]]:
    try:
        return json.loads((ASSETS / "prompts.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []


class MainWindow(QMainWindow):
    """torchax playground's window. ``autoload`` loads the remembered (or default) model at start-up;
    without it the compute thread starts JAX only when a model is wanted (:class:`DeferUntilModel`), so a
    window showing session files runs where JAX and torch are missing."""

    def __init__(
        self, settings: UserSettings | None = None, autoload: bool = True, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("torchax playground")
        self.settings = settings or UserSettings.load()
        self.ui = WindowParts(self)
        self.compute = ComputeThread(self)
        self.first_paint = HoldUntilPainted(self, self.compute.submit)  # the window paints before any work
        self.compute_gate = DeferUntilModel(self.first_paint.submit)  # no JAX before a model is wanted
        self.session = Session(self.compute_gate.submit)
        self.inspect = InspectWiring(self.ui.ir_tabs, self)  # source-map tab, collectives, IR line links
        self.status = StatusLine(self.ui.status_label, self.ui.details_button, self)
        self._closing = False
        self._shown_once = False
        #: How long closing waits for the compute thread (ms); None = until it ends. The app sets 1,500
        #: (:func:`app.gui.main.main`): a compile still running then is abandoned and the process ends
        #: (:func:`app.gui.main.end_process`) with everything the user made already saved.
        self.quit_wait_ms: int | None = None
        #: what the panels may use of the window (app.gui.context): typed parts, never the window itself
        self.context = WindowContext(self, self.session, self.status, self.settings, self)
        self._connect()
        self._restore()
        if autoload:
            self.request_load(self.ui.model_picker.current_model())
        self.mesh = MeshWiring(self.ui.device_panel, self.session, self)  # lists devices after the load
        self.demo = DemoKit(self.context, DemoParts.of(self.ui))  # mode race, compile log, caches, phases, presentation, export
        self.plot_actions = PlotActions(  # the plot's context menu: export, copy, clear, reset zoom
            self.context, self.ui.plot,
            [self.demo.export_actions[k] for k in ("Plot as PNG…", "Plot as SVG…", "Plot as PDF…")])
        self.mesh.message.connect(self.status.show)
        self.workspaces = Workspaces(self.context, self.demo, WorkspaceParts.of(self.ui))  # Run | Inspect | Code (Ctrl+1 / 2 / 3)
        self.demo.presenting.connect(self._on_presenting)
        for key in ("host", "bound"):  # on stage: the big numbers only
            self.demo.presentation.hide.append(self.ui.stats.cards[key])
        # the Code workspace: your own program, its files and draft
        self.programs = ProgramWiring(self.context, self.inspect, self.workspaces, self.ui.ir_tabs, self.ui.busy,
                                      self.compute.stop, self.demo.tabs)
        self.demo.settings_race.attach_programs(self.programs, self.workspaces.changed, self.workspaces.current())
        # the Profile tab (measured time per op, line, module) and the Passes tab (XLA's pass pipeline)
        self.profile = ProfileWiring(self.context, self.inspect, self.workspaces, self.programs, self.ui.ir_tabs,
                                     self.ui.ir_dock, self.ui.prompt)
        self.passes = PassesWiring(self.context, self.inspect, self.profile, self.ui.ir_tabs, self.ui.plot)
        self.passes.compile_log = self.demo.log
        self.dock_layout = DockLayout(self, self.ui)  # every dock exists now: remember the default
        self.screen_fit = ScreenFit(self)  # the window's minimum size: the layout's, never more than the screen
        self.demo.presentation.refit = self.screen_fit.fit  # leaving presentation: the normal minimum first
        self.dock_layout.capture_default()
        self._layout_restored = self.dock_layout.restore(self.settings.splitters)
        # File ▸ Open / Save session, Perfetto export; Demo ▸ Replay session
        self.sessions = SessionFiles(self.context, SessionViews.of(self.ui), self.inspect, self.profile, self.passes)
        self.sessions.settings_race = self.demo.settings_race.document  # a saved session keeps the newest race
        self.sessions.show_settings_race = self.demo.settings_race.show_saved
        self.compare_runs = CompareRuns(self.sessions)  # File ▸ Compare two runs… (issue 58)
        plot = self.plot_actions  # File ▸ Quit, View ▸ docks, Reset layout, plot actions; Help (F1)
        self.run_view = RunView(self.context, RunViews.of(self.ui), self.inspect, self.demo, self.sessions, self.programs)
        self.compute.worker.live.connect(self.run_view.on_phase)  # a phase as it starts, before its events
        self.menus = WindowMenus(self, list(self.workspaces.actions.values()),
                                 [plot.copy_action, plot.clear_action, plot.reset_action], self.reset_layout,
                                 self.profile.request, self.passes.record_shortcut)

    @property
    def loaded(self) -> ModelLoaded | None:
        """The model loaded on the compute thread, as last reported (None before the first load)."""
        return self.session.loaded

    # -- wiring -----------------------------------------------------------------------------------
    def _connect(self) -> None:
        ui, ev = self.ui, self.session.events
        self.compute.worker.events.connect(self.on_events)
        ev.loadStarted.connect(self._on_load_started)
        ev.modelLoaded.connect(self._on_loaded)
        ev.busyChanged.connect(self._on_busy_changed)
        ev.error.connect(self._on_error)
        ev.notice.connect(self.status.warn)
        ev.status.connect(self.status.show)
        ev.sourceMap.connect(self.inspect.on_source_map)
        ev.collectives.connect(self.inspect.on_collectives)
        ui.model_picker.loadRequested.connect(self.request_load)
        ui.form.dtypeChanged.connect(self._on_dtype_changed)
        ui.prompt.runRequested.connect(self.run)
        ui.prompt.stopRequested.connect(self.stop)
        for keys in ("Ctrl+Return", "Ctrl+Enter"):
            QShortcut(QKeySequence(keys), self).activated.connect(self.run)
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self).activated.connect(self.escape)

    @Slot()
    def escape(self) -> None:
        """Esc in a find field dismisses the search (query cleared, focus back to its view); anywhere else
        it stops the run."""
        widget = QApplication.focusWidget()
        while widget is not None and not isinstance(widget, FindBar):
            widget = widget.parentWidget()
        if widget is not None:
            widget.dismiss()
            return
        self.stop()

    def _restore(self) -> None:
        s, ui = self.settings, self.ui
        self._refresh_models()
        # no remembered model: the default, or pydoc-llama when the default's wheel is not installed (a copy
        # installed with `uv tool install` / `pipx install` lacks it: docs/install.md), saying how to add it
        model, note = (s.model, None) if s.model else default_model()
        ui.model_picker.set_current_model(model)
        self._first_load_notes = [note] if note else []  # shown under the model box once it has loaded
        # a stand-in for the missing default is not remembered as the choice: once the wheel is installed, the
        # next start opens the default again
        self._stand_in_model = model if note else None
        if note:
            self.status.warn(note)
        ui.form.set_values(s.generation)
        ui.prompt.set_examples(load_examples())
        ui.prompt.set_prompt(s.prompt or DEFAULT_PROMPT)
        if s.geometry:
            self.restoreGeometry(QByteArray(base64.b64decode(s.geometry)))
        else:  # 1600×980, or the whole of a smaller screen (a 1280×720 projector: every pixel counts)
            room = self.screen().availableGeometry().size()
            self.resize(min(1600, int(room.width() * 0.9)), min(980, int(room.height() * 0.9)))

    def show_first_time(self) -> None:
        """Show the window as the app starts: maximized on a screen smaller than 1600×980 without a remembered
        geometry (a 1280×720 projector: every pixel counts, the title bar and status bar stay on screen)."""
        room = self.screen().availableGeometry().size()
        if not self.settings.geometry and (room.width() < 1600 or room.height() < 980):
            self.resize(room)  # the whole screen even where no window manager maximizes
            self.showMaximized()
        else:
            self.show()

    def _refresh_models(self) -> None:
        presets = [RANDOM_PREFIX + name for name in SHAPE_PRESETS]
        self.ui.model_picker.set_models(BUILTIN_MODELS, presets, self.settings.recent_models)

    def save_settings(self) -> None:
        """Write the current model, prompt, generation settings and geometry to the user config file."""
        s, ui = self.settings, self.ui
        s.prompt = ui.prompt.prompt()
        s.generation = ui.form.values()
        s.geometry = base64.b64encode(self.saveGeometry().data()).decode()
        s.workspace = self.workspaces.current()
        if s.workspace != RUN:  # the dock arrangement saved is Run's (Inspect hides every dock)
            self.workspaces.show(RUN)
        s.splitters = self.dock_layout.save()  # docks ("window") and the main area's splitters
        s.demo = self.demo.state()
        self.programs.save_state()  # the program's draft: unsaved edits are never lost
        try:
            s.save()
        except OSError as exc:
            self.status.show(f"Could not save settings: {exc}")

    # -- requests ---------------------------------------------------------------------------------
    @Slot(str)
    def request_load(self, model: str) -> None:
        """Queue a load of ``model`` with the form's dtype (no-op if it is already loaded or loading)."""
        dtype = self.ui.form.values()["dtype"]
        self._forget_load_error(model, dtype)
        self.session.load(model, dtype)

    def _forget_load_error(self, model: str, dtype: str) -> None:
        loaded = self.session.loaded
        if loaded is not None and (loaded.request.model, loaded.request.dtype) == (model.strip(), dtype):
            self.ui.model_error.setVisible(False)  # back on the loaded model: an old load error is moot

    @Slot()
    def run(self, race: list[str] | None = None) -> None:
        """Run the prompt (loading the picked model first if it changed). Bound to Run and Ctrl+Enter.
        ``race``: run it through these modes one after another instead. In the Code workspace Ctrl+Enter runs
        the program in the editor instead."""
        if self.session.busy:
            return
        if not race and self.workspaces.current() == CODE:
            self.programs.run()
            return
        try:
            settings = self.generation_settings()
        except Exception as exc:  # InvalidSettingsError
            self.ui.form.say(getattr(exc, "field", ""), str(exc))  # beside its field too (issue 55)
            self.status.error(str(exc))
            return
        model, dtype = self.ui.model_picker.current_model(), self.ui.form.values()["dtype"]
        prompt = self.ui.prompt.prompt()
        if not prompt.strip():
            message = "The prompt is empty: type a few words (or pick an example) and run again."
            self.ui.prompt.set_error(message)
            self.status.error(message)
            return
        self._forget_load_error(model, dtype)
        loaded = self.session.loaded
        if loaded is None or (loaded.request.model, loaded.request.dtype) != (model, dtype):
            # the model this run loads first is not the one whose chat template the form knows (none at all when
            # the window opened on a session file): the engine decides, on for an instruct model with a template
            # (issue 29, flaw 3: the first run after opening a .session ignored SmolLM2's chat template)
            settings = dataclasses.replace(settings, chat=None)
        if race:
            self.session.race(prompt, race, settings, self.demo.controls.eager_token_cap(), model, dtype,
                              steady=self.demo.verdicts.plan())  # the closing steady-state phase, unless off
        else:
            self.session.run(prompt, settings, model, dtype)

    @Slot()
    def stop(self) -> None:
        """Stop the run after its current step. During a trace or compile (which cannot be cut short) the
        run ends as stopped at once and the window is usable: the compiler finishes in the background
        (:meth:`Session.abandon`), and a new run waits for it, visibly."""
        session = self.session
        if self.sessions.stop_replay():
            return
        if not session.running:
            if session.pending is not None:
                session.pending = None
                self._on_busy_changed(session.busy)
            return
        self.compute.stop()
        if self.ui.busy.is_uninterruptible() and session.abandon():
            return
        self.ui.busy.set_stopping(True)
        self.status.show("Stopping…")

    def generation_settings(self) -> GenerationSettings:
        """The form's values as validated :class:`GenerationSettings`. Raises ``InvalidSettingsError``."""
        values = dict(self.ui.form.values())
        values.pop("dtype")
        return GenerationSettings(**values).validated()

    def is_busy(self) -> bool:
        return self.session.busy

    # -- session events (GUI thread) ---------------------------------------------------------------
    @Slot(object)
    def on_events(self, events: list[Any]) -> None:
        """A batch of the compute worker's events (emitted on the compute thread, delivered here)."""
        self.session.apply_all(events)

    def _on_load_started(self, model: str) -> None:
        """A load was queued. During a run it waits for the run to end (one compute thread), said so; the run
        keeps its indicator and speed."""
        self.ui.model_picker.set_busy(True)
        if self.session.active is not None:
            self.status.show(f"{model} loads when this run ends (Stop to switch now).")
            return
        self.ui.busy.start("loading", model)
        self.status.show(f"Loading {model}…")
        if self.session.loaded is None:  # the first start: say what is happening, not "no model loaded"
            self.ui.model_label.setText(f"loading <b>{model}</b>…")

    def _on_loaded(self, event: ModelLoaded) -> None:
        if event.seconds:  # a new model: the previous model's text, figures and IR are stale
            self.ui.tokens.start("")
            self.ui.router.clear()  # its Experts-per-token strip too (issue 55: it stayed after a dense model loaded)
            self.ui.stats.reset()
            self.inspect.forget()
        dtype = "" if event.label.endswith(event.request.dtype) else f" · {event.request.dtype}"  # "Q4_1 → float32"
        self.ui.model_label.setText(f"<b>{event.label}</b>{dtype}")
        self.ui.form.set_chat_available(event.chat_template, event.chat_default)
        self.setWindowTitle(f"torchax playground — {event.label}")
        self.ui.model_error.setVisible(False)
        warnings = [*event.warnings, *self._first_load_notes]
        self._first_load_notes = []
        self.ui.model_warning.setText("\n".join(f"⚠ {w}" for w in warnings))
        self.ui.model_warning.setVisible(bool(warnings))
        self.settings.remember_model(event.request.model, current=event.request.model != self._stand_in_model)
        self._stand_in_model = None  # a later choice of the same model is the user's own
        self._refresh_models()
        self.ui.model_picker.set_current_model(event.request.model)
        took = f" in {event.seconds:.1f} s" if event.seconds else ""
        self.status.show(f"Loaded {event.label}{took}. Ctrl+Enter runs.")

    def _on_busy_changed(self, busy: bool) -> None:
        session = self.session
        self.ui.model_picker.set_busy(bool(session.load_queue))
        self.ui.prompt.set_running(busy, stoppable=busy and session.active is not None)
        if not busy:
            self.ui.busy.stop()

    def _on_error(self, event: RequestFailed) -> None:
        message = event.message
        if isinstance(event.request, LoadRequest):
            if self.ui.model_error.isVisible() and self.ui.model_error.text() == message:
                # the same model failed again (Run or Load retried it): say so, or nothing seems to happen
                # (issue 29, flaw 5: after a text file renamed .gguf, Run and Ctrl+Enter looked dead)
                message = (f"{message} · tried again at {time.strftime('%H:%M:%S')}: pick another model "
                           "(the model box) or fix the file, then Run")
            else:
                self.ui.model_error.setText(message)
            self.ui.model_error.setVisible(True)
        elif event.field == "prompt":
            self.ui.prompt.set_error(message)  # inline, where the problem is (the mesh card does its own)
        else:
            self.ui.form.say(event.field, message)  # a generation setting's refusal: under its field (issue 55)
        self.status.error(message, event.details)

    @Slot()
    def reset_layout(self) -> None:
        """Every dock back in its default place and shown, default panel sizes (leaves presentation mode)."""
        if self.demo.presentation.is_on():
            self.demo.presentation_action.setChecked(False)
        self.workspaces.show(RUN)
        self.dock_layout.reset()

    @Slot(bool)
    def _on_presenting(self, on: bool) -> None:
        if on:  # presenting is the plot and the stream: the Run workspace
            self.workspaces.show(RUN)

    @Slot(str)
    def _on_dtype_changed(self, _dtype: str) -> None:
        self.status.show("dtype changed: the model reloads at the next Load or Run.")

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802
        """The first show without a remembered layout sizes the docks and panels as shares of the window."""
        super().showEvent(event)
        if not self._layout_restored:
            self._layout_restored = True
            self.dock_layout.apply_default_sizes()
        if not self._shown_once:
            self._shown_once = True
            if self.settings.workspace in self.workspaces.names():
                self.workspaces.show(self.settings.workspace)  # where the user left off

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        """Save settings, hide the window at once, stop the run and wait for the compute thread at most
        :attr:`quit_wait_ms` (a compile in progress cannot be interrupted; the app then ends the process
        without waiting for it: :func:`app.gui.main.end_process`)."""
        if not self._closing:
            self._closing = True
            self.save_settings()
            self.hide()  # at once: a compile in progress finishes on the compute thread, unseen
            QApplication.processEvents()
            self.compute.shutdown(self.quit_wait_ms)
            self.session.disconnect_all()  # no window <-> session cycle left for a garbage collection
        event.accept()
