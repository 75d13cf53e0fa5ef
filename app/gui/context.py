"""What a panel of the window may use: :class:`WindowContext`, a frozen set of typed parts, instead of the window,
and the few widgets it drives — as constructor arguments, or one small record of them (below).

A panel (``app.gui.panels``) is built with the context and, where it works with another panel, that panel as a
constructor argument; it talks back through public methods and signals. It never reads the window's attributes
and never reaches another object's private names (spyder's plugins declare what they need and link by signal;
napari's ``_qt`` views get their model, not the viewer).

The context's parts: the Qt host (the ``QMainWindow``, for menus, docks, dialogs' parent and shortcuts: Qt's own
API only), the session model (run state: the one place it lives), the status line, the user's settings, and the
window's run actions (:class:`RunActions`: run, stop, the form's validated settings). The window's widgets
(:class:`app.gui.layout.WindowParts`) are the window's own record, never a panel's (issue 57, item 3: typed
seams): a panel driving one to three widgets gets them as constructor arguments; one driving more gets its record
here — :class:`RunViews`, :class:`DemoParts`, :class:`SessionViews`, :class:`WorkspaceParts` — built by the window
with the record's ``of``. GUI thread only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from PySide6.QtWidgets import QMainWindow

if TYPE_CHECKING:
    from PySide6.QtWidgets import QDockWidget, QFrame, QSplitter

    from app.core.session.model import Session
    from app.core.settings import GenerationSettings
    from app.gui.layout import WindowParts
    from app.gui.status import StatusLine
    from app.gui.user_settings import UserSettings
    from widgets.common.busy_indicator import BusyIndicator
    from widgets.ir.ir_tabs import IRTabs
    from widgets.plot.latency_plot import LatencyPlot
    from widgets.run.generation_form import GenerationForm
    from widgets.run.model_picker import ModelPicker
    from widgets.run.prompt_editor import PromptEditor
    from widgets.run.router_strip import RouterStrip
    from widgets.run.stats_strip import StatsStrip
    from widgets.run.token_view import TokenView


class RunActions(Protocol):
    """The window's run actions a panel may call (the main window implements them)."""

    def run(self, race: list[str] | None = None) -> None:
        """Run the prompt (a race of ``race``'s modes when given), loading the picked model first."""

    def stop(self) -> None:
        """Stop the run, race, replay or program run in progress (Esc)."""

    def generation_settings(self) -> GenerationSettings:
        """The form's settings, validated. Raises ``InvalidSettingsError``."""
        ...

    def is_busy(self) -> bool:
        """A load, run, race, replay or program run is queued or executing."""
        ...


@dataclass(frozen=True)
class WindowContext:
    """The typed parts of the window a panel works with (see the module doc); no widget of the window."""

    host: QMainWindow
    session: Session
    status: StatusLine
    settings: UserSettings
    actions: RunActions


@dataclass(frozen=True)
class RunViews:
    """What :class:`app.gui.panels.run_view.RunView` feeds from a run: the token stream, the router strip, the
    stats strip, the latency plot, the IR tabs and the busy indicator; the prompt (its text, its error) and the
    generation form (its notes), cleared by a run that worked."""

    tokens: TokenView
    router: RouterStrip
    stats: StatsStrip
    plot: LatencyPlot
    ir_tabs: IRTabs
    busy: BusyIndicator
    prompt: PromptEditor
    form: GenerationForm

    @classmethod
    def of(cls, ui: WindowParts) -> RunViews:
        """The window's widgets this record names (the window builds it once)."""
        return cls(ui.tokens, ui.router, ui.stats, ui.plot, ui.ir_tabs, ui.busy, ui.prompt, ui.form)


@dataclass(frozen=True)
class DemoParts:
    """What the demo kit (:mod:`app.gui.panels.demo`) drives: the plot and its card, the main area's splitters
    (presentation mode's sizes, the race summary and the trade-off placed in them), the token stream (scrolled to
    the answer on stage), the run's inputs a race reads (prompt, model picker, form), the busy indicator (a
    race's progress) and the docks its View actions show (controls, IR)."""

    plot: LatencyPlot
    plot_card: QFrame
    top_split: QSplitter
    stream_split: QSplitter
    tokens: TokenView
    prompt: PromptEditor
    model_picker: ModelPicker
    form: GenerationForm
    busy: BusyIndicator
    controls_dock: QDockWidget
    ir_dock: QDockWidget

    @classmethod
    def of(cls, ui: WindowParts) -> DemoParts:
        """The window's widgets this record names (the window builds it once)."""
        return cls(ui.plot, ui.plot_card, ui.top_split, ui.stream_split, ui.tokens, ui.prompt, ui.model_picker,
                   ui.form, ui.busy, ui.controls_dock, ui.ir_dock)


@dataclass(frozen=True)
class SessionViews:
    """What :class:`app.gui.panels.sessions.files.SessionFiles` drives: the prompt (read into a live run's
    record), the busy indicator (stopped when a file is read), the latency plot (a recorded run's curve) and the
    IR tabs (a recorded run's IR)."""

    prompt: PromptEditor
    busy: BusyIndicator
    plot: LatencyPlot
    ir_tabs: IRTabs

    @classmethod
    def of(cls, ui: WindowParts) -> SessionViews:
        """The window's widgets this record names (the window builds it once)."""
        return cls(ui.prompt, ui.busy, ui.plot, ui.ir_tabs)


@dataclass(frozen=True)
class WorkspaceParts:
    """What :class:`app.gui.workspaces.Workspaces` moves between the workspaces: the IR card (its dock, the IR
    tabs in it) and the plot's card (out of the main area's splitter into the Code page and back)."""

    ir_dock: QDockWidget
    ir_card: QFrame
    ir_tabs: IRTabs
    top_split: QSplitter
    plot_card: QFrame

    @classmethod
    def of(cls, ui: WindowParts) -> WorkspaceParts:
        """The window's widgets this record names (the window builds it once)."""
        return cls(ui.ir_dock, ui.ir_card, ui.ir_tabs, ui.top_split, ui.plot_card)
