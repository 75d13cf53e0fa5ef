"""The crash dialog: what failed and whose code it was, the whole report (traceback or ``faulthandler``
dump, versions, backend, ``XLA_FLAGS``, last actions) and **Copy report**. It says where the report is kept
and that nothing is uploaded. Non-modal: the window stays usable behind it; later errors are added to the open
dialog instead of opening more. GUI thread only."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.core.crash.report import CrashReport


class CrashDialog(QDialog):
    """Shows one or more :class:`CrashReport` s. ``previous``: the report of a previous run that crashed,
    offered at start. :meth:`report_text` is what **Copy report** copies (every report shown, newest last)."""

    def __init__(self, parent: QWidget | None = None, previous: bool = False) -> None:
        super().__init__(parent)
        self.setObjectName("crashDialog")
        self.setWindowTitle("torchax playground — previous run crashed" if previous
                            else "torchax playground — error")
        self.previous = previous
        self.reports: list[tuple[str, Path | None]] = []  # (report text, where it is saved)
        self.first: tuple[str, bool, str] = ("", False, "")  # the first report's headline, user's fault, time
        self.headline = QLabel()
        self.headline.setObjectName("crashHeadline")
        self.headline.setWordWrap(True)
        self.headline.setStyleSheet("font-weight: 600;")
        self.note = QLabel()
        self.note.setObjectName("crashNote")
        self.note.setWordWrap(True)
        self.text = QPlainTextEdit()
        self.text.setObjectName("crashReport")
        self.text.setReadOnly(True)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        buttons = QDialogButtonBox()
        self.copy_button = QPushButton("&Copy report")
        self.copy_button.setObjectName("copyReportButton")
        self.copy_button.setToolTip("Copy the whole report to the clipboard (paste it into an issue yourself)")
        self.copy_button.clicked.connect(self.copy_report)
        buttons.addButton(self.copy_button, QDialogButtonBox.ButtonRole.ActionRole)
        close = buttons.addButton(QDialogButtonBox.StandardButton.Close)
        close.setText("&Continue" if not previous else "&Close")
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.headline)
        layout.addWidget(self.note)
        layout.addWidget(self.text, 1)
        layout.addWidget(buttons)
        self.resize(760, 520)

    def add(self, report: CrashReport, path: Path | None) -> None:
        """Show ``report`` (saved at ``path``; None: it could not be saved); a second one is appended."""
        self._add(report.headline, report.text(), path, report.user is not None, report.when)

    def add_saved(self, path: Path) -> None:
        """Show a report saved earlier (a previous run's, offered at start)."""
        text = path.read_text(encoding="utf-8", errors="replace")
        lines = text.splitlines()
        what = next((x.removeprefix("what: ") for x in lines if x.startswith("what: ")), path.name)
        when = next((x.removeprefix("when: ") for x in lines if x.startswith("when: ")), "")
        self._add(what, text, path, any(x.startswith("your file: ") for x in lines), when)

    def _add(self, headline: str, text: str, path: Path | None, users: bool, when: str) -> None:
        self.reports.append((text, path))
        n = len(self.reports)
        if n == 1:
            self.first = (headline, users, when)
        headline, users, when = self.first
        more = f" (and {n - 1} more error{'s' if n > 2 else ''} since)" if n > 1 else ""
        self.headline.setText((f"The previous run crashed ({when}). " if self.previous else "") + headline + more)
        if users:
            advice = "The fault is in your own program: see the line named above (the report has the whole trace)."
        elif self.previous:
            advice = "If it happens again, copy the report into an issue."
        else:
            advice = ("The app is still running; what you were doing may not have finished. Copy the report "
                      "into an issue if you think it is a bug in the app.")
        saved = [str(p) for _, p in self.reports if p]
        where = ("Saved on this machine (nothing is uploaded; `torchax-playground report --last` prints the "
                 "newest):\n" + "\n".join(saved)) if saved else "It could not be saved to disk; nothing is uploaded."
        self.note.setText(f"{advice}\n{where}")
        self.text.setPlainText(self.report_text())

    def report_text(self) -> str:
        """Every report shown, newest last, separated by a rule."""
        return ("\n" + "-" * 78 + "\n").join(text for text, _ in self.reports)

    def copy_report(self) -> None:
        QApplication.clipboard().setText(self.report_text())
        self.copy_button.setText("Copied ✓")
