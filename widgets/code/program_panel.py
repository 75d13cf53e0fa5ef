"""The Code workspace's left half: the program's editor with its run controls and a status line.

Controls: the entry point, the argument spec (empty: the file's ``X_args()``), the number of calls, the mode
(jit, no-jit, or jit vs no-jit as two runs), a shape sweep with power-of-two buckets, Live beside Run (compile
after each edit for the IR views, never run; Ctrl+Shift+L), Run and Stop. The status
line under the editor says what ran or, in red, the error at the user's line (marked in the editor); beside it,
when edits of an earlier session were restored, a "Discard restored edits" button (Tab reaches it).
Plain data in, signals out; no app imports.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from widgets.code.code_editor import CodeEditor
from widgets.common.typed_qt import named

#: (mode value, label) of the mode picker.
MODES = (("jit", "jit"), ("no-jit", "no-jit (op by op)"), ("compare", "jit vs no-jit"))
#: The status line's height in lines: a message's, an error's (its first lines; the rest in its tool tip).
STATUS_LINES, ERROR_LINES = 2, 4
#: Turns live mode on and off while the panel (the editor) has the focus.
LIVE_SHORTCUT = "Ctrl+Shift+L"


class ProgramPanel(QWidget):
    """Signals (GUI thread): ``runRequested()``, ``stopRequested()``, ``discardRequested()`` (the Discard
    restored edits button, shown by :meth:`offer_discard`)."""

    runRequested = Signal()
    stopRequested = Signal()
    discardRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("programPanel")
        self._build_run_controls()
        self._build_call_controls()
        self._build_message()
        self._layout()
        self._connect()

    def _build_run_controls(self) -> None:
        """The file's name, the entry point, the argument spec, Run and Stop."""
        self.file_label = QLabel("untitled.py")
        self.file_label.setObjectName("programFile")
        self.file_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.entry = named(QComboBox(), "programEntry")
        self.entry.setEditable(True)  # any function of the file can be named
        self.entry.setMinimumContentsLength(10)
        self.entry.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.entry.setToolTip("The entry point: a function (plain or jax.jit) or an nn.Module of the file")
        self.args = named(QLineEdit(clearButtonEnabled=True), "programArgs")
        self.args.setPlaceholderText("args: from the file's X_args(), or a spec: f32[8,128], 3")
        self.args.setToolTip("Argument spec instead of the file's example arguments, e.g. f32[1024,1024] or "
                             "({'w': f32[4,4]}, i32[8]) — random data, seeded")
        self.seed = named(QSpinBox(minimum=0, maximum=2**31 - 1, value=0), "programSeed")
        self.seed.setPrefix("seed ")
        self.seed.setToolTip("Seed of the random data of an argument spec and of a sweep (the CLI's --seed)")
        self.static_argnums = named(QLineEdit(clearButtonEnabled=True), "programStatic")
        self.static_argnums.setPlaceholderText("static_argnums")
        self.static_argnums.setToolTip("Static argument indices instead of the file's, e.g. 1 or 0,2 (the CLI's "
                                       "--static): a static argument is a Python value baked into the compile")
        self.run_button = named(QPushButton("Run"), "programRunButton")
        self.run_button.setToolTip("Load the program, trace and run it (Ctrl+Enter)")
        self.run_button.setDefault(True)
        self.stop_button = named(QPushButton("Stop"), "programStopButton")
        self.stop_button.setToolTip("Stop the run, even inside a Python loop of the program (Esc)")
        self.stop_button.setEnabled(False)

    def _build_call_controls(self) -> None:
        """How the entry point is called: the number of calls, the mode, a shape sweep (with buckets) and
        static values (Live sits beside Run)."""
        self.calls = named(QSpinBox(minimum=1, maximum=10_000, value=10), "programCalls")
        self.calls.setToolTip("Number of timed calls")
        self.calls.setSuffix(" calls")
        self.mode = named(QComboBox(), "programMode")
        for value, label in MODES:
            self.mode.addItem(label, value)
        self.mode.setToolTip("jit: compiled once then cached; no-jit: op-by-op dispatch; jit vs no-jit: both, "
                             "as two runs on the plot")
        self.sweep = named(QLineEdit(clearButtonEnabled=True), "programSweep")
        self.sweep.setPlaceholderText("sweep: 1:16")
        self.sweep.setToolTip("Shape sweep of one argument's first axis instead of N equal calls: 1:16, 1:64:4, "
                              "3,5,9 or array specs f32[1,128], f32[4,128]; one compile per new shape. The first "
                              "array argument by default; name another as x=1:16 or 1=1:16")
        self.static_values = named(QLineEdit(clearButtonEnabled=True), "programStaticValues")
        self.static_values.setPlaceholderText("static: n=3,4,4")
        self.static_values.setToolTip(
            "One call per value of a static argument instead of N equal calls: n=3,4,4 (by parameter name or user "
            "index; the name may be left out when the entry has one static argument). A changed value compiles "
            "again and the compile log says why. Several at once, same length: n=3,4; m=1,2. Values are Python "
            "literals (3 · 2.5 · True · 'relu' · (2,3)); not with a sweep")
        self.bucket = named(QCheckBox("buckets"), "programBucket")
        self.bucket.setToolTip("Also run the sweep zero-padded to power-of-two sizes: one compile per bucket")
        self.live = named(QCheckBox("Live"), "programLive")
        self.live.setChecked(True)  # on by default (issue 41): an edit compiles for the IR views, never runs
        self.live.setToolTip(f"Live ({LIVE_SHORTCUT}): half a second after an edit, trace, lower and compile it "
                             "on the compute thread and show the jaxpr, StableHLO and HLO with what changed "
                             "since the last good compile — never run (Run times it). While the code does not "
                             "parse or trace, the error is on its line and the views keep the last good result")

    def _build_message(self) -> None:
        """The editor, the status line under it and the Discard restored edits button."""
        self.editor = CodeEditor()
        self.status = QLabel("")
        self.status.setObjectName("programStatus")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.status.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.status.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self._status_lines(STATUS_LINES)
        self.discard_button = named(QPushButton("Discard restored edits"), "programDiscardButton")
        self.discard_button.setAutoDefault(False)  # Enter in the panel still runs the program
        self.discard_button.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.discard_button.setToolTip("Drop the edits restored from the last session: the editor holds the "
                                       "saved file again (Ctrl+Z in the editor brings them back)")
        self.discard_button.hide()

    def _layout(self) -> None:
        """Three rows of controls above the editor (the file and the entry point; the arguments, Live,
        Run and Stop; how it is called); the status line (and Discard) below it."""
        grid = QGridLayout()
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setHorizontalSpacing(6)
        grid.setVerticalSpacing(4)
        head = QHBoxLayout()
        head.addWidget(self.file_label, 1)
        head.addWidget(QLabel("entry"))
        head.addWidget(self.entry)
        grid.addLayout(head, 0, 0, 1, 2)
        args_row = QHBoxLayout()  # the arguments, then Run and Stop: the row below keeps room for the sweep
        args_row.addWidget(self.args, 1)
        args_row.addWidget(self.seed)
        self.seed.setMaximumWidth(self.seed.fontMetrics().horizontalAdvance("seed 00000") + 36)  # a wide seed scrolls
        args_row.addWidget(self.static_argnums)
        self.static_argnums.setMaximumWidth(self.static_argnums.fontMetrics().horizontalAdvance("static_argnums") + 40)
        args_row.addWidget(self.live)  # beside Run: live compiles as you type, Run times the program
        args_row.addWidget(self.run_button)
        args_row.addWidget(self.stop_button)
        grid.addLayout(args_row, 1, 0, 1, 2)
        row = QHBoxLayout()
        for w in (self.calls, self.mode, self.sweep, self.bucket, self.static_values):
            row.addWidget(w, 1 if w in (self.sweep, self.static_values) else 0)
        self.sweep.setMinimumWidth(self.sweep.fontMetrics().horizontalAdvance("sweep: 1:16") + 30)
        self.static_values.setMinimumWidth(self.static_values.fontMetrics().horizontalAdvance("static: n=3,4") + 30)
        grid.addLayout(row, 2, 0, 1, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addLayout(grid)
        layout.addWidget(self.editor, 1)
        message = QHBoxLayout()  # the status line and, after a restore, the way to discard the restored edits
        message.setSpacing(6)
        message.addWidget(self.status, 1)
        message.addWidget(self.discard_button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addLayout(message)

    def add_under_editor(self, widget: QWidget) -> None:
        """Put ``widget`` between the editor and the status line (the app's compiles per call site)."""
        layout = self.layout()
        assert isinstance(layout, QVBoxLayout), "_layout's column"
        layout.insertWidget(layout.indexOf(self.editor) + 1, widget)

    def _connect(self) -> None:
        toggle = QShortcut(QKeySequence(LIVE_SHORTCUT), self, context=Qt.ShortcutContext.WidgetWithChildrenShortcut)
        toggle.activated.connect(self.live.toggle)
        self.run_button.clicked.connect(self.runRequested)
        self.stop_button.clicked.connect(self.stopRequested)
        self.discard_button.clicked.connect(self.discardRequested)
        self.args.returnPressed.connect(self.runRequested)
        self.sweep.returnPressed.connect(self.runRequested)
        self.static_values.returnPressed.connect(self.runRequested)
        self.static_argnums.returnPressed.connect(self.runRequested)

    # -- values -----------------------------------------------------------------------------------
    def values(self) -> dict[str, Any]:
        """``entry``, ``spec``, ``seed``, ``static`` (static argument indices as typed, ``"0,2"``; ``""``: the
        file's), ``n_calls``, ``mode`` (``"jit"``, ``"no-jit"``, ``"compare"``), ``sweep``, ``bucket``,
        ``static_values`` (the field's text, ``"n=3,4; m=1,2"``), ``live`` (compile each edit for the IR views)."""
        return {"entry": self.entry.currentText().strip(), "spec": self.args.text().strip(),
                "seed": self.seed.value(), "static": self.static_argnums.text().strip(),
                "n_calls": self.calls.value(), "mode": self.mode.currentData(), "sweep": self.sweep.text().strip(),
                "bucket": self.bucket.isChecked(), "static_values": self.static_values.text().strip(),
                "live": self.live.isChecked()}

    def set_values(self, values: dict[str, Any]) -> None:
        """Set the controls from :meth:`values`' keys (missing keys keep their value)."""
        if isinstance(values.get("entry"), str):
            self.entry.setCurrentText(values["entry"])
        if isinstance(values.get("spec"), str):
            self.args.setText(values["spec"])
        if isinstance(values.get("seed"), int):
            self.seed.setValue(values["seed"])
        if isinstance(values.get("static"), str):
            self.static_argnums.setText(values["static"])
        if isinstance(values.get("n_calls"), int):
            self.calls.setValue(values["n_calls"])
        i = self.mode.findData(values.get("mode"))
        if i >= 0:
            self.mode.setCurrentIndex(i)
        if isinstance(values.get("sweep"), str):
            self.sweep.setText(values["sweep"])
        if isinstance(values.get("bucket"), bool):
            self.bucket.setChecked(values["bucket"])
        if isinstance(values.get("static_values"), str):
            self.static_values.setText(values["static_values"])
        if isinstance(values.get("live"), bool):
            self.live.setChecked(values["live"])

    def set_entries(self, entries: list[tuple[str, str]], current: str = "") -> None:
        """The entry points ``(name, tool tip)`` of the loaded program; ``current`` stays picked if given."""
        keep = current or self.entry.currentText()
        self.entry.blockSignals(True)
        self.entry.clear()
        for i, (name, tip) in enumerate(entries):
            self.entry.addItem(name)
            self.entry.setItemData(i, tip, Qt.ItemDataRole.ToolTipRole)
        self.entry.setCurrentText(keep if keep else (entries[0][0] if entries else ""))
        self.entry.blockSignals(False)

    def set_file(self, name: str, path: str, modified: bool) -> None:
        self.file_label.setText(f"<b>{name}</b>{' •' if modified else ''}")
        self.file_label.setToolTip(path or "not saved yet: File ▸ Save as")

    def set_running(self, running: bool, live: bool = False) -> None:
        """``running``: a run is in progress (Run disabled, Stop enabled); ``live``: a live compile is (Run stays
        ready, Stop enabled: a trace stuck in the program's loop must be stoppable where the user looks)."""
        self.run_button.setEnabled(not running)
        self.stop_button.setEnabled(running or live)
        self.stop_button.setToolTip("Stop the live compile: its tracing ends at the program's next line (Esc)"
                                    if live and not running else
                                    "Stop the run, even inside a Python loop of the program (Esc)")

    # -- status -----------------------------------------------------------------------------------
    def _status_lines(self, lines: int) -> None:
        """The status line's height: ``lines`` lines, fixed (issue 55: a message that wrapped onto another line
        moved the editor by 14 px between two runs); a longer text is cut there, whole in its tool tip."""
        self.status.setFixedHeight(lines * self.status.fontMetrics().lineSpacing() + 4)

    def show_message(self, text: str) -> None:
        """A neutral status line (what ran, its figures): two lines at most, the whole text in the tool tip;
        clears the error mark."""
        self._status_lines(STATUS_LINES)
        self.editor.mark_error(0)
        self.status.setProperty("error", False)
        self.status.setStyleSheet("color: #37474f;")
        self.status.setText(text)
        self.status.setToolTip(text)

    def show_error(self, text: str, line: int = 0, details: str = "", inline: str = "") -> None:
        """An error in the program: ``text`` in red and, when ``line`` > 0, that line marked in the editor with
        ``inline`` (one line; default: ``text``'s first line) written on it."""
        self._status_lines(ERROR_LINES)
        self.editor.mark_error(line, inline or text)
        self.status.setProperty("error", True)
        self.status.setStyleSheet("color: #b71c1c;")
        self.status.setText(text)
        self.status.setToolTip(details[-3000:] if details else "")

    def error_text(self) -> str:
        return self.status.text() if self.status.property("error") else ""

    def offer_discard(self, on: bool, tip: str = "") -> None:
        """Show (``on``) or hide the Discard restored edits button beside the status line; ``tip``: its tool
        tip (what it puts back)."""
        if tip:
            self.discard_button.setToolTip(tip)
        self.discard_button.setVisible(on)

    def discard_offered(self) -> bool:
        return not self.discard_button.isHidden()
