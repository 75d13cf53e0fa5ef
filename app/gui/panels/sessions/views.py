"""A recorded run's IR, profile and pass pipeline into the window's views (IR tabs, Profile tab, Passes tab),
read-only and labelled with where it was recorded, and its curve on the plot, coloured by machine when runs
of several machines are shown (:class:`app.gui.panels.sessions.files.SessionFiles` opens the files). Nothing here imports
JAX or torch. GUI thread only."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from app.core.live_recording import short_origin
from app.core.profile.build import BY, aggregate
from app.core.profile.columns import BY_MODULE
from app.core.recording import RecordedRun
from app.core.recording.environment import machine_name
from app.core.session.model import RunState
from app.core.session.requests import ProfileReady
from app.gui.menus import MODE_COLOURS, MODE_SYMBOLS, lane_name

if TYPE_CHECKING:
    from app.gui.panels.inspect import InspectWiring
    from app.gui.panels.passes.wiring import PassesWiring
    from app.gui.panels.profile.wiring import ProfileWiring
    from app.gui.status import StatusLine
    from widgets.ir.ir_tabs import IRTabs

#: Colours of the machines when runs of more than one machine are on the plot.
MACHINE_COLOURS = ("#2563eb", "#dc2626", "#854d0e", "#9333ea", "#475569", "#0891b2")


def show_passes(passes: PassesWiring, status: StatusLine, run: RecordedRun) -> bool:
    """Show ``run``'s recorded pass pipeline in the Passes tab (read-only)."""
    if run.passes is None:
        return False
    try:
        return passes.show_recorded(run.passes, run.recorded_label)
    except Exception as exc:  # noqa: BLE001 — a malformed recorded pipeline must not stop the open
        status.error(f"The recorded pass pipeline of {run.label} could not be shown: {exc}")
        return False


def show_profile(profile_tab: ProfileWiring, status: StatusLine, run: RecordedRun) -> bool:
    """Show ``run``'s recorded profile in the Profile tab (read-only, labelled with where it was recorded):
    its rows aggregated as a live profile's, its timeline, links to its HLO and source map. False when the run
    has none or it cannot be shown (said on the status line)."""
    if run.profile is None:
        return False
    try:
        profile = replace(run.profile, source_map=run.source_maps.get(run.profile.step))
        rows = {by: [r.to_dict() for r in aggregate(profile, by, fold_layers=(by == BY_MODULE))] for by in BY}
        ready = ProfileReady(profile, rows, profile.timeline.to_dict(), run.ir.get(profile.step))
        profile_tab.show_recorded(ready, run.recorded_label)
    except Exception as exc:  # noqa: BLE001 — a malformed recorded profile must not stop the open
        status.error(f"The recorded profile of {run.label} could not be shown: {exc}")
        return False
    return True


def show_ir(inspect: InspectWiring, ir_tabs: IRTabs, run: RecordedRun, run_id: int = 0) -> None:
    """Put ``run``'s IR and source maps in the IR tabs (linked), labelled with the run it is shown as
    (``run_id``) and where it was recorded."""
    origin = short_origin(run, run_id)
    for step, ir in run.ir.items():
        inspect.ir_arrived(step)
        ir_tabs.set_ir(step, ir, origin)
    for step, source_map in run.source_maps.items():
        if step in run.ir:
            inspect.on_source_map(step, source_map)


def plot_label(state: RunState, run: RecordedRun | None) -> str:
    """The plot's label of a recorded run (the plot adds ``"run N · "``), as a live run's: its mode, the devices
    it ran on (its mesh: ``"1 device"``), its model or ``program:entry``, then ``recorded on CPU × 4`` — or
    ``▶ replay`` after the mode (a race lane's steady-decode key is named by its mode). A run keeps its file's
    number (:meth:`app.core.session.model.Session.begin_recorded`) unless the window had used it: then
    ``recorded on CPU × 4 as run 4``. Issue 37: recorded runs said "CPU × 4" where live runs on the same machine
    said "1 device"; a file's runs 4–8 showed as 1–5, or 22–26, with nothing saying so."""
    if run is None:
        return f"{state.mode} (recorded)"
    model = f" · {run.model}" if run.model else ""
    if state.replay:
        return f"{state.mode} ▶ replay · {run.mesh}{model}"
    own = re.match(r"run (\d+)\b", run.label)  # its number in the file, when the window could not keep it
    number = f" as run {own.group(1)}" if own and int(own.group(1)) != state.run_id else ""
    return f"{state.mode} · {run.mesh}{model} · recorded on {machine_name(run.environment)}{number}"


def machine_colours(machines: set[str]) -> dict[str, str]:
    """A colour per machine when there are several (``{}`` for one: its runs are coloured as live runs)."""
    if len(machines) < 2:
        return {}
    return {m: MACHINE_COLOURS[i % len(MACHINE_COLOURS)] for i, m in enumerate(sorted(machines))}


def start_plot_run(plot: Any, state: RunState, run: RecordedRun | None, colours: dict[str, str]) -> None:
    """The plot's curve of a recorded run: coloured by its machine (``colours``, else as a live run would be),
    a race lane drawn with its race's lanes; ``▶ replay`` marks a replay."""
    colour = colours.get(run.machine if run is not None else "")
    label = plot_label(state, run)
    if state.race is not None:
        plot.start_run(label, colour=colour or MODE_COLOURS.get(state.mode), fade=False,
                       symbol=MODE_SYMBOLS.get(state.mode), run_id=state.run_id, group=state.race,
                       lane=lane_name(state.mode))
    else:
        plot.start_run(label, colour=colour, run_id=state.run_id)
