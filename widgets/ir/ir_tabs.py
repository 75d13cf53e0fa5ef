"""Tabs for what each compiler made — jaxpr / StableHLO / optimized HLO (XLA), FX graph / generated code
(Inductor) — with a prefill|decode switch and a cost summary above."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.core.inspect.views import (
    IR_VIEWS,
    JAXPR,
    JAXPR_SOURCE,
    KIND_FIGURES,
    MODEL_STEPS,
    PREFILL,
    tab_views,
    views,
)
from app.core.units import nbytes, si
from widgets.ir.header_labels import ElidedLabel, FiguresLabel, plain
from widgets.ir.ir_panel import IRPanel

#: The model's steps, each with a step button (a program's entry point gets its own: :meth:`IRTabs.ensure_step`).
STEPS = MODEL_STEPS
#: The IR-view catalog's views with a tab (``app/core/inspect/views.py``), and those of Inductor's step.
TAB_VIEWS = tab_views()
INDUCTOR_VIEWS = tuple(v.key for v in TAB_VIEWS if v.compiler == "inductor")
#: The summary line's figures (the ``figures`` views' :class:`app.core.inspect.views.Figure` s) and counts (the
#: views whose elements a :class:`app.core.inspect.ir.StepIR` field counts), in catalog order.
FIGURE_VIEWS = views(kind=KIND_FIGURES)
COUNTED_VIEWS = tuple(v for v in IR_VIEWS if v.count)


def _get(obj: Any, name: str) -> Any:
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def _pick(d: dict | None, *needles: str) -> float | None:
    """The value of key ``needles[0]`` if present, else the first key containing every needle.

    Cost/memory dict keys vary by backend (XLA also reports per-operand ``"bytes accessed0{}"``)."""
    d = d or {}
    if isinstance(d.get(needles[0]), (int, float)):
        return float(d[needles[0]])
    for key, value in d.items():
        if all(n in key.lower() for n in needles) and isinstance(value, (int, float)):
            return float(value)
    return None


def summary_text(ir: Any) -> str:
    """One line of figures from a StepIR-like object (attributes or dict keys ``cost``, ``memory``, …)."""
    parts = [f"{f.label} <b>{(nbytes if f.kind == 'bytes' else si)(_pick(_get(ir, v.key), f.key))}</b>"
             for v in FIGURE_VIEWS for f in v.figures]
    counts = [
        *((f"{v.short_title} {v.unit_abbr}", _get(ir, v.count)) for v in COUNTED_VIEWS),
        ("XLA fusions", _get(ir, "n_fusions")),
        ("Inductor kernels", _get(ir, "n_kernels")),
    ]
    parts += [f"{name} <b>{n:,}</b>" for name, n in counts if n is not None]
    # a figure's name and number never part at a line break ("XLA" at a line's end, "fusions 1,035" below)
    return " · ".join(part.replace(" ", "&nbsp;") for part in parts)


def widest_figures() -> str:
    """:func:`summary_text` of a model step whose every number is as wide as it gets (``"FLOPs <b>888 M</b> ·
    bytes accessed <b>888 MiB</b> · … · XLA fusions <b>888</b>"``): the figures row's template
    (:meth:`FiguresLabel.set_template`). Not Inductor's kernels: an XLA step has none, and the Inspect
    workspace's row at 1280×720 would take two lines (its jaxpr view under 30: tests/journeys)."""
    widest = {"count": 888e6, "bytes": 888 * 2**20}
    ir: dict[str, Any] = {v.key: {f.key: widest[f.kind] for f in v.figures} for v in FIGURE_VIEWS}
    return summary_text({**ir, **{v.count: 8888 for v in COUNTED_VIEWS if v.count}, "n_fusions": 888})


class IRTabWidget(QTabWidget):
    """The IR card's tab widget, sized by its IR views alone: a page of another kind (Source map, Profile,
    Passes, the call sites) gets an Ignored size policy as it is added, so it asks for no room of its own
    (``qSmartMinSize`` counts it as 0) and is shown in the IR views' room. Which tab is current never changes the
    card's minimum, nor what the figures row above the tabs gets (issue 55, the walk's seed 7: with the current
    tab's minimum alone counting, a Profile visit moved the Run workspace's IR tabs 26 px down at 1280×720 and
    shrank them 28 px at 1024×600; with every page's counting, the Passes tab's set the IR views' height in a short
    Code workspace)."""

    def tabInserted(self, index: int) -> None:  # noqa: N802 (Qt override)
        super().tabInserted(index)
        page = self.widget(index)
        if page is not None and not isinstance(page, IRPanel):
            page.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Ignored)


class IRTabs(QWidget):
    """Shows the IR captured for each step; call :meth:`set_ir` from a GUI-thread slot.

    The views are named as the IR-view catalog's rows say (``widget``): ``jaxprView``, ``stablehloView``,
    ``hloView`` (XLA), ``fxGraphView`` and ``inductorCodeView`` (Inductor). IR of both compilers for one step
    is kept side by side (a race of jit-static and torch-compile fills all five tabs).

    ``stepShown(step)`` (GUI thread): :meth:`show_step` switched the views to ``step`` (a view beside them, the
    Profile tab, follows what the header names).
    """

    stepShown = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._irs: dict[str, Any] = {}
        #: per step, per compiler ("xla" | "inductor"): that compiler's fields and where they came from
        self._figures: dict[str, dict[str, dict[str, Any]]] = {}
        self._origins: dict[str, dict[str, str]] = {}
        self._compiled: dict[str, dict[str, str]] = {}  # per step, per compiler: the earlier run that compiled it
        self._notes: dict[str, str] = {}  # per step: HTML after its XLA figures (a live compile's delta)
        self._hold_hidden = False
        self._step = PREFILL
        self.panels = {v.key: IRPanel(v.title, v.widget, v.ext) for v in TAB_VIEWS}
        self.tabs = IRTabWidget()
        self.tabs.setDocumentMode(True)
        for v, panel in zip(TAB_VIEWS, self.panels.values()):
            self.tabs.setTabToolTip(self.tabs.addTab(panel, panel.title), v.help)
        self.tabs.currentChanged.connect(self._on_tab_changed)
        self.step_buttons: dict[str, QPushButton] = {}
        group = self._group = QButtonGroup(self)
        group.setExclusive(True)
        header = self._header = QHBoxLayout()
        header.setContentsMargins(6, 4, 6, 4)
        header.setSpacing(4)
        self.origin = ElidedLabel("")  # cut with "…", never widening the card (issue 55)
        self.origin.setObjectName("irOrigin")
        self.origin.setToolTip("The run and mode whose compiled step the current tab shows")
        header.addWidget(self.origin)
        header.addSpacing(8)
        header.addWidget(QLabel("Step "))
        for step in STEPS:
            btn = QPushButton(step)
            btn.setCheckable(True)
            btn.setObjectName(f"{step}StepButton")
            btn.setProperty("segment", True)
            btn.setEnabled(False)
            group.addButton(btn)
            header.addWidget(btn)
            self.step_buttons[step] = btn
        group.buttonClicked.connect(self._on_step_clicked)
        self._step_end = header.count()  # a program's entry point gets its step button here (ensure_step)
        header.addStretch(1)
        self.summary = FiguresLabel()  # a row of its own, at most two lines: the header's height never changes
        self.summary.set_template(widest_figures())  # one line where a step's widest figures fit
        self.summary.setObjectName("irSummary")
        self.summary.setContentsMargins(6, 0, 6, 2)
        self.source_check = QCheckBox("source lines")
        self.source_check.setObjectName("sourceInfoCheck")
        self.source_check.setToolTip(
            "Show the PyTorch / transformers line and ATen op of each jaxpr equation in a column beside it"
        )
        self.panels[JAXPR].split_notes = True
        self.source_check.toggled.connect(self._on_source_toggled)
        self.panels[JAXPR].add_tool(self.source_check)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(header)
        layout.addWidget(self.summary)
        layout.addWidget(self.tabs, 1)

    def clear(self, message: str | None = None) -> None:
        """Forget every step's IR and show ``message`` (or the default hint) in each view."""
        self._irs.clear()
        self._figures.clear()
        self._origins.clear()
        self._compiled.clear()
        self._notes.clear()
        self.origin.setText("")
        for step in [s for s in self.step_buttons if s not in STEPS]:  # a program's entry point: gone with its IR
            btn = self.step_buttons.pop(step)
            self._group.removeButton(btn)
            self._header.removeWidget(btn)
            btn.deleteLater()
            self._step_end -= 1
        for step in STEPS:
            self.step_buttons[step].setVisible(True)
        for btn in self.step_buttons.values():
            btn.setEnabled(False)
            btn.setChecked(False)
        self.summary.setText("")
        for key, panel in self.panels.items():
            mode = "a torch.compile (Inductor) mode" if key in INDUCTOR_VIEWS else "a jax.jit mode"
            panel.set_placeholder(message or f"Run the model in {mode} to see its {panel.title}.")

    def set_empty_hint(self, program: bool) -> None:
        """What an empty view says: how to fill it for the user's program (the Code workspace) or for the model
        (issue 29, flaw 22: the Code workspace said "Run the model in a jax.jit mode"). A view showing IR keeps it."""
        for key, panel in self.panels.items():
            if program:
                hint = (f"Run the program (Ctrl+Enter) to see its {panel.title}." if key not in INDUCTOR_VIEWS
                        else f"Programs run on JAX: no {panel.title} (it is for the model's torch-compile mode).")
            else:
                mode = "a torch.compile (Inductor) mode" if key in INDUCTOR_VIEWS else "a jax.jit mode"
                hint = f"Run the model in {mode} to see its {panel.title}."
            panel.view.setPlaceholderText(hint)

    def ensure_step(self, step: str) -> tuple[QPushButton, bool]:
        """The step button of ``step``, made for a step other than prefill and decode (a program's entry point:
        prefill and decode are then hidden until :meth:`clear`). Returns (button, made now)."""
        if step in self.step_buttons:
            return self.step_buttons[step], False
        btn = QPushButton(step)
        btn.setCheckable(True)
        btn.setObjectName("programStepButton")
        btn.setProperty("segment", True)
        btn.setEnabled(False)
        self._group.addButton(btn)
        self._header.insertWidget(self._step_end, btn)
        self._step_end += 1
        self.step_buttons[step] = btn
        self._sync_step_buttons()
        return btn, True

    def _sync_step_buttons(self) -> None:
        """With a program's entry point among the steps, the model's prefill and decode buttons show only when
        that step has IR: the step the views show is always a visible Step button (issue 55: "run 14 · jit-loop ·
        decode" in the header beside a lone "gpt2" button)."""
        programs = any(s not in STEPS for s in self.step_buttons)
        for name in STEPS:
            self.step_buttons[name].setVisible(not programs or name in self._irs or name == self._step)

    def set_ir(self, step: str, ir: Any, origin: str = "", replace: bool = False, compiled_in: str = "") -> None:
        """Store the StepIR-like ``ir`` of ``step`` (its texts replace only the views it has: the other
        compiler's IR of the step stays — or, with ``replace``, nothing else of the step stays: an opened
        capture's HLO must not sit beside the local model's jaxpr); shows it if it is the first one or the
        current step.

        ``origin`` names the run and mode it came from (``"run 3 · jit-static"``): the header shows it, with
        the step, for the compiler of the current tab, and the figures beside it are that compiler's only;
        ``compiled_in`` the earlier run whose compile a warm run reused (:meth:`name_origin`)."""
        fields = ir if isinstance(ir, dict) else vars(ir)
        fields = {k: v for k, v in fields.items() if v is not None}
        compiler = fields.get("compiler") or ("inductor" if any(k in fields for k in INDUCTOR_VIEWS) else "xla")
        if replace:
            for table in (self._irs, self._figures, self._origins, self._compiled):
                table.pop(step, None)
        self._irs[step] = {**self._irs.get(step, {}), **fields}
        per = self._figures.setdefault(step, {})
        per[compiler] = {**per.get(compiler, {}), **fields}
        if origin:
            self._origins.setdefault(step, {})[compiler] = origin
            self._compiled.setdefault(step, {})[compiler] = compiled_in
        self.ensure_step(step)[0].setEnabled(True)
        if len(self._irs) == 1 or step == self._step:
            self.show_step(step)

    def show_step(self, step: str) -> None:
        """Switch every tab to ``step`` ('prefill' | 'decode', or a program's entry point)."""
        self._step = step
        self.step_buttons[step].setChecked(True)
        self._sync_step_buttons()
        self.stepShown.emit(step)
        ir = self._irs.get(step)
        if ir is None:
            return
        # The visible tab now; the hidden ones in later event-loop turns (each text can be megabytes).
        current = self.tabs.currentWidget()
        delay = 0
        for key, panel in self.panels.items():
            text = _get(ir, key)
            if key == JAXPR:
                panel.show_notes = self.source_check.isChecked()
                if panel.show_notes:
                    text = _get(ir, JAXPR_SOURCE) or text
            if panel is current:
                panel.set_text(text, step)
            else:
                delay += 40
                panel.set_text(text, step, delay_ms=delay, hold=self._hold_hidden)
        self._show_header()

    def current_compiler(self) -> str:
        """``"inductor"`` when the current tab is an Inductor view, else ``"xla"``."""
        key = next((k for k, p in self.panels.items() if p is self.tabs.currentWidget()), JAXPR)
        return "inductor" if key in INDUCTOR_VIEWS else "xla"

    def name_origin(self, step: str, origin: str, compiled_in: str, compiler: str = "xla") -> None:
        """The IR shown for ``step`` (``compiler``'s) is now the one a warm run ran: the header names that run,
        ``origin`` (``"run 3 · jit-static"``), and the earlier run whose compile it reused, ``compiled_in``
        (``"run 1"``), its texts and figures unchanged (issue 55: after runs 1–3 of jit-static the header said "run 1
        · jit-static · decode" beside run 3's calls)."""
        if step not in self._origins:
            return
        self._origins[step][compiler] = origin
        self._compiled.setdefault(step, {})[compiler] = compiled_in
        if step == self._step:
            self._show_header()

    def origin_text(self) -> str:
        """What the header names for the current tab: ``"run 3 · jit-static · decode"``, ``"run 3 · jit-static ·
        decode (compiled in run 1)"`` when a warm run reused an earlier run's compile (or ``""``)."""
        origin = self._origins.get(self._step, {}).get(self.current_compiler(), "")
        compiled = self._compiled.get(self._step, {}).get(self.current_compiler(), "")
        return f"{origin} · {self._step}" + (f" (compiled in {compiled})" if compiled else "") if origin else ""

    def _show_header(self) -> None:
        """The origin and figures of the current tab's compiler for the current step."""
        figures = self._figures.get(self._step, {}).get(self.current_compiler()) or {}
        note = self._notes.get(self._step, "") if self.current_compiler() == "xla" else ""
        self.summary.setText((summary_text(figures) if figures else "") + (f" · {note}" if figures and note else ""))
        text = self.origin_text()
        self.origin.setText(f"<b>{text}</b>" if text else "")
        labels = _get(figures, "input_labels") or []
        tip = plain(self.summary.text().replace(" · ", "\n"))  # every figure, the ones the two lines hide too
        self.summary.setToolTip(tip + ("\ninputs: " + ", ".join(labels) if labels else ""))

    def set_note(self, step: str, html: str) -> None:
        """``html`` after ``step``'s XLA figures in the header (``""`` clears), e.g. the change since the last
        compile."""
        self._notes[step] = html
        if step == self._step:
            self._show_header()

    def hold_hidden(self, hold: bool) -> None:
        """While ``hold`` (a run is streaming), hidden tabs keep their new text pending instead of loading
        it; releasing loads them one per event-loop turn (40 ms apart). A tab that is shown loads at once."""
        self._hold_hidden = hold
        if not hold:
            for i, panel in enumerate(p for p in self.panels.values() if p.has_pending()):
                panel.schedule_pending(40 * (i + 1))

    def pending(self) -> bool:
        """True while a hidden tab still waits for its text (see :meth:`IRPanel.set_text`)."""
        return any(p.has_pending() for p in self.panels.values())

    def text_of(self, step: str, key: str) -> str | None:
        """The text of view ``key`` (``"hlo"``, ``"jaxpr"``, …) stored for ``step``, or None."""
        return (self._irs.get(step) or {}).get(key)

    def current_step(self) -> str:
        return self._step

    @Slot(bool)
    def _on_source_toggled(self, _on: bool) -> None:
        if self._step in self._irs:
            self.show_step(self._step)

    @Slot(int)
    def _on_tab_changed(self, _index: int) -> None:
        panel = self.tabs.currentWidget()
        if isinstance(panel, IRPanel) and panel.has_pending():
            panel.apply_pending()
        if self._step in self._irs:
            self._show_header()

    @Slot(object)
    def _on_step_clicked(self, button: QPushButton) -> None:
        self.show_step(button.text())
