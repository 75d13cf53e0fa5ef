"""Read a ``jax.profiler`` capture (an XSpace ``.xplane.pb``) into per-step op events; interval arithmetic
over them (the machine's bandwidth and peak FLOP/s are measured in :mod:`app.core.profile.probes`). No Qt; JAX
imported only to read the capture.

What a capture holds on XLA:CPU (jax 0.10.2): plane ``/host:CPU`` has one line per thread. Executed HLO ops
are events on the runtime's threads (``tf_XLAPjRtCpuClient/<id>``, ``tf_XLAEigen/<id>``), one event per op,
named like the instruction in ``Compiled.as_text()`` and carrying the stats ``hlo_op``, ``hlo_module``,
``program_id``, ``run_id``. Bookkeeping events (``ThunkExecutor::Execute``, ``end: <op>``,
``ThreadpoolListener::…``) carry no ``hlo_op`` and are not ops. XProf's per-op tools do not work on
XLA:CPU (tensorflow/tensorboard#6974), hence this parser (``jax.profiler.ProfileData``,
``jax/_src/profiler.py``). Steps are delimited by :class:`jax.profiler.TraceAnnotation` events named
:data:`STEP_ANNOTATION` around each call, in the same clock as the op events.

On a GPU or TPU the ops run on the device planes instead (``BackendFacts.device_plane_prefix`` of
:mod:`app.core.backends`: ``/device:GPU:0``, one line per stream, e.g. ``Stream #14(Compute,MemcpyD2D)``):
one event per kernel or memcpy, named after the kernel (``input_reduce_fusion_34``), with the stats
``hlo_module`` and ``hlo_op`` (the instruction, or ``command_buffer_1`` when XLA ran the step as a command
buffer, a CUDA graph). :func:`read_capture` then returns the device events of the step windows (kernels of
``module`` keep their kernel name until :func:`app.core.profile.device.join_kernels` names their instruction;
memcpys outside any module become ``memcpy H2D`` / ``memcpy D2H`` rows; kernels of other modules
``<module>:<hlo_op>``) and, for the timeline's host track, the host's spans of each step (the children of the
step annotation on the calling thread: argument transfer, dispatch, the token's copy to the host).
"""

from __future__ import annotations

import bisect
import glob
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from app.core.backends import BACKENDS, CPU, BackendFacts, facts

# the roofline's measurements, read here by their older callers (bench/decode.py, the profile's tests)
from app.core.profile.probes import read_bandwidth_gbs as read_bandwidth_gbs
from app.core.profile.probes import read_device_bandwidth_gbs as read_device_bandwidth_gbs
from app.core.profile.probes import read_device_peak_tflops as read_device_peak_tflops


class ProfilePlanes(Protocol):
    """What is read of a ``jax.profiler.ProfileData`` (shipped without type stubs): its planes (each with
    ``name``, ``lines`` and their ``events``)."""

    @property
    def planes(self) -> Iterable[Any]: ...

#: Name of the ``TraceAnnotation`` event that brackets one profiled step.
STEP_ANNOTATION = "torchax_playground_step"
_THREAD_ID = re.compile(r"^(?:tf_)?(.*?)(?:/-?\d+)?$")


@dataclass
class OpEvent:
    """One executed instruction: ``name`` (``ynn_fusion.3``), ``thread`` (``XLAEigen 1``; on a device the
    stream, ``GPU:0 stream 14``), start and duration in ns (profiler clock), ``step`` (index of the enclosing
    step window). Device events only: ``kernel``, the event's own name on the device plane (the kernel,
    ``input_reduce_fusion_34``, or ``MemcpyD2H``), and ``hlo_op``, its ``hlo_op`` stat (``""`` when none)."""

    name: str
    thread: str
    start_ns: float
    duration_ns: float
    step: int
    kernel: str = ""
    hlo_op: str = ""

    @property
    def end_ns(self) -> float:
        return self.start_ns + self.duration_ns


@dataclass
class StepWindow:
    """One profiled call (its ``TraceAnnotation``): ``index`` in call order, start and duration in ns."""

    index: int
    start_ns: float
    duration_ns: float

    @property
    def end_ns(self) -> float:
        return self.start_ns + self.duration_ns


@dataclass
class Capture:
    """The op events of module ``module`` inside the step windows, in start order. ``other_modules``:
    ``{module: events}`` of other XLA programs that ran inside the windows (host-side helpers such as
    ``jnp.asarray``), counted as host time, not as ops of the step.

    Device captures only (empty on XLA:CPU): ``device``, the device plane read (``/device:GPU:0``);
    ``host_events``, the host's spans inside each step (the timeline's host track, ``thread`` ``host …``);
    ``labels``, event name → ``(source label, via, kind)`` for rows that are no HLO instruction (memcpys,
    other modules' ops, kernels no instruction was found for), filled by
    :func:`app.core.profile.device.join_kernels`; ``notes``, what the reader could not attribute and why."""

    module: str
    steps: list[StepWindow]
    events: list[OpEvent]
    other_modules: dict[str, int] = field(default_factory=dict)
    device: str = ""
    host_events: list[OpEvent] = field(default_factory=list)
    labels: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def find_xplane(log_dir: str | os.PathLike) -> Path:
    """The newest ``*.xplane.pb`` under ``log_dir`` (``plugins/profile/<timestamp>/<host>.xplane.pb``).
    Raises ``FileNotFoundError`` when there is none."""
    found = glob.glob(os.path.join(os.fspath(log_dir), "**", "*.xplane.pb"), recursive=True)
    if not found:
        raise FileNotFoundError(f"No .xplane.pb under {log_dir}: the profiler wrote no capture.")
    return Path(max(found, key=os.path.getmtime))


def _profile_data(source: str | os.PathLike | bytes):
    from jax.profiler import ProfileData

    if isinstance(source, (bytes, bytearray)):
        return ProfileData.from_serialized_xspace(bytes(source))
    return ProfileData.from_file(os.fspath(source))


def thread_labels(names: list[str]) -> dict[str, str]:
    """``tf_XLAEigen/6375…`` → ``XLAEigen 1`` (numbered per pool in order of appearance)."""
    counts: dict[str, int] = {}
    out = {}
    for name in names:
        match = _THREAD_ID.match(name)  # matches every one-line name
        base = (match.group(1) if match is not None else "") or name
        counts[base] = counts.get(base, 0) + 1
        out[name] = f"{base} {counts[base]}"
    return out


def read_capture(source: str | os.PathLike | bytes, module: str, annotation: str = STEP_ANNOTATION,
                 platform: str | None = None) -> Capture:
    """Op events of HLO module ``module`` (``HloModule`` name, e.g. ``jit_step``) inside the step windows
    of a capture (a path to an ``.xplane.pb`` or its bytes).

    ``platform`` (``"cpu"``, ``"gpu"``, ``"tpu"``; :func:`app.core.backends.facts`) says where the ops ran;
    None: the device planes of any backend row that has events, else the host threads (XLA:CPU). A device
    capture's events are read from the first plane named ``device_plane_prefix`` + ordinal that has events (the
    lowest ordinal; a note names the others), see the module docstring.

    Raises ``ValueError`` when the capture has no ``/host:CPU`` plane or no ``annotation`` events."""
    data = _profile_data(source)
    row = device_backend(data, platform)
    if row is not None:
        return _read_device(data, row, module, annotation)
    plane = data.find_plane_with_name(CPU.host_plane)
    if plane is None:
        raise ValueError(f"The capture has no {CPU.host_plane!r} plane (not an XLA:CPU profile).")
    lines = list(plane.lines)
    labels = thread_labels([line.name for line in lines])
    windows: list[tuple[float, float]] = []
    raw: list[tuple[str, str, float, float, str]] = []
    for line in lines:
        for ev in line.events:
            if ev.name == annotation:
                windows.append((ev.start_ns, ev.duration_ns))
                continue
            stats = dict(ev.stats) if ev.stats else {}
            if "hlo_op" in stats:
                raw.append((ev.name, labels[line.name], ev.start_ns, ev.duration_ns, str(stats.get("hlo_module"))))
    if not windows:
        raise ValueError(f"The capture has no '{annotation}' events: no step was annotated.")
    steps = [StepWindow(i, s, d) for i, (s, d) in enumerate(sorted(windows))]
    return _assign(module, steps, raw)


def device_backend(data: ProfilePlanes, platform: str | None = None) -> BackendFacts | None:
    """The backend row whose device planes hold the ops of ``data`` (a ``jax.profiler.ProfileData``):
    ``platform``'s (None for a row without device planes, XLA:CPU's), or, when ``platform`` is None, the first
    row whose planes (``device_plane_prefix``: ``/device:GPU:``) have events, else None (ops on host threads)."""
    if platform is not None:
        row = facts(platform)
        return row if row.device_plane_prefix else None
    rows = [row for row in BACKENDS.values() if row.device_plane_prefix]
    for plane in data.planes:
        owner = next((r for r in rows if plane.name.startswith(r.device_plane_prefix or "")), None)
        if owner is not None and any(True for line in plane.lines for _ in line.events):
            return owner
    return None


_STREAM = re.compile(r"^Stream #(\d+)\s*(?:\((.*)\))?$")
_MEMCPY = re.compile(r"^Memcpy([A-Za-z0-9]+)$")
#: Host spans shorter than this (ns) stay off the timeline's host track (reference counting, buffer holds).
HOST_SPAN_MIN_NS = 1000.0


def stream_label(plane: str, line: str) -> str:
    """``("/device:GPU:0", "Stream #14(Compute,MemcpyD2D)")`` → ``GPU:0 stream 14 (Compute,MemcpyD2D)``."""
    device = plane[len("/device:"):] if plane.startswith("/device:") else plane
    m = _STREAM.match(line)
    if m is None:
        return f"{device} {line}"
    return f"{device} stream {m.group(1)}" + (f" ({m.group(2)})" if m.group(2) else "")


def memcpy_row(name: str) -> str | None:
    """``MemcpyD2H`` → ``memcpy D2H``; None for a kernel."""
    m = _MEMCPY.match(name)
    return f"memcpy {m.group(1)}" if m else None


def _read_device(data: ProfilePlanes, row: BackendFacts, module: str, annotation: str) -> Capture:
    """A device capture: kernels and memcpys on the row's device planes (``device_plane_prefix`` + ordinal; of a
    plane with lines of whole module runs too, its ``device_op_line`` only), steps and host spans from the host
    plane (module docstring)."""
    prefix = row.device_plane_prefix or ""
    windows: list[tuple[float, float]] = []
    host_raw: list[tuple[str, str, float, float]] = []
    for plane in data.planes:
        if plane.name != row.host_plane:
            continue
        for line in plane.lines:
            events = sorted(line.events, key=lambda e: e.start_ns)
            marks = [(e.start_ns, e.start_ns + e.duration_ns) for e in events if e.name == annotation]
            windows += [(a, b - a) for a, b in marks]
            for a, b in marks:
                host_raw += _children(events, a, b, annotation, f"host {line.name}")
    if not windows:
        raise ValueError(f"The capture has no '{annotation}' events: no step was annotated.")
    steps = [StepWindow(i, s, d) for i, (s, d) in enumerate(sorted(windows))]
    starts = [s.start_ns for s in steps]
    events: list[OpEvent] = []
    busy = sorted((p for p in data.planes if p.name.startswith(prefix) and any(True for ln in p.lines for _ in ln.events)),
                  key=lambda p: _ordinal(p.name))
    planes = busy[:1]  # one device's kernels: a sharded step runs the same program on each
    notes = [f"Read {busy[0].name} only; {len(busy) - 1} other device plane(s) with events were left out "
             f"({', '.join(p.name for p in busy[1:4])}{'…' if len(busy) > 4 else ''})."] if len(busy) > 1 else []
    labels: dict[str, tuple[str, str, str]] = {}
    only = row.device_op_line or None
    for plane in planes:
        for line in plane.lines:
            if only is not None and line.name != only:
                continue
            thread = stream_label(plane.name, line.name)
            for ev in line.events:
                i = _window_of(starts, ev.start_ns)
                if i is None or ev.start_ns >= steps[i].end_ns:
                    continue
                stats = dict(ev.stats) if ev.stats else {}
                mod, op = str(stats.get("hlo_module") or ""), str(stats.get("hlo_op") or "")
                if mod == module:
                    name = ev.name
                elif mod:
                    name = f"{mod}:{op or ev.name}"
                    labels[name] = (f"<another XLA program: {mod}>", "other module", "other module")
                elif memcpy := memcpy_row(ev.name):
                    name = memcpy
                    labels[name] = (f"<{memcpy}: transfer outside the program>", "transfer", "memcpy")
                else:
                    name = ev.name
                    labels[name] = (f"<kernel outside any XLA program: {name}>", "none", "kernel")
                events.append(OpEvent(name, thread, ev.start_ns, ev.duration_ns, i, ev.name, op))
    events.sort(key=lambda e: e.start_ns)
    host = []
    for name, thread, start, dur in host_raw:
        i = _window_of(starts, start)
        if i is not None:
            host.append(OpEvent(name, thread, start, dur, i))
    return Capture(module, steps, events, {}, device=planes[0].name if planes else prefix, host_events=host,
                   labels=labels, notes=notes)


def _ordinal(plane: str) -> int:
    """``/device:GPU:3`` → 3 (planes without a number last)."""
    tail = plane.rsplit(":", 1)[-1]
    return int(tail) if tail.isdigit() else 1 << 30


def _children(events: list, lo: float, hi: float, annotation: str, thread: str) -> list[tuple[str, str, float, float]]:
    """The outermost events strictly inside ``[lo, hi]`` (a step annotation's children) on one line, each at
    least :data:`HOST_SPAN_MIN_NS` long."""
    out, end = [], lo
    for e in events:
        if e.start_ns < lo or e.start_ns >= hi or e.name == annotation:
            continue
        if e.start_ns >= end:
            end = e.start_ns + e.duration_ns
            if e.duration_ns >= HOST_SPAN_MIN_NS:
                out.append((e.name, thread, e.start_ns, e.duration_ns))
    return out


def _assign(module: str, steps: list[StepWindow], raw: list[tuple]) -> Capture:
    starts = [s.start_ns for s in steps]
    events: list[OpEvent] = []
    others: dict[str, int] = {}
    for name, thread, start, dur, mod in sorted(raw, key=lambda r: r[2]):
        i = _window_of(starts, start)
        if i is None or start >= steps[i].end_ns:
            continue
        if mod != module:
            others[mod] = others.get(mod, 0) + 1
            continue
        events.append(OpEvent(name, thread, start, dur, i))
    return Capture(module, steps, events, others)


def _window_of(starts: list[float], t: float) -> int | None:
    i = bisect.bisect_right(starts, t) - 1
    return i if i >= 0 else None


# -------------------------------------------------------------------------------------- intervals
def merge(intervals: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Union of ``(start, end)`` intervals as sorted, disjoint intervals."""
    out: list[list[float]] = []
    for a, b in sorted(intervals):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return [(a, b) for a, b in out]


def gaps(intervals: list[tuple[float, float]], lo: float, hi: float) -> list[tuple[float, float]]:
    """The parts of ``[lo, hi]`` that no interval covers, as ``(start, end)``."""
    out, t = [], lo
    for a, b in merge([(max(a, lo), min(b, hi)) for a, b in intervals if b > lo and a < hi]):
        if a > t:
            out.append((t, a))
        t = max(t, b)
    if t < hi:
        out.append((t, hi))
    return out


def wall_shares(intervals: list[tuple[float, float]]) -> list[float]:
    """Wall time attributed to each interval: every instant covered by ``k`` intervals at once is split
    ``1/k`` to each. The results sum to the length of the union; one interval alone keeps its length."""
    points = sorted({p for iv in intervals for p in iv})
    if len(points) < 2:
        return [0.0] * len(intervals)
    order = sorted(range(len(intervals)), key=lambda i: intervals[i][0])
    out = [0.0] * len(intervals)
    active: list[int] = []
    nxt = 0
    for a, b in zip(points, points[1:]):
        while nxt < len(order) and intervals[order[nxt]][0] <= a:
            active.append(order[nxt])
            nxt += 1
        active = [i for i in active if intervals[i][1] > a]
        if active:
            share = (b - a) / len(active)
            for i in active:
                out[i] += share
    return out
