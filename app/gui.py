"""Start the desktop app: ``python -m app.gui`` or ``torchax-playground`` without a subcommand."""

from __future__ import annotations

import sys
from pathlib import Path

STYLE = Path(__file__).resolve().parents[1] / "assets" / "style.qss"


def main(argv: list[str] | None = None) -> int:
    """Create the QApplication, show the window on the remembered (or built-in) model, run the loop."""
    import pyqtgraph as pg
    from PySide6.QtWidgets import QApplication

    argv = list(sys.argv if argv is None else [sys.argv[0], *argv])
    app = QApplication.instance() or QApplication(argv)
    app.setApplicationName("torchax-playground")
    app.setStyle("Fusion")
    pg.setConfigOptions(antialias=True, background="w", foreground="#374151")
    if STYLE.exists():
        app.setStyleSheet(STYLE.read_text(encoding="utf-8"))

    from app.window import MainWindow

    window = MainWindow()
    window.show()
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
