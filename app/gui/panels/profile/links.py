"""A profile laid on the other views: measured columns in the source explorer, measured-time tints on the
optimized-HLO lines, the top 10 source lines one click away, and cross-links from a profile row or
timeline bar to the PyTorch line and its jaxpr equations. GUI thread only; plain data in.

A profile applies to a view only while that view shows the executable that was profiled: the step it shows
is the profiled step and its optimized HLO is the profiled module's text (``StepProfile.hlo_text``). A new
compile, another step or another model hides the measured columns and the tints; they come back when the
profiled IR is shown again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QObject, Qt, Slot
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QLabel, QMenu, QPushButton, QToolButton

from app.core.inspect.views import HLO, is_model_step
from app.core.profile.columns import BY_LINE, ops_running
from app.core.profile.source import groups_for_instruction, hlo_line_shares, measure_source_map, top_lines
from app.core.units import counted, ms
from app.gui.context import WindowContext
from widgets.common.typed_qt import named
from widgets.ir.line_tints import LineTints
from widgets.source.source_explorer import US_COL

if TYPE_CHECKING:
    from PySide6.QtWidgets import QComboBox

    from app.core.session.requests import ProfileReady
    from app.gui.panels.inspect import InspectWiring
    from widgets.common.flow_layout import FlowLayout
    from widgets.ir.ir_tabs import IRTabs


class ProfileTab(Protocol):
    """What the links use of the Profile tab (:class:`app.gui.panels.profile.wiring.ProfileWiring`): its button bar, step box
    and summary line, the profile it shows and its Profile action."""

    bar: FlowLayout
    step: QComboBox
    summary: QLabel

    @property
    def last(self) -> ProfileReady | None: ...

    def request(self) -> None: ...

TOP_N = 10
NO_PROFILE = "No profile yet: Profile measures the time of each line of the step."


def line_label(share: float, us: float) -> str:
    """``412.3 µs · 6.3%`` (busy µs per step, share of the step's wall time)."""
    return f"{us:,.1f} µs · {share:.1%}"


class StatusPart:
    """The profile's part of the Source map tab's one status label (``InspectWiring.set_status``):
    ``text()`` / ``setText()`` as a label's, plain text."""

    def __init__(self, inspect: InspectWiring) -> None:
        self.inspect = inspect
        self._text = ""

    def text(self) -> str:
        return self._text

    def setText(self, text: str) -> None:  # noqa: N802 (a label's name)
        self._text = text
        self.inspect.set_status("profile", text)


class ProfileLinks(QObject):
    """Owns the measured columns, the HLO tints, the two "Top 10 lines" buttons and the Source map tab's
    Profile button. ``profile_wiring``: the :class:`app.gui.panels.profile.wiring.ProfileWiring` (its ``last`` profile,
    its ``request()``); ``ir_tabs``: the IR views (the HLO view's tints, the Source map tab)."""

    def __init__(self, ctx: WindowContext, inspect: InspectWiring, profile_wiring: ProfileTab, ir_tabs: IRTabs) -> None:
        super().__init__(ctx.host)
        self.wiring = profile_wiring
        self.inspect = inspect
        self.ir_tabs = ir_tabs
        self.hlo_panel = self.ir_tabs.panels[HLO]
        self.tints = LineTints(self.hlo_panel.view)
        self.legend = named(QLabel(""), "hloTintLegend")
        self.legend.setVisible(False)
        self.hlo_panel.add_tool(self.legend)
        self._cache: dict[int, Any] = {}  # id(source map) → its SourceMeasure for the current profile
        self.status = StatusPart(self.inspect)  # the profile's part of the tab's one status label
        self.status.setText(NO_PROFILE)
        self.profile_button = named(QPushButton("Profile"), "sourceMapProfileButton")
        self.profile_button.setToolTip("Measure the time of each op of the shown step under jax.profiler "
                                       "(the Profile tab's settings)")
        self.top_button = self._top_button("sourceMapTopButton")
        self.profile_top_button = self._top_button("profileTopButton")
        profile_wiring.bar.insertWidget(6, self.profile_top_button)  # after Export…
        bar = self.inspect.bar
        for i, w in enumerate((self.profile_button, self.top_button)):
            bar.insertWidget(i, w)
        self.profile_button.clicked.connect(self._on_profile_clicked)
        self.hlo_panel.textShown.connect(self.refresh_tints)
        self.inspect.inspector.stepChanged.connect(self._on_step_changed)
        ctx.session.events.busyChanged.connect(self._on_busy)

    def _top_button(self, name: str) -> QToolButton:
        button = named(QToolButton(), name)
        button.setText(f"Top {TOP_N} lines ▾")
        button.setEnabled(False)
        button.setToolTip(f"The {TOP_N} PyTorch source lines with the most measured time")
        button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(button)
        menu.aboutToShow.connect(self._fill_top_menu)
        button.setMenu(menu)
        return button

    # -- state ------------------------------------------------------------------------------------
    def profile(self) -> Any:
        return self.wiring.last.profile if self.wiring.last is not None else None

    def applies(self, step: str) -> bool:
        """True when the IR tabs hold the profiled executable's HLO for ``step``."""
        p = self.profile()
        return p is not None and p.step == step and bool(p.hlo_text) and \
            self.ir_tabs.text_of(step, HLO) == p.hlo_text

    def on_profile(self) -> None:
        """A new profile arrived (called by the Profile tab after it showed it)."""
        self._cache.clear()
        explorer = self.inspect.inspector.explorer
        explorer.tree.sortByColumn(US_COL, Qt.SortOrder.DescendingOrder)  # the most time first
        self.inspect.inspector.set_measure(self.measure)
        self.refresh_tints()
        for button in (self.top_button, self.profile_top_button):
            button.setEnabled(bool(self.top_rows()))
        self._update_status()

    def measure(self, source_map: Any) -> Any:
        """The explorer's measure: the profile laid on ``source_map``, None when it does not apply."""
        if source_map is None or not self.applies(source_map.step):
            self._update_status()
            return None
        key = id(source_map)
        if key not in self._cache:
            self._cache = {key: measure_source_map(self.profile(), source_map)}
        self._update_status(applied=True)
        return self._cache[key]

    def _update_status(self, applied: bool | None = None) -> None:
        p = self.profile()
        if p is None:
            self.status.setText(NO_PROFILE)
            return
        if applied is None:
            applied = self.inspect.inspector.explorer.has_measure()
        if applied:
            self.status.setText(f"Measured: {ms(p.step_ms)} per {p.step} step, {ops_running(p)}")
        elif p.step != self.inspect.inspector.step.currentText():
            self.status.setText(f"Measured columns: the profile is of the {p.step} step")
        else:
            self.status.setText("Measured columns: the profile is of another executable (profile again)")

    @Slot()
    def refresh_tints(self) -> None:
        """Tint the HLO view's instruction lines when it shows the profiled module, else clear."""
        p = self.profile()
        text = self.hlo_panel.text()
        if p is None or not text or text != p.hlo_text:
            self.tints.set_line_tints({})
            self.legend.setVisible(False)
            return
        shares = hlo_line_shares(p)
        self.tints.set_line_tints({line: s for line, (s, _) in shares.items()},
                                  {line: line_label(s, us) for line, (s, us) in shares.items()})
        top_line, (top_share, _) = max(shares.items(), key=lambda kv: kv[1][0], default=(0, (0.0, 0.0)))
        self.legend.setText(f"<span style='background:#f4511e'>&nbsp;&nbsp;&nbsp;</span> measured time: "
                            f"{counted(len(shares), 'op')}, darkest {top_share:.1%} of the step")
        self.legend.setToolTip(f"Each executed instruction's line is tinted by its share of the step's wall "
                               f"time ({counted(p.n_steps, f'profiled {p.step} call')}); the hottest is line {top_line}.")
        self.legend.setVisible(True)

    # -- top 10 -----------------------------------------------------------------------------------
    def top_rows(self) -> list[dict[str, Any]]:
        last = self.wiring.last
        return top_lines(last.rows.get(BY_LINE, []), TOP_N) if last is not None else []

    @Slot()
    def _fill_top_menu(self) -> None:
        menu = self.sender()
        assert isinstance(menu, QMenu), "a Top 10 button's menu calls this as it is about to show"
        menu.clear()
        for i, row in enumerate(self.top_rows(), 1):
            action = menu.addAction(f"{i:2d}. {row['key']}   {line_label(row['share'], row['us_per_step'])}"
                                    f"   {row.get('module') or ''}")
            action.setData(row["key"])
            action.triggered.connect(self._on_top_action)

    @Slot()
    def _on_top_action(self) -> None:
        action = self.sender()
        assert isinstance(action, QAction), "a Top 10 menu's actions call this"
        self.show_location(action.data())

    def show_location(self, location: str) -> bool:
        """Show the Source map tab with the row of source ``location`` (``file:line``) selected; False (and
        nothing changed) for a location without a line (``<input cache[0]>``) or without a source map."""
        if location.startswith("<") or ":" not in location:
            return False
        inspector = self._inspector_on_profiled_step()
        if inspector is None:
            return False
        self.ir_tabs.tabs.setCurrentWidget(self.inspect.page)
        inspector.ensure_built()
        return inspector.explorer.select_location(location)

    # -- cross-links ------------------------------------------------------------------------------
    def select_instruction(self, name: str) -> bool:
        """Select the explorer row of the line instruction ``name`` mostly stands for (which highlights its
        jaxpr equations and StableHLO lines). False when the explorer cannot show it."""
        inspector = self._inspector_on_profiled_step()
        if inspector is None:
            return False
        inspector.ensure_built()
        groups = groups_for_instruction(self.profile(), name, inspector.explorer.shown_map())
        return inspector.explorer.select_groups(groups)

    def _inspector_on_profiled_step(self) -> Any:
        p = self.profile()
        inspector = self.inspect.inspector
        if p is None or p.step not in inspector.maps:
            return None
        if inspector.step.currentText() != p.step:
            inspector.step.setCurrentText(p.step)
        return inspector

    # -- slots ------------------------------------------------------------------------------------
    @Slot()
    def _on_profile_clicked(self) -> None:
        step = self.inspect.inspector.step.currentText()
        if is_model_step(step):
            self.wiring.step.setCurrentText(step)
        self.wiring.request()
        if self.wiring.summary.text().startswith("Load a model"):
            self.status.setText(self.wiring.summary.text())
        else:
            self.status.setText(f"Profiling the {self.wiring.step.currentText()} step…")

    @Slot(str)
    def _on_step_changed(self, _step: str) -> None:
        self._update_status()

    @Slot(bool)
    def _on_busy(self, busy: bool) -> None:
        self.profile_button.setEnabled(not busy)

