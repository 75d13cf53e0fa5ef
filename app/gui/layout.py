"""Builds the main window's widgets and layout (no behaviour: :mod:`app.window` wires it)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFrame,
    QLabel,
    QMainWindow,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app.core.settings import DTYPES, MODE_HELP, MODES
from widgets.busy_indicator import BusyIndicator
from widgets.device_panel import DevicePanel
from widgets.generation_form import GenerationForm
from widgets.ir_tabs import IRTabs
from widgets.latency_plot import LatencyPlot
from widgets.model_picker import ModelPicker
from widgets.prompt_editor import PromptEditor
from widgets.stats_strip import StatsStrip
from widgets.token_view import TokenView


def _section(title: str) -> QLabel:
    label = QLabel(title.upper())
    label.setObjectName("sectionTitle")
    return label


def _card(*widgets: QWidget, title: str | None = None, stretch_last: bool = False) -> QFrame:
    frame = QFrame()
    frame.setObjectName("card")
    box = QVBoxLayout(frame)
    box.setContentsMargins(10, 8, 10, 10)
    box.setSpacing(6)
    if title:
        box.addWidget(_section(title))
    for i, w in enumerate(widgets):
        box.addWidget(w, 1 if stretch_last and i == len(widgets) - 1 else 0)
    return frame


class WindowParts:
    """Every widget of the main window, created and laid out into ``window``."""

    def __init__(self, window: QMainWindow) -> None:
        self.model_picker = ModelPicker()
        self.model_label = QLabel("no model loaded")
        self.model_label.setObjectName("modelLabel")
        self.model_label.setWordWrap(True)
        self.model_error = QLabel("")
        self.model_error.setObjectName("modelError")
        self.model_error.setWordWrap(True)
        self.model_error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.model_error.setVisible(False)
        self.model_warning = QLabel("")
        self.model_warning.setObjectName("modelWarning")
        self.model_warning.setWordWrap(True)
        self.model_warning.setVisible(False)
        self.form = GenerationForm(MODES, MODE_HELP, DTYPES)
        self.prompt = PromptEditor()
        self.device_panel = DevicePanel()
        self.stats = StatsStrip()
        self.tokens = TokenView()
        self.tokens.setObjectName("tokenView")
        self.plot = LatencyPlot()
        self.ir_tabs = IRTabs()
        self.status_label = QLabel("Ready")
        self.status_label.setObjectName("statusLabel")
        self.status_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.busy = BusyIndicator()
        self.details_button = QPushButton("Details…")
        self.details_button.setObjectName("detailsButton")
        self.details_button.setFlat(True)
        self.details_button.setVisible(False)
        self._lay_out(window)

    def _sidebar(self) -> QFrame:
        sidebar = QFrame()
        sidebar.setObjectName("sidebar")
        side = QVBoxLayout(sidebar)
        side.setContentsMargins(10, 10, 10, 10)
        side.setSpacing(10)
        title = QLabel("torchax <b>playground</b>")
        title.setObjectName("appTitle")
        side.addWidget(title)
        side.addWidget(
            _card(self.model_picker, self.model_label, self.model_warning, self.model_error, title="Model")
        )
        side.addWidget(_card(self.form, title="Generation"))
        side.addWidget(_card(self.device_panel, title="Devices"))
        side.addWidget(_card(self.prompt, title="Prompt", stretch_last=True), 1)
        sidebar.setMinimumWidth(330)
        sidebar.setMaximumWidth(440)
        return sidebar

    def _lay_out(self, window: QMainWindow) -> None:
        sidebar = self._sidebar()
        token_card = _card(self.stats, self.tokens, title="Token stream", stretch_last=True)
        plot_card = _card(self.plot, title="Latency per call", stretch_last=True)
        ir_card = _card(self.ir_tabs, title="What JAX sees", stretch_last=True)
        self.top_split = QSplitter(Qt.Orientation.Horizontal)
        self.top_split.setObjectName("topSplit")
        self.top_split.addWidget(token_card)
        self.top_split.addWidget(plot_card)
        self.top_split.setSizes([520, 640])
        self.main_split = QSplitter(Qt.Orientation.Vertical)
        self.main_split.setObjectName("mainSplit")
        self.main_split.addWidget(self.top_split)
        self.main_split.addWidget(ir_card)
        self.main_split.setSizes([430, 420])
        self.outer_split = QSplitter(Qt.Orientation.Horizontal)
        self.outer_split.setObjectName("outerSplit")
        self.outer_split.addWidget(sidebar)
        self.outer_split.addWidget(self.main_split)
        self.outer_split.setStretchFactor(1, 1)
        self.outer_split.setSizes([350, 1250])
        window.setCentralWidget(self.outer_split)

        bar = window.statusBar()
        bar.addWidget(self.status_label, 1)
        bar.addPermanentWidget(self.details_button)
        bar.addPermanentWidget(self.busy)

    def splitters(self) -> dict[str, QSplitter]:
        return {"top": self.top_split, "main": self.main_split, "outer": self.outer_split}
