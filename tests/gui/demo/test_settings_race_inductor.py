"""An Inductor mode races beside XLA's settings in the window (issue 40): its lane is a torch-compile run, its point
joins the trade-off plot with its compile split, and Compare passes… offers only the XLA settings (an Inductor lane
has no XLA pass pipeline). Real engine on the suite's tiny random Llama (``model_dirs``): the lane builds every
Inductor kernel cold (the race turns Inductor's disk caches off: the subject), and the model is not the subject, so
the smallest one that compiles (2 layers, the built-in pydoc-llama's 4) keeps Inductor's lowering and codegen short."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from test_settings_race_window import race_settings, wait_done  # noqa: E402

WINDOW_TOKENS = 6


@pytest.fixture
def window(make_window, model_dirs):
    """The window on the tiny random Llama (instead of conftest's window on pydoc-llama)."""
    win = make_window(model_dirs("llama"), tokens=WINDOW_TOKENS)
    yield win
    win.close()


def test_an_inductor_lane_is_a_torch_compile_point_on_the_plot(qtbot, window, model_dirs):
    sr = window.demo.settings_race
    race_settings(qtbot, window, ["default", "O1", "inductor-default"])
    wait_done(qtbot, window)
    assert [p.name for p in sr.plot.points] == ["default", "O1", "inductor-default"]
    # what the points are: the raced model, its step
    assert sr.shown.text() == f"points: model {model_dirs('llama')} | jit-static decode step"
    inductor = sr.plot.points[2]
    assert inductor.compile_ms > 0 and inductor.steady_ms > 0 and inductor.equal is True
    assert inductor.detail == {}  # Inductor's own phases: no XLA passes to split
    assert set(sr.plot.points[0].detail) == {"XLA passes", "codegen"}  # XLA's compile, split by its capture
    assert [run.mode for run in window.session.runs[-3:]] == ["default", "O1", "inductor-default"]
    assert sr.picker.names() == ["default", "O1"]  # where two settings part: XLA settings only
