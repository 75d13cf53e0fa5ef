"""Every view names the run, step and file it shows, and no view keeps another's state (issue 55, a walk through the
real window): a settings race's IR header names the setting its IR was compiled under (not "jit"), the latency
plot's legend names an older settings race by its settings (not "race of 2 modes"), the Code workspace's Profile tab
shows the profile of the step its IR header names or says there is none yet (never the model's decode profile under a
program's header), and a new model without experts hides the previous model's Experts-per-token strip without moving
Run/Stop. Programs are small JAX functions compiled on the CPU; no model compiles."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from conftest import RUN_TIMEOUT_MS  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QPushButton  # noqa: E402

ENTRY = "selu"
FILE = "01_jit_speedup.py"


def _open_program(qtbot, win) -> None:
    from app.core.programs.gallery import example

    assert win.programs.open_example(example("jit_speedup").path)
    assert win.workspaces.current() == "Code"
    win.programs.panel.calls.setValue(3)
    qtbot.waitUntil(lambda: win.programs.panel.entry.count() > 0, timeout=5000)


def _race(qtbot, win, names: list[str]) -> None:
    win.demo.controls.set_steady(False, None)
    controls = win.demo.settings_race.controls
    controls.set_checked(names)
    controls.typed_edit.setText("")
    qtbot.mouseClick(win.findChild(QPushButton, "settingsRaceButton"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: win.is_busy(), timeout=5000)
    qtbot.waitUntil(lambda: not win.is_busy(), timeout=RUN_TIMEOUT_MS)
    qtbot.waitUntil(lambda: not win.ui.ir_tabs.pending(), timeout=5000)


def test_a_program_race_names_the_setting_its_ir_was_compiled_under(qtbot, make_window, gui_model):
    win = make_window(gui_model, autoload=False, size=(1280, 720))
    try:
        _open_program(qtbot, win)
        n_runs = len(win.session.runs)
        _race(qtbot, win, ["default", "O1"])
        base, o1 = win.session.runs[n_runs:]
        assert (base.mode, o1.mode) == ("default", "O1")
        # the entry point is compiled once more after the lanes, under XLA's defaults: the baseline lane's compile
        header = win.ui.ir_tabs.origin_text()
        assert header == f"run {base.run_id} · default · {FILE} · {ENTRY}", header
        assert " jit " not in f" {header} ".replace("·", " ")
        # the race compiled the editor's text: no live compile of it follows (its retry timer fired after the race
        # on a loaded machine, and the header turned to "live: compiled as you type")
        assert win.programs.live.compile() is False
        assert win.ui.ir_tabs.origin_text() == header
    finally:
        win.close()



def test_a_warm_run_names_itself_and_the_run_whose_compile_it_reuses(qtbot, make_window, gui_model):
    """Two runs of the model in one mode: the second compiles nothing and shows the first's IR. The IR header names
    the second run, whose calls ran that IR, and the first, whose compile made it ("run 2 · jit-static · decode
    (compiled in run 1)"), not "run 1 · jit-static · decode" beside run 2's calls (issue 55)."""
    from conftest import run_and_wait

    win = make_window(gui_model, tokens=2, size=(1280, 720))
    try:
        tabs = win.ui.ir_tabs
        run_and_wait(qtbot, win)
        first = win.session.runs[-1]
        assert first.n_compiles > 0
        run_and_wait(qtbot, win)
        second = win.session.runs[-1]
        assert second.n_compiles == 0 and second.mode == first.mode
        for step in ("prefill", "decode"):
            tabs.show_step(step)
            expected = f"run {second.run_id} · {second.mode} · {step} (compiled in run {first.run_id})"
            assert tabs.origin_text() == expected, tabs.origin_text()
    finally:
        win.close()


def _draw(plot, run_id: int, name: str, group: int | None) -> None:
    from qt_helpers import call_record

    from app.gui.menus import lane_name

    plot.start_run(f"{name} · 1 device · pydoc-llama", fade=group is None, run_id=run_id, group=group,
                   lane=lane_name(name) if group is not None else "")  # as the window draws a race's lane
    for i in range(6):
        plot.add_record(call_record(i, "prefill" if i == 0 else "decode", 900.0 if i < 2 else 9.0 + run_id,
                                    compiled=i < 2))
    plot.redraw()


def _legend(qtbot, plot) -> list[str]:
    from PySide6.QtWidgets import QApplication

    for _ in range(3):
        QApplication.processEvents()
    qtbot.wait(20)
    return [label.text for _, label in plot.legend.items]


def test_an_older_settings_race_is_named_by_its_settings_in_the_legend(qtbot, make_window, gui_model):
    """A settings race of two lanes, then runs until the legend names the race once: at 1280x720 that entry names
    the settings its lanes ran with, as the race table does ("runs 1–2 · default, O1"), not "race of 2 modes" (a
    mode race keeps "race of 6 modes": tests/gui/plot/test_plot_budget.py); four settings, too wide for the entry's
    column at 1280x720, are counted ("runs 1–4 · 4 settings", never cut to "runs 1–4 · default, O…"), the entry's
    tool tip naming each of them."""
    win = make_window(gui_model, autoload=False, size=(1280, 720))
    try:
        plot = win.ui.plot
        for run_id, name in enumerate(("default", "O1"), start=1):
            _draw(plot, run_id, name, 1)
        run_id = 2
        while not _legend(qtbot, plot)[0].startswith("runs 1–2") and run_id < 20:
            run_id += 1
            _draw(plot, run_id, "jit-static", None)
        names = _legend(qtbot, plot)
        assert names[0] == "runs 1–2 · default, O1", names
    finally:
        win.close()
    win = make_window(gui_model, autoload=False, size=(1280, 720))
    try:
        plot = win.ui.plot
        for run_id, name in enumerate(("default", "O1", "O3", "O0"), start=1):
            _draw(plot, run_id, name, 1)
        for run_id in range(5, 10):
            _draw(plot, run_id, "jit-static", None)
        names = _legend(qtbot, plot)
        assert names[0] == "runs 1–4 · 4 settings", names
        tip = plot.legend.items[0][1].toolTip()
        assert "default, O1, O3, O0" in tip, tip
        assert all("…" not in name for name in names), names
    finally:
        win.close()


def test_a_new_model_without_experts_hides_the_experts_strip_and_moves_nothing(qtbot, make_window, gui_model):
    """A mixture-of-experts run's Experts-per-token strip (synthetic routing, as its run draws it), then a dense
    model loads (pydoc-llama): the strip goes with the previous model's tokens, and Run/Stop, the prompt and the plot stay
    within 4 px of where they were before the strip came (tests/journeys/walk_rules.py)."""
    from PySide6.QtCore import QPoint
    from PySide6.QtWidgets import QApplication

    def geometry() -> dict[str, tuple[int, ...]]:
        widgets = {"run": win.findChild(QPushButton, "runButton"), "stop": win.findChild(QPushButton, "stopButton"),
                   "plot": win.ui.plot, "prompt": win.ui.prompt}
        out = {}
        for name, w in widgets.items():
            at = w.mapTo(win, QPoint(0, 0))
            out[name] = (at.x(), at.y(), w.width(), w.height())
        return out

    def settle() -> None:
        for _ in range(3):
            QApplication.processEvents()
        qtbot.wait(20)

    win = make_window(gui_model, autoload=False, size=(1280, 720))  # the MoE model's run, as its strip shows it
    try:
        settle()
        before = geometry()
        router = win.ui.router
        router.add_call(0, "prefill", [[[0, 1], [2, 3]], [[1, 2], [3, 0]]], None)  # 2 layers, 2 tokens, top-2
        router.add_token(1, "tok")
        router.add_call(2, "decode", [[[1, 3]], [[0, 2]]], None)
        settle()
        assert router.isVisible() and router.num_experts == 4
        win.request_load(gui_model)
        qtbot.waitUntil(lambda: win.loaded is not None and not win.is_busy(), timeout=120_000)
        settle()
        assert not router.isVisible() and router.columns == [], router.caption.text()
        after = geometry()
        for name in before:
            moved = max(abs(a - b) for a, b in zip(before[name], after[name]))
            assert moved <= 4, (name, before[name], after[name])
    finally:
        win.close()


def test_the_code_workspaces_profile_tab_shows_the_programs_profile_or_none(qtbot, make_window, gui_model):
    """The model's decode profile (an H200 capture, opened: no compile), then a program runs in the Code workspace:
    under the program's IR header the Profile tab says its entry point has no profile yet, its rows and timeline
    hidden and its export off — never the model's decode rows, whatever "by" shows; the capture opened again is
    shown whole again under its own header. The step box names the program's entry point (not "decode"); the Run
    workspace gives the model's steps back."""
    from pathlib import Path

    capture = Path(__file__).resolve().parents[2] / "fixtures" / "gpu" / "h200-pydoc-llama-decode-profile.xplane.pb.gz"
    win = make_window(gui_model, autoload=False, size=(1280, 720))
    profile = win.profile

    def shown(p) -> bool:  # its rows and timeline
        return p.table.isVisibleTo(p.page) and p.timeline.isVisibleTo(p.page)

    try:
        assert profile.open_capture(str(capture))
        qtbot.waitUntil(lambda: profile.last is not None and not win.is_busy(), timeout=60_000)
        assert profile.table.rows() and shown(profile) and profile.export_button.isEnabled()
        _open_program(qtbot, win)
        assert win.programs.run()
        qtbot.waitUntil(lambda: not win.is_busy() and not win.ui.ir_tabs.pending(), timeout=RUN_TIMEOUT_MS)
        assert win.ui.ir_tabs.current_step() == ENTRY and ENTRY in win.ui.ir_tabs.origin_text()
        win.ui.ir_tabs.tabs.setCurrentWidget(profile.page)
        assert not shown(profile) and not profile.export_button.isEnabled()
        assert profile.summary.text().startswith(f"No profile of {ENTRY} yet"), profile.summary.text()
        steps = [profile.step.itemText(i) for i in range(profile.step.count())]  # what Profile measures: the entry
        assert steps == [ENTRY] and not profile.step.isEnabled(), steps
        profile.by.setCurrentIndex((profile.by.currentIndex() + 1) % profile.by.count())  # another "by": still none
        profile.table.top_only.toggle()
        assert not shown(profile) and profile.summary.text().startswith(f"No profile of {ENTRY} yet")
        assert profile.open_capture(str(capture))  # the decode profile again: its step, rows and timeline
        qtbot.waitUntil(lambda: not win.is_busy() and win.ui.ir_tabs.current_step() == "decode", timeout=60_000)
        assert shown(profile) and profile.export_button.isEnabled() and profile.table.rows()
        assert "decode" in profile.summary.text() and "No profile" not in profile.summary.text()
        win.workspaces.show("Run")  # the model's steps to choose again, the one chosen before
        assert profile.step.isEnabled() and profile.step.currentText() == "decode"
        assert [profile.step.itemText(i) for i in range(profile.step.count())] == ["decode", "prefill"]
    finally:
        win.close()
