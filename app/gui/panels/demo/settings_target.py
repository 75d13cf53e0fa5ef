"""What the Demo kit's settings race races: the loaded model's decode step, or the entry point of the program open in
the Code workspace (issue 40: "the same model step … or the same program entry").

:class:`RaceTarget` is a small row above the settings list — ``races: [07_mlp_training.py:train_step ▾]`` — whose
choice lists the model's decode step and, while the Code workspace's editor holds a program, that program's selected
entry point (the program panel's entry picker; empty: the file's first entry point). The choice follows the workspace
the user goes to (Code → the program; Run → the model, unless the newest run on the latency plot is the program's or
no model is loaded or loading) and can be changed by hand until the next change of workspace. A program race is a
:class:`app.core.programs.compute.requests.ProgramSettingsRaceRequest`: the program panel's request (text, entry
point, argument spec, calls per lane) with the settings' names; :func:`program_refusal` refuses a setting a program
cannot race (an Inductor mode: Inductor compiles PyTorch, a JAX program has nothing for it) by name before anything
is sent.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QObject, Signal, SignalInstance, Slot
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QWidget

from app.core.backends import CPU
from app.core.compile_settings.catalog import CATALOG, parse_setting
from app.core.compile_settings.race import resolve
from app.core.errors import InvalidSettingsError
from app.core.programs.compute.requests import ProgramRequest, ProgramSettingsRaceRequest
from widgets.code.program_panel import ProgramPanel
from widgets.demo.settings_controls import SettingRow

if TYPE_CHECKING:
    from app.core.session.model import Session

MODEL, PROGRAM = "model", "program"
#: What the choice says for the model's step.
MODEL_TEXT = "the model's decode step"


def refusal(name: str, platform: str) -> str:
    """Why a race on ``platform`` refuses the setting ``name`` (:func:`parse_setting`'s message), or ``""``."""
    try:
        parse_setting(name, platform)
    except InvalidSettingsError as exc:
        return str(exc)
    return ""


def rows(platform: str) -> list[SettingRow]:
    """The catalog as the controls' rows on ``platform`` (``""``: not known yet: nothing refused)."""
    out = []
    for s in CATALOG:
        why = refusal(s.name, platform or CPU.platform) if platform or s.compiler != "XLA" else ""
        out.append(SettingRow(s.name, s.sets + (f" — {s.note}" if s.note else ""), why))
    return out


def program_refusal(name: str, platform: str) -> str:
    """Why a program race on ``platform`` refuses the setting ``name`` — the catalog's or backend's refusal, or an
    Inductor mode's (:func:`app.core.compile_settings.race.resolve`'s message for ``"program"``) — or ``""``."""
    try:
        if parse_setting(name, platform).compiler == "Inductor":
            resolve([name], platform, "program")  # raises before any option is checked (no compile)
    except InvalidSettingsError as exc:
        return str(exc)
    return ""


class RacedProgram(Protocol):
    """What the settings race reads of the Code workspace (:class:`app.gui.panels.programs.wiring.ProgramWiring`,
    which is not imported here: it imports the Demo kit): its file's display ``name``, its ``panel`` (the editor,
    the entry point picked) and the :class:`ProgramRequest` its controls describe (:meth:`request`; raises
    :class:`app.core.programs.specs.SpecError` for bad static argument indices)."""

    name: str
    panel: ProgramPanel

    def request(self, trace_only: bool = False) -> ProgramRequest: ...

    def raced(self) -> None:
        """A race of the editor's text was sent: its lanes' compiles show the IR, so no live compile of the same
        text follows it (issue 55: one came after the race and renamed the IR header "live: compiled as you
        type")."""


def program_race_request(programs: RacedProgram, names: list[str]) -> ProgramSettingsRaceRequest:
    """The request of ``programs`` (the Code workspace's :class:`app.gui.panels.programs.wiring.ProgramWiring`,
    not imported: it imports the Demo kit) (:meth:`ProgramWiring.request`, in jit mode, no sweep) racing ``names``. Raises
    :class:`app.core.programs.specs.SpecError` for bad static argument indices."""
    base = programs.request()
    fields = {f.name: getattr(base, f.name) for f in dataclasses.fields(base)}
    fields.update(mode="jit", sweep="", bucket=False, static_values=(), trace_only=False)
    return ProgramSettingsRaceRequest(**fields, names=tuple(names))


class RaceTarget(QObject):
    """GUI thread. :attr:`row` (``races:`` and the choice) goes above the settings list; ``changed()`` when the
    choice changes (by hand, by a workspace change or because the program's entry point changed)."""

    changed = Signal()

    def __init__(self, session: Session, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.programs: RacedProgram | None = None  # the Code workspace (attach)
        self.row = QWidget()
        self.row.setObjectName("settingsTargetRow")
        self.choice = QComboBox()
        self.choice.setObjectName("settingsTarget")
        self.choice.currentIndexChanged.connect(self._tip)
        self.choice.currentIndexChanged.connect(lambda _i: self.changed.emit())
        layout = QHBoxLayout(self.row)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel("races:"))
        layout.addWidget(self.choice, 1)
        self.refresh()

    def attach(self, programs: RacedProgram, workspace_changed: SignalInstance, shown: str) -> None:
        """Follow the Code workspace's program (its file and entry point: ``programs``, the ``ProgramWiring``) and the
        workspace shown (``shown`` now, then ``workspace_changed(str)``: :class:`app.gui.workspaces.Workspaces`'
        ``changed``)."""
        self.programs = programs
        programs.panel.entry.currentTextChanged.connect(self.refresh)  # picked by hand (a load sets it silently)
        self.session.events.programLoaded.connect(self.refresh)
        workspace_changed.connect(self.follow)
        self.follow(shown)

    def program_label(self) -> str:
        """``file:entry`` of the Code workspace's program (``""``: no program open)."""
        p = self.programs
        if p is None or not p.panel.editor.code().strip():
            return ""
        entry = p.panel.values()["entry"] or p.panel.entry.itemText(0)  # "": the file's first entry point
        return f"{p.name}:{entry}" if entry else p.name

    def kind(self) -> str:
        """:data:`MODEL` or :data:`PROGRAM`: what Race races now."""
        return str(self.choice.currentData() or MODEL)

    def text(self) -> str:
        """What the row says: ``"races: the model's decode step"`` or ``"races: 07_mlp_training.py:train_step"``."""
        return f"races: {self.choice.currentText()}"

    @Slot()
    def refresh(self, *_: Any) -> None:
        """List what can race now, keeping the current kind when it still can."""
        kind, label = self.kind(), self.program_label()
        self.choice.blockSignals(True)
        self.choice.clear()
        self.choice.addItem(MODEL_TEXT, MODEL)
        if label:
            self.choice.addItem(label, PROGRAM)
        self.choice.setCurrentIndex(max(0, self.choice.findData(kind)))
        self.choice.setEnabled(self.choice.count() > 1)
        self._tip()
        self.choice.blockSignals(False)
        self.changed.emit()

    @Slot()
    def _tip(self, *_: Any) -> None:
        self.choice.setToolTip(f"{self.text()} (a narrow tab cuts it). What the race compiles and runs under each "
                               "setting: the loaded model's decode step, or the entry point picked in the Code "
                               "workspace, with its arguments and calls per lane")

    @Slot(str)
    def follow(self, workspace: str) -> None:
        """The default for ``workspace``: the program in Code; in Run the model, unless the newest run is the
        program's (the latency plot shows its calls: a race of it just ended) or no model is loaded or loading;
        Inspect keeps the choice."""
        self.refresh()  # the file or its entry point may have changed while the tab was hidden
        no_model = self.session.loaded is None and not self.session.load_queue
        current = self.session.current
        if workspace == "Code" or no_model or (current is not None and current.program and not current.origin):
            self.choose(PROGRAM)
        elif workspace == "Run":
            self.choose(MODEL)

    def choose(self, kind: str) -> bool:
        """Pick :data:`MODEL` or :data:`PROGRAM`; False when that one cannot race now (no program open)."""
        index = self.choice.findData(kind)
        if index >= 0:
            self.choice.setCurrentIndex(index)
        return index >= 0
