"""CI smoke check: open the window offscreen on pydoc-llama, wait for the model to load, run the prompt once,
then close. Exits non-zero (with the status line) when the model does not load or the run records nothing."""

from __future__ import annotations

import os
import sys
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def main() -> int:
    from PySide6.QtWidgets import QApplication

    from app.gui.main import configure_application
    from app.gui.user_settings import UserSettings
    from app.gui.window import MainWindow

    app = QApplication.instance() or QApplication([sys.argv[0]])
    configure_application(app)
    win = MainWindow(
        settings=UserSettings(model="pydoc-llama", prompt="The jit function", generation={"max_new_tokens": 6}),
        autoload=True,
    )
    win.resize(1280, 720)
    win.show()

    def wait(what: str, done, timeout_s: float) -> None:
        start = time.monotonic()
        while not done():
            app.processEvents()
            time.sleep(0.01)
            if time.monotonic() - start > timeout_s:
                raise SystemExit(f"window smoke: {what} not done after {timeout_s:.0f} s; status: {win.status.text()!r}")

    wait("model load", lambda: win.loaded is not None and not win.is_busy(), 300)
    win.run()
    wait("run", lambda: len(win.session.runs) > 0 and not win.is_busy(), 300)
    print(f"window smoke: Python {sys.version.split()[0]}, model loaded, {len(win.session.runs)} run; "
          f"status: {win.status.text()}")
    win.close()
    app.processEvents()
    return 0


if __name__ == "__main__":
    sys.exit(main())
