"""Open a pass pipeline recorded elsewhere: a folder of XLA dump files (``xla_dump_to``), optionally with a
profiler capture of that compile, read without compiling anything (``torchax-playground passes --dumps DIR``).

Layout read: ``DIR/dump/`` (or ``DIR`` itself) holds ``module_N.<module>.*`` files; the capture is the newest
``*.xplane.pb`` (or ``*.xplane.pb.gz``, gzip-compressed: a capture is ~4.7× smaller so) under ``DIR/profile/``
(or anywhere under ``DIR``) — what
:func:`app.core.passes.record.record_pipeline` writes with ``keep_dir=DIR``. The backend row
(:mod:`app.core.backends`) is told from the dump file names (:func:`app.core.backends.dumps_backend`), so dumps
recorded on a GPU open on a laptop without one. Pure file parsing (JAX only to read the capture)."""

from __future__ import annotations

import glob
import gzip
import importlib
import os
import re
from pathlib import Path

from app.core.backends import BackendFacts, dumps_backend
from app.core.errors import PlaygroundError
from app.core.passes.model import PassPipeline
from app.core.passes.parse import read_compile, read_dumps, rename_pipelines

_MODULE_FILE = re.compile(r"^module_\d+\.")


class DumpsError(PlaygroundError):
    """A dump folder that cannot be opened: missing, without XLA dump files, or a capture without the compile."""


def dump_folder(path: str | os.PathLike) -> Path:
    """The folder holding the ``module_N.*`` files: ``path/dump`` when it has them, else ``path``. Raises
    :class:`DumpsError` when neither does."""
    root = Path(path)
    if not root.is_dir():
        raise DumpsError(f"No folder {root}.")
    for candidate in (root / "dump", root):
        if candidate.is_dir() and any(_MODULE_FILE.match(p.name) for p in candidate.iterdir() if p.is_file()):
            return candidate
    raise DumpsError(f"No XLA dump files (module_N.<module>.*.txt) in {root} or {root / 'dump'}.")


def find_capture(path: str | os.PathLike) -> Path | None:
    """The newest ``*.xplane.pb`` or ``*.xplane.pb.gz`` under ``path/profile`` or else under ``path`` (None when
    there is none)."""
    root = Path(path)
    for base in (root / "profile", root):
        found = [f for pattern in ("*.xplane.pb", "*.xplane.pb.gz")
                 for f in glob.glob(os.path.join(os.fspath(base), "**", pattern), recursive=True)]
        if found:
            return Path(max(found, key=os.path.getmtime))
    return None


def capture_source(path: str | os.PathLike) -> str | bytes:
    """What :func:`app.core.passes.parse.read_compile` reads: the path, or a ``.gz`` capture's bytes."""
    return gzip.decompress(Path(path).read_bytes()) if os.fspath(path).endswith(".gz") else os.fspath(path)


def build_pipeline(dump_dir: str | os.PathLike, capture: str | os.PathLike | bytes | None,
                   compile_ms: float | None = None, backend_facts: BackendFacts | None = None,
                   require_capture: bool = True) -> PassPipeline:
    """A :class:`PassPipeline` from a dump folder and a capture of the compile (``capture``: path or bytes).

    ``compile_ms``: the wall time of the ``compile()`` call when this process made it; None takes the capture's
    client compile (so the split's "outside XLA" is 0). ``backend_facts``: None tells the row from the file
    names; its ``dump_parser`` module reads the files only that backend writes (``extras``). Without a capture
    (``require_capture=False``) the pipeline has its snapshots and no times
    (``has_capture`` False). Raises ``FileNotFoundError`` (no per-pass dump) or ``ValueError`` (a capture
    without the module's compile event)."""
    names = [p.name for p in Path(dump_dir).iterdir() if p.is_file()]
    facts = backend_facts or dumps_backend(names)
    module, snapshots, before, final, fusion_ir, dump_bytes = read_dumps(dump_dir)
    parser = importlib.import_module(facts.dump_parser) if facts.dump_parser else None
    extras = parser.read_extras(dump_dir, module, final, facts, fusion_ir) if parser is not None else None
    if capture is None:
        if require_capture:
            raise FileNotFoundError("No profiler capture (*.xplane.pb) of the compile.")
        return PassPipeline(module, snapshots, before, final, [], [], [], compile_ms or 0.0, None, fusion_ir,
                            dump_bytes=dump_bytes, platform=facts.platform, extras=extras, has_capture=False)
    if not isinstance(capture, (bytes, bytearray)):
        capture = capture_source(capture)
    c = read_compile(capture, module, snapshots, facts)
    rename_pipelines(snapshots, c.pipelines)
    if parser is not None:
        parser.apply_capture(extras, c)
    return PassPipeline(module, snapshots, before, final, c.pass_times, c.pipelines, c.backend,
                        c.client_ms if compile_ms is None else compile_ms, c.client_ms, fusion_ir,
                        dump_bytes=dump_bytes, platform=facts.platform, extras=extras)


def open_dumps(path: str | os.PathLike) -> PassPipeline:
    """Open the dump folder ``path`` (see the module's docstring) and its capture when there is one; raises
    :class:`DumpsError` for a folder without dumps or a capture without this module's compile."""
    folder = dump_folder(path)
    capture = find_capture(path)
    try:
        pipeline = build_pipeline(folder, capture, require_capture=False)
    except (FileNotFoundError, ValueError) as exc:
        raise DumpsError(f"{exc} ({capture or folder})") from exc
    pipeline.source = os.fspath(path)
    return pipeline
