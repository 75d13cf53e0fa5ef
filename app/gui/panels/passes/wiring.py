"""The Passes tab: XLA's pass pipeline step by step (issue 22). Record a compiled step's passes (on the
compute thread: :mod:`app.core.session.compute.passes`), then read the pass list with times and changed
marks, the instruction and fusion counts along the pipeline, the selected pass's HLO as a diff against the
snapshot before it, search across every snapshot, the fusions with where they came from and why, and the
compile time taken apart. GUI thread only; diffs and searches run here over the recorded texts (pure
Python, :mod:`app.core.passes.query`)."""

from __future__ import annotations

import html
import time
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer, Slot
from PySide6.QtWidgets import (
    QDialog,
    QWidget,
)

from app.core.passes import query
from app.core.passes.compare import compare_pipelines, flags_text
from app.core.passes.model import PassPipeline, kernel_ir_lost
from app.core.profile.columns import BY_FUSION
from app.core.requests import RequestFailed
from app.core.session.compute.passes import recorded_passes_ready
from app.core.session.requests import PassesReady, PassesRequest
from app.gui.context import WindowContext
from app.gui.layout import scrolling
from app.gui.panels.passes import annotate
from widgets.passes.dialogs import CompareDialog, LlvmDialog
from widgets.passes.page import RECORD_TIP, PassesPage

if TYPE_CHECKING:
    from app.gui.panels.inspect import InspectWiring
    from app.gui.panels.profile.wiring import ProfileWiring
    from widgets.demo.compile_log import CompileLog
    from widgets.ir.ir_tabs import IRTabs
    from widgets.plot.latency_plot import LatencyPlot



class PassesWiring(QObject):
    """Adds the Passes tab to the IR tabs and answers it. The recording shown is the session's
    (:attr:`Session.last_passes`), Compare… compares its last two (:attr:`Session.passes_history`)."""

    def __init__(self, ctx: WindowContext, inspect: InspectWiring, profile: ProfileWiring, ir_tabs: IRTabs,
                 plot: LatencyPlot) -> None:
        """``inspect``: the Source map tab (a fusion's source line); ``profile``: the Profile tab (the program it
        would measure, recorded the same way); ``ir_tabs``: the Passes tab's; ``plot``: a spike's pass split's."""
        super().__init__(ctx.host)
        self.ctx, self.host, self.inspect, self.profile = ctx, ctx.host, inspect, profile
        self.session = ctx.session
        self.ir_tabs, self.plot = ir_tabs, plot
        #: the compile log, whose row of a compiling call gains the recorded split (set by the window)
        self.compile_log: CompileLog | None = None
        self.compare_dialog: QDialog | None = None
        self._t0 = 0.0
        self._timer = QTimer(self, interval=200)
        self._timer.timeout.connect(self._tick)
        # scrolling both ways: its minimum height (~620 px) squeezed the Code workspace's plot to 68 px, its width
        # (732 px) made every IR view's minimum and the Code workspace 1,354 px wide (issue 37: "Pas" tab)
        self.page = scrolling(self._page(), "passesScroll", both=True)
        self.ir_tabs.tabs.addTab(self.page, "Passes")
        ev = self.session.events
        ev.passes.connect(self.on_passes)
        ev.busyChanged.connect(self._on_busy)
        ev.error.connect(self._on_error)
        ev.idle.connect(self._on_idle)
        ev.modelLoaded.connect(self._on_loaded)

    # -- the page ----------------------------------------------------------------------------------
    def _page(self) -> QWidget:
        """The page (:class:`widgets.passes.page.PassesPage`), its widgets kept here by name, answered here."""
        v = PassesPage()
        self.button, self.step, self.fusion_log, self.flags, self.compare = (
            v.button, v.step, v.fusion_log, v.flags, v.compare)
        self.status, self.find, self.found, self.compile_bar, self.pass_list, self.chart = (
            v.status, v.find, v.found, v.compile_bar, v.pass_list, v.chart)
        self.snapshot, self.diff, self.fusions, self.detail, self.extras_view, self.extras_index, self.split = (
            v.snapshot, v.diff, v.fusions, v.detail, v.extras_view, v.extras_index, v.split)
        page = v
        self.button.clicked.connect(self.record_or_stop)
        self.compare.clicked.connect(self.show_compare)
        self.flags.returnPressed.connect(self.record)
        self.pass_list.passSelected.connect(self.on_pass)
        self.chart.snapshotClicked.connect(self.show_snapshot)
        self.snapshot.activated.connect(self._on_snapshot_picked)
        self.find.returnPressed.connect(self.search)
        self.fusions.fusionActivated.connect(self._on_fusion_activated)
        self.fusions.llvmRequested.connect(self.show_llvm_ir)
        self.diff.lineActivated.connect(self.show_source_of)
        self.session.events.profile.connect(self._measured_for)
        return page

    # -- snapshot lines → their source ---------------------------------------------------------------
    @Slot(str)
    def show_source_of(self, line: str) -> str:
        """The source (``file:line``) of the instruction on a snapshot's ``line`` — from its metadata, or for
        a fusion from the first instruction it absorbed — selected in the Source map (whose cross-links then
        mark it in every IR view). Returns the location ("" when the line has none)."""

        index = self.snapshot.currentData()
        if self.last is None or index is None:
            return ""
        name, location = query.source_of_line(self.last.pipeline, int(index), line)
        if not name:
            return ""
        if not location:
            self.status.setText(f"{name} carries no source line in its metadata.")
            return ""
        inspect = self.inspect
        if inspect.inspector.explorer.select_location(location):
            self.ir_tabs.tabs.setCurrentWidget(inspect.page)
        self.status.setText(f"{name}: {location}")
        return location

    # -- fusions: LLVM IR and measured time ----------------------------------------------------------
    @Slot(str)
    def show_llvm_ir(self, name: str) -> QDialog | None:
        """A dialog with fusion ``name``'s kernel in LLVM IR, after LLVM's optimization and before (the
        ``*.ir-with-opt.ll`` / ``*.ir-no-opt.ll`` files XLA's CPU backend dumped). None when not recorded."""

        ir = self.last.pipeline.fusion_ir.get(name) if self.last is not None else None
        if ir is None:
            self.status.setText(f"No LLVM IR was dumped for {name}.")
            return None
        dlg = LlvmDialog(self.host, name, ir.text(True), ir.text(False))
        self.llvm_dialog = dlg
        dlg.open()
        return dlg

    def _measured_for(self, profile_ready: Any) -> None:
        """A profile of a step: its µs per step per HLO instruction beside the same step's fusions (one module)."""
        if profile_ready is None or self.last is None or profile_ready.profile.step != self.last.step:
            self.fusions.set_measured({})
            return
        rows = profile_ready.rows.get(BY_FUSION, [])
        self.fusions.set_measured({r["key"]: float(r.get("us_per_step") or 0.0) for r in rows if r.get("key")})

    # -- recording ---------------------------------------------------------------------------------
    def _recording(self) -> bool:
        return isinstance(self.session.active, PassesRequest)

    @Slot()
    def record_or_stop(self) -> None:
        if self._recording():
            self.ctx.actions.stop()
        else:
            self.record()

    @Slot()
    def record(self) -> bool:
        """Record the chosen step's passes (in the latest run's mode when it compiled it with XLA)."""
        run = self.session.current
        mode = run.mode if run is not None else ""
        program = self.profile.program_request()  # the Code workspace (or a program's entry point shown)
        if self._recording() or not self.session.passes(self.step.currentText(), self.fusion_log.isChecked(), mode,
                                                         self.flags.text().strip(), program):
            self.status.setText("Load a model, run the prompt and wait for it to end, then Record.")
            return False
        self._t0 = time.perf_counter()
        self.button.setText("Stop")
        self.button.setToolTip("Stop recording (a compile in progress finishes first)")
        self.button.setEnabled(True)
        self._tick()
        self._timer.start()
        return True

    @Slot()
    def record_shortcut(self) -> None:
        """Ctrl+Shift+X: show the Passes tab and record (or stop a recording)."""
        self.ir_tabs.tabs.setCurrentWidget(self.page)
        self.record_or_stop()

    @Slot()
    def _tick(self) -> None:
        how = " with the fusion log" if self.fusion_log.isChecked() else ""
        self.status.setText(f"Recording the {self.step.currentText()} step's passes{how}… "
                            f"{time.perf_counter() - self._t0:.1f} s")

    def _finish(self) -> None:
        self._timer.stop()
        self.button.setText("Record")
        self.button.setToolTip(RECORD_TIP)

    def _on_busy(self, busy: bool) -> None:
        if not busy:
            self._finish()
        self.button.setEnabled(not busy or self._recording())

    def _on_error(self, event: RequestFailed) -> None:
        if isinstance(event.request, PassesRequest):
            self._finish()
            self.status.setText(f"<span style='color:#b91c1c'>{event.message}</span>")

    def _on_idle(self, message: str) -> None:
        if message == "Pass recording stopped.":
            self.status.setText("Stopped: nothing recorded.")
        elif self.last is None and self._ran_something() and self._says_run_first():
            # after a run, "Run the prompt, then Record" is stale (issue 29, flaw 22)
            self.status.setText("The run compiled its steps: Record (Ctrl+Shift+X) shows XLA's ~110 passes, "
                                "step by step.")

    def _ran_something(self) -> bool:
        run = self.session.current
        return run is not None and bool(run.records)

    def _says_run_first(self) -> bool:
        text = self.status.text()
        return text.startswith(("Run the prompt", "Load a model")) or text.endswith("run the prompt, then Record.")

    def _on_loaded(self, event: Any) -> None:
        """A new model: the recording shown is of the previous one's step."""
        if event.seconds and self.pass_list.rows():  # the session forgot the recordings with the old model
            self.compare.setEnabled(False)
            self.pass_list.set_rows([])
            self.chart.set_snapshots([])
            self.snapshot.clear()
            self.fusions.set_fusions([])
            self.compile_bar.set_parts(0.0, [])
            self.diff.clear()
            self.found.setText("")
            self.status.setText(f"{event.label} loaded: run the prompt, then Record.")

    # -- showing a recording ----------------------------------------------------------------------
    @property
    def last(self) -> PassesReady | None:
        """The recording shown: the session's last (:attr:`Session.last_passes`)."""
        return self.session.last_passes

    @property
    def history(self) -> list[PassesReady]:
        """The last two recordings, oldest first (Compare… compares them): the session's."""
        return self.session.passes_history

    def on_passes(self, ready: PassesReady) -> None:
        self._finish()
        # issue 37: a recording that waited for the compute thread said "recorded in 5.0 s" after ~134 s
        waited = time.perf_counter() - self._t0 - ready.seconds if self._t0 and not ready.origin else 0.0
        self._t0 = 0.0
        self.compare.setEnabled(len(self.history) == 2)
        p = ready.pipeline
        changed = sum(1 for r in ready.rows if r.get("changed"))
        log = f" · {len(ready.decisions):,} fusion decisions" if p.in_child else ""
        flags = flags_text(p.compiler_options) if getattr(p, "compiler_options", None) else ""
        with_flags = f" · with <code>{html.escape(flags)}</code>" if flags else ""  # issue 29 flaw 7: say so
        # issue 34: a recording whose kernel IR was lost (XLA:CPU aborted its child) says so on its status line
        lost = f" · <b>{html.escape(p.kernel_ir)}</b>" if kernel_ir_lost(p) else ""
        self.status.setText(f"<b>{ready.mode} · {ready.step}</b>{with_flags} · {len(p.snapshots)} snapshots · "
                            f"{len(ready.rows)} passes ({changed} changed the module){log} · "
                            + (f"opened from {ready.origin} in {ready.seconds:.1f} s" if ready.origin and not ready.recorded
                               else f"recorded in {ready.seconds:.1f} s") + lost
                            + (f" (after {waited:.0f} s waiting for the compute thread)" if waited >= 2 else ""))
        b = ready.breakdown
        # the first call's trace and lower (and its compile log row and spike) are the split of a compile without
        # flags: a recording with XLA flags is its own compile, shown alone (issue 29, flaw 7)
        found = None if flags else annotate.compiling_record(self.session.runs, ready.step, ready.mode)
        front = []
        if found is not None:
            record = found[1]
            front = [{"label": "trace", "ms": record.trace_ms or 0.0, "group": "trace",
                      "source": "the step's first call: jax trace (CallRecord.trace_ms)"},
                     {"label": "lower", "ms": record.lower_ms or 0.0, "group": "lower",
                      "source": "the step's first call: lowering to StableHLO (CallRecord.lower_ms)"}]
            annotate.compile_log_row(self.compile_log, found, b)
            annotate.compile_spike(self.session.runs, self.plot, found[1], b)
        self.compile_bar.set_parts(b["total_ms"] + sum(p["ms"] for p in front), front + b["parts"])
        self.pass_list.set_rows(ready.rows)
        self.chart.set_snapshots(ready.snapshots)
        self.snapshot.clear()
        for s in ready.snapshots:
            self.snapshot.addItem(f"{s['label']} · {s['n_instructions']:,} instr · {s['n_fusions']} fusions",
                                  s["index"])
        self.fusions.set_fusions(ready.fusions, have_log=p.in_child)
        self._show_extras(p)
        self._measured_for(self.session.last_profile)
        self.found.setText("")
        first = next((s for s in p.snapshots if s.changed), None)
        if first is not None:
            self.show_snapshot(first.index)
        self.ir_tabs.tabs.setCurrentWidget(self.page)

    def _show_extras(self, pipeline: PassPipeline) -> None:
        """The page of the backend's extra compile facts (:attr:`PassPipeline.extras`, titled by them: XLA:GPU's
        pipelines, autotuning and thunk sequence); hidden for a recording without any."""
        extras = pipeline.extras
        page = extras.page_text(pipeline) if extras is not None else ""
        self.detail.setTabVisible(self.extras_index, bool(page))
        if extras is not None and page:
            self.detail.setTabText(self.extras_index, extras.title)
            self.extras_view.set_code(page, highlight=False)

    def show_recorded(self, passes: Any, origin: str) -> bool:
        """A pass pipeline read from a session file (:class:`app.core.recording.model.RecordedPasses`):
        its pass list, chart, compile split and fusions as recorded, read-only, and the diff of the module
        before the passes against the final one (the snapshots in between are not kept in a session).
        ``origin``: ``"recorded on CPU × 1 · …"``. False when it has no final module."""
        ready = recorded_passes_ready(passes, origin)
        if ready is None:
            return False
        self.session.show_passes(ready)  # the session's recording from now on; the views follow its signal
        self.show_snapshot(ready.pipeline.final.index)
        self.status.setText(self.status.text() + f" · {origin} (read-only: the module before and after the "
                                                 "passes; the snapshots in between are not in the session)")
        return True

    @Slot()
    def show_compare(self) -> QDialog | None:
        """A dialog comparing the last two recordings (:func:`app.core.passes.compare.compare_pipelines`):
        counts side by side and the diff of the final modules. None with fewer than two recordings."""
        if len(self.history) < 2:
            self.status.setText("Record two steps (or one step twice, e.g. with XLA flags) to compare them.")
            return None
        a, b = self.history
        labels = (f"1: {annotate.recording_label(a)}", f"2: {annotate.recording_label(b)}")
        c = compare_pipelines(a.pipeline, b.pipeline, labels)
        counts = [*c.counts, ("measured ms per call (latest run)", annotate.measured_ms(self.session.runs, a), annotate.measured_ms(self.session.runs, b))]
        summary = (f"{c.program_line()} · final modules: {c.diff.removed:,} lines only in 1, "
                   f"{c.diff.added:,} only in 2" if c.diff is not None else "A recording has no final module: no diff.")
        rows = query.diff_rows(c.diff) if c.diff is not None else None
        dlg = CompareDialog(self.host, labels, counts, rows, b.pipeline.final.text if rows is not None else "",
                            summary)
        dlg.comparison = c
        self.compare_dialog = dlg
        dlg.open()
        return dlg

    @Slot(dict)
    def on_pass(self, row: dict) -> None:
        """A pass row: its (last) snapshot against the one before it; a pass that changed nothing says so."""
        if row.get("index") is not None:
            self.show_snapshot(int(row["index"]), select_row=False)
            return
        self.diff.clear(f"<b>{row.get('pass')}</b> ({row.get('pipeline')}) changed nothing: "
                        f"{row.get('runs')} run(s), {row.get('ms', 0):.2f} ms, no snapshot.")
        self.chart.select(-1)

    @Slot(int)
    def show_snapshot(self, index: int, select_row: bool = True) -> bool:
        """Show snapshot ``index`` (dump index) as a diff against the snapshot before it; mark it in the chart,
        the snapshot list and (``select_row``) the pass list."""
        if self.last is None:
            return False
        pipeline = self.last.pipeline
        try:
            snap = pipeline.snapshot(int(index))
        except KeyError:
            return False
        prev = query.previous_snapshot(pipeline, snap)
        if prev is None:
            self.diff.set_text(snap.label, snap.text)
        else:
            self.diff.set_diff(prev.label, snap.label, query.diff_rows(query.diff_snapshots(prev, snap)), snap.text)
        self.chart.select(snap.index)
        pos = self.snapshot.findData(snap.index)
        if pos >= 0:
            self.snapshot.setCurrentIndex(pos)
        if select_row and not self.pass_list.select_index(snap.index):
            self.pass_list.select_pass(snap.pipeline, snap.pass_name)
        self.detail.setCurrentIndex(0)
        return True

    @Slot(int)
    def _on_snapshot_picked(self, position: int) -> None:
        index = self.snapshot.itemData(position)
        if index is not None:
            self.show_snapshot(int(index))

    # -- search ----------------------------------------------------------------------------------
    @Slot()
    def search(self, text: str | None = None) -> query.SearchHit | None:
        """Where ``text`` (the find field's) first appears: the first snapshot defining an instruction of
        that name, else the first line containing it; selects that pass and line."""
        text = (self.find.text() if text is None else text).strip()
        if self.last is None or not text:
            return None
        if text != self.find.text():
            self.find.setText(text)
        pipeline = self.last.pipeline
        hit, defined, n_hits = query.find_first(pipeline, text)
        if hit is None:
            self.found.setText(f"<span style='color:#b91c1c'>“{text}” is in no snapshot.</span>")
            return None
        self.show_snapshot(hit.snapshot)
        self.diff.show_line(hit.line)
        snap = pipeline.snapshot(hit.snapshot)
        verb = "first defined" if defined else "first found"
        self.found.setText(f"<b>{text}</b> {verb} by <b>{snap.pass_name}</b> ({snap.pipeline}), snapshot "
                           f"{snap.index}, line {hit.line} · in {n_hits} of {len(pipeline.all_snapshots())} "
                           "snapshots")
        if text in self.fusions.names():
            self.fusions.blockSignals(True)
            self.fusions.select(text)
            self.fusions.blockSignals(False)
        return hit

    @Slot(str)
    def _on_fusion_activated(self, name: str) -> None:
        self.find.setText(name)
        self.search(name)
