"""The main window: wires the widgets to the compute thread and keeps the run's live figures.

Data flows one way: a request (Load / Run) goes to :class:`app.worker.ComputeThread`; engine events come
back as signals emitted on the compute thread and land in this window's ``@Slot`` methods on the GUI thread,
which feed the widgets (token view, latency plot, IR tabs, stats strip).
"""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, Qt, Slot
from PySide6.QtGui import QCloseEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import QMainWindow, QMessageBox, QWidget

from app.core.models import BUILTIN_MODELS, DEFAULT_MODEL, RANDOM_PREFIX, SHAPE_PRESETS
from app.core.settings import GenerationSettings
from app.user_settings import UserSettings
from app.window_demo import DemoKit
from app.window_inspect import InspectWiring
from app.window_layout import WindowParts
from app.window_mesh import MeshWiring
from app.worker import ComputeThread
from widgets.format import ms
from widgets.token_view import CallInfo

ASSETS = Path(__file__).resolve().parents[1] / "assets"
DEFAULT_PROMPT = "The jit function"  # the built-in model writes docstring prose
REASONS = {
    "eos": "end of text",
    "max_new_tokens": "max new tokens",
    "cache_full": "KV cache full",
    "stopped": "stopped",
}


def load_examples() -> list[dict[str, str]]:
    try:
        return json.loads((ASSETS / "prompts.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []


class MainWindow(QMainWindow):
    """torchax playground's window. ``autoload`` loads the remembered (or default) model at start-up."""

    def __init__(
        self, settings: UserSettings | None = None, autoload: bool = True, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("torchax playground")
        self.settings = settings or UserSettings.load()
        self.ui = WindowParts(self)
        self.compute = ComputeThread(self)
        self.inspect = InspectWiring(self.ui.ir_tabs, self)  # source-map tab, collectives, IR line links
        self._loaded: tuple[str, str] | None = None  # (model, dtype) loaded on the worker
        self._load_queue: list[tuple[str, str]] = []  # loads requested, not yet answered, in order
        self._pending_run = False
        self._running = False
        self._t0 = 0.0
        self._t_first: float | None = None
        self._n_compiles = 0
        self._error_details = ""
        self._closing = False
        self._model_label = ""
        self._ir_key: tuple | None = None  # (loaded model, mode, mesh) whose IR the tabs show
        self._plot_mode: str | None = None  # mode of a run whose plot curve starts at runStarted
        self._connect()
        self._restore()
        if autoload:
            self.request_load(self.ui.model_picker.current_model())
        self.mesh = MeshWiring(self.ui.device_panel, self.compute, self)  # lists devices after the load
        self.demo = DemoKit(self)  # mode race, compile log, caches, phases, presentation, export (issue #6)
        self.mesh.message.connect(self._set_status)

    # -- wiring -----------------------------------------------------------------------------------
    def _connect(self) -> None:
        ui, w = self.ui, self.compute.worker
        w.phase.connect(self.on_phase)
        w.batch.connect(self.on_batch)
        w.ir.connect(self.on_ir)
        w.finished.connect(self.on_finished)
        w.loaded.connect(self.on_loaded)
        w.runStarted.connect(self.on_run_started)
        w.failed.connect(self.on_failed)
        w.idle.connect(self.on_idle)
        w.sourceMapReady.connect(self.inspect.on_source_map)
        w.collectivesReady.connect(self.inspect.on_collectives)
        w.warning.connect(self.on_warning)
        ui.model_picker.loadRequested.connect(self.request_load)
        ui.form.dtypeChanged.connect(self._on_dtype_changed)
        ui.prompt.runRequested.connect(self.run)
        ui.prompt.stopRequested.connect(self.stop)
        ui.tokens.tokenHovered.connect(self._on_token_hovered)
        ui.tokens.tokensFlushed.connect(self._refresh_stats)
        ui.plot.pointHovered.connect(self._on_point_hovered)
        ui.details_button.clicked.connect(self.show_error_details)
        for keys in ("Ctrl+Return", "Ctrl+Enter"):
            QShortcut(QKeySequence(keys), self, activated=self.run)
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self, activated=self.stop)

    def _restore(self) -> None:
        s, ui = self.settings, self.ui
        presets = [RANDOM_PREFIX + name for name in SHAPE_PRESETS]
        ui.model_picker.set_models(BUILTIN_MODELS, presets, s.recent_models)
        ui.model_picker.set_current_model(s.model or DEFAULT_MODEL)
        ui.form.set_values(s.generation)
        ui.prompt.set_examples(load_examples())
        ui.prompt.set_prompt(s.prompt or DEFAULT_PROMPT)
        if s.geometry:
            self.restoreGeometry(QByteArray(base64.b64decode(s.geometry)))
        else:
            self.resize(1600, 980)
        for name, splitter in ui.splitters().items():
            if name in s.splitters:
                splitter.restoreState(QByteArray(base64.b64decode(s.splitters[name])))

    def save_settings(self) -> None:
        """Write the current model, prompt, generation settings and geometry to the user config file."""
        s, ui = self.settings, self.ui
        s.prompt = ui.prompt.prompt()
        s.generation = ui.form.values()
        s.geometry = base64.b64encode(bytes(self.saveGeometry())).decode()
        s.splitters = {
            n: base64.b64encode(bytes(sp.saveState())).decode() for n, sp in ui.splitters().items()
        }
        s.demo = self.demo.state()
        try:
            s.save()
        except OSError as exc:
            self.ui.status_label.setText(f"Could not save settings: {exc}")

    # -- requests ---------------------------------------------------------------------------------
    @Slot(str)
    def request_load(self, model: str) -> None:
        """Queue a load of ``model`` with the form's dtype (no-op if it is already loaded or loading)."""
        key = (model.strip(), self.ui.form.values()["dtype"])
        if key == self._loaded:
            self.ui.model_error.setVisible(False)  # back on the loaded model: an old load error is moot
        latest = self._load_queue[-1] if self._load_queue else self._loaded
        if not key[0] or key == latest:
            return
        self._load_queue.append(key)
        self.ui.model_picker.set_busy(True)
        self.ui.busy.start("loading", key[0])
        self._set_status(f"Loading {key[0]}…")
        self.compute.request_load(*key)

    @Slot()
    def run(self, race: list[str] | None = None) -> None:
        """Run the prompt (loading the picked model first if it changed). Bound to Run and Ctrl+Enter.
        ``race``: run it through these modes one after another instead (:mod:`app.window_demo`)."""
        if self._running or self._pending_run:
            return
        self._pending_race = race
        try:
            settings = self.generation_settings()
        except Exception as exc:  # InvalidSettingsError
            self.on_failed(str(exc), "", "settings")
            return
        model = self.ui.model_picker.current_model()
        self.ui.prompt.set_running(True)
        self._pending_run = True
        self._pending_settings = settings
        self.request_load(model)
        if not self._load_queue and self._loaded is not None:
            self._start_run()

    def _start_run(self) -> None:
        self._pending_run = False
        self._running = True
        self._t0, self._t_first, self._n_compiles = time.perf_counter(), None, 0
        prompt = self.ui.prompt.prompt()
        ui = self.ui
        ui.tokens.start(prompt)
        ui.stats.reset()
        mode = self._pending_settings.mode
        race = self._pending_race
        # The plot's run starts at runStarted (see on_run_started); a race's at each mode (begin_lane).
        self._plot_mode = None if race else mode
        ir_key = (self._loaded, "race" if race else mode, self.mesh.current)
        if ir_key != self._ir_key:  # same model, mode and mesh: the IR shown is still what runs, keep it
            self._ir_key = ir_key
            self.inspect.clear()
            ui.ir_tabs.clear(
                "Waiting for the first compile…"
                if any(m.startswith("jit") for m in race or [mode])
                else f"No jit in {mode} mode: pick jit-static or jit-dynamic to see the IR."
            )
        self._clear_error()
        self._set_status("Running…")
        ui.ir_tabs.hold_hidden(True)  # megabyte IR texts of hidden tabs load after the run
        self.demo.on_run_start(prompt, self._pending_settings, race)  # logs the run; queues a race
        if not race:
            self.compute.request_run(prompt, self._pending_settings)

    def begin_lane(self, prompt: str, label: str, colour: str | None = None) -> None:
        """Start one mode of a race: fresh token view and live figures, a new plot run in ``colour`` (the
        earlier lanes stay opaque). Called by :class:`app.window_demo.DemoKit` on the GUI thread."""
        self._t0, self._t_first, self._n_compiles = time.perf_counter(), None, 0
        self.ui.tokens.start(prompt)
        self.ui.stats.reset()
        self.ui.plot.start_run(f"{label} · {self.mesh.current}", colour=colour, fade=False)

    @Slot()
    def stop(self) -> None:
        """Stop the run after its current step; during a compile, say it will stop after the compile."""
        if not self._running:
            if self._pending_run:
                self._pending_run = False
                self.ui.prompt.set_running(False)
            return
        self.compute.stop()
        self.ui.busy.set_stopping(True)
        self._set_status("stopping after compile…" if self.ui.busy.is_uninterruptible() else "Stopping…")

    def generation_settings(self) -> GenerationSettings:
        """The form's values as validated :class:`GenerationSettings`. Raises ``InvalidSettingsError``."""
        values = dict(self.ui.form.values())
        values.pop("dtype")
        return GenerationSettings(**values).validated()

    # -- worker signals (emitted on the compute thread, delivered here on the GUI thread) ----------
    @Slot(object)
    def on_phase(self, event: Any) -> None:
        if event.started:
            self.ui.busy.start(event.phase, event.detail)
        elif self._running:
            self.ui.busy.start("running")

    @Slot()
    def on_run_started(self) -> None:
        # Named here, not at Run: a mesh change queued before this run has been reported by now.
        if self._plot_mode is not None:
            self.ui.plot.start_run(f"{self._plot_mode} · {self.mesh.current} · {self._model_label}")
            self._plot_mode = None
        self.ui.busy.start("running")

    @Slot(object)
    def on_batch(self, events: list[Any]) -> None:
        """CallRecords and TokenEvents, in engine order (see :class:`app.worker.EngineWorker`)."""
        for event in events:
            if hasattr(event, "token_id"):
                self.on_token(event)
            else:
                self.on_call(event)

    def on_call(self, record: Any) -> None:
        self.ui.plot.add_record(record)
        self.ui.tokens.add_call(
            CallInfo(record.index, record.step, record.wall_ms, record.compiled, record.compile_ms)
        )
        if record.compiled:
            self._n_compiles += 1

    def on_token(self, event: Any) -> None:
        if self._t_first is None:
            self._t_first = time.perf_counter()
        self.ui.tokens.add_token(event.index, event.token_id, event.text, event.call_index)

    @Slot(object)
    def on_ir(self, event: Any) -> None:
        self.inspect.ir_arrived(event.step)
        self.ui.ir_tabs.set_ir(event.step, event.ir)

    @Slot(object)
    def on_finished(self, event: Any) -> None:
        ui, s = self.ui, event.summary
        ui.tokens.flush()
        ui.plot.redraw()
        ui.stats.set_stats(
            s.ttft_ms, s.decode_tokens_per_s or s.tokens_per_s, s.n_tokens, s.n_compiles, s.steady_decode_ms
        )
        decode = f" · decode {s.decode_tokens_per_s:.1f} tok/s" if s.decode_tokens_per_s else ""
        self._set_status(
            f"Done ({REASONS.get(event.reason, event.reason)}): {s.n_tokens} tokens in {ms(s.total_ms)} · "
            f"TTFT {ms(s.ttft_ms)}{decode} · {s.n_compiles} compiles ({ms(s.compile_ms)})"
        )

    @Slot(str, str, float, object)
    def on_loaded(self, label: str, model_id: str, seconds: float, warnings: list[str]) -> None:
        self._loaded = self._load_queue.pop(0) if self._load_queue else (model_id, "float32")
        model = self._loaded[0]
        self.ui.model_label.setText(f"<b>{label}</b> · {self._loaded[1]}")
        self.setWindowTitle(f"torchax playground — {label}")
        self._model_label = label
        self.ui.model_error.setVisible(False)
        self.ui.model_warning.setText("\n".join(f"⚠ {w}" for w in warnings))
        self.ui.model_warning.setVisible(bool(warnings))
        self.settings.remember_model(model)
        presets = [RANDOM_PREFIX + name for name in SHAPE_PRESETS]
        self.ui.model_picker.set_models(BUILTIN_MODELS, presets, self.settings.recent_models)
        self.ui.model_picker.set_current_model(model)
        self._set_status(
            f"Loaded {label}" + (f" in {seconds:.1f} s" if seconds else "") + ". Ctrl+Enter runs."
        )
        if self._pending_run and not self._load_queue:
            self._start_run()

    @Slot(str, str, str)
    def on_failed(self, message: str, details: str, kind: str) -> None:
        if kind == "load":
            self.ui.model_error.setText(message)
            self.ui.model_error.setVisible(True)
            if self._load_queue:
                self._load_queue.pop(0)
            self._pending_run = False  # it was meant for the model that failed
        self._error_details = details or message
        self.ui.status_label.setText(message)
        self.ui.status_label.setProperty("error", True)
        self.ui.status_label.setToolTip(message)
        self._repolish(self.ui.status_label)
        self.ui.details_button.setVisible(True)

    @Slot(str)
    def on_idle(self, kind: str) -> None:
        if kind == "load" and not self._load_queue:
            self.ui.model_picker.set_busy(False)
        else:
            self._running = False
            self.ui.tokens.flush()
            self.ui.ir_tabs.hold_hidden(False)
        if not self._running and not self._pending_run and not self._load_queue:
            self.ui.busy.stop()
            self.ui.prompt.set_running(False)

    @Slot(str)
    def on_warning(self, text: str) -> None:
        """Something optional failed on the compute thread (a source map, a mesh kept across a load)."""
        label = self.ui.status_label
        label.setText(f"{label.text()}  ⚠ {text}" if label.text() else f"⚠ {text}")
        label.setToolTip(text)

    # -- small helpers ----------------------------------------------------------------------------
    @Slot()
    def show_error_details(self) -> None:
        box = QMessageBox(
            QMessageBox.Icon.Warning,
            "Error details",
            self.ui.status_label.text(),
            QMessageBox.StandardButton.Close,
            self,
        )
        box.setDetailedText(self._error_details)
        box.exec()

    def _clear_error(self) -> None:
        self.ui.status_label.setProperty("error", False)
        self._repolish(self.ui.status_label)
        self.ui.details_button.setVisible(False)

    def _set_status(self, text: str) -> None:
        self._clear_error()
        self.ui.status_label.setText(text)

    @staticmethod
    def _repolish(widget: QWidget) -> None:
        widget.style().unpolish(widget)
        widget.style().polish(widget)

    @Slot(str)
    def _on_dtype_changed(self, _dtype: str) -> None:
        self._set_status("dtype changed: the model reloads at the next Load or Run.")

    @Slot(int)
    def _refresh_stats(self, n_tokens: int) -> None:
        now = time.perf_counter()
        ttft = (self._t_first - self._t0) * 1000 if self._t_first else None
        tps = (
            (n_tokens - 1) / (now - self._t_first)
            if self._t_first and n_tokens > 1 and now > self._t_first
            else None
        )
        self.ui.stats.set_stats(ttft, tps, n_tokens, self._n_compiles, self.ui.plot.steady_median_ms())

    @Slot(int)
    def _on_token_hovered(self, call_index: int) -> None:
        self.ui.plot.highlight_call(call_index)

    @Slot(int)
    def _on_point_hovered(self, call_index: int) -> None:
        self.ui.tokens.highlight_call(call_index)

    def is_busy(self) -> bool:
        return self._running or self._pending_run or bool(self._load_queue)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        """Save settings, stop the run and wait for the compute thread (a compile finishes first)."""
        if not self._closing:
            self._closing = True
            if self.is_busy():
                self.ui.status_label.setText("Closing: waiting for the compute thread…")
            self.save_settings()
            self.compute.shutdown()
        event.accept()
