"""The GUI's remembered state: last model, prompt, generation settings, recent models, window geometry.

Saved as JSON in the platform's user config directory (``platformdirs``); the environment variable
``TORCHAX_PLAYGROUND_CONFIG_DIR`` overrides the directory (tests point it at a temp dir). No Qt here:
geometry travels as a base64 string produced by the window.

The file carries ``"schema": SCHEMA`` and survives upgrades (:mod:`app.core.settings_file`): an older file is
migrated (a copy of it kept as ``gui.json.vN-backup-…``), a corrupt, unreadable or newer one is kept aside
(``gui.json.corrupt-…``, ``gui.json.newer-vN-…``) and :attr:`UserSettings.notice` names it for the window to
say. Help ▸ Reset all settings is :meth:`UserSettings.reset_all` (a backup kept).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from app.core import settings_file
from app.core.paths import config_dir

FILE_NAME = "gui.json"
MAX_RECENT = 8
#: The file's schema. 1: files written before it carried one (same fields as 2). Each change that renames,
#: moves or re-types a field bumps it and adds a step to :data:`MIGRATIONS`.
SCHEMA = 2
#: Not saved: what the last load has to say, and whether saving is off (after a reset, or a file kept in place).
TRANSIENT = ("notice", "discarded")


def _from_1(raw: dict[str, Any]) -> dict[str, Any]:
    """Schema 1 → 2: the fields are the same; lists that held non-strings (hand-edited files) are cleaned."""
    for key in ("recent_models", "recent_sessions"):
        if isinstance(raw.get(key), list):
            raw[key] = list(dict.fromkeys(x for x in raw[key] if isinstance(x, str) and x))
    return raw


#: ``{schema: step to schema + 1}`` (:func:`app.core.settings_file.read`).
MIGRATIONS: dict[int, Any] = {1: _from_1}


@dataclass
class UserSettings:
    """Everything the window restores at start-up. Empty ``model`` means the built-in default.

    ``generation`` holds the generation form's values (``app.core.settings.GenerationSettings`` field
    names plus ``dtype``); ``geometry`` and ``splitters`` are base64 strings of Qt ``saveGeometry`` /
    ``saveState``.
    """

    model: str = ""
    prompt: str = ""
    generation: dict[str, Any] = field(default_factory=dict)
    recent_models: list[str] = field(default_factory=list)
    geometry: str = ""
    splitters: dict[str, str] = field(default_factory=dict)
    demo: dict[str, Any] = field(default_factory=dict)  # demo kit: race modes, cache dir, docks (app.gui.panels.demo.kit)
    workspace: str = "Run"  # the workspace shown at the last quit (app.gui.workspaces)
    plot_runs: int = 5  # runs kept overlaid on the latency plot (the plot's context menu)
    recent_sessions: list[str] = field(default_factory=list)  # File ▸ Open recent session (app.gui.panels.sessions.files)
    #: what loading had to say (a file kept aside, a newer file): one sentence for the window; not saved
    notice: str = field(default="", repr=False, compare=False)
    #: True: :meth:`save` writes nothing (after :meth:`reset_all`, or over a file that could not be kept aside)
    discarded: bool = field(default=False, repr=False, compare=False)

    @staticmethod
    def path() -> Path:
        return config_dir() / FILE_NAME

    @classmethod
    def load(cls) -> UserSettings:
        """Read the saved settings, migrated to :data:`SCHEMA`. A missing file gives the defaults; a corrupt,
        unreadable or newer one is kept aside (the defaults, or a newer file's known fields) and named in
        :attr:`notice`. A value of the wrong type is left at its default."""
        loaded = settings_file.read(cls.path(), SCHEMA, MIGRATIONS, "settings file")
        raw = loaded.data
        out = cls(notice=loaded.notice, discarded=loaded.protect)
        for f in fields(cls):
            if f.name in TRANSIENT:
                continue
            value = raw.get(f.name)
            if value is not None and isinstance(value, type(getattr(out, f.name))):
                setattr(out, f.name, value)
        out.recent_models = [m for m in out.recent_models if isinstance(m, str)][:MAX_RECENT]
        out.recent_sessions = [m for m in out.recent_sessions if isinstance(m, str)][:MAX_RECENT]
        return out

    def save(self) -> Path:
        """Write atomically (temp file + rename) with ``"schema"`` first and return the path (nothing is written
        when :attr:`discarded`). Raises OSError if unwritable."""
        path = self.path()
        if self.discarded:
            return path
        path.parent.mkdir(parents=True, exist_ok=True)
        data = {settings_file.KEY: SCHEMA, **{k: v for k, v in asdict(self).items() if k not in TRANSIENT}}
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(data, indent=2), encoding="utf-8")
        os.replace(tmp, path)
        return path

    def reset_all(self) -> Path | None:
        """Help ▸ Reset all settings: copy the file to ``gui.json.backup-<time>``, remove it, and write nothing
        more from this object (the next start uses the defaults). Returns the backup (None: there was no file).
        Raises OSError when the backup cannot be made (the file is then left as it is)."""
        path = self.path()
        kept = settings_file.backup(path)
        path.unlink(missing_ok=True)
        self.discarded = True
        return kept

    def remember_model(self, model: str, current: bool = True) -> None:
        """Move ``model`` to the front of :attr:`recent_models` and, when ``current``, make it the one the next
        start opens (a stand-in for a missing default passes ``current=False``: the next start looks again)."""
        if current:
            self.model = model
        self.recent_models = [model] + [m for m in self.recent_models if m != model]
        del self.recent_models[MAX_RECENT:]
