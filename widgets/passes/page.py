"""The Passes tab's page (:class:`PassesPage`): Record with its step, fusion-log and XLA-flags options and
Compare…, the status line and find field, the compile-time bar, the pass list over the instruction-count chart,
and the detail tabs (the selected snapshot's HLO diff, the fusions, XLA:GPU's pipelines). Widgets only: the
panel (:mod:`app.gui.panels.passes`) fills and answers them. GUI thread only."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.core.inspect.views import STEP_CHOICES
from widgets.common.splitters import splitter
from widgets.common.typed_qt import named
from widgets.ir.code_view import CodeView
from widgets.ir.hlo_diff import HloDiff
from widgets.passes.compile_bar import CompileBar
from widgets.passes.fusion_table import FusionTable
from widgets.passes.pass_chart import PassChart
from widgets.passes.pass_list import PassList

RECORD_TIP = ("Compile the step again with XLA's per-pass dumps under the profiler: every pass's time and "
              "every snapshot of the module (Ctrl+Shift+X)")


class PassesPage(QWidget):
    """The page's widgets, as attributes: ``button`` (Record), ``step``, ``fusion_log``, ``flags``, ``compare``,
    ``status``, ``find``, ``found``, ``compile_bar``, ``pass_list``, ``chart``, ``snapshot``, ``diff``,
    ``fusions``, ``detail`` (the tabs), ``extras_view`` (tab ``extras_index``: the backend's extra compile facts,
    hidden until a recording has them, titled by them: XLA:GPU's) and
    ``split``."""

    find: QLineEdit  # the find box: the window reads it by this name, which hides QWidget.find(WId) (unused)

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("passesPage")
        self._controls()
        self._panes()

    def _controls(self) -> None:
        self.button = named(QPushButton("Record"), "passesRecord")
        self.button.setToolTip(RECORD_TIP)
        self.step = named(QComboBox(), "passesStep")
        self.step.setToolTip("The compiled step whose passes are recorded")
        self.step.addItems(list(STEP_CHOICES))
        self.fusion_log = named(QCheckBox("Fusion log"), "passesFusionLog")
        self.fusion_log.setToolTip("Also record XLA's fusion decisions with their reasons (compiles in a "
                                   "child process: a few seconds more)")
        self.status = named(QLabel("Run the prompt, then Record: XLA's ~110 passes, step by step."),
                            "passesStatus")
        self.status.setMinimumWidth(80)
        self.flags = named(QLineEdit(), "passesXlaFlags")
        self.flags.setPlaceholderText("XLA flags: --xla_cpu_enable_fast_math=true")
        self.flags.setToolTip("Record the step compiled with these XLA options (--xla_name=value, space "
                              "separated). XLA checks each flag first: an unknown flag is refused by name.")
        self.flags.setClearButtonEnabled(True)
        self.flags.setMinimumWidth(120)
        self.flags.setMaximumWidth(260)
        self.compare = named(QPushButton("Compare…"), "passesCompare")
        self.compare.setToolTip("Compare the last two recordings: counts side by side and the diff of their "
                                "final modules (prefill vs decode, two modes, or two flag sets)")
        self.compare.setEnabled(False)
        self.find = named(QLineEdit(), "passesFind")  # pyright: ignore[reportIncompatibleMethodOverride]
        self.find.setPlaceholderText("Find in snapshots: fusion.12")
        self.find.setToolTip("Where does an instruction first appear? Enter: the first snapshot defining it "
                             "(or containing the text), its pass and line")
        self.find.setClearButtonEnabled(True)
        self.find.setMaximumWidth(260)
        self.find.setMinimumWidth(150)
        self.found = named(QLabel(""), "passesFound")
        self.found.setWordWrap(True)
        self.bar = bar = QHBoxLayout()
        bar.setSpacing(6)
        for w in (self.button, self.step, self.fusion_log, self.flags, self.compare):
            bar.addWidget(w)
        bar.addWidget(self.status, 1)
        bar.addWidget(self.find)

    def _panes(self) -> None:
        self.compile_bar = CompileBar()
        self.compile_bar.setToolTip("")
        self.pass_list = PassList()
        self.chart = PassChart()
        self.chart.setMinimumHeight(64)  # a short Code workspace still fits the tab
        left = splitter(Qt.Orientation.Vertical, self.pass_list, self.chart, sizes=[300, 130], stretch=[3, 1],
                        name="passesLeftSplit")

        self.snapshot = named(QComboBox(), "passesSnapshot")
        self.snapshot.setToolTip("Any snapshot of the module: before optimization, after each pass that "
                                 "changed it, the final module")
        self.snapshot.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.snapshot.setMinimumContentsLength(24)
        self.diff = HloDiff()
        diff_page = QWidget()
        d = QVBoxLayout(diff_page)
        d.setContentsMargins(4, 4, 4, 4)
        d.setSpacing(2)
        row = QHBoxLayout()
        row.addWidget(QLabel("Snapshot"))
        row.addWidget(self.snapshot, 1)
        row.addWidget(self.diff.whole)  # beside the snapshot list: the diff's title gets the whole width
        d.addLayout(row)
        d.addWidget(self.found)
        d.addWidget(self.diff, 1)
        self.fusions = FusionTable()
        self.detail = named(QTabWidget(), "passesDetail")
        self.detail.addTab(diff_page, "HLO diff")
        self.detail.addTab(self.fusions, "Fusions")
        # the backend's extra compile facts (XLA:GPU's pipelines, autotuning and thunk sequence): shown, and titled,
        # by the panel for a recording that has them
        self.extras_view = CodeView()
        self.extras_view.setObjectName("passesExtrasView")
        self.extras_index = self.detail.addTab(self.extras_view, "XLA:GPU")
        self.detail.setTabVisible(self.extras_index, False)

        self.split = splitter(Qt.Orientation.Horizontal, left, self.detail, sizes=[570, 690], stretch=[2, 3],
                              name="passesSplit")

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.setSpacing(4)
        layout.addLayout(self.bar)
        layout.addWidget(self.compile_bar)
        layout.addWidget(self.split, 1)
