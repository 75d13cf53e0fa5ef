"""The window's source-map tab and the HLO view's collectives table, linked to the IR
views. GUI thread only; the maps and collectives are plain data built on the compute thread
(:meth:`app.core.session.compute.service.ComputeService.after_run`).

A map's line numbers only hold for the IR text it was built from, so maps follow the IR tabs step by
step: new IR for a step drops that step's map (and its highlights) until the new map arrives after the run;
a warm run that compiles nothing keeps everything; a change of model, mode or mesh clears all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QObject, Slot
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from app.core.inspect.dataflow import build_dataflow, layout
from app.core.inspect.source_diff import compare
from app.core.inspect.views import HLO, MODEL_STEPS, keys
from app.core.mode_catalog import CATALOG, MODE_NAMES, mode_info
from app.gui.layout import scrolling
from app.gui.status import fit_words
from widgets.devices.collectives_table import CollectivesTable
from widgets.ir.ir_tabs import IRTabs
from widgets.ir.line_links import IRLinker
from widgets.source.source_inspector import SourceInspector

if TYPE_CHECKING:
    from app.core.inspect.dataflow import Dataflow
    from app.core.inspect.source_map import SourceMap
    from app.core.session.model import Session
    from app.core.session.runs import RunState

HINT = "Select a node to highlight its lines in the IR views; click a line there to find its node here."


def build_graph(
    source_map: SourceMap, equations: list[int], expanded: set[str] | frozenset[str] | None = None
) -> Dataflow:
    """Laid-out dataflow graph of ``equations`` with the boxes ``expanded`` open (``None``: the overview);
    pure Python (grandalf, no JAX), runs on the GUI thread."""
    return layout(build_dataflow(source_map, equations, expanded=expanded))


class InspectWiring(QObject):
    """Adds the "Source map" tab to ``ir_tabs`` and the collectives table above ``hloView``."""

    def __init__(self, ir_tabs: IRTabs, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.ir_tabs = ir_tabs
        # the IR tabs a map links to: the catalog's mapped views that have a tab
        self.views = [name for name in keys(mapped=True) if name in ir_tabs.panels]
        self.maps: dict[str, Any] = {}
        self._collectives: dict[str, list[Any]] = {}
        self._diff_stale = False
        self._ir_key: tuple | None = None  # (model, mode or race, mesh) whose IR the tabs show
        self._waiting = False  # the tabs were cleared for a run and wait for its first IR
        self.inspector = SourceInspector(graph_builder=build_graph)
        self.inspector.setObjectName("sourceInspector")
        self.inspector.explorer.tree.setColumnWidth(0, 250)  # leave room for the counts in the tab
        self._inspector_viewport: QWidget | None = None  # the scroll area's viewport, made by _page
        ir_tabs.tabs.addTab(self._page(), "Source map")
        self.collectives = CollectivesTable()
        hlo_box = ir_tabs.panels[HLO].layout()
        assert isinstance(hlo_box, QVBoxLayout), "an IR panel is its tool bar above its view, in a QVBoxLayout"
        hlo_box.insertWidget(1, self.collectives)
        views: dict[str, QPlainTextEdit] = {name: ir_tabs.panels[name].view for name in self.views}
        # the jaxpr view keeps the plain jaxpr's line numbers with or without its source-line gutter
        self.linker = IRLinker(self.inspector, views, parent=self)
        self.inspector.clear()
        self.inspector.stepChanged.connect(self._on_inspector_step)
        for button in ir_tabs.step_buttons.values():
            button.toggled.connect(self._on_ir_step_toggled)
        for panel in ir_tabs.panels.values():
            panel.textShown.connect(self._refresh_links)
        ir_tabs.tabs.currentChanged.connect(self._on_tab_changed)
        self.collectives.lineActivated.connect(self.show_hlo_line)
        self.inspector.linesSelected.connect(self.show_linked)

    def _page(self) -> QWidget:
        """The tab: a bar of jump buttons to the linked lines of each IR view, then the inspector."""
        page = self.page = QWidget()
        bar = self.bar = QHBoxLayout()
        bar.setContentsMargins(6, 4, 6, 2)
        # The tab's one status label (issue 29, flaw 17: the profile's status and the link summary were two
        # labels cut into each other): "<the profile's status> · <the links of the selection>", cut at a word
        # with "…" (the whole text in its tool tip), never wider than the room left by the buttons.
        self.link_label = QLabel(HINT)
        self.link_label.setObjectName("linkSummary")
        self.link_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.link_label.installEventFilter(self)
        self._status = {"profile": "", "links": HINT}
        bar.addWidget(self.link_label, 1)
        self.jump: dict[str, QToolButton] = {}
        for name in self.views:
            button = QToolButton(autoRaise=True)
            button.setObjectName(f"{name}JumpButton")
            button.setProperty("view", name)
            button.setVisible(False)
            button.clicked.connect(self._on_jump)
            bar.addWidget(button)
            self.jump[name] = button
        layout = QVBoxLayout(page)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(bar)
        # a short or narrow tab scrolls the inspector, which keeps its least size, and lays its explorer above the
        # graph when the tab is narrower than both side by side (SourceInspector.fit_width): the Code workspace's
        # IR card at 1024×600 drew the graph's buttons over the explorer, and the tree ~30 px tall
        scroll = scrolling(self.inspector, "sourceMapScroll", both=True)
        self._inspector_viewport = scroll.viewport()
        self._inspector_viewport.installEventFilter(self)
        layout.addWidget(scroll, 1)
        return page

    # -- data from the compute thread (via the window's slots) ------------------------------------
    @Slot(str, object)
    def on_source_map(self, step: str, source_map: Any) -> None:
        self.maps[step] = source_map
        self.inspector.set_source_map(step, source_map)
        self._sync_diff()
        shown = self.ir_tabs.current_step()
        if shown in self.maps and self.inspector.step.currentText() != shown:
            self.inspector.step.setCurrentText(shown)

    @Slot(str, object)
    def on_collectives(self, step: str, rows: list[Any]) -> None:
        self._collectives[step] = list(rows or [])
        if step == self.ir_tabs.current_step():
            self.collectives.set_collectives(self._collectives[step])

    def run_refused(self, message: str) -> None:
        """The run that cleared the IR tabs ended before any IR arrived (refused or failed, e.g. jit-loop on a
        ``tp`` mesh): the tabs say why instead of "Waiting for the first compile…" (issue 37); the next run
        clears them again."""
        self._no_ir(f"No IR: the run did not compile. {message}")

    def run_ended(self, run: RunState | None) -> None:
        """The session is idle and ``run`` (the newest), which cleared the tabs, sent no IR: the tabs say why, not
        "Waiting for the first compile…" until the next run."""
        stopped = run is not None and run.finished is not None and run.finished.reason == "stopped"
        recorded = run is not None and bool(run.origin) and not run.replay
        self._no_ir("No IR: this recorded run holds none." if recorded else
                    "No IR: the run was stopped before its IR came. Run again to see it."
                    if stopped else "No IR: the run sent none.")

    def _no_ir(self, text: str) -> None:
        """While the tabs wait for the IR of the run that cleared them: stop waiting and show ``text`` instead."""
        if self._waiting:
            self._ir_key = None
            self._waiting = False
            self.ir_tabs.clear(text)

    def ir_arrived(self, step: str) -> None:
        """New IR text for ``step``: its old map and collectives no longer match the views."""
        self._waiting = False
        button, made = self.ir_tabs.ensure_step(step)  # a program's entry point gets a step button
        if made:
            button.toggled.connect(self._on_ir_step_toggled)
        self._collectives.pop(step, None)
        if step == self.ir_tabs.current_step():
            self.collectives.set_collectives(None)
        if step in self.maps:
            del self.maps[step]
            self._reload()

    def new_run(self, session: Session, run: RunState) -> None:
        """A run (or a race's first lane) starts: a change of model, mode (or race) or mesh clears the IR tabs
        and the maps; the same model, mode and mesh keep them (the IR shown is still what runs)."""
        loaded = session.loaded.request if session.loaded else None
        program = getattr(run, "program", "")
        key = (loaded, run.mode if run.race is None else f"race {run.race}", session.mesh)
        if program:  # the user's program: its file and entry point, whatever the mode
            request = session.active
            key = ("program", getattr(request, "path", "") or getattr(request, "name", ""), program, session.mesh)
        if key == self._ir_key:
            return
        self._ir_key = key
        self.clear()
        self._waiting = True
        if program:
            self.ir_tabs.clear("Waiting for the first compile…")
            return
        modes = getattr(session.active, "modes", None) or [run.mode]
        # a recorded program run's mode ("jit", "no-jit", "jit, bucketed") is not a model mode of the catalog:
        # reopening or replaying it crashed here (KeyError, found by the random-walk journeys)
        compiled = [m for m in modes if (mode_info(m).inspectable if m in MODE_NAMES else m != "no-jit")]
        self._waiting = bool(compiled)
        self.ir_tabs.clear(
            "Waiting for the first compile…" if compiled
            else f"No compiler in {run.mode} mode: pick {', '.join(i.name for i in CATALOG if i.inspectable)} to see the IR."
        )

    def forget(self) -> None:
        """A new model: clear the IR tabs and the maps; the next run shows its own."""
        self._ir_key = None
        self.clear()
        self.ir_tabs.clear()

    def clear(self) -> None:
        """Forget every map and collective (the IR tabs were cleared)."""
        self.maps.clear()
        self._collectives.clear()
        self.collectives.set_collectives(None)
        self._reload()

    # -- internals --------------------------------------------------------------------------------
    def _reload(self) -> None:
        self.inspector.clear()
        self.linker.clear()
        self.show_linked({})
        for step, source_map in self.maps.items():
            self.inspector.set_source_map(step, source_map)
        self._sync_diff()

    def _sync_diff(self) -> None:
        """Fill the prefill-vs-decode comparison; computed only while the tab is shown (~60 ms on a
        12-layer model), else when the tab is next opened."""
        self._diff_stale = not self.inspector.isVisible()
        if self._diff_stale:
            return
        if all(step in self.maps for step in MODEL_STEPS):
            self.inspector.set_diff(*compare(*(self.maps[step] for step in MODEL_STEPS)))
        else:
            have = [step for step in MODEL_STEPS if step in self.maps]
            why = ("No source map yet: run the model in a jitted mode (the maps are built after the run)."
                   if not have else
                   f"Only the {have[0]} step's source map is here (a recorded run keeps the maps it was saved "
                   f"with; a program has no prefill and decode): the comparison needs both steps'.")
            self.inspector.set_diff([], [], {}, empty=why)

    @Slot(int)
    def _on_tab_changed(self, _index: int) -> None:
        if self._diff_stale and self.inspector.isVisible():
            self._sync_diff()

    @Slot(dict)
    def show_linked(self, lines: dict) -> None:
        """Say how many lines the selection links to in each IR view (view → line ranges), with a button to go
        there (a Source map selection, or the Code editor's cursor line)."""
        any_lines = False
        for name, button in self.jump.items():
            n = sum(b - a + 1 for a, b in lines.get(name, []))
            title = self.ir_tabs.panels[name].title
            button.setText(f"{title}: {n:,} line{'s' if n != 1 else ''} →")
            button.setToolTip(f"Show the highlighted lines in the {title} tab")
            button.setVisible(n > 0)
            any_lines = any_lines or n > 0
        self.set_status("links", "Linked lines of the selection:" if any_lines else HINT)

    def set_status(self, part: str, text: str) -> None:
        """Set one part (``"profile"``: the profile's status, :class:`app.gui.panels.profile.links.ProfileLinks`;
        ``"links"``: the selection's links) of the tab's status label."""
        self._status[part] = " ".join(text.split())
        self._fit_status()

    def status_text(self) -> str:
        """The status label's whole text (it may show it cut, the whole in its tool tip)."""
        return " · ".join(t for t in (self._status["profile"], self._status["links"]) if t)

    def _fit_status(self) -> None:
        full = self.status_text()
        shown = fit_words(full, self.link_label.fontMetrics(), self.link_label.width() - 4)
        self.link_label.setText(shown)
        self.link_label.setToolTip(full if shown != full else "")

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt override)
        if watched is self.link_label and event.type() == QEvent.Type.Resize:
            self._fit_status()
        elif (isinstance(watched, QWidget) and watched is self._inspector_viewport
              and event.type() == QEvent.Type.Resize and isValid(self.inspector)):
            self.inspector.fit_width(watched.width())
        return False

    @Slot()
    def _on_jump(self) -> None:
        name = self.sender().property("view")
        panel = self.ir_tabs.panels[name]
        self.ir_tabs.tabs.setCurrentWidget(panel)
        ranges = self.linker.highlighters[name].ranges()
        if ranges:
            panel.view.verticalScrollBar().setValue(max(0, ranges[0][0] - 4))

    @Slot(str)
    def _on_inspector_step(self, step: str) -> None:
        self.linker.clear()  # the selection was on the other step's lines
        self.show_linked({})
        if step != self.ir_tabs.current_step():
            self.ir_tabs.show_step(step)

    @Slot(bool)
    def _on_ir_step_toggled(self, checked: bool) -> None:
        button = self.sender()
        if not checked or not isinstance(button, QPushButton):
            return
        step = button.text()
        if step in self.maps:
            self.inspector.step.setCurrentText(step)
        self.collectives.set_collectives(self._collectives.get(step))

    @Slot()
    def _refresh_links(self) -> None:
        """A panel got new text (it opened at the top): mark the selection's lines in it and go there,
        or stay at the top when nothing is selected."""
        name = next((n for n, p in self.ir_tabs.panels.items() if p is self.sender()), None)
        if name in self.linker.highlighters:
            self.linker.refresh_view(name)

    @Slot(int)
    def show_hlo_line(self, line: int, show: bool = True) -> None:
        """Scroll ``hloView`` to 1-based ``line`` and select it; ``show``: bring its tab to the front."""
        panel = self.ir_tabs.panels[HLO]
        if panel.has_pending():
            panel.apply_pending()
        if show:
            self.ir_tabs.tabs.setCurrentWidget(panel)
        view = panel.view
        block = view.document().findBlockByNumber(max(0, line - 1))
        if not block.isValid():
            return
        cursor = QTextCursor(block)
        cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock)
        cursor.movePosition(QTextCursor.MoveOperation.StartOfBlock, QTextCursor.MoveMode.KeepAnchor)
        view.setTextCursor(cursor)  # the line selected, the cursor at its start: no scroll to its far end
        view.centerCursor()
