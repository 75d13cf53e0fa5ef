"""Window tests with the real engine on the built-in model (a tiny saved Llama until it is committed).

Each test builds a window whose compute thread loads the model, waits on state with ``qtbot.waitUntil``,
and conftest's autouse fixture fails a test that leaves the compute thread or a QTimer running.
"""

from __future__ import annotations

import os

from app.core.requests import RequestDone

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import time  # noqa: E402

from conftest import LOAD_TIMEOUT_MS, PROMPT, RUN_TIMEOUT_MS, run_and_wait  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QApplication, QLabel, QPlainTextEdit, QPushButton  # noqa: E402

WINDOW_TOKENS = 12






def test_run_shows_tokens_plot_and_ir(qtbot, window):
    run_and_wait(qtbot, window)
    status = window.findChild(QLabel, "statusLabel").text()
    assert status.startswith("Done"), status
    token_view = window.findChild(QPlainTextEdit, "tokenView")
    assert token_view.toPlainText().startswith(PROMPT)
    assert len(token_view.toPlainText()) > len(PROMPT)
    tokens = window.ui.tokens.tokens()
    assert tokens and window.ui.tokens.tooltip_for(tokens[0]).count("id ") == 1
    points = window.ui.plot.points()
    assert len(points) >= 2 and points[0].compiled and window.ui.plot.plotted_count() == len(points)
    qtbot.waitUntil(lambda: not window.ui.ir_tabs.pending(), timeout=2000)
    assert window.findChild(QPlainTextEdit, "jaxprView").toPlainText().count("dot_general") > 0
    assert "HloModule" in window.findChild(QPlainTextEdit, "hloView").toPlainText()
    assert "stablehlo" in window.findChild(QPlainTextEdit, "stablehloView").toPlainText()
    window.ui.ir_tabs.show_step("decode")
    qtbot.waitUntil(lambda: not window.ui.ir_tabs.pending(), timeout=2000)
    assert "decode step" in window.ui.ir_tabs.panels["hlo"].info.text()
    assert window.ui.stats.text("tokens") == str(len({t.index for t in tokens}))


def test_second_run_has_no_compile_spike(qtbot, window):
    run_and_wait(qtbot, window)
    run_and_wait(qtbot, window)
    plot = window.ui.plot
    assert plot.run_count() == 2
    assert any(p.compiled for p in plot.points(0))
    assert not any(p.compiled for p in plot.points(-1))


def test_ctrl_enter_runs_and_settings_persist(qtbot, window, config_dir):  # noqa: F811
    prompt_edit = window.findChild(QPlainTextEdit, "promptEdit")
    prompt_edit.setPlainText("def main():")
    prompt_edit.setFocus()
    qtbot.keyClick(prompt_edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: window.is_busy(), timeout=2000)
    qtbot.waitUntil(lambda: not window.is_busy(), timeout=RUN_TIMEOUT_MS)
    assert prompt_edit.toPlainText() == "def main():"  # Ctrl+Enter did not insert a newline
    window.close()
    from app.gui.user_settings import UserSettings

    saved = UserSettings.load()
    assert saved.prompt == "def main():" and saved.generation["max_new_tokens"] == 12
    assert saved.model and saved.geometry


def test_stop_mid_run_keeps_partial_text(qtbot, window, monkeypatch):
    # PyTorch mode: steps of a few ms to tens of ms on small models, through the same worker loop. (The
    # first torchax-eager run compiles every op for every new shape: ~1-2 s per step, too slow to time.)
    window.ui.form.set_values({"mode": "torch", "max_new_tokens": 200})
    monkeypatch.setattr(window.compute.worker.engine, "eos_ids", [])  # a trained model may end early
    window.findChild(QPushButton, "runButton").click()
    qtbot.waitUntil(lambda: len(window.ui.tokens.tokens()) >= 3, timeout=RUN_TIMEOUT_MS)
    t0 = time.perf_counter()
    qtbot.keyClick(window, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not window.is_busy(), timeout=5000)
    elapsed = time.perf_counter() - t0
    assert elapsed < 1.0, f"stop took {elapsed:.2f} s"
    n = len(window.ui.tokens.tokens())
    assert 3 <= n < 200
    assert "stopped" in window.findChild(QLabel, "statusLabel").text()
    assert window.findChild(QPushButton, "runButton").isEnabled()


def test_stop_during_compile_says_so(qtbot, window):
    """Stop during a compile ends the run at once and says that the compiler finishes in the background."""
    window.ui.form.set_values({"max_new_tokens": 50})
    window.findChild(QPushButton, "runButton").click()
    qtbot.waitUntil(lambda: window.ui.busy.is_uninterruptible(), timeout=RUN_TIMEOUT_MS)
    window.findChild(QPushButton, "stopButton").click()
    assert not window.is_busy()  # at once: the compile cannot be cut short, the window does not wait for it
    assert "background" in window.findChild(QLabel, "statusLabel").text()
    assert window.session.current.finished.reason == "stopped"
    qtbot.waitUntil(lambda: window.session.background is None, timeout=RUN_TIMEOUT_MS)
    assert len(window.ui.tokens.tokens()) < 50


def test_bad_hub_id_shows_error_then_builtin_runs(qtbot, window, no_dialogs, gui_model):
    picker = window.ui.model_picker
    picker.combo.setEditText("no-such-org/no-such-model-xyz")
    picker.load_button.click()
    label = window.findChild(QLabel, "statusLabel")
    qtbot.waitUntil(lambda: label.property("error") is True, timeout=LOAD_TIMEOUT_MS)
    assert "no-such-org/no-such-model-xyz" in label.text()
    assert window.ui.model_error.isVisible() and "no-such-org" in window.ui.model_error.text()
    assert window.ui.details_button.isVisible()
    window.ui.details_button.click()
    assert no_dialogs and "Traceback" in no_dialogs[0][1]
    picker.set_current_model(gui_model)
    run_and_wait(qtbot, window)
    assert label.text().startswith("Done") and label.property("error") is False
    assert not window.ui.model_error.isVisible()  # hidden again once a model is (re)loaded
    assert window.ui.tokens.tokens()


def test_close_during_run_exits_cleanly(qtbot, window):
    window.ui.form.set_values({"mode": "jit-dynamic", "max_new_tokens": 40})
    window.findChild(QPushButton, "runButton").click()
    qtbot.waitUntil(lambda: window.ui.busy.phase() not in ("", "loading"), timeout=RUN_TIMEOUT_MS)
    t0 = time.perf_counter()
    window.close()
    assert not window.compute.qthread.isRunning()
    assert time.perf_counter() - t0 < 30


def test_close_during_a_compile_hides_the_window_before_the_compile_ends(qtbot, window):
    from PySide6.QtCore import QEvent, QObject

    window.ui.form.set_values({"mode": "jit-static", "max_new_tokens": 4})
    stamps: dict[str, float] = {}

    class HideWatch(QObject):
        def eventFilter(self, obj, event):  # noqa: N802
            if event.type() == QEvent.Type.Hide and obj is window:
                stamps.setdefault("hidden", time.perf_counter())
            return False

    watch = HideWatch()
    window.installEventFilter(watch)
    window.compute.qthread.finished.connect(
        lambda: stamps.setdefault("thread_done", time.perf_counter()), Qt.ConnectionType.DirectConnection
    )
    window.findChild(QPushButton, "runButton").click()
    qtbot.waitUntil(lambda: window.ui.busy.is_uninterruptible(), timeout=RUN_TIMEOUT_MS)
    window.close()
    window.removeEventFilter(watch)
    assert not window.compute.qthread.isRunning()
    assert stamps["hidden"] < stamps["thread_done"]  # gone from the screen while the compile still ran


def test_unexpected_error_mid_run_keeps_window_usable(qtbot, window, monkeypatch):
    engine = window.compute.worker.engine
    real_generate = engine.generate

    def broken(prompt, settings, should_stop, on_live_phase=None):
        for event in real_generate(prompt, settings, should_stop, on_live_phase):
            yield event
            if type(event).__name__ == "TokenEvent":
                raise RuntimeError("boom after the first token")

    monkeypatch.setattr(engine, "generate", broken)
    run_and_wait(qtbot, window)
    label = window.findChild(QLabel, "statusLabel")
    assert label.property("error") is True and "RuntimeError: boom" in label.text()
    assert window.ui.tokens.tokens()  # the partial output stays
    monkeypatch.setattr(engine, "generate", real_generate)
    run_and_wait(qtbot, window)
    assert label.text().startswith("Done")


def test_engine_warnings_are_shown(qtbot, window):
    from app.core.session.requests import LoadRequest, ModelLoaded

    request = LoadRequest("tiny")
    window.session.apply(ModelLoaded(request, "tiny (random weights)", "tiny", 0.0, ("random weights: noise",)))
    assert window.ui.model_warning.isVisible() and "noise" in window.ui.model_warning.text()
    assert window.windowTitle().endswith("tiny (random weights)")
    window.session.apply(ModelLoaded(request, "tiny", "tiny", 0.0, ()))
    assert not window.ui.model_warning.isVisible()


def test_gui_main_opens_the_window_and_quits_cleanly(qtbot, qapp, config_dir, gui_model):
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    import app.gui.main as gui
    from app.gui.window import MainWindow

    seen: list[str] = []

    def close_when_loaded() -> None:
        wins = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()]
        if wins and wins[0].loaded is not None:
            seen.append(wins[0].ui.model_picker.current_model())
            wins[0].close()
        else:
            QTimer.singleShot(100, close_when_loaded)

    QTimer.singleShot(100, close_when_loaded)
    old_style = qapp.styleSheet()
    try:
        assert gui.main(["--model", gui_model], end=False) == 0  # end=True would end this (the test) process
    finally:
        qapp.setStyleSheet(old_style)
    assert seen == [gui_model]


def test_queued_loads_resolve_in_order(qtbot, window, gui_model):
    window.request_load("no-such-org/no-such-model-xyz")
    window.request_load(gui_model)  # queued behind the failing one
    assert [r.model for r in window.session.load_queue] == ["no-such-org/no-such-model-xyz", gui_model]
    qtbot.waitUntil(lambda: not window.is_busy(), timeout=LOAD_TIMEOUT_MS)
    assert (window.loaded.request.model, window.loaded.request.dtype) == (gui_model, "float32")
    assert window.ui.model_picker.current_model() == gui_model
    run_and_wait(qtbot, window)
    assert window.findChild(QLabel, "statusLabel").text().startswith("Done")


class _FakeEngine:
    """Yields 200 instant calls + tokens: exercises the worker's batching without JAX."""

    label = model_id = "fake"
    warnings: list[str] = []

    def generate(self, prompt, settings, should_stop, on_live_phase=None):
        from app.core.events import CallRecord, FinishedEvent, Summary, TokenEvent

        for i in range(200):
            yield CallRecord(i, "prefill" if i == 0 else "decode", "jit-static", {}, 0.01, 0.01)
            yield TokenEvent(i, i, "x", i)
            if should_stop():
                break
        yield FinishedEvent("max_new_tokens", Summary.from_records("jit-static", [], 200, 1.0, 10.0))


def test_worker_batches_events_and_emits_from_the_compute_thread(qtbot):
    import threading

    from PySide6.QtCore import QObject, Qt, Slot

    from app.core.events import CallRecord, TokenEvent
    from app.core.session.requests import RunRequest
    from app.core.settings import GenerationSettings
    from app.gui.worker import ComputeThread

    class Receiver(QObject):
        def __init__(self) -> None:
            super().__init__()
            self.threads: set[int] = set()
            self.batches: list[list] = []

        @Slot(object)
        def on_batch(self, events: list) -> None:
            self.threads.add(threading.get_ident())
            self.batches.append(events)

    compute = ComputeThread()
    receiver = Receiver()
    compute.worker.events.connect(receiver.on_batch, Qt.ConnectionType.DirectConnection)
    compute.worker.service.engine = _FakeEngine()
    compute.worker.service.after_run = lambda irs: iter(())
    try:
        def done(events: list) -> bool:
            return any(isinstance(e, RequestDone) for e in events)

        with qtbot.waitSignal(compute.worker.events, timeout=10_000, check_params_cb=done):
            compute.submit(RunRequest("p", GenerationSettings(max_new_tokens=200)))
    finally:
        compute.shutdown()
    events = [e for batch in receiver.batches for e in batch if isinstance(e, (CallRecord, TokenEvent))]
    assert len(events) == 400 and [e.index for e in events[1::2]] == list(range(200))
    assert len(receiver.batches) < 50  # batched, not one signal per event
    assert threading.get_ident() not in receiver.threads  # emitted on the compute thread


def test_help_quit_empty_prompt_and_escape_in_find(qtbot, window):
    from PySide6.QtWidgets import QPlainTextEdit

    window.menus.help_action.trigger()
    assert window.menus.dialog.isVisible() and "optimized HLO" in window.menus.dialog.text()
    assert window.menus.quit_action.shortcut().toString() == "Ctrl+Q"
    edit = window.findChild(QPlainTextEdit, "promptEdit")
    edit.setPlainText("   ")
    size = edit.size()
    window.run()
    label = window.findChild(QLabel, "statusLabel")
    assert "prompt is empty" in label.text() and not window.is_busy() and window.session.runs == []
    # Inline, where the problem is, inside the prompt box: nothing around it moves; editing clears it.
    inline = window.findChild(QLabel, "promptError")
    assert inline.isVisible() and "prompt is empty" in inline.text()
    assert edit.rect().contains(inline.geometry()) and edit.size() == size
    edit.setPlainText("What is the capital of France?")
    assert not inline.isVisible()
    bar = window.ui.ir_tabs.panels["hlo"].find_bar
    window.ui.ir_tabs.tabs.setCurrentWidget(window.ui.ir_tabs.panels["hlo"])
    bar.focus()
    bar.set_query("fusion")
    qtbot.waitUntil(lambda: bar.edit.hasFocus(), timeout=2000)
    window.escape()
    assert bar.edit.text() == "" and not bar.edit.hasFocus() and "prompt is empty" in label.text()


def test_plot_menu_clears_runs_and_ignore_eos_runs_every_step(qtbot, window, monkeypatch):
    window.ui.form.set_values({"max_new_tokens": 6, "stop_at_eos": False})
    assert window.generation_settings().stop_at_eos is False
    monkeypatch.setattr(window.compute.worker.engine, "eos_ids", [window.compute.worker.engine.eos_ids[0]])
    run_and_wait(qtbot, window)
    assert window.session.current.finished.reason == "max_new_tokens"
    menu = window.plot_actions.menu()
    texts = [a.text() for a in menu.actions() if a.text()]
    assert texts == ["Plot as PNG…", "Plot as SVG…", "Plot as PDF…", "&Copy plot", "C&lear plot", "&Reset zoom",
                     "Runs on the plot"]
    assert window.ui.plot.getPlotItem().buttonsHidden  # no pyqtgraph "A" button in the corner
    run_and_wait(qtbot, window)
    assert window.ui.plot.run_count() == 2 and len(window.session.runs) == 2
    keep_one = next(a for a in window.plot_actions.runs_group.actions() if a.data() == 1)
    keep_one.trigger()  # the cap the user sets: the plot, the session (exports) and the settings follow
    assert window.ui.plot.run_count() == 1 and len(window.session.runs) == 1 and window.settings.plot_runs == 1
    run_and_wait(qtbot, window)
    assert window.ui.plot.run_count() == 1 and window.session.runs[-1].label.startswith("run 3")
    window.plot_actions.copy()
    assert not QApplication.clipboard().image().isNull()
    assert window.demo.table.columnCount() == 1 and window.ui.tokens.toPlainText() != ""  # a lane per column
    window.plot_actions.clear_action.trigger()
    assert window.ui.plot.run_count() == 0 and window.session.runs == []
    # issue 37: nothing of a removed run stays: the stream, the figures, the race summary
    assert window.ui.tokens.toPlainText() == "" and window.ui.stats.text("tokens") == "–"
    assert window.demo.table.columnCount() == 0


def test_model_switch_during_a_run_waits_for_the_run_and_says_so(qtbot, window, model_dirs):
    other = model_dirs("llama")
    qtbot.mouseClick(window.findChild(QPushButton, "runButton"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.session.running, timeout=5000)
    window.request_load(other)
    status = window.findChild(QLabel, "statusLabel")
    assert "loads when this run ends" in status.text()
    run = window.session.current
    qtbot.waitUntil(lambda: not window.is_busy(), timeout=LOAD_TIMEOUT_MS)
    assert run.finished is not None and run.finished.reason != "stopped"  # the run was not cut short
    assert window.loaded.request.model == other
    assert status.text().startswith("Loaded")


def test_a_prompt_longer_than_the_kv_cache_is_refused_inline_with_advice_the_form_can_follow(qtbot, window):
    window.ui.form.set_values({"max_cache_len": 8})
    window.findChild(QPlainTextEdit, "promptEdit").setPlainText("word " * 40)
    window.run()
    inline = window.findChild(QLabel, "promptError")
    qtbot.waitUntil(lambda: inline.isVisible(), timeout=RUN_TIMEOUT_MS)
    assert "KV cache" in inline.text() and "'KV cache' field" in inline.text()
    qtbot.waitUntil(lambda: not window.is_busy(), timeout=RUN_TIMEOUT_MS)
    window.ui.form.set_values({"max_cache_len": None})  # auto: the run goes through
    run_and_wait(qtbot, window)
    assert window.findChild(QLabel, "statusLabel").text().startswith("Done")
