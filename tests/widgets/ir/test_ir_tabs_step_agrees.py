"""Issue 55 flaw 5: the IR header and the Step buttons disagreed — "run 14 · jit-loop · decode" in the header while
the only Step button on screen was a program's entry point ("gpt2"): a program's step hid the model's step buttons,
and showing the model's decode left them hidden. The step a view shows is now always a visible, checked Step
button, and the header names the same step."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

JAXPR = "{ lambda ; a:f32[]. let b = sin a in (b,) }"


def _shown_step_buttons(tabs) -> list[str]:
    from PySide6.QtWidgets import QApplication

    QApplication.processEvents()  # a new step button is shown by the layout on the next event-loop turn
    return [name for name, b in tabs.step_buttons.items() if b.isVisible() and b.isChecked()]


def _tabs(qtbot):
    from widgets.ir.ir_tabs import IRTabs

    tabs = IRTabs()
    qtbot.addWidget(tabs)
    tabs.show()
    qtbot.waitExposed(tabs)
    return tabs


def test_a_model_step_after_a_programs_step_has_its_button_shown(qtbot):
    tabs = _tabs(qtbot)
    tabs.set_ir("gpt2", {"jaxpr": JAXPR, "hlo": "HloModule p"}, "run 13 · jit")
    assert _shown_step_buttons(tabs) == ["gpt2"]
    tabs.set_ir("decode", {"jaxpr": JAXPR, "hlo": "HloModule d"}, "run 14 · jit-loop")
    tabs.show_step("decode")
    assert tabs.origin_text() == "run 14 · jit-loop · decode"
    assert _shown_step_buttons(tabs) == ["decode"]  # not "gpt2" beside a header about decode
    tabs.show_step("gpt2")
    assert _shown_step_buttons(tabs) == ["gpt2"] and tabs.origin_text() == "run 13 · jit · gpt2"


def test_only_steps_with_ir_are_offered(qtbot):
    tabs = _tabs(qtbot)
    tabs.set_ir("decode", {"jaxpr": JAXPR}, "run 1 · jit")
    tabs.set_ir("selu", {"jaxpr": JAXPR}, "run 2 · jit")
    tabs.show_step("selu")
    assert _shown_step_buttons(tabs) == ["selu"]
    offered = {name for name, b in tabs.step_buttons.items() if b.isVisible() and b.isEnabled()}
    assert {"decode", "selu"} <= offered  # both can be gone back to
    assert _shown_step_buttons(tabs) == ["selu"]


def test_a_warm_run_is_named_with_the_run_that_compiled_its_ir(qtbot):
    """Runs 1–3 of jit-static: run 3 reuses run 1's compile of decode. The header names run 3, whose calls the IR
    ran, and run 1, whose compile made it ("run 3 · jit-static · decode (compiled in run 1)"); a new compile names
    its own run alone again (issue 55: the header said "run 1 · jit-static · decode" after run 3)."""
    tabs = _tabs(qtbot)
    tabs.set_ir("decode", {"jaxpr": JAXPR, "hlo": "HloModule d"}, "run 1 · jit-static")
    tabs.show_step("decode")
    tabs.name_origin("decode", "run 3 · jit-static", "run 1")
    assert tabs.origin_text() == "run 3 · jit-static · decode (compiled in run 1)"
    assert "compiled in run 1" in tabs.origin.toolTip()
    tabs.set_ir("decode", {"jaxpr": JAXPR, "hlo": "HloModule e"}, "run 4 · jit-static")
    assert tabs.origin_text() == "run 4 · jit-static · decode"
    tabs.name_origin("prefill", "run 4 · jit-static", "run 1")  # no IR of prefill: nothing to name
    assert tabs.origin_text() == "run 4 · jit-static · decode"
