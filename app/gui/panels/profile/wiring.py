"""The Profile tab: measured time per HLO op, per fusion, per source line and per module, with the step's
timeline, linked to the optimized-HLO view. GUI thread only; the profile is measured on the compute thread
(:func:`app.core.session.compute.profile.profile_events`) and arrives as plain data."""

from __future__ import annotations

import dataclasses
import html
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt, Slot
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QLabel,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.core.inspect.views import HLO, MODEL_STEPS, STEP_CHOICES, is_model_step
from app.core.mode_catalog import profiling_mode
from app.core.profile.columns import (
    BY_FUSION,
    BY_LINE,
    BY_TITLES,
    PROFILE_COLUMNS,
    bandwidth_note,
    profile_summary,
    timeline_ops_running,
)
from app.core.profile.offline import find_hlo_beside
from app.core.profile.step import copy_xplane
from app.core.session.requests import ProfileReady
from app.core.units import counted
from app.gui.context import WindowContext
from app.gui.layout import scrolling
from app.gui.menus import find_menu, insert_before
from app.gui.panels.profile.figures import busy_arithmetic, busy_figures
from app.gui.panels.profile.links import ProfileLinks
from widgets.common.flow_layout import FlowLayout
from widgets.common.splitters import splitter
from widgets.common.typed_qt import named
from widgets.profile.profile_table import ProfileTable
from widgets.profile.timeline import StepTimeline

if TYPE_CHECKING:
    from PySide6.QtWidgets import QDockWidget

    from app.core.profile.model import StepProfile
    from app.gui.panels.inspect import InspectWiring
    from app.gui.panels.programs.wiring import ProgramWiring
    from app.gui.workspaces import Workspaces
    from widgets.ir.ir_tabs import IRTabs
    from widgets.run.prompt_editor import PromptEditor


def is_program(profile: StepProfile) -> bool:
    """The profile measured a program's entry point (its step is the entry point's name)."""
    return not is_model_step(profile.step)


class ProfileWiring(QObject):
    """Adds the tab to the IR tabs and answers its buttons. The profile shown is the session's
    (:attr:`Session.last_profile`: measured here, opened from a capture or from a session file)."""

    def __init__(self, ctx: WindowContext, inspect: InspectWiring, workspaces: Workspaces,
                 programs: ProgramWiring, ir_tabs: IRTabs, ir_dock: QDockWidget, prompt: PromptEditor) -> None:
        """``programs``: the Code workspace (Profile measures its program while it shows, or while the IR views
        show one of its entry points); ``ir_tabs``: where the Profile tab goes, in ``ir_dock`` (raised for a
        capture); ``prompt``: the prompt a profile of the model runs."""
        super().__init__(ctx.host)
        self.host, self.status = ctx.host, ctx.status
        self.session = ctx.session
        self.inspect, self.workspaces, self.programs = inspect, workspaces, programs
        self.ir_tabs, self.ir_dock, self.prompt = ir_tabs, ir_dock, prompt
        self.recorded_origin = ""  # where the shown profile was recorded (a session file's), "" when live
        self._header = ""  # the summary's first line (the profile's figures); the note follows the rows shown
        self.table = ProfileTable(PROFILE_COLUMNS, BY_TITLES)
        self.timeline = StepTimeline()
        self.page = self._page()
        self.ir_tabs.tabs.addTab(self.page, "Profile")
        self.session.events.profile.connect(self.on_profile)
        self.ir_tabs.stepShown.connect(self._show_rows)  # the profile of the step the IR header names, or none
        for changed in (self.ir_tabs.stepShown, workspaces.changed, programs.panel.entry.currentTextChanged):
            changed.connect(self._sync_step_box)  # the step box names what Profile measures
        self.session.events.busyChanged.connect(self._on_busy)
        self.table.rowActivated.connect(self.on_row)
        self.table.rowSelected.connect(self.on_row_selected)
        self.table.top_only.toggled.connect(self._refresh_summary)  # after the table refilled its rows
        self.timeline.opClicked.connect(self.on_op)
        self.links = ProfileLinks(ctx, inspect, self, ir_tabs)  # measured columns, HLO tints, top 10, links to source
        self._capture_menu()

    def _page(self) -> QWidget:
        self.button = named(QPushButton("Profile"), "profileButton")
        self.button.setToolTip("Run the jit-static step under jax.profiler and measure each HLO op (Ctrl+Shift+M)")
        self.step = named(QComboBox(), "profileStep")
        self.step.addItems(list(STEP_CHOICES))
        self._model_step = self.step.currentText()  # the model's step chosen, kept while the box names a program's
        self.steps = named(QSpinBox(), "profileSteps")
        self.steps.setRange(1, 500)
        self.steps.setValue(20)
        self.steps.setSuffix(" steps")
        self.by = named(QComboBox(), "profileBy")
        for key, title in BY_TITLES.items():
            self.by.addItem(title, key)
        self.export_button = named(QPushButton("Export…"), "profileExport")
        self.export_button.setEnabled(False)
        self.summary = named(QLabel("Profile the compiled step to see where its time goes."), "profileSummary")
        self.summary.setWordWrap(True)
        # the buttons wrap onto a second row in a narrow pane (the Code workspace's IR card at 1024×600 cut the
        # "by" choice to "source l" and the Top 10 button to "Top …es")
        bar = FlowLayout()
        for w in (self.button, self.step, self.steps, QLabel("by"), self.by, self.export_button):
            bar.addWidget(w)
        self.bar = bar  # ProfileLinks adds its "Top 10 lines" button
        split = self.split = splitter(Qt.Orientation.Vertical, self.table, self.timeline, sizes=[300, 200], collapsible=True,
                         name="profileSplit")
        body = QWidget()  # the buttons, the summary, the table and the timeline, each at least its minimum height
        column = QVBoxLayout(body)
        column.setContentsMargins(0, 0, 0, 0)
        column.addLayout(bar)
        column.addWidget(self.summary)
        column.addWidget(split, 1)
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(6, 4, 6, 4)
        # the page scrolls up and down when it is short: the Code workspace gives the IR card ~95 px at 1024×600,
        # less than the buttons (two rows there), the summary (wrapped to the pane's width) and the table need;
        # squeezed, their lines were drawn over each other (issue 37's walk; the wrapped buttons over the summary)
        layout.addWidget(scrolling(body, "profileScroll"), 1)
        self.button.clicked.connect(self.request)
        self.by.currentIndexChanged.connect(self._show_rows)
        self.export_button.clicked.connect(self.export)
        return page

    @Slot()
    def request(self) -> None:
        """Profile the current model's step with the prompt in the editor (refused while busy)."""
        program = self.program_request()
        if program is not None:
            if not self.session.profile("", program.entry or "program", self.steps.value(), program):
                self._say("Wait for the run to end before profiling the program.")
            return
        step = self.step.currentText()
        if not self.session.profile(self.prompt.prompt() or " ", step, self.steps.value()):
            self._say("Load a model and wait for the run to end before profiling.")

    @Slot()
    def _sync_step_box(self) -> None:
        """The step box names what Profile measures: a model's step, to choose, or — where Profile is about the
        user's program (:meth:`program_request`) — the program's entry point, not a choice (issue 55: it read
        "decode" under a program's IR header in the Code workspace)."""
        code = self._about_program()
        items = [self.programs.panel.entry.currentText().strip() or "program"] if code else list(STEP_CHOICES)
        if [self.step.itemText(i) for i in range(self.step.count())] != items:
            if self.step.isEnabled():  # leaving the model's steps: its choice is kept
                self._model_step = self.step.currentText()
            self.step.clear()
            self.step.addItems(items)
            self.step.setCurrentText(self._model_step)
        self.step.setEnabled(not code)
        self.step.setToolTip(f"Profile measures the program's entry point, {items[0]}" if code
                             else "The model's step Profile measures")

    def _say(self, text: str) -> None:
        """A message in place of the profile's figures (and no tool tip about them)."""
        self.summary.setText(text)
        self.summary.setToolTip("")

    def program_request(self) -> Any:
        """The user's program when Profile is about it (the Code workspace shows, or the IR views show a
        program's entry point): its :class:`ProgramRequest`; else None (the model's step)."""
        return self.programs.request() if self._about_program() else None

    def _about_program(self) -> bool:
        """Whether Profile is about the user's program: the Code workspace shows, or the IR views show one of the
        program's entry points."""
        on_entry = bool(self.programs.compiled_path) and self.ir_tabs.current_step() not in ("", *MODEL_STEPS)
        return self.workspaces.current() == "Code" or on_entry

    # -- captures recorded elsewhere ------------------------------------------------------------------------
    def _capture_menu(self) -> None:
        file = find_menu(self.host, "&File")
        first = file.actions()[0] if file.actions() else None
        self.open_capture_action = QAction("Open profiler &capture…", self.host)
        self.open_capture_action.setToolTip("A jax.profiler capture (.xplane.pb) recorded on another machine (a GPU "
                                            "or TPU VM), read with the step's optimized HLO text beside it")
        self.open_capture_action.triggered.connect(self.open_capture_dialog)
        self.open_dumps_action = QAction("Open XLA &dumps…", self.host)
        self.open_dumps_action.setToolTip("A folder of XLA's pass dumps (xla_dump_to) and, optionally, a profiler "
                                          "capture of that compile, recorded on another machine")
        self.open_dumps_action.triggered.connect(self.open_dumps_dialog)
        insert_before(file, first, (self.open_capture_action, self.open_dumps_action))
        if first is not None:
            file.insertSeparator(first)

    @Slot()
    def open_capture_dialog(self) -> None:
        """File ▸ Open profiler capture…: a capture, then (when none sits beside it) its optimized HLO text."""
        path, _ = QFileDialog.getOpenFileName(self.host, "Open profiler capture", "",
                                              "Profiler captures (*.xplane.pb *.xplane.pb.gz);;All files (*)")
        if not path:
            return
        hlo = ""
        if find_hlo_beside(path) is None:
            hlo, _ = QFileDialog.getOpenFileName(self.host, "The step's optimized HLO text", str(Path(path).parent),
                                                 "HLO text (*.hlo.txt *.hlo.txt.gz *.txt);;All files (*)")
            if not hlo:
                self.status.show("No HLO text chosen: a capture is read with the optimized HLO of "
                                            "the step that ran (inspect --what hlo on that machine).")
                return
        self.open_capture(path, hlo)

    @Slot()
    def open_dumps_dialog(self) -> None:
        """File ▸ Open XLA dumps…: a folder of XLA's dump files (and a capture of that compile)."""
        path = QFileDialog.getExistingDirectory(self.host, "Open a folder of XLA dumps")
        if path:
            self.open_capture(path)

    def open_capture(self, path: str, hlo: str = "") -> bool:
        """Open ``path`` (a capture, with ``hlo``; or a dump folder) on the compute thread; False while busy."""
        if not self.session.open_capture(path, hlo):
            self.status.show("Wait for the run to end before opening a capture.")
            return False
        return True

    @property
    def last(self) -> ProfileReady | None:
        """The profile shown: the session's last (:attr:`Session.last_profile`)."""
        return self.session.last_profile

    def on_profile(self, ready: ProfileReady) -> None:
        self.recorded_origin = ready.origin
        profile = ready.profile
        what = (f"{profile.model or profile.step} · {counted(profile.n_steps, 'call')}" if is_program(profile)
                else f"{profile.mode or profiling_mode()} · {profile.step} · {counted(profile.n_steps, 'step')}")
        if ready.origin and not ready.recorded:
            what = f"{profile.step} · {counted(profile.n_steps, 'step')} · {ready.origin}"
        elif ready.recorded:  # from a session file: read-only, named by where it was recorded
            what = f"{what} profiled · {ready.origin}"
        figures = html.escape(profile_summary(profile), quote=False)
        busy = html.escape(busy_figures(profile), quote=False)  # the two busy figures, named; the sums in the tip
        self._header = f"<b>{what}{'' if ready.recorded else ' profiled'}</b> · {figures} · {busy}"
        self.summary.setToolTip("".join(f"<p>{html.escape(p, quote=False)}</p>"  # rich text: Qt wraps it
                                        for p in busy_arithmetic(profile).split("\n\n")))
        self._show_rows()
        self.timeline.set_timeline(ready.timeline, timeline_ops_running(profile))  # the header's figure
        if profile.hlo_text and self.ir_tabs.text_of(profile.step, HLO) != profile.hlo_text:
            self._show_profiled_ir(ready)
        if self.ir_tabs.current_step() != profile.step and self.ir_tabs.text_of(profile.step, HLO):
            self.ir_tabs.show_step(profile.step)  # every view on the profiled step: tints, measured columns
        self.links.on_profile()
        self.ir_tabs.tabs.setCurrentWidget(self.page)
        self.ir_dock.raise_()  # in front of the demo kit's docks tabbed with it (opening a capture from Run)

    def show_recorded(self, ready: ProfileReady, origin: str) -> None:
        """A profile read from a session file (``origin``: ``"recorded on CPU × 1 · jax 0.10.2 · …"``):
        the session's profile from now on (:meth:`Session.show_profile`), shown as a measured one, read-only —
        the summary names where it was recorded; Profile measures anew only with a loaded model."""
        self.session.show_profile(dataclasses.replace(ready, origin=origin, recorded=True))

    @Slot()
    def _refresh_summary(self) -> None:
        """The profile's figures, then the note on the rows above 100 % of the read bandwidth — counted over
        the rows the table shows (its aggregation, its top-10 filter), as its row count is."""
        if self.last is None or not self.shows_profile_of(self.ir_tabs.current_step()):
            return
        profile = self.last.profile
        note = bandwidth_note(self.table.rows(), profile.bandwidth_gbs)
        notes = " · ".join(getattr(profile, "notes", None) or [])
        note = " · ".join(n for n in (note, notes) if n)
        self.summary.setText(self._header + (f"<br><i>{note}</i>" if note else ""))

    def _show_profiled_ir(self, ready: ProfileReady) -> None:
        """The IR tabs showed another executable of the step: show the profiled one's IR (all of it, with
        its source map, when the engine kept it; else its HLO alone, for the row → line links)."""
        profile = ready.profile
        self.inspect.ir_arrived(profile.step)
        ir = ready.ir
        if ir is not None and getattr(ir, "hlo", None) == profile.hlo_text:
            self.ir_tabs.set_ir(profile.step, ir, f"profiled · {'program' if is_program(profile) else profile.mode or profiling_mode()}")
            if profile.source_map is not None:
                self.inspect.on_source_map(profile.step, profile.source_map)
        elif ready.origin and not ready.recorded:  # an opened capture: its HLO alone, under its own name
            self.ir_tabs.set_ir(profile.step, {HLO: profile.hlo_text}, f"opened · {ready.origin}", replace=True)
        else:
            self.ir_tabs.set_ir(profile.step, {HLO: profile.hlo_text},
                                f"profiled · {profile.mode or profiling_mode()}")

    def shows_profile_of(self, step: str) -> bool:
        """Whether the session's profile is one the IR header's ``step`` may show beside it: a program's entry point
        only its own profile, a model's step (prefill or decode: the summary names which) only a model's."""
        if self.last is None:
            return False
        profile = self.last.profile
        return profile.step == step if not is_model_step(step) else not is_program(profile)

    @Slot()
    def _show_rows(self) -> None:
        """The profile's rows and timeline, when the IR views show its step (:meth:`shows_profile_of`); else the tab
        says there is none yet (issue 55: the model's decode profile under a program's IR header in Code)."""
        if self.last is None:
            return
        step = self.ir_tabs.current_step()
        shown = self.shows_profile_of(step)
        self.split.setVisible(shown)
        self.export_button.setEnabled(shown)
        if not shown:
            what = "its calls" if not is_model_step(step) else "the model's step"
            self._say(f"No profile of {step} yet: Profile measures {what} (Ctrl+Shift+M).")
            return
        by = self.by.currentData()
        self.table.set_rows(self.last.rows[by], by)
        self._refresh_summary()

    @Slot(dict)
    def on_row(self, row: dict) -> None:
        """A double-clicked row (or Enter): a source line shows its row of the source explorer (Source map
        tab) and moves the optimized-HLO view to its largest instruction's line; any other row selects the
        explorer row of its (largest) instruction — highlighting its jaxpr equations — and shows that
        instruction's line in the optimized-HLO view."""
        self._activate(row, self.by.currentData())

    @Slot(dict)
    def on_row_selected(self, row: dict) -> None:
        """A row the user selected (a click, the arrow keys): the optimized-HLO view moves to its (largest)
        instruction's line and the explorer selects its row, the Profile tab staying in front (issue 29, flaw
        16: a row moved nothing until double-clicked); the status line says where it went."""
        if self.last is None:
            return
        name, line = self._instruction_of(row)
        self.ir_tabs.show_step(self.last.profile.step)
        self.links.select_instruction(name)
        if line:
            self.inspect.show_hlo_line(line, show=False)
            self.status.show(f"{name}: line {line:,} of the optimized HLO (double-click the row to show it)")

    def _instruction_of(self, row: dict) -> tuple[str, int]:
        """``(name, 1-based HLO line)`` of the instruction a row stands for (its largest), line 0 if unknown."""
        name = (row.get("key") if row.get("hlo_line") else next(iter(row.get("instructions") or []), "")) or ""
        return name, int(row.get("hlo_line") or self._hlo_line(name))

    def _activate(self, row: dict, by: str) -> None:
        if self.last is None:
            return
        name, line = self._instruction_of(row)
        if by == BY_LINE and self.links.show_location(row.get("key", "")):
            if line:
                self.inspect.show_hlo_line(line, show=False)
            return
        self.ir_tabs.show_step(self.last.profile.step)
        self.links.select_instruction(name)
        if line:
            self.inspect.show_hlo_line(line)

    def _hlo_line(self, name: str) -> int:
        if self.last is None:
            return 0
        return next((r.get("hlo_line") or 0 for r in self.last.rows[BY_FUSION] if r.get("key") == name), 0)

    @Slot(str)
    def on_op(self, name: str) -> None:
        """A timeline bar: its instruction's HLO line."""
        rows = self.last.rows[BY_FUSION] if self.last is not None else []
        row = next((r for r in rows if r.get("key") == name or name in (r.get("instructions") or [])), None)
        if row is not None:
            self._activate(row, BY_FUSION)

    @Slot()
    def export(self) -> None:
        """The table as CSV or JSON, the timeline as PNG or SVG, or the raw capture (.xplane.pb), by suffix."""
        path, _ = QFileDialog.getSaveFileName(
            self.table, "Export the profile", str(Path.home() / "profile.csv"),
            "Table (*.csv *.json);;Timeline (*.png *.svg *.pdf);;Raw capture (*.xplane.pb)",
        )
        if not path or self.last is None:
            return
        if path.endswith(".xplane.pb"):
            copy_xplane(self.last.profile, path)
        elif Path(path).suffix.lower() in (".png", ".svg", ".pdf"):
            self.timeline.export(path)
        else:
            self.table.export(path)
        self.summary.setText(f"{self._header}<br>exported to {html.escape(path, quote=False)}")

    def _on_busy(self, busy: bool) -> None:
        self.button.setEnabled(not busy)
