"""File ▸ Compare two runs…: two recorded runs side by side with a verdict (issue 58), on the same core service as
``torchax-playground compare`` (:func:`app.core.compare.runs.compare_runs`): the verdict line first, then the
report (:func:`app.core.compare.report.report_html`, without its SVG plots, which Qt's rich text does not draw,
and without its verdict heading, which the dialog shows above it);
**Save report…** writes the whole page (plots included) to share. The runs are those on the plot (the open
sessions' and this window's) and those of session files picked in the dialog (**Open session files…**). No JAX
or torch. GUI thread only."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt, Slot
from PySide6.QtGui import QAction, QGuiApplication
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app.core.compare.report import report_html, write_report
from app.core.compare.runs import compare_runs
from app.core.errors import SessionFileError
from app.core.recording import RecordedRun, load_all
from app.core.recording.store import SUFFIX
from app.gui.menus import find_menu, insert_before
from widgets.common.typed_qt import named

if TYPE_CHECKING:
    from app.gui.panels.sessions.files import SessionFiles

FILTER = f"torchax-playground session (*{SUFFIX})"
HTML_FILTER = "HTML page (*.html *.htm)"


@dataclass
class Choice:
    """A run the dialog can compare: ``source`` (``""`` for the plot's, else the session file's path) and the
    race verdicts recorded with it (those of its file, or the window's for the plot's runs)."""

    run: RecordedRun
    source: str = ""
    verdicts: list[dict[str, Any]] = field(default_factory=list)

    @property
    def text(self) -> str:
        where = f" — {Path(self.source).name}" if self.source else ""
        return f"{self.run.label} · {self.run.machine}{where}"


class CompareRunsDialog(QDialog):
    """Two runs picked in combo boxes (A, B), the verdict line in bold and the comparison below it; **Open session
    files…** adds the runs of ``.session`` files to the choices (and compares the first two it adds);
    **Copy verdict**, **Save report…** (``on_save`` asks the path and writes). ``doc``: the comparison shown
    (:func:`app.core.compare.runs.compare_runs`'s dict), None until two runs are picked."""

    def __init__(self, choices: list[Choice], parent: QWidget | None = None, start_dir: Path | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("compareRunsDialog")
        self.setWindowTitle("Compare two runs")
        self.choices: list[Choice] = []
        self.doc: dict[str, Any] | None = None
        self.start_dir = start_dir or Path.home()
        self.a, self.b = named(QComboBox(), "compareRunA"), named(QComboBox(), "compareRunB")
        for combo in (self.a, self.b):
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(24)
        self.open_button = named(QPushButton("Open session files…"), "compareOpenFiles")
        self.open_button.setToolTip("Add the runs of one or two .session files (a colleague's, yesterday's) to "
                                    "the choices")
        self.verdict = named(QLabel(), "compareVerdict")
        self.verdict.setWordWrap(True)
        self.verdict.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        font = self.verdict.font()
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.15)
        self.verdict.setFont(font)
        self.view = named(QTextBrowser(), "compareReportView")
        self.view.setOpenLinks(False)
        self.copy_button = named(QPushButton("Copy verdict"), "compareCopyVerdict")
        self.save_button = named(QPushButton("Save report…"), "compareSaveReport")
        self.save_button.setToolTip("Write the comparison as one self-contained HTML page (plots inline as SVG)")
        bar = QHBoxLayout()
        for w in (QLabel("A"), self.a, QLabel("vs B"), self.b):
            bar.addWidget(w, 1 if isinstance(w, QComboBox) else 0)
        bar.addWidget(self.open_button)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.addButton(self.copy_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.save_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(self.verdict)
        layout.addWidget(self.view, 1)
        layout.addWidget(buttons)
        self.copy_button.clicked.connect(self.copy_verdict)
        self.save_button.clicked.connect(self.save_dialog)
        self.open_button.clicked.connect(self.open_dialog)
        self.add_choices(choices)
        n = len(self.choices)
        self.a.setCurrentIndex(max(n - 2, 0))
        self.b.setCurrentIndex(n - 1)
        self.a.currentIndexChanged.connect(self.refresh)
        self.b.currentIndexChanged.connect(self.refresh)
        self._fit()
        self.refresh()

    def _fit(self) -> None:
        """As large as the window it opens on allows, at most 1100×760 (a 1280×720 window: all of it less the
        frame)."""
        host = self.parentWidget()
        room = host.window().size() if host is not None else self.screen().availableGeometry().size()
        self.resize(min(1100, room.width() - 20), min(760, room.height() - 40))

    def add_choices(self, choices: list[Choice]) -> None:
        for choice in choices:
            self.choices.append(choice)
            for combo in (self.a, self.b):
                combo.addItem(choice.text)
                combo.setItemData(combo.count() - 1, choice.text, Qt.ItemDataRole.ToolTipRole)

    def pick(self, a: int, b: int) -> None:
        """Compare choices ``a`` and ``b`` (indexes)."""
        for combo, i in ((self.a, a), (self.b, b)):
            combo.blockSignals(True)
            combo.setCurrentIndex(i)
            combo.blockSignals(False)
        self.refresh()

    @Slot()
    def refresh(self) -> None:
        """Compare the picked runs (pure Python on this thread: a model's HLO diffs in well under a second)."""
        ia, ib = self.a.currentIndex(), self.b.currentIndex()
        ready = len(self.choices) >= 2 and ia >= 0 and ib >= 0
        self.save_button.setEnabled(ready)
        self.copy_button.setEnabled(ready)
        if not ready:
            self.doc = None
            self.verdict.setText("Pick two runs: run twice (a race's lanes count), open a session, or Open "
                                 "session files… here.")
            self.view.clear()
            return
        ca, cb = self.choices[ia], self.choices[ib]
        verdicts = ca.verdicts if ca.source == cb.source else []  # race numbers are one file's (or window's) own
        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            self.doc = compare_runs(ca.run, cb.run, verdicts)
        finally:
            QApplication.restoreOverrideCursor()
        same = " (the same run on both sides)" if ia == ib else ""
        self.verdict.setText(self.doc["verdict"] + same)
        self.view.setHtml(report_html(self.doc, plots=False, verdict=False))

    @Slot()
    def copy_verdict(self) -> None:
        if self.doc is not None:
            QGuiApplication.clipboard().setText(self.doc["verdict"])

    @Slot()
    def open_dialog(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self, "Open session files to compare", str(self.start_dir), FILTER)
        if paths:
            self.open_paths(paths)

    def open_paths(self, paths: list[str]) -> bool:
        """Add the runs of ``paths`` and compare the first two added (or the last choice against the first
        added). A bad file is named in the verdict line's place and adds nothing (False)."""
        wanted: list[str | os.PathLike] = list(paths)
        try:
            files = load_all(wanted)
        except SessionFileError as exc:
            self.verdict.setText(f"Cannot compare: {exc}")
            return False
        self.start_dir = Path(paths[0]).parent
        first = len(self.choices)
        self.add_choices([Choice(r, str(Path(p).resolve()), f.verdicts) for p, f in zip(paths, files) for r in f.runs])
        added = len(self.choices) - first
        if added >= 2:
            second = first + len(files[0].runs) if len(files) == 2 and files[0].runs and files[1].runs else first + 1
            self.pick(first, second)
        elif added == 1 and first > 0:
            self.pick(first - 1, first)
        else:
            self.refresh()
        return True

    @Slot()
    def save_dialog(self) -> None:
        if self.doc is None:
            return
        default = self.start_dir / "compare.html"
        path, _ = QFileDialog.getSaveFileName(self, "Save the comparison report", str(default), HTML_FILTER)
        if path:
            self.save(path)

    def save(self, path: str | Path) -> Path | None:
        """Write the report to ``path``; on an error, say so in the verdict line's tool tip and return None."""
        if self.doc is None:
            return None
        try:
            out = write_report(self.doc, path, time.strftime("%Y-%m-%d %H:%M"))
        except OSError as exc:
            self.save_button.setToolTip(f"Cannot write {path}: {exc.strerror or exc}")
            self.verdict.setText(f"{self.doc['verdict']}\n(Cannot write the report {path}: {exc.strerror or exc})")
            return None
        self.start_dir = out.parent
        self.save_button.setToolTip(f"Saved to {out}")
        return out


class CompareRuns(QObject):
    """File ▸ Compare two runs… (after File ▸ Diff IR of two runs…): the dialog on the plot's recorded runs and the
    window's race verdicts (``files``: the window's :class:`app.gui.panels.sessions.files.SessionFiles`)."""

    def __init__(self, files: SessionFiles) -> None:
        super().__init__(files)
        self.files = files
        self.dialog: CompareRunsDialog | None = None
        file = find_menu(files.host, "&File")
        actions = file.actions()
        after = actions.index(files.diff_action) + 1 if files.diff_action in actions else len(actions)
        self.action = QAction("Compare &two runs…", files.host)
        self.action.setToolTip("Two runs side by side with a verdict: steady speed with its interval, compile per "
                               "stage, the structural diff of their programs, tokens, versions and machine")
        self.action.triggered.connect(self.show)
        insert_before(file, actions[after] if after < len(actions) else None, (self.action,))

    @Slot()
    def show(self) -> CompareRunsDialog:
        runs = self.files.runs_on_plot()
        verdicts = self.files.live.verdicts_of(runs)
        dialog = CompareRunsDialog([Choice(r, "", verdicts) for r in runs], self.files.host)
        self.dialog = dialog
        dialog.show()
        if len(runs) < 2:
            dialog.open_dialog()
        if dialog.doc is not None:
            self.files.status.show(f"Compare: {dialog.doc['verdict']}")
        return dialog
