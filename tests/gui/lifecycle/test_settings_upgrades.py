"""Settings that survive upgrades (issue 56, part 4): the window's settings file carries a schema; an older one
migrates (a copy of it kept), a corrupt, unreadable or newer one is kept aside and named in the window, never
lost; Help ▸ Reset all settings asks first and keeps a backup."""

from __future__ import annotations

import json
import os

import pytest

from app.core import settings_file
from app.gui import user_settings
from app.gui.user_settings import SCHEMA, UserSettings

V1_FILE = {  # what a window before the schema wrote (no "schema" key)
    "model": "pydoc-llama", "prompt": "Hello", "generation": {"max_new_tokens": 12, "mode": "jit-static"},
    "recent_models": ["pydoc-llama", 7, "pydoc-llama", "random:tiny"], "geometry": "", "splitters": {},
    "demo": {"modes": ["torch"]}, "workspace": "Code", "plot_runs": 3, "recent_sessions": ["/a.session", None],
}


def test_an_old_schema_file_migrates_and_keeps_a_copy(config_dir):
    path = UserSettings.path()
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(V1_FILE))
    s = UserSettings.load()
    assert (s.model, s.prompt, s.workspace, s.plot_runs) == ("pydoc-llama", "Hello", "Code", 3)
    assert s.generation == {"max_new_tokens": 12, "mode": "jit-static"} and s.demo == {"modes": ["torch"]}
    assert s.recent_models == ["pydoc-llama", "random:tiny"] and s.recent_sessions == ["/a.session"]
    assert s.notice == "" and not s.discarded
    copies = list(path.parent.glob("gui.json.v1-backup-*"))
    assert len(copies) == 1 and json.loads(copies[0].read_text()) == V1_FILE
    s.save()
    saved = json.loads(path.read_text())
    assert saved["schema"] == SCHEMA and list(saved)[0] == "schema" and "notice" not in saved
    assert UserSettings.load() == s and len(list(path.parent.glob("gui.json.v1-backup-*"))) == 1


def test_migrations_run_in_order_from_any_older_schema(config_dir, monkeypatch):
    """A future schema 3 that renames a field: a schema-1 file goes through 1 → 2 → 3."""
    def to_3(raw):
        raw["prompt"] = raw.pop("last_prompt", raw.get("prompt", ""))
        return raw

    monkeypatch.setattr(user_settings, "SCHEMA", 3)
    monkeypatch.setitem(user_settings.MIGRATIONS, 2, to_3)
    path = UserSettings.path()
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"last_prompt": "renamed", "recent_models": ["a", "a"]}))
    s = UserSettings.load()
    assert s.prompt == "renamed" and s.recent_models == ["a"]


@pytest.mark.parametrize("content, why", [
    ("{not json", "is not valid JSON"),
    ("[1, 2]", "holds a JSON list, not an object"),
    (b"\xff\xfe\x00garbage", "could not be read"),
    ('{"schema": "two"}', "has an invalid schema number"),
])
def test_a_corrupt_file_is_kept_aside_and_named(config_dir, content, why):
    path = UserSettings.path()
    path.parent.mkdir(parents=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    s = UserSettings.load()
    kept = list(path.parent.glob("gui.json.corrupt-*"))
    assert len(kept) == 1 and not path.exists()
    assert kept[0].read_bytes() == (content if isinstance(content, bytes) else content.encode())
    assert why in s.notice and str(kept[0]) in s.notice and "default settings" in s.notice
    assert s == UserSettings() and not s.discarded
    s.save()  # the defaults are written; the kept file stays
    assert path.exists() and kept[0].exists()


def test_a_newer_file_is_kept_aside_and_its_known_fields_used(config_dir):
    path = UserSettings.path()
    path.parent.mkdir(parents=True)
    newer = {"schema": SCHEMA + 1, "model": "pydoc-llama", "prompt": 5, "a_new_field": {"x": 1}}
    path.write_text(json.dumps(newer))
    s = UserSettings.load()
    kept = list(path.parent.glob(f"gui.json.newer-v{SCHEMA + 1}-*"))
    assert len(kept) == 1 and json.loads(kept[0].read_text()) == newer
    assert s.model == "pydoc-llama" and s.prompt == "" and "newer version" in s.notice and str(kept[0]) in s.notice


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file without read permission")
def test_a_file_that_cannot_be_read_nor_moved_is_never_written_over(config_dir):
    path = UserSettings.path()
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"model": "mine"}))
    path.chmod(0)
    path.parent.chmod(0o500)
    try:
        s = UserSettings.load()
        assert s.discarded and "could not be read" in s.notice and "will not be written over" in s.notice
        s.save()
    finally:
        path.parent.chmod(0o700)
        path.chmod(0o600)
    assert json.loads(path.read_text()) == {"model": "mine"}


def test_the_window_names_a_kept_aside_file(qtbot, make_window, gui_model, no_dialogs):
    from app.gui.lifecycle.settings_reset import show_notice

    path = UserSettings.path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{broken")
    settings = UserSettings.load()
    win = make_window(gui_model, autoload=False)
    show_notice(win, settings.notice, win.status.warn)
    kept = next(path.parent.glob("gui.json.corrupt-*"))
    assert str(kept) in win.status.text()
    qtbot.waitUntil(lambda: bool(no_dialogs), timeout=5000)
    assert str(kept) in no_dialogs[0][0]


def test_reset_all_settings_asks_keeps_a_backup_and_restarts(qtbot, make_window, gui_model, no_dialogs, monkeypatch):
    from app.gui.lifecycle.settings_reset import SettingsReset

    win = make_window(gui_model, autoload=False)
    win.settings.prompt = "mine"
    path = win.settings.save()
    restarts = []
    reset = SettingsReset(win, win.settings, win.status.show, lambda: restarts.append(1))
    action = next(a for a in win.menuBar().actions() if a.text().replace("&", "") == "Help").menu().actions()[-1]
    assert action is reset.action and action.text() == "&Reset all settings…"
    action.trigger()  # no_dialogs answers Close: nothing happens
    assert path.exists() and not restarts and not win.settings.discarded
    monkeypatch.setattr(SettingsReset, "confirm", lambda self: True)
    action.trigger()
    backups = list(path.parent.glob("gui.json.backup-*"))
    assert len(backups) == 1 and json.loads(backups[0].read_text())["prompt"] == "mine"
    assert not path.exists() and restarts == [1] and str(backups[0]) in win.status.text()
    win.save_settings()  # what closing does: nothing is written after a reset
    assert not path.exists()
    assert UserSettings.load() == UserSettings()


def test_a_backup_needs_a_file():
    from pathlib import Path

    assert settings_file.backup(Path("/nonexistent/gui.json")) is None
