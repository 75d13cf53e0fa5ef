"""The GUI's remembered state: last model, prompt, generation settings, recent models, window geometry.

Saved as JSON in the platform's user config directory (``platformdirs``); the environment variable
``TORCHAX_PLAYGROUND_CONFIG_DIR`` overrides the directory (tests point it at a temp dir). No Qt here:
geometry travels as a base64 string produced by the window.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from app.core.paths import config_dir

FILE_NAME = "gui.json"
MAX_RECENT = 8




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

    @staticmethod
    def path() -> Path:
        return config_dir() / FILE_NAME

    @classmethod
    def load(cls) -> UserSettings:
        """Read the saved settings; a missing, unreadable or malformed file gives the defaults."""
        try:
            raw = json.loads(cls.path().read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return cls()
        if not isinstance(raw, dict):
            return cls()
        out = cls()
        for f in fields(cls):
            value = raw.get(f.name)
            if value is not None and isinstance(value, type(getattr(out, f.name))):
                setattr(out, f.name, value)
        out.recent_models = [m for m in out.recent_models if isinstance(m, str)][:MAX_RECENT]
        out.recent_sessions = [m for m in out.recent_sessions if isinstance(m, str)][:MAX_RECENT]
        return out

    def save(self) -> Path:
        """Write atomically (temp file + rename) and return the path. Raises OSError if unwritable."""
        path = self.path()
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(asdict(self), indent=2), encoding="utf-8")
        os.replace(tmp, path)
        return path

    def remember_model(self, model: str) -> None:
        """Make ``model`` the current one and move it to the front of :attr:`recent_models`."""
        self.model = model
        self.recent_models = [model] + [m for m in self.recent_models if m != model]
        del self.recent_models[MAX_RECENT:]
