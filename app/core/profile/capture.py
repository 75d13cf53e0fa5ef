"""Read a ``jax.profiler`` capture (an XSpace ``.xplane.pb``) into per-step op events; interval arithmetic
over them; the machine's read bandwidth. No Qt; JAX imported only to read the capture.

What a capture holds on XLA:CPU (jax 0.10.2): plane ``/host:CPU`` has one line per thread. Executed HLO ops
are events on the runtime's threads (``tf_XLAPjRtCpuClient/<id>``, ``tf_XLAEigen/<id>``), one event per op,
named like the instruction in ``Compiled.as_text()`` and carrying the stats ``hlo_op``, ``hlo_module``,
``program_id``, ``run_id``. Bookkeeping events (``ThunkExecutor::Execute``, ``end: <op>``,
``ThreadpoolListener::…``) carry no ``hlo_op`` and are not ops. XProf's per-op tools do not work on
XLA:CPU (tensorflow/tensorboard#6974), hence this parser (``jax.profiler.ProfileData``,
``jax/_src/profiler.py``). Steps are delimited by :class:`jax.profiler.TraceAnnotation` events named
:data:`STEP_ANNOTATION` around each call, in the same clock as the op events.
"""

from __future__ import annotations

import bisect
import glob
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

#: Name of the ``TraceAnnotation`` event that brackets one profiled step.
STEP_ANNOTATION = "torchax_playground_step"
_THREAD_ID = re.compile(r"^(?:tf_)?(.*?)(?:/-?\d+)?$")


@dataclass
class OpEvent:
    """One executed instruction: ``name`` (``ynn_fusion.3``), ``thread`` (``XLAEigen 1``), start and
    duration in ns (profiler clock), ``step`` (index of the enclosing step window)."""

    name: str
    thread: str
    start_ns: float
    duration_ns: float
    step: int

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
    ``jnp.asarray``), counted as host time, not as ops of the step."""

    module: str
    steps: list[StepWindow]
    events: list[OpEvent]
    other_modules: dict[str, int] = field(default_factory=dict)


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
        base = _THREAD_ID.match(name).group(1) or name
        counts[base] = counts.get(base, 0) + 1
        out[name] = f"{base} {counts[base]}"
    return out


def read_capture(source: str | os.PathLike | bytes, module: str, annotation: str = STEP_ANNOTATION) -> Capture:
    """Op events of HLO module ``module`` (``HloModule`` name, e.g. ``jit_step``) inside the step windows
    of a capture (a path to an ``.xplane.pb`` or its bytes).

    Raises ``ValueError`` when the capture has no ``/host:CPU`` plane or no ``annotation`` events."""
    data = _profile_data(source)
    plane = data.find_plane_with_name("/host:CPU")
    if plane is None:
        raise ValueError("The capture has no '/host:CPU' plane (not an XLA:CPU profile).")
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


# -------------------------------------------------------------------------------------- bandwidth
_bandwidth_cache: dict[tuple[int, int], float] = {}


def read_bandwidth_gbs(n_bytes: int = 128 << 20, repeats: int = 3, cached: bool = True) -> float:
    """Sustained memory read bandwidth in GB/s (1e9 bytes/s): the best of ``repeats`` sums of a float32
    array of ``n_bytes`` (far larger than the CPU caches), split across one thread per core (NumPy releases
    the GIL in large reductions); ``bench/decode.py`` calls it with 1 GiB. Memoised per process unless
    ``cached`` is False (this machine's figure moves from week to week; compare within one run)."""
    key = (n_bytes, repeats)
    if cached and key in _bandwidth_cache:
        return _bandwidth_cache[key]
    import time
    from concurrent.futures import ThreadPoolExecutor

    import numpy as np

    workers = os.cpu_count() or 1
    chunks = np.array_split(np.ones(n_bytes // 4, dtype=np.float32), workers)
    best = float("inf")
    with ThreadPoolExecutor(workers) as pool:
        for _ in range(repeats):
            t0 = time.perf_counter()
            list(pool.map(np.sum, chunks))
            best = min(best, time.perf_counter() - t0)
    _bandwidth_cache[key] = n_bytes / best / 1e9
    return _bandwidth_cache[key]
