"""The window below 1280×720 (issue 37, the random walk's "plot squeezed" flaw): a 921×453 window (the walk's
resize on a 1280×720 screen) squeezed the latency plot to 134×331 px, the sidebar and the prompt column keeping
their widths, and the stats strip's cards were drawn over each other. The plot has a minimum size the layout
keeps, so the window is not made smaller than that; on a 1024×600 screen the window still fits, maximized, with
the plot, Run and Stop, and the stats strip whole. Each size runs in its own process on an offscreen screen of
that size (Qt's offscreen platform reads the screen from a config file)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.conftest import run_on_screen

SCRIPT = textwrap.dedent("""
    import json, sys
    from PySide6.QtWidgets import QApplication, QFrame
    from app.gui.main import configure_application
    app = QApplication([])
    configure_application(app)
    from app.gui.user_settings import UserSettings
    from app.gui.window import MainWindow
    from widgets.plot.latency_plot import MIN_SIZE

    want_w, want_h, maximize, workspace = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "max", sys.argv[4]
    win = MainWindow(settings=UserSettings(model="pydoc-llama"), autoload=False)
    win.resize(1280, 720)
    win.show()
    for _ in range(10):
        app.processEvents()
    win.workspaces.show(workspace)
    if maximize:
        win.showMaximized()
    else:
        win.setGeometry(0, 0, want_w, want_h)
    for _ in range(20):
        app.processEvents()
    ui = win.ui
    tiles = [w for w in ui.stats.findChildren(QFrame) if w.isVisible() and w.parent() is ui.stats]
    rects = [t.geometry() for t in tiles]  # the stats strip's cards
    overlap = [(a.getRect(), b.getRect()) for i, a in enumerate(rects) for b in rects[:i] if a.intersects(b)]
    def whole(w):
        return w.isVisible() and w.width() >= w.minimumSizeHint().width() and w.height() >= w.minimumSizeHint().height()
    screen = win.screen().availableGeometry()
    bar = ui.ir_tabs.tabs.tabBar()  # the IR tabs' titles, whole (issue 37: "Pas" in the Code workspace)
    cut_tabs = [bar.tabText(i) for i in range(bar.count())
                if bar.tabRect(i).width() < bar.fontMetrics().horizontalAdvance(bar.tabText(i))]
    print(json.dumps({"window": win.size().toTuple(), "screen": screen.size().toTuple(),
                      "on_screen": screen.contains(win.frameGeometry()),
                      "plot": ui.plot.size().toTuple(), "min": list(MIN_SIZE),
                      "run": whole(ui.prompt.run_button), "stop": whole(ui.prompt.stop_button),
                      "stats": ui.stats.height() >= ui.stats.minimumSizeHint().height(), "overlap": overlap,
                      "cut_tabs": cut_tabs, "workspace_min": win.layout().totalMinimumSize().toTuple()}))
    win.close()
""")


def window_at(tmp_path: Path, screen: tuple[int, int], size: tuple[int, int] | None, workspace: str = "Run") -> dict:
    w, h = size or (0, 0)
    return run_on_screen(tmp_path, screen, SCRIPT, str(w), str(h), "max" if size is None else "set", workspace)


@pytest.mark.parametrize(("screen", "size"), [((1280, 720), (921, 453)), ((1280, 720), (768, 432)),
                                              ((1024, 600), None), ((1152, 648), (700, 400))])
def test_a_small_window_keeps_the_plot_and_the_controls_whole(tmp_path, screen, size):
    got = window_at(tmp_path, screen, size)
    assert got["plot"][0] >= got["min"][0] and got["plot"][1] >= got["min"][1], got
    assert got["on_screen"], got
    assert got["run"] and got["stop"] and got["stats"], got
    assert not got["overlap"], got


def test_the_code_workspace_fits_a_1280x720_screen_with_its_tabs_whole(tmp_path):
    """The Passes page's width (732 px, in a scroll area that only scrolled up and down) made every IR view's
    minimum, and the Code workspace's 1,354 px: wider than the screen, the tabs cut to "Pas"."""
    got = window_at(tmp_path, (1280, 720), None, "Code")
    assert got["workspace_min"][0] <= 1280, got
    assert got["plot"][0] >= got["min"][0] and got["plot"][1] >= got["min"][1], got
    assert not got["cut_tabs"], got


def test_the_model_label_names_its_dtype_once(qtbot, make_window, gui_model):
    """The GGUF model's label already ends with its dtype ("SmolLM2-135M-Instruct · Q4_1 → float32"): the
    sidebar said "… → float32 · float32", wrapped onto two lines at 1280×720."""
    from app.core.session.requests import LoadRequest, ModelLoaded

    win = make_window(gui_model, autoload=False)
    try:
        win._on_loaded(ModelLoaded(LoadRequest(gui_model), "SmolLM2-135M-Instruct · Q4_1 → float32", "m", 0.0))
        assert win.ui.model_label.text().count("float32") == 1, win.ui.model_label.text()
        win._on_loaded(ModelLoaded(LoadRequest(gui_model, dtype="bfloat16"), "pydoc-llama", "m", 0.0))
        assert win.ui.model_label.text() == "<b>pydoc-llama</b> · bfloat16"
    finally:
        win.close()


PRESENT = textwrap.dedent("""
    import json
    from PySide6.QtWidgets import QApplication
    from app.gui.main import configure_application
    app = QApplication([])
    configure_application(app)
    from app.gui.user_settings import UserSettings
    from app.gui.window import MainWindow

    def settle():
        for _ in range(30):
            app.processEvents()

    win = MainWindow(settings=UserSettings(model="pydoc-llama"), autoload=False)
    win.show()
    settle()
    win.setGeometry(253, 65, 1027, 590)
    settle()
    before = win.geometry().getRect()
    win.demo.presentation_action.trigger()
    settle()
    win.resize(1027, 690)  # as X11 did: the larger fonts' minimum (offscreen fonts do not reach it)
    settle()
    during = win.geometry().getRect()
    win.demo.presentation_action.trigger()
    settle()
    print(json.dumps({"before": before, "during": during, "after": win.geometry().getRect()}))
    win.close()
""")


def test_presentation_off_gives_a_small_window_its_size_back(tmp_path):
    """The walk (seed 302, 1280×720): presentation's larger fonts raised the window's minimum, a 1027×590 window
    grew to 1027×690 and stayed so when presentation went off."""
    got = run_on_screen(tmp_path, (1280, 720), PRESENT)
    assert got["during"][3] == 690 and got["after"] == got["before"], got
