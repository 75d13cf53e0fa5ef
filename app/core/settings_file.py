"""A settings file that survives upgrades: a JSON object carrying ``"schema": N``, migrated step by step from
older schemas, and never lost — a file that cannot be read, is not JSON, is not an object, or was written by a
newer version of the app is kept aside (renamed ``NAME.corrupt-YYYYmmdd-HHMMSS`` / ``NAME.newer-vN-…``) and
named in :attr:`Loaded.notice`, for the window to say. Before a migration the old file is copied to
``NAME.vN-backup`` (an older release can still read it). No Qt.

Used by :class:`app.gui.user_settings.UserSettings` (the window's ``gui.json``)."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: ``{from_schema: step}``: each step takes a version-N object and returns a version-N+1 object.
Migrations = Mapping[int, Callable[[dict[str, Any]], dict[str, Any]]]
KEY = "schema"


@dataclass
class Loaded:
    """What :func:`read` found. ``data``: the migrated object (``{}``: start from the defaults); ``notice``: one
    sentence for the user ("" when all went well); ``kept``: where a file was kept aside (or backed up before a
    migration); ``migrated_from``: the file's schema when it was older; ``newer``: the file was written by a newer
    app (its known fields are still used); ``protect``: see below."""

    data: dict[str, Any]
    notice: str = ""
    kept: Path | None = None
    migrated_from: int | None = None
    newer: bool = False
    #: the file is still in place but could not be moved aside: the caller must not write over it
    protect: bool = False


def _stamp() -> str:
    return time.strftime("%Y%m%d-%H%M%S")


def keep_aside(path: Path, label: str) -> Path:
    """Rename ``path`` to ``NAME.<label>-<time>`` beside it (a number added if taken) and return the new path.
    Raises OSError when it cannot be renamed."""
    target = path.with_name(f"{path.name}.{label}-{_stamp()}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.{label}-{_stamp()}-{n}")
    path.rename(target)
    return target


def backup(path: Path, label: str = "backup") -> Path | None:
    """Copy ``path`` to ``NAME.<label>-<time>`` (None when there is no file). Raises OSError on a failed copy."""
    if not path.exists():
        return None
    target = path.with_name(f"{path.name}.{label}-{_stamp()}")
    shutil.copy2(path, target)
    return target


def read(path: Path, schema: int, migrations: Migrations, what: str = "settings file") -> Loaded:
    """Read ``path`` as a version-``schema`` object. A file without a ``"schema"`` key is version 1. Missing
    file: ``Loaded({})``. Corrupt or unreadable: kept aside, ``Loaded({}, notice, kept)``. Older: migrated
    through ``migrations`` (a copy of the old file kept first). Newer: kept aside and its fields used as they
    are (the caller keeps only the fields it knows with the right types)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Loaded({})
    except (OSError, UnicodeDecodeError) as exc:
        return _corrupt(path, f"could not be read ({getattr(exc, 'strerror', None) or exc})", what)
    try:
        raw = json.loads(text)
    except ValueError as exc:
        return _corrupt(path, f"is not valid JSON ({exc})", what)
    if not isinstance(raw, dict):
        return _corrupt(path, f"holds a JSON {type(raw).__name__}, not an object", what)
    version = raw.get(KEY, 1)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        return _corrupt(path, f"has an invalid schema number {version!r}", what)
    if version > schema:
        try:
            kept = keep_aside(path, f"newer-v{version}")
        except OSError:
            kept = None
        where = f"it is kept as {kept}" if kept else "it could not be copied aside"
        return Loaded(raw, f"Your {what} {path} was written by a newer version of torchax-playground (schema "
                           f"{version}, this one reads {schema}): {where}; the settings this version knows were "
                           "used.", kept, None, True, kept is None)
    if version == schema:
        return Loaded(raw)
    try:
        kept = backup(path, f"v{version}-backup")
    except OSError:
        kept = None
    for step in range(version, schema):
        raw = migrations[step](dict(raw))
        raw[KEY] = step + 1
    return Loaded(raw, "", kept, version)


def _corrupt(path: Path, why: str, what: str) -> Loaded:
    try:
        kept: Path | None = keep_aside(path, "corrupt")
        where = f"it is kept as {kept}"
    except OSError as exc:
        kept, where = None, f"it could not be renamed ({exc.strerror or exc}) and will not be written over"
    return Loaded({}, f"Your {what} {path} {why}: {where}; the window started with the default settings.", kept,
                  protect=kept is None)
