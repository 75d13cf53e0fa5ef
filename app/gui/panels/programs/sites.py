"""Compiles per call site in the window (issue 41): a table that follows the newest run — a program's (its entry's
compiles and those of the jitted functions it calls) or a model's — with one row per call site, costliest first
(:func:`app.core.programs.sites.compile_sites`). In the Run workspace it is a tab beside the compile log's "Why it
compiled"; Inspect (every dock hidden) shows it as a tab of the IR card; Code (the program beside its jaxpr, where the
IR card has no width for another tab title) under the editor, in a drawer whose header line counts the sites and
compiles — so a program run's compiles are in sight where the program is (issue 55). One table, moved as the
workspaces move the IR card and the plot: its rows, selection and scroll position are kept."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Slot
from PySide6.QtWidgets import QTabWidget

from app.core.events import CallRecord
from app.core.programs.sites import cause_summary, compile_sites
from app.core.session.runs import RunState
from app.core.units import counted
from app.gui.context import WindowContext
from widgets.code.compile_sites import CompileSitesTable, SitesDrawer
from widgets.code.program_panel import ProgramPanel

if TYPE_CHECKING:
    from app.gui.workspaces import Workspaces
    from widgets.ir.ir_tabs import IRTabs

#: The title of the tab beside the compile log's.
TAB_TITLE = "Per call site"
#: Its title among the IR card's tabs (Inspect).
IR_TAB_TITLE = "Call sites"
#: Both tabs' tool tip.
TAB_TIP = ("Compiles per call site of the newest run: how many times each jitted function compiled at each line, "
           "the compile ms (trace / lower / compile) and each compile's cause")


class CompileSitesFeed(QObject):
    """Owns :attr:`table` (a :class:`CompileSitesTable`, in the compile log's tabs when the window has them, in the IR
    card's while ``workspaces`` shows Inspect, in :attr:`drawer` under ``panel``'s editor while it shows Code) and
    refreshes it from the session's ``runStarted`` and ``records`` signals (GUI thread)."""

    def __init__(self, ctx: WindowContext, ir_tabs: IRTabs, workspaces: Workspaces | None = None,
                 panel: ProgramPanel | None = None, why_tabs: QTabWidget | None = None) -> None:
        super().__init__(ctx.host)
        self.drawer = SitesDrawer()  # the Code workspace's place, under the editor
        if panel is not None:
            panel.add_under_editor(self.drawer)
        self.table = CompileSitesTable()
        self._policy = self.table.sizePolicy()  # the IR card's tabs ignore it (IRTabWidget)
        self._why = why_tabs  # the compile log dock's tabs (app.gui.panels.demo.kit.DemoKit.tabs), when there are
        self._ir = ir_tabs.tabs  # the IR card's tabs (Inspect's place)
        if self._why is not None:
            self._put(self._why, TAB_TITLE)
        self._run: RunState | None = None
        ctx.session.events.runStarted.connect(self._on_run_started)
        ctx.session.events.records.connect(self.show_records)
        if workspaces is not None:
            workspaces.changed.connect(self.follow)
            self.follow(workspaces.current())

    def home(self) -> QTabWidget | SitesDrawer | None:
        """What holds the table now: a tab widget, the drawer, or None while it is in neither."""
        if self.drawer.table is self.table:
            return self.drawer
        return next((t for t in (self._why, self._ir) if t is not None and t.indexOf(self.table) >= 0), None)

    @Slot(str)
    def follow(self, workspace: str) -> None:
        """Put the table where ``workspace`` (``"Run"``, ``"Inspect"``, ``"Code"``) shows it: the compile log's tabs
        in Run (when the window has them), the IR card's in Inspect, the drawer under the editor in Code."""
        to: QTabWidget | SitesDrawer = (self.drawer if workspace == "Code" else self._why
                                        if workspace == "Run" and self._why is not None else self._ir)
        was = self.home()
        if was is to:
            return
        current = isinstance(was, QTabWidget) and was.currentWidget() is self.table
        if isinstance(was, QTabWidget):
            was.removeTab(was.indexOf(self.table))
        elif was is not None:
            was.take()
        self.table.setSizePolicy(self._policy)
        if isinstance(to, SitesDrawer):
            to.put(self.table)
            return
        self._put(to, TAB_TITLE if to is self._why else IR_TAB_TITLE)
        if current and to is self._why:  # back in Run: the compile log shows what the IR card showed
            to.setCurrentWidget(self.table)

    def _put(self, tabs: QTabWidget, title: str) -> None:
        index = tabs.addTab(self.table, title)
        tabs.setTabToolTip(index, TAB_TIP)

    @Slot(object)
    def _on_run_started(self, run: RunState) -> None:
        self._run = run
        self.table.show_sites([])
        self.drawer.set_summary("")

    @Slot(list)
    def show_records(self, records: list[CallRecord]) -> None:
        """A batch of the current run's records: the table shows all of that run's compiles."""
        every: list[Any] = self._run.records if self._run is not None else records
        sites = compile_sites(every)
        self.table.show_sites([{**s.to_json(), "cause_text": cause_summary(s.causes)} for s in sites])
        self.drawer.set_summary(f"{counted(len(sites), 'call site')} · "
                                f"{counted(sum(s.n_compiles for s in sites), 'compile')}" if sites else "")
