"""Every generation field says why it refuses or clamps a value, under the field (issue 55: Max new tokens 0,
Repetition penalty 0, Temperature 99999 and Top-p 7 were dropped or clamped without a word; KV cache 1 was
accepted and refused later in the status bar as "max_cache_len must be an integer >= 2")."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from app.core.errors import InvalidSettingsError
from app.core.settings import GenerationSettings


def _type(qtbot, field, text):
    field.setFocus()
    field.lineEdit().selectAll()
    qtbot.keyClicks(field.lineEdit(), text)
    qtbot.keyClick(field.lineEdit(), Qt.Key.Key_Return)


@pytest.mark.parametrize("name, typed, value, words", [
    ("max_new_tokens", "0", 1, "At least 1 — a run makes one new token or more. 0 was set to 1."),
    ("penalty", "0", 0.5, "At least 0.5 — lower boosts repeats until the text loops (1.0 = off). 0 was set to 0.50."),
    ("temperature", "99999", 5.0, "At most 5 — hotter samples close to uniformly: noise. 99,999 was set to 5.00."),
    ("top_p", "7", 1.0, "At most 1 — top-p is a share of the probability mass"),
    ("cache_len", "1", 2, "At least 2 — the prompt's last token and one new token (0 = auto). "
                          "1 was set to 2."),
])
def test_a_refused_value_is_explained_under_its_field(qtbot, make_window, gui_model, name, typed, value, words):
    win = make_window(gui_model, autoload=False, size=(1280, 720))
    form = win.ui.form
    form.sample.setChecked(True)
    field = getattr(form, name)
    _type(qtbot, field, typed)
    assert field.value() == pytest.approx(value)
    qtbot.waitUntil(lambda: field.note.isVisible())
    assert words in field.note.text()
    assert "_" not in field.note.text()  # the window's words, no attribute names
    # the value the run gets is the one the field shows, and the core accepts it
    settings = {k: v for k, v in form.values().items() if k != "dtype"}
    GenerationSettings(**settings).validated()
    _type(qtbot, field, "2" if name != "top_p" else "0.5")  # an allowed value clears the note
    qtbot.waitUntil(lambda: not field.note.isVisible())


def test_a_value_typed_then_run_by_keyboard_is_read_and_explained(qtbot, make_window, gui_model):
    win = make_window(gui_model, autoload=False, size=(1280, 720))
    form = win.ui.form
    form.max_new_tokens.lineEdit().selectAll()
    qtbot.keyClicks(form.max_new_tokens.lineEdit(), "0")  # no Enter, no focus change: Ctrl+Enter reads the form
    assert form.values()["max_new_tokens"] == 1
    assert "0 was set to 1" in form.max_new_tokens.note.text()


def test_a_restored_setting_out_of_range_is_said_not_dropped(qtbot, make_window, gui_model):
    win = make_window(gui_model, autoload=False, size=(1280, 720))
    form = win.ui.form
    form.set_values({"temperature": 9.0, "top_p": 0.9})
    assert form.temperature.value() == 5.0 and "9 was set to 5.00" in form.temperature.note.text()


@pytest.mark.parametrize("change, words", [
    (dict(max_cache_len=1), "The KV cache must hold at least 2 positions"),
    (dict(max_new_tokens=0), "Max new tokens must be a whole number >= 1"),
    (dict(top_p=7.0), "Top-p must be in (0, 1]"),
    (dict(repetition_penalty=0.0), "Repetition penalty must be in (0, 10]"),
])
def test_the_core_refuses_in_the_users_words_and_names_the_field(change, words):
    with pytest.raises(InvalidSettingsError) as refused:
        GenerationSettings(**change).validated()
    assert words in str(refused.value) and "_" not in str(refused.value).split(",")[0]
    assert refused.value.field == next(iter(change))
