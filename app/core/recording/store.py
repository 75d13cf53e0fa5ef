"""Reading and writing ``.session`` files: a zip archive holding one member, ``session.json``.

The JSON document's top-level keys are ``format`` (:data:`FORMAT_NAME`), ``format_version``
(:data:`FORMAT_VERSION`), ``created_at``, ``app_version``, ``runs`` (one :meth:`RecordedRun.to_dict` each) and,
when the file keeps compiler-settings races, ``settings_races`` (one plain dict each,
:mod:`app.core.compile_settings.saved`; a reader that predates them ignores the key) and, when it keeps a mode
race's steady-state verdicts, ``verdicts`` (one plain dict per race,
:func:`app.core.recording.recorder.verdict_record`; files without them open with none). Only JSON is read — nothing in a file is ever executed (no pickle).
Every failure to read is one :class:`app.core.errors.SessionFileError` naming the file and the problem.
"""

from __future__ import annotations

import json
import os
import tempfile
import zipfile
import zlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from app.core.errors import SessionFileError
from app.core.recording.model import FORMAT_NAME, FORMAT_VERSION, RecordedRun

#: The archive member holding the document.
MEMBER = "session.json"
#: File name suffix of session files.
SUFFIX = ".session"
#: Largest ``session.json`` read, uncompressed (a guard against zip bombs): 2 GiB.
MAX_JSON_BYTES = 2 * 2**30


@dataclass
class SessionFile:
    """The content of one ``.session`` file: its runs, in the order they ran.

    ``format_version``: the schema version it was written with (:data:`FORMAT_VERSION`); ``created_at``:
    ISO 8601 UTC time of writing; ``app_version``: torchax-playground's version; ``path``: the file it was
    read from or last written to (None for a session built in memory). ``settings_races``: compiler-settings races
    as plain JSON dicts (``race --settings`` / ``tradeoff``; :mod:`app.core.compile_settings.saved` reads them).
    ``verdicts``: the steady-state verdicts of mode races as plain JSON dicts (pairs, rounds, A/A, threads, load,
    ``race``, ``environment``; :func:`app.core.verdict.words.format_verdicts` prints one).
    """

    runs: list[RecordedRun] = field(default_factory=list)
    format_version: int = FORMAT_VERSION
    created_at: str = ""
    app_version: str | None = None
    path: str | None = None
    settings_races: list[dict[str, Any]] = field(default_factory=list)
    verdicts: list[dict[str, Any]] = field(default_factory=list)

    def save(self, path: str | os.PathLike) -> int:
        """Write to ``path`` (see :func:`save`). Returns the bytes written; raises
        :class:`app.core.errors.SessionFileError` when it cannot be written (nothing is left half-written)."""
        return save(self, path)

    @staticmethod
    def load(path: str | os.PathLike) -> SessionFile:
        """Read ``path`` (see :func:`load`); raises
        :class:`app.core.errors.SessionFileError` naming the file and the problem."""
        return load(path)

    def run_list(self) -> list[tuple[str, str, str]]:
        """``(label, mode, recorded label)`` per run, e.g. ``("run 1 · jit-static", "jit-static",
        "recorded on CPU × 1 · jax 0.10.2 · 2026-11-25")``."""
        return [(r.label, r.mode, r.recorded_label) for r in self.runs]


def utc_now() -> str:
    """The current time as ISO 8601 UTC with seconds: ``"2026-11-25T11:43:59+00:00"``."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def _app_version() -> str | None:
    try:
        return metadata.version("torchax-playground")
    except metadata.PackageNotFoundError:
        return None


def to_document(session: SessionFile) -> dict[str, Any]:
    """The JSON document of ``session`` (what ``session.json`` holds)."""
    doc = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "created_at": session.created_at or utc_now(),
        "app_version": session.app_version or _app_version(),
        "runs": [run.to_dict() for run in session.runs],
    }
    if session.settings_races:
        doc["settings_races"] = [dict(race) for race in session.settings_races]
    if session.verdicts:
        doc["verdicts"] = [dict(v) for v in session.verdicts]
    return doc


def save(session: SessionFile, path: str | os.PathLike) -> int:
    """Write ``session`` to ``path`` (a zip with ``session.json``, deflated) through a temporary file in the
    same folder, so an existing file is replaced only by a complete one. Sets ``session.path`` and
    ``session.created_at``. Returns the file's size in bytes. Raises :class:`SessionFileError` when the
    folder cannot be written."""
    path = Path(path)
    doc = to_document(session)
    data = json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent or ".")
        with os.fdopen(fd, "wb") as raw, zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as zf:
            zf.writestr(MEMBER, data)
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide the file from other users
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        raise SessionFileError(path, f"cannot be written ({exc.strerror or exc})") from exc
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
    session.path, session.created_at = str(path), doc["created_at"]
    return path.stat().st_size


def _read_document(path: Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as f:
            head = f.read(4)
    except FileNotFoundError:
        raise SessionFileError(path, "no such file") from None
    except IsADirectoryError:
        raise SessionFileError(path, "is a folder, not a session file") from None
    except OSError as exc:
        raise SessionFileError(path, f"cannot be read ({exc.strerror or exc})") from exc
    if not head:
        raise SessionFileError(path, "is empty (0 bytes): not a session file")
    is_zip = head.startswith(b"PK\x03\x04")
    if not zipfile.is_zipfile(path):
        if is_zip:
            raise SessionFileError(path, "is truncated or damaged (the zip archive has no end record)")
        raise SessionFileError(path, "is not a session file (not a zip archive)")
    try:
        with zipfile.ZipFile(path) as zf:
            try:
                info = zf.getinfo(MEMBER)
            except KeyError:
                raise SessionFileError(path, f"is not a session file (a zip archive without {MEMBER})") from None
            if info.file_size > MAX_JSON_BYTES:
                raise SessionFileError(path, f"is refused: {MEMBER} would be {info.file_size:,} bytes")
            data = zf.read(MEMBER)
    except SessionFileError:
        raise
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError) as exc:
        raise SessionFileError(path, f"is corrupted ({exc})") from exc
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise SessionFileError(path, f"is corrupted ({MEMBER} is not valid JSON: {exc})") from exc
    if not isinstance(doc, dict) or doc.get("format") != FORMAT_NAME:
        raise SessionFileError(path, f"is not a session file ({MEMBER} has no \"format\": \"{FORMAT_NAME}\")")
    return doc


def load(path: str | os.PathLike) -> SessionFile:
    """Read a session file. Needs no JAX and no torch and loads no model.

    Raises :class:`SessionFileError` (message ``"<path>: <problem>"``) when the file is missing, empty, not a
    zip archive or a zip without ``session.json`` (*not a session file*), truncated, fails its checksum or
    holds invalid JSON (*corrupted*), was written by a newer format (``format_version`` above
    :data:`FORMAT_VERSION`: *written by a newer torchax-playground*), or a run lacks a field or has one of
    the wrong type."""
    path = Path(path)
    doc = _read_document(path)
    version = doc.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise SessionFileError(path, f"is corrupted (format_version {version!r} is not a positive integer)")
    if version > FORMAT_VERSION:
        raise SessionFileError(path, f"was written by a newer torchax-playground (format_version {version}; "
                                     f"this version reads up to {FORMAT_VERSION}): update to open it")
    runs_data = doc.get("runs")
    if not isinstance(runs_data, list):
        raise SessionFileError(path, "is corrupted (no list of runs)")
    runs = []
    for i, d in enumerate(runs_data):
        try:
            runs.append(RecordedRun.from_dict(d))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            what = f"lacks {exc}" if isinstance(exc, KeyError) else f"is malformed ({exc})"
            raise SessionFileError(path, f"is corrupted (run {i + 1} {what})") from exc
    races = doc.get("settings_races", [])
    if not isinstance(races, list) or not all(isinstance(r, dict) and isinstance(r.get("lanes"), list)
                                              for r in races):
        raise SessionFileError(path, "is corrupted (settings_races is not a list of races with lanes)")
    verdicts = doc.get("verdicts", [])  # files written before verdicts have none
    if not isinstance(verdicts, list) or not all(isinstance(v, dict) and isinstance(v.get("pairs"), list)
                                                 for v in verdicts):
        raise SessionFileError(path, "is corrupted (verdicts is not a list of verdicts with pairs)")
    return SessionFile(runs=runs, format_version=version, created_at=str(doc.get("created_at", "")),
                       app_version=doc.get("app_version"), path=str(path), settings_races=races, verdicts=verdicts)


def load_all(paths: list[str | os.PathLike]) -> list[SessionFile]:
    """:func:`load` each path, in order; the first bad file raises (its :class:`SessionFileError`)."""
    return [load(p) for p in paths]
