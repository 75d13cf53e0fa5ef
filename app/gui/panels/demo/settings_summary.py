"""What the Demo kit's settings race says under its trade-off plot: the plot's points and the summary line of its
paired verdicts — each setting against the baseline with its 95 % interval, from the paired, interleaved rounds
that follow the lanes (:mod:`app.core.compile_settings.paired`), in the verdict module's words
(:func:`app.core.verdict.words.short_verdict`, :func:`app.core.verdict.words.format_verdicts`). Plain functions of
plain data (:class:`app.core.compile_settings.figures.SettingLane` s), and the label that shows the line (GUI
thread)."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QLabel

from app.core.compile_settings.figures import plot_points
from app.core.verdict.words import format_verdicts, short_verdict
from widgets.demo.elided_line import ElidedLine
from widgets.demo.plot_or_note import PlotOrNote
from widgets.demo.tradeoff_plot import MIN_PLOT_PX, TradeoffPlot, TradeoffPoint

#: Said when a race of several settings has no paired rounds: its ratios are one pass's.
ONE_PASS = ("vs baseline: one pass per lane, no 95 % CI — paired rounds run after the lanes while the Demo kit's "
            "steady-state box is on")


def points_of(lanes: list[Any]) -> list[TradeoffPoint]:
    """The trade-off plot's points of ``lanes`` (:class:`app.core.compile_settings.figures.SettingLane`)."""
    return [TradeoffPoint(**p) for p in plot_points(lanes)]


def verdicts_doc(lanes: list[Any]) -> dict[str, Any] | None:
    """The paired phase of ``lanes`` as the verdict module reads it (:func:`format_verdicts`' ``doc``: the phase
    the baseline's verdict keeps, and ``pairs``: each other setting's verdict against it), None without one."""
    phase = (lanes[0].verdict or {}).get("phase") if lanes else None
    if phase is None:
        return None
    pairs = [{**lane.verdict, "mode": lane.name, "against": lanes[0].name} for lane in lanes[1:]
             if lane.verdict and lane.verdict.get("ratio")]
    return {**phase, "pairs": pairs}


def summary_text(lanes: list[Any]) -> tuple[str, str, str]:
    """``(line, tooltip, head)`` under the plot: ``"vs default, 9 paired rounds (0 dropped), A/A ±1.8 %: O3 1.25× faster
    than default (95 % CI 1.20–1.30) · O0 vs default: no clear difference (0.98–1.02)"`` (``" · noisy machine"``
    when the A/A floor is wider than ±3 %), the tooltip every sentence with its rounds and why the rounds stopped
    (:func:`format_verdicts`), ``head`` the line's part before the verdicts (the stage's caption: the points' labels
    say each verdict); :data:`ONE_PASS` without paired rounds, ``""`` for one setting or none."""
    doc = verdicts_doc(lanes)
    if doc is None:
        return (ONE_PASS, "", ONE_PASS.split(" — ")[0]) if len(lanes) > 1 else ("", "", "")
    aa = f", A/A ±{doc['aa_noise']:.1f} %" if doc.get("aa_noise") is not None else ""
    head = f"vs {doc.get('baseline')}, {doc.get('rounds', 0)} paired rounds ({doc.get('dropped', 0)} dropped){aa}"
    said = " · ".join(short_verdict(p) for p in doc["pairs"]) or f"no verdict ({doc.get('stopped_by')})"
    noisy = " · noisy machine" if doc.get("noisy") else ""
    tip = format_verdicts(doc).replace("steady state:", "paired rounds:", 1)
    return f"{head}: {said}{noisy}", tip, f"{head}{noisy}"


#: Said in the Demo kit where its plot would be under :data:`MIN_PLOT_PX` tall.
NO_ROOM = (f"Too short for the trade-off here (it needs {MIN_PLOT_PX} px): shown in the plot area (Demo ▸ Trade-off "
           "in the plot area, Ctrl+Alt+P) — or make this dock taller")


def summary_label() -> QLabel:
    """The summary line's label (``settingsRaceVerdicts``): one line, elided to the plot's width, never wrapped
    (it would squeeze the plot); the whole line and every sentence in its tooltip and on a click."""
    label = ElidedLine("")
    label.setObjectName("settingsRaceVerdicts")
    return label


def plot_place(plot: TradeoffPlot) -> PlotOrNote:
    """Where the Demo kit shows ``plot``: the plot while it gets :data:`MIN_PLOT_PX` px (and its notes' lines),
    else :data:`NO_ROOM` and a button (its ``moveRequested``) that shows it in the plot area."""
    place = PlotOrNote(plot, MIN_PLOT_PX, NO_ROOM, "Trade-off in the plot area")
    place.setObjectName("tradeoffPlace")
    place.extra = lambda: plot.notes.sizeHint().height() if not plot.notes.isHidden() else 0
    return place


def show_summary(label: QLabel, stage: TradeoffPlot, lanes: list[Any]) -> None:
    """Show :func:`summary_text` of ``lanes`` on ``label`` (its tooltip: every sentence) and its head as the
    ``stage`` plot's caption."""
    line, tip, head = summary_text(lanes)
    label.setText(line)
    label.setToolTip(tip)
    stage.set_caption(head, tip)
