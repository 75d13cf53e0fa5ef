"""Presentation mode keeps the plot on half the window whatever the race (issue 55): the race summary beside it
takes at most 40 % of the window's width — two lanes whole in a talk's font, three whole in a smaller one (never
under 62.5 % of it), five or six (they took 76 % of the width at 1280×720, the plot 19 % of the window)
scrolling sideways with every row shown. The summary's rows are set as a race's end sets them; nothing runs."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication  # noqa: E402

MODES = ("torch", "torchax-eager", "jit-dynamic", "jit-static", "jit-loop", "torch-compile")


def _settle(qtbot) -> None:
    for _ in range(5):
        QApplication.processEvents()
    qtbot.wait(30)


def test_the_plot_keeps_half_the_window_beside_a_race_of_six_lanes(qtbot, make_window, gui_model):
    from app.gui.menus import MODE_COLOURS

    win = make_window(gui_model, autoload=False, size=(1280, 720))
    demo, plot = win.demo, win.ui.plot
    try:
        talk = None
        for n in (2, 3, 4, 5, 6):
            rows = [{"mode": mode, "reason": "done", "ttft_ms": 3390.0, "compile_ms": 12345.6,
                     "steady_ms_per_token": 7.81, "speedup_vs_torch": 1.23, "speedup_ci": (1.1, 1.4)}
                    for mode in MODES[:n]]
            demo.stage_table.set_rows(rows, MODE_COLOURS)
            demo.presentation_action.trigger()
            _settle(qtbot)
            table = demo.stage_table
            talk = talk or table.font().pointSizeF()  # two lanes: the talk's font
            try:
                assert demo.stage_card.isVisible()
                share = plot.width() * plot.height() / (win.width() * win.height())
                assert share >= 0.5, (n, plot.width(), plot.height(), demo.stage_card.width())
                assert demo.stage_card.width() <= 0.4 * win.width(), (n, demo.stage_card.width())
                assert not table.verticalScrollBar().isVisible()  # every row shown
                bar = table.horizontalScrollBar()
                assert table.font().pointSizeF() >= 0.625 * talk - 0.01, (n, table.font().pointSizeF(), talk)
                assert (table.font().pointSizeF() == talk) == (n == 2), (n, table.font().pointSizeF())
                if n <= 3:  # whole: two in the talk's font, three in a smaller one (four: at the edge)
                    assert not bar.isVisible() and table.width() >= table.content_width(), n
                elif n >= 5:  # the rest a scroll away, under every row
                    assert bar.isVisible() and bar.maximum() > 0
                    assert table.viewport().height() >= table.content_height() - table.horizontalHeader().height() - 4
            finally:
                demo.presentation_action.trigger()
                _settle(qtbot)
            assert table.styleSheet() == "" and table.font().pointSizeF() < talk  # the window's own font again
    finally:
        win.close()
