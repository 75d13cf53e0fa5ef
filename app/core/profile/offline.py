"""Captures recorded elsewhere: read a profiler capture (``.xplane.pb`` or ``.xplane.pb.gz``) and the optimized HLO
of the step that ran, on a machine without that device — a speaker profiles on a GPU or TPU VM and inspects on a
laptop. One path for the CLI (``profile --capture``) and the window (File ▸ Open capture…). No Qt; JAX is
imported only to parse the capture (:func:`app.core.profile.step.profile_from_capture`).
"""

from __future__ import annotations

import gzip
import os
from pathlib import Path
from typing import Any

from app.core.errors import InvalidSettingsError, PlaygroundError
from app.core.profile.step import profile_from_capture
from app.core.steps import DECODE, PREFILL

#: File name endings of a capture and of an optimized HLO text (gzipped or not).
CAPTURE_SUFFIXES = (".xplane.pb", ".xplane.pb.gz")
HLO_SUFFIXES = (".hlo.txt", ".hlo.txt.gz", ".hlo", ".hlo.gz")


def read_maybe_gz(path: str | os.PathLike, what: str) -> bytes:
    """The bytes of ``path``, gunzipped when it ends in ``.gz``; raises :class:`PlaygroundError` naming ``what``
    (``"capture"``, ``"HLO text"``) and the path when it cannot be read."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
        return gzip.decompress(data) if path.endswith(".gz") else data
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise PlaygroundError(f"Cannot read the {what} {path}: {exc}") from exc


def _stem(name: str, suffixes: tuple[str, ...]) -> str:
    for suffix in sorted(suffixes, key=len, reverse=True):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def find_hlo_beside(capture: str | os.PathLike) -> Path | None:
    """The optimized HLO text that sits beside ``capture`` (same folder, a name ending in ``.hlo.txt`` or
    ``.hlo.txt.gz``): the one whose name shares the longest prefix with the capture's (``x-decode-profile.xplane.pb``
    → ``x-decode.hlo.txt``), None when the folder has none."""
    path = Path(capture)
    stem = _stem(path.name, CAPTURE_SUFFIXES)
    candidates = [p for p in path.parent.iterdir() if p.is_file() and p.name.endswith(HLO_SUFFIXES)]
    if not candidates:
        return None

    def shared(p: Path) -> int:
        other = _stem(p.name, HLO_SUFFIXES)
        return len(os.path.commonprefix([stem, other]))

    return max(candidates, key=lambda p: (shared(p), -len(p.name)))


def step_of(name: str, default: str = DECODE) -> str:
    """``"prefill"`` or ``"decode"`` when a capture's file name says which step it holds, else ``default``."""
    lowered = name.lower()
    if PREFILL in lowered:
        return PREFILL
    if DECODE in lowered:
        return DECODE
    return default


def profile_capture(capture: str | os.PathLike, hlo: str | os.PathLike | None = None, *, step: str | None = None,
                    platform: str | None = None, bandwidth_gbs: float | None = None,
                    peak_tflops: float | None = None) -> Any:
    """The :class:`app.core.profile.model.StepProfile` of a capture recorded elsewhere.

    ``hlo``: the optimized HLO text of the step that ran (``inspect --what hlo`` there); None looks beside the
    capture (:func:`find_hlo_beside`). ``step``: ``"decode"`` / ``"prefill"``, None to read it from the file name.
    ``platform``: where the ops ran, None to find out from the capture's planes. ``bandwidth_gbs`` (GB/s) and
    ``peak_tflops`` (1e12 FLOP/s): the roofline of the device that ran it (not measurable here), None for rows
    without roofline figures. Raises :class:`InvalidSettingsError` for a bad figure or a missing HLO text and
    :class:`PlaygroundError` for an unreadable file or a capture that does not match the HLO."""
    for flag, value in (("bandwidth (GB/s)", bandwidth_gbs), ("peak (TFLOP/s)", peak_tflops)):
        if value is not None and value <= 0:
            raise InvalidSettingsError(f"The {flag} must be positive, got {value}.")
    capture = Path(capture)
    if hlo is None:
        hlo = find_hlo_beside(capture)
        if hlo is None:
            raise InvalidSettingsError(
                f"No optimized HLO text beside {capture.name}: the capture needs the HLO of the step that ran "
                "(inspect --what hlo -o NAME.hlo.txt on the machine that recorded it), next to it or named.")
    xplane = read_maybe_gz(capture, "capture")
    hlo_text = read_maybe_gz(hlo, "HLO text").decode("utf-8", errors="replace")
    try:
        profile = profile_from_capture(xplane, hlo_text, None, bandwidth_gbs, step or step_of(capture.name),
                                       capture.name, platform, peak_tflops)
    except ValueError as exc:
        raise PlaygroundError(f"Cannot read {capture} with {Path(hlo).name}: {exc}") from exc
    profile.xplane_path = os.fspath(capture)
    return profile
