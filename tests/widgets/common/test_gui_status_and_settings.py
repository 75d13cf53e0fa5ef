"""The window's shared helpers that the widgets lean on (``app.gui``): status messages cut at a word with the
whole in the tool tip, and the user settings' round trip."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import json  # noqa: E402


def test_status_messages_are_cut_at_a_word_with_the_whole_in_the_tool_tip(qtbot):
    from PySide6.QtWidgets import QLabel, QPushButton, QWidget

    from app.gui.status import StatusLine

    host = QWidget()
    qtbot.addWidget(host)
    label, details = QLabel(host), QPushButton(host)
    status = StatusLine(label, details, host)
    host.resize(2100, 40)
    host.show()
    label.resize(260, 20)
    message = "The prompt is 5,000 tokens but the KV cache holds 2,048 positions: shorten the prompt."
    status.error(message)
    shown = label.text()
    assert shown.endswith(" …") and message.startswith(shown[:-2]) and message[len(shown) - 2] == " "
    assert label.toolTip() == message and status.text() == message
    label.resize(2000, 20)
    qtbot.waitUntil(lambda: label.text() == message, timeout=1000)


def test_user_settings_round_trip(config_dir):
    from app.gui.user_settings import UserSettings

    s = UserSettings.load()
    assert s.model == "" and s.recent_models == []
    s.prompt = "hi"
    s.generation = {"mode": "torch"}
    for m in ["a", "b", "a"]:
        s.remember_model(m)
    path = s.save()
    assert path.parent == config_dir
    again = UserSettings.load()
    assert (again.prompt, again.model, again.recent_models, again.generation) == (
        "hi",
        "a",
        ["a", "b"],
        {"mode": "torch"},
    )
    path.write_text("{not json")
    assert UserSettings.load().prompt == ""
    path.write_text(json.dumps({"prompt": 3, "model": "x"}))
    assert UserSettings.load().model == "x" and UserSettings.load().prompt == ""
