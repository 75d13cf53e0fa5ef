"""Session files: record runs anywhere, open them anywhere without JAX or torch (format in
docs/session-files.md).

``model`` (:class:`RecordedRun`, :class:`SessionFile`, the JSON schema), ``store`` (``.session`` zip read
and write, :class:`app.core.errors.SessionFileError` for bad files), ``recorder`` (:class:`RunRecorder`:
runs from the event stream), ``environment`` (where a run was recorded), ``timing`` (call spans, replay
schedule), ``perfetto`` (Chrome / Perfetto trace), ``compare`` (summary table by machine, IR diff),
``text`` (readable and ``generate --json`` output). The runs of a live :class:`app.core.session.model.Session`
are recorded as they stream by :mod:`app.core.live_recording`, a floor above the session. Nothing here imports
JAX, torch or Qt.
"""

from app.core.recording.model import FORMAT_VERSION, RecordedRun, config_summary
from app.core.recording.recorder import RunRecorder
from app.core.recording.store import SessionFile, load, load_all, save

__all__ = ["FORMAT_VERSION", "RecordedRun", "RunRecorder", "SessionFile", "config_summary", "load", "load_all",
           "save"]
