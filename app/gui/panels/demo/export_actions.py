"""File ▸ Export's actions of the demo kit: the latency plot (PNG / SVG / PDF), the call records (CSV / JSON, with
the races' steady-state verdicts), the Markdown run report and the settings race's trade-off. The file dialog and
the status line are here; what is written is :mod:`app.gui.panels.demo.exports`'."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Slot
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog

from app.gui.panels.demo import exports
from widgets.plot.plot_export import export_plot

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMainWindow

    from app.core.session.model import RunState, Session
    from app.gui.context import DemoParts, WindowContext
    from app.gui.panels.demo.settings_race import SettingsRace


class ExportActions:
    """A base of :class:`app.gui.panels.demo.kit.DemoKit` (which sets the fields declared here); GUI thread."""

    ctx: WindowContext
    parts: DemoParts
    host: QMainWindow
    session: Session
    settings_race: SettingsRace
    _export_dir: Path

    sender: Callable[[], Any]  # QObject's
    _status: Callable[[str], None]  # the kit's: a status line

    @property
    def runs(self) -> list[RunState]:
        """The runs shown on the plot, oldest first (the session's)."""
        return self.session.runs

    @Slot()
    def _on_export(self) -> None:
        action = self.sender()
        assert isinstance(action, QAction), "File ▸ Export's actions call this"
        filt, default, method = action.data()
        title = f"Export {action.text().rstrip('…')}"
        path, _ = QFileDialog.getSaveFileName(self.host, title, str(self._export_dir / default), filt)
        if not path:
            return
        path = Path(path)
        path = path if path.suffix else path.with_suffix(Path(default).suffix)
        self._export_dir = path.parent
        try:
            self._status(getattr(self, method)(path))
        except (OSError, ValueError) as exc:
            self.ctx.status.error(f"Export failed: {exc}")

    def export_plot(self, path: Path) -> str:
        """Write the latency plot as PNG, SVG or PDF (by suffix; its verdict line included); returns a status
        line."""
        return f"Exported the plot to {export_plot(self.parts.plot, path)}"

    def plot_verdicts(self) -> list[dict[str, Any]]:
        """The steady-state verdicts of the races on the plot, oldest first (their JSON form)."""
        return exports.plot_verdicts(self.session.race_verdicts, self.runs)

    def export_records(self, path: Path) -> str:
        """Write the call records of the shown runs as CSV or JSON (by suffix; JSON carries the model, modes,
        mesh, machine and the races' verdicts as ``metadata``; a CSV has its verdicts in ``<stem>-verdicts.csv``)."""
        loaded = self.session.loaded
        model = f"{loaded.label} ({loaded.request.model})" if loaded else ""
        dtype = loaded.request.dtype if loaded else ""
        generation = self.parts.form.values()
        verdicts = self.plot_verdicts()
        meta = exports.run_metadata(self.runs, model, dtype, self.session.mesh, generation, verdicts)
        n = exports.save_records(path, self.runs, meta)
        beside = exports.save_verdicts_csv(path, verdicts) if path.suffix.lower() != ".json" else None
        return f"Exported {n} call records to {path}" + (f" (verdicts: {beside.name})" if beside else "")

    def export_tradeoff(self, path: Path) -> str:
        """Write the settings race's trade-off plot (PNG / SVG / PDF) or its points (CSV / JSON)."""
        return self.settings_race.export(path)

    def export_report(self, path: Path) -> str:
        """Write the Markdown run report (its races' verdicts included) and the plot PNG next to it."""
        model = self.host.windowTitle().split("—")[-1].strip()
        png = exports.save_report(path, self.runs, self.parts.plot, model, self.parts.prompt.prompt(),
                                  self.plot_verdicts())
        return f"Exported the run report to {path} (plot: {png.name})"
