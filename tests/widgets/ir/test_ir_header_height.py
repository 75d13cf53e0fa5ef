"""The IR header's figures row (:class:`widgets.ir.header_labels.FiguresLabel`) keeps its height whatever its
figures (issue 55: it took 0–2 lines, so the IR tabs under it moved 14
px between two runs in the Code workspace's short IR card — the suite's walk, seed 197 step 13 — and 30 px in a
short window's "What JAX sees" dock)."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

JAXPR = "{ lambda ; a:f32[]. let b = sin a in (b,) }"
FIGURES = {"jaxpr": JAXPR, "cost": {"flops": 1.5e9, "bytes accessed": 3e6}, "memory": {"argument": 2e6, "output": 1e3,
           "temp": 5e5}, "n_equations": 1234, "n_stablehlo_ops": 2345, "n_hlo_instructions": 3456, "n_fusions": 45}


def test_the_ir_views_stay_put_whatever_the_figures_row_shows(qtbot):
    from PySide6.QtWidgets import QApplication, QVBoxLayout, QWidget

    from widgets.ir.ir_tabs import IRTabs

    card = QWidget()  # a short IR card: the Code workspace's, or a short dock's
    box = QVBoxLayout(card)
    tabs = IRTabs()
    box.addWidget(tabs)
    qtbot.addWidget(card)
    card.resize(520, 240)
    card.show()
    qtbot.waitExposed(card)

    def top() -> tuple[int, int]:
        QApplication.processEvents()
        return tabs.tabs.y(), tabs.summary.height()

    empty = top()
    tabs.set_ir("decode", {"jaxpr": JAXPR}, "run 1 · jit")  # no figures: an empty row
    assert top() == empty
    tabs.set_ir("decode", FIGURES, "run 2 · jit")  # figures on two lines in 520 px
    assert top() == empty
    tabs.set_ir("decode", {**FIGURES, "n_fusions": None, "cost": None, "memory": None}, "run 3 · jit")  # one line
    assert top() == empty


def test_the_figures_row_is_one_line_where_the_widest_figures_fit_and_two_where_they_do_not(qtbot):
    """Its height follows its width, never its text: one line in a wide IR view (the Inspect workspace at 1280×720,
    whose jaxpr view needs the line: tests/journeys journey's ≥ 30 lines), two in a narrow card."""
    from PySide6.QtWidgets import QApplication

    from widgets.ir.ir_tabs import IRTabs

    tabs = IRTabs()
    qtbot.addWidget(tabs)
    line = tabs.summary.fontMetrics().lineSpacing()
    heights = {}
    for width in (1260, 520):
        tabs.resize(width, 600)
        tabs.show()
        qtbot.waitExposed(tabs)
        for run, figures in enumerate(({"jaxpr": JAXPR}, FIGURES)):
            tabs.set_ir("decode", figures, f"run {run + 1} · jit")
            QApplication.processEvents()
            heights.setdefault(width, set()).add(tabs.summary.height())
    assert heights[1260] == {line + 4} and heights[520] == {2 * line + 4}, heights


def test_the_rows_template_names_the_figures_an_xla_step_shows_and_no_inductor_kernels(qtbot):
    """The template the row's height follows is made by the header's own summary from the IR-view catalog (no
    hand-written twin of its figure names): every figure a full XLA step shows, in that order, and not Inductor's
    kernels (two lines in the Inspect workspace at 1280×720 otherwise: its jaxpr view needs 30 lines)."""
    import re

    from widgets.ir.header_labels import plain
    from widgets.ir.ir_tabs import IRTabs, summary_text, widest_figures

    def names(html: str) -> list[str]:
        return [re.sub(r"\s*<b>.*", "", part).replace("&nbsp;", " ") for part in html.split(" · ")]

    template = widest_figures()
    assert names(template) == names(summary_text(FIGURES))
    assert "Inductor" not in plain(template) and "888" in plain(template)
    tabs = IRTabs()
    qtbot.addWidget(tabs)
    assert tabs.summary.template == template


def test_a_squeezed_figures_row_shows_whole_lines_only(qtbot):
    """In a dock too short for it (the Run workspace's "What JAX sees" at 1280×720: 6 px) the row shows the lines
    that fit whole, none under one line: the walk, seed 7, showed the top 6 px of a cut line over the IR tabs."""
    from PySide6.QtWidgets import QApplication, QWidget

    from widgets.ir.header_labels import FiguresLabel
    from widgets.ir.ir_tabs import summary_text

    card = QWidget()  # a child's mask is Qt's to honour (a window's is the platform's: offscreen has none)
    qtbot.addWidget(card)
    card.resize(520, 60)
    label = FiguresLabel(card)
    label.setContentsMargins(6, 0, 6, 2)  # as the IR header has it
    label.setText(summary_text(FIGURES))
    line = label.fontMetrics().lineSpacing()

    def inked_rows(height: int) -> list[int]:
        """The rows of the row's picture at ``height`` px with any pixel unlike its top-left corner's."""
        label.resize(520, height)
        card.show()
        qtbot.waitExposed(card)
        QApplication.processEvents()
        image = card.grab(label.geometry()).toImage()
        ground = image.pixel(0, 0)
        return [y for y in range(image.height()) if any(image.pixel(x, y) != ground for x in range(image.width()))]

    assert inked_rows(2 * line + 4), "two lines drawn at full height"
    assert inked_rows(6) == []  # under one line: nothing, not the top of a cut line
    one = inked_rows(line + line // 2)
    assert one and max(one) < line, (one, line)  # one and a half lines: the first whole, nothing of the second
