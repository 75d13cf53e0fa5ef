"""The window's source-map tab (issue #5) and the HLO view's collectives table (issue #7), linked to the IR
views. GUI thread only; the maps and collectives are plain data built on the compute thread
(:meth:`app.worker.EngineWorker._after_run`).

A map's line numbers only hold for the IR text it was built from, so maps follow the IR tabs step by
step: new IR for a step drops that step's map (and its highlights) until the new map arrives after the run;
a warm run that compiles nothing keeps everything; a change of model, mode or mesh clears all.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Slot
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QPushButton

from app.core.dataflow import build_dataflow, layout
from app.core.source_diff import compare
from widgets.collectives_table import CollectivesTable
from widgets.ir_tabs import IRTabs
from widgets.line_links import IRLinker
from widgets.source_inspector import SourceInspector

VIEWS = ("jaxpr", "stablehlo", "hlo")


def build_graph(source_map: Any, equations: list[int]) -> Any:
    """Laid-out dataflow graph of ``equations`` (pure Python: grandalf, no JAX; runs on the GUI thread)."""
    return layout(build_dataflow(source_map, equations))


class InspectWiring(QObject):
    """Adds the "Source map" tab to ``ir_tabs`` and the collectives table above ``hloView``."""

    def __init__(self, ir_tabs: IRTabs, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.ir_tabs = ir_tabs
        self.maps: dict[str, Any] = {}
        self._collectives: dict[str, list[Any]] = {}
        self.inspector = SourceInspector(graph_builder=build_graph)
        self.inspector.setObjectName("sourceInspector")
        ir_tabs.tabs.addTab(self.inspector, "Source map")
        self.collectives = CollectivesTable()
        ir_tabs.panels["hlo"].layout().insertWidget(1, self.collectives)
        views = {name: ir_tabs.panels[name].view for name in VIEWS}
        self.linker = IRLinker(self.inspector, views, view_key=self._view_key, parent=self)
        self.inspector.clear()
        self.inspector.stepChanged.connect(self._on_inspector_step)
        for button in ir_tabs.step_buttons.values():
            button.toggled.connect(self._on_ir_step_toggled)
        for panel in ir_tabs.panels.values():
            panel.textShown.connect(self._refresh_links)
        ir_tabs.source_check.toggled.connect(self._on_source_toggled)
        self.collectives.lineActivated.connect(self.show_hlo_line)

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

    def ir_arrived(self, step: str) -> None:
        """New IR text for ``step``: its old map and collectives no longer match the views."""
        self._collectives.pop(step, None)
        if step == self.ir_tabs.current_step():
            self.collectives.set_collectives(None)
        if step in self.maps:
            del self.maps[step]
            self._reload()

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
        for step in ("prefill", "decode"):
            if step in self.maps:
                self.inspector.set_source_map(step, self.maps[step])
        self._sync_diff()

    def _sync_diff(self) -> None:
        if "prefill" in self.maps and "decode" in self.maps:
            self.inspector.set_diff(*compare(self.maps["prefill"], self.maps["decode"]))
        else:
            self.inspector.set_diff([], [], {})

    def _view_key(self, name: str) -> str:
        return "jaxpr_source" if name == "jaxpr" and self.ir_tabs.source_check.isChecked() else name

    @Slot(str)
    def _on_inspector_step(self, step: str) -> None:
        self.linker.clear()  # the selection was on the other step's lines
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
        self.linker.refresh(scroll=False)

    @Slot(bool)
    def _on_source_toggled(self, _on: bool) -> None:
        self.linker.refresh(scroll=False)

    @Slot(int)
    def show_hlo_line(self, line: int) -> None:
        """Scroll ``hloView`` to 1-based ``line`` and select it."""
        panel = self.ir_tabs.panels["hlo"]
        if panel.has_pending():
            panel.apply_pending()
        self.ir_tabs.tabs.setCurrentWidget(panel)
        view = panel.view
        block = view.document().findBlockByNumber(max(0, line - 1))
        if not block.isValid():
            return
        cursor = QTextCursor(block)
        cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock, QTextCursor.MoveMode.KeepAnchor)
        view.setTextCursor(cursor)
        view.centerCursor()
