"""Compiles per call site in the window (issue 41): a tab beside the compile log's "Why it compiled" that follows
the newest run — a program's (its entry's compiles and those of the jitted functions it calls) or a model's — with
one row per call site, costliest first (:func:`app.core.programs.sites.compile_sites`)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Slot
from PySide6.QtWidgets import QTabWidget

from app.core.events import CallRecord
from app.core.programs.sites import cause_summary, compile_sites
from app.core.session.runs import RunState
from app.gui.context import WindowContext
from widgets.code.compile_sites import CompileSitesTable

#: The title of the tab beside the compile log's.
TAB_TITLE = "Per call site"


class CompileSitesFeed(QObject):
    """Owns :attr:`table` (a :class:`CompileSitesTable`, in the compile log's tabs when the window has them) and
    refreshes it from the session's ``runStarted`` and ``records`` signals (GUI thread)."""

    def __init__(self, ctx: WindowContext) -> None:
        super().__init__(ctx.host)
        self.table = CompileSitesTable()
        tabs = ctx.host.findChild(QTabWidget, "whyTabs")  # the compile log dock's (app.gui.panels.demo.kit)
        if tabs is not None:
            tabs.addTab(self.table, TAB_TITLE)
        self._run: RunState | None = None
        ctx.session.events.runStarted.connect(self._on_run_started)
        ctx.session.events.records.connect(self._on_records)

    @Slot(object)
    def _on_run_started(self, run: RunState) -> None:
        self._run = run
        self.table.show_sites([])

    @Slot(list)
    def _on_records(self, records: list[CallRecord]) -> None:
        """A batch of the current run's records: the table shows all of that run's compiles."""
        every: list[Any] = self._run.records if self._run is not None else records
        self.table.show_sites([{**s.to_json(), "cause_text": cause_summary(s.causes)} for s in compile_sites(every)])
