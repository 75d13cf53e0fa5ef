"""Plain data of a step profile: rows, timeline, the profile itself. No Qt, no JAX; safe to send to
another thread or to write as JSON (``dataclasses.asdict``).

Units: times in µs per step (``_us``) or ms (``_ms``), bytes, FLOPs, GB/s = 1e9 bytes/s, GFLOP/s = 1e9
FLOP/s. A *step* is one call of the compiled step as the app makes it (argument building, dispatch, the
executable, the token's transfer to the host); figures "per step" are means over the profiled steps.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class ProfileRow:
    """One row of a profile table: an HLO instruction (``by="fusion"``), a source line (``"line"``), an
    ATen op (``"op"``) or a module path (``"module"``); ``key`` is that name.

    ``us_per_step``: summed duration of its op events per step (busy time; ops on several threads overlap,
    so these can sum to more than the wall time). ``wall_us_per_step``: the wall time it is charged — each
    instant during which ``k`` ops run is split ``1/k`` to each — so ``share = wall_us_per_step / step
    wall`` sums over all rows to the profile's ``attributed_share``. ``calls_per_step``: events per step of
    the instructions behind the row. ``bytes_per_step`` / ``flops_per_step``: estimated bytes accessed and
    FLOPs (:mod:`app.core.profile.hlo`), split like time. ``gbs`` / ``gflops``: achieved rates over its busy
    time (None without time). ``bandwidth_share``: ``gbs`` / the machine's read bandwidth (1.0 = at the
    roofline's memory bound); ``bound_us``: the time its bytes take at that bandwidth.
    ``source``: ``file:line`` (shortened after site-packages) of its largest part, ``module``: module path,
    ``aten``: ATen op; ``kind``: fusion kind or opcode (``kLoop``, ``__ynn_fusion``, ``dot``, ``copy``;
    comma-separated when several); ``instructions``: HLO instruction names; ``threads``: runtime threads
    it ran on; ``hlo_line``: 1-based line of the instruction in the HLO text (``by="fusion"`` only, else 0);
    ``via``: how its source was found (:mod:`app.core.profile.attrib`).
    """

    key: str
    us_per_step: float = 0.0
    wall_us_per_step: float = 0.0
    share: float = 0.0
    calls_per_step: float = 0.0
    bytes_per_step: float = 0.0
    flops_per_step: float = 0.0
    gbs: float | None = None
    gflops: float | None = None
    bandwidth_share: float | None = None
    bound_us: float | None = None
    source: str = ""
    module: str = ""
    aten: str = ""
    kind: str = ""
    instructions: list[str] = field(default_factory=list)
    threads: list[str] = field(default_factory=list)
    hlo_line: int = 0
    via: str = ""

    def finish(self, step_us: float, bandwidth_gbs: float | None) -> ProfileRow:
        """Fill the derived figures (share, rates, roofline) from the sums; returns ``self``."""
        self.share = self.wall_us_per_step / step_us if step_us > 0 else 0.0
        if self.us_per_step > 0:
            self.gbs = self.bytes_per_step / self.us_per_step / 1e3
            self.gflops = self.flops_per_step / self.us_per_step / 1e3
        if bandwidth_gbs:
            self.bound_us = self.bytes_per_step / bandwidth_gbs / 1e3
            self.bandwidth_share = self.gbs / bandwidth_gbs if self.gbs is not None else None
        return self

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class TimelineBar:
    """One op event of the timeline's step: ``thread`` label, ``start_us`` from the step's start,
    ``duration_us``, instruction ``name``, ``kind`` (fusion kind or opcode), ``source`` (``file:line``),
    ``module``."""

    thread: str
    start_us: float
    duration_us: float
    name: str
    kind: str
    source: str
    module: str = ""


@dataclass
class Timeline:
    """One decode step (the one whose wall time is the median): ``step_us`` wall time, ``bars`` per
    thread, ``gaps`` as ``[start_us, duration_us]`` where no op of the step runs (host work, dispatch,
    the runtime between ops), ``threads`` in display order. A device profile's bars are kernels per stream
    (``GPU:0 stream 14 (Compute,MemcpyD2D)``) and, below them, the host track (``host python3``: the host's
    spans of the step, kind ``host``), so the launch gaps line up with what the host was doing."""

    step_index: int
    step_us: float
    bars: list[TimelineBar] = field(default_factory=list)
    gaps: list[list[float]] = field(default_factory=list)
    threads: list[str] = field(default_factory=list)

    @property
    def gap_us(self) -> float:
        return sum(d for _, d in self.gaps)

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for the timeline widget: ``step_us``, ``bars`` (dicts), ``gaps``, ``threads``."""
        return asdict(self)


@dataclass
class StepProfile:
    """Where the time of one compiled step goes, measured over ``n_steps`` calls.

    ``step``: ``"decode"`` or ``"prefill"``; ``module``: the HLO module name (``jit_step``).
    ``step_ms`` / ``step_ms_median``: mean and median wall time of a call. ``op_ms``: mean time per step
    during which at least one of its ops runs. ``attributed_share`` = ``op_ms / step_ms`` (the sum of the
    rows' ``share``); ``idle_share`` = ``1 - attributed_share``: no op runs, split into ``host_share``
    (before the first and after the last op: building arguments, dispatch, the token's copy to the host)
    and ``between_ops_share`` (gaps between ops inside the executable: the runtime's scheduling).
    ``busy_ms``: summed op durations per step (> ``op_ms`` when ops overlap on threads).
    ``bandwidth_gbs``: measured read bandwidth; ``bytes_per_step`` / ``flops_per_step``: estimated totals;
    ``bound_ms``: ``bytes_per_step`` at that bandwidth (the roofline's floor for the step).
    ``rows``: one per executed instruction (``by="fusion"``); ``parts``: instruction → list of
    ``{"fraction", "source", "module", "aten", "via", "function", "scope"}`` (how its time is split);
    ``timeline``: one step's bars; ``unmatched``: op event names that are no instruction of the module
    (expected empty); ``other_modules``: events of other XLA programs inside the steps (host helpers);
    ``xplane_path``: the raw capture; ``model``: the engine's label; ``hlo_text``: the optimized HLO of the
    executable that ran (``Compiled.as_text()``), the text the rows' ``hlo_line`` numbers refer to;
    ``xla_cost``: XLA's own whole-module estimate (``Compiled.cost_analysis()``: ``flops``,
    ``bytes accessed``, …) to compare with ``flops_per_step`` / ``bytes_per_step``, None when not given;
    ``source_map``: the step's :class:`app.core.inspect.source_map.SourceMap` the attribution used (None without
    one; not written by the CLI).

    A device profile (GPU/TPU: the ops are kernels on a device plane, :mod:`app.core.profile.device`) also has
    ``device``, the plane read (``/device:GPU:0``; ``""`` for XLA:CPU, whose ops run on host threads), and reads
    the figures above as: ``op_ms`` the device busy time (any kernel or memcpy running), ``host_share`` before the
    first and after the last device event of a step, ``between_ops_share`` the launch gaps between them;
    ``launch_gaps``: those three in ms per step (``device_busy_ms``, ``launch_gap_ms``, ``host_ms``);
    ``notes``: what the profile could not attribute and why (command buffers); ``peak_tflops``: the device's
    peak FLOP/s (1e12) for the roofline's compute bound, None when not given.

    ``untraced_ms``: the median wall time per step of up to three warm calls timed just before the capture, without
    the profiler (:data:`app.core.profile.step.UNTRACED_CALLS`): the profiler records an event per op, so a step of many
    small ops runs slower under it than a step of few large ones, and two variants compare fairly only untraced
    (issue 38: fused projections looked 7 % faster traced and were not faster untraced).
    """

    step: str
    module: str
    n_steps: int
    step_ms: float
    step_ms_median: float
    op_ms: float
    busy_ms: float
    attributed_share: float
    idle_share: float
    host_share: float
    between_ops_share: float
    bandwidth_gbs: float | None
    bytes_per_step: float
    flops_per_step: float
    bound_ms: float | None
    rows: list[ProfileRow]
    parts: dict[str, list[dict[str, Any]]]
    timeline: Timeline
    unmatched: list[str] = field(default_factory=list)
    other_modules: dict[str, int] = field(default_factory=dict)
    xplane_path: str = ""
    model: str = ""
    #: the mode whose step was measured (``"jit-static"``, ``"jit-loop"``); ``""`` when not a model step's
    mode: str = ""
    hlo_text: str = field(default="", repr=False)
    xla_cost: dict[str, float] | None = None
    source_map: Any = field(default=None, repr=False, compare=False)
    device: str = ""
    notes: list[str] = field(default_factory=list)
    launch_gaps: dict[str, float] = field(default_factory=dict)
    peak_tflops: float | None = None
    untraced_ms: float | None = None

    @property
    def compute_bound_ms(self) -> float | None:
        """``flops_per_step`` at ``peak_tflops`` (ms): the roofline's compute floor; None without a peak."""
        return self.flops_per_step / self.peak_tflops / 1e9 if self.peak_tflops else None

    def summary(self) -> dict[str, Any]:
        """The step-level figures (no rows): what the CLI prints last (a device profile adds ``device``,
        ``launch_gaps``' figures, ``peak_tflops``, ``compute_bound_ms`` and ``notes``)."""
        keys = ("model", "step", "module", "n_steps", "step_ms", "step_ms_median", "op_ms", "busy_ms",
                "attributed_share", "idle_share", "host_share", "between_ops_share", "bandwidth_gbs",
                "bytes_per_step", "flops_per_step", "bound_ms", "xplane_path", "untraced_ms")
        out = {k: getattr(self, k) for k in keys}
        out["unmatched"] = list(self.unmatched)
        cost = self.xla_cost or {}
        out["xla_flops"], out["xla_bytes_accessed"] = cost.get("flops"), cost.get("bytes accessed")
        if self.device:
            out.update(device=self.device, **self.launch_gaps, peak_tflops=self.peak_tflops,
                       compute_bound_ms=self.compute_bound_ms, notes=list(self.notes))
        return out
