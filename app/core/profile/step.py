"""Step profiler: where the time of a compiled step goes — measured time per XLA op, per fusion, per PyTorch
source line, per ATen op and per module, with a roofline against the machine's read bandwidth — for each
``profilable`` mode of the catalog: jit-static's prefill and decode steps, and jit-loop's decode loop (its prefill
is jit-static's). No Qt. Run it where the engine lives (the compute thread or the CLI), outside any run's
timings::

    profile = profile_step(engine, "The jit function", step="decode", n_steps=20)
    for row in aggregate(profile, by="line")[:5]:
        print(row.source, row.us_per_step, row.share, row.gbs)

How: the step is compiled (or reused) by one call, warmed up, then ``n_steps`` calls run under
``jax.profiler`` (``start_trace``/``stop_trace``, Python tracer off), each inside a
``TraceAnnotation`` so the capture knows where a step starts and ends. The capture
(``plugins/profile/<ts>/<host>.xplane.pb``) is read with ``jax.profiler.ProfileData``
(:mod:`app.core.profile.capture`), joined with the optimized HLO's instructions and metadata
(:mod:`app.core.profile.hlo`, :mod:`app.core.profile.attrib`) and the step's source map
(:mod:`app.core.inspect.source_map`), and summed (:mod:`app.core.profile.build`). XLA:CPU has no per-op device
profile in XProf (tensorflow/tensorboard#6974), so its ops are read from the host threads; on a GPU or TPU the
kernels are read from the device plane and joined to the HLO's instructions (:mod:`app.core.profile.device`),
and the roofline uses the device's bandwidth (:func:`read_device_bandwidth_gbs`). A capture recorded elsewhere
(another machine's GPU) is read the same way by :func:`profile_from_capture`, no device needed.

jit-loop: one call of the compiled loop makes ``n_steps`` tokens
(:func:`app.core.profile.step_call.engine_loop_call`); the capture of that call is cut into one step per
iteration at the end of each iteration's host callback (:func:`app.core.profile.build.split_loop_iterations`),
so the rows are the instructions inside the ``while`` body per token, joined to the body's source lines
(:mod:`app.core.inspect.source_map` walks the body's equations), and the host share is each token's callback
(the token handed to the host) plus the call's dispatch, spread over its tokens. The callback's own time is in
``notes``.
"""

from __future__ import annotations

import json
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core.backends import CPU, roofline_probes
from app.core.errors import InvalidSettingsError, PlaygroundError
from app.core.inspect.ir import cost_dict
from app.core.inspect.views import STEP_CHOICES, is_model_step
from app.core.mode_catalog import CATALOG, mode_info, profiling_mode
from app.core.profile.attrib import attribute
from app.core.profile.build import BY, aggregate, build_profile, loop_figures, split_loop_iterations
from app.core.profile.capture import STEP_ANNOTATION, find_xplane, read_capture
from app.core.profile.columns import CSV_COLUMNS
from app.core.profile.device import join_kernels
from app.core.profile.hlo import parse_hlo
from app.core.profile.model import ProfileRow, StepProfile, Timeline, TimelineBar
from app.core.profile.probes import (
    measure,
    read_bandwidth_gbs,
    read_device_bandwidth_gbs,
    read_device_peak_tflops,
)
from app.core.profile.step_call import StepCall, engine_loop_call, engine_step_call
from app.core.steps import DECODE
from app.core.units import csv_text

if TYPE_CHECKING:
    import jax

    from app.core.engine.engine import Engine
    from app.core.inspect.source_map import SourceMap

__all__ = [
    "BY", "CSV_COLUMNS", "LOOP_NOTE", "ProfileRow", "StepCall", "StepProfile", "Timeline", "TimelineBar", "aggregate",
    "copy_xplane", "profile_call", "profile_from_capture", "profile_step", "read_bandwidth_gbs",
    "read_device_bandwidth_gbs", "read_device_peak_tflops", "rows_to_csv", "rows_to_json_lines",
]


#: warm calls timed without the profiler after the warm-up (at most ``n_steps``): :attr:`StepProfile.untraced_ms`
UNTRACED_CALLS = 3


def _trace(call: StepCall, n_steps: int, log_dir: str) -> Path:
    """Run ``n_steps`` calls under the profiler, each inside a :data:`STEP_ANNOTATION` annotation."""
    import jax

    options = jax.profiler.ProfileOptions()
    options.python_tracer_level = 0  # Python function events would dominate the capture and slow each step
    try:
        jax.profiler.start_trace(log_dir, profiler_options=options)
    except RuntimeError as exc:  # "Profile has already been started": another trace is running
        raise PlaygroundError(f"Cannot start the profiler: {exc}. Stop the other trace first.") from exc
    try:
        for i in range(n_steps):
            with jax.profiler.TraceAnnotation(STEP_ANNOTATION, step=i):
                call.run()
    finally:
        jax.profiler.stop_trace()
    return find_xplane(log_dir)


def profile_step(engine: Engine, prompt: str, step: str = DECODE, n_steps: int = 20, warmup: int = 3,
                 bandwidth_gbs: float | None = None, log_dir: str | None = None,
                 on_progress: Callable[[str], None] | None = None, mode: str | None = None) -> StepProfile:
    """Profile ``n_steps`` steady calls of the engine's compiled ``step`` (``"decode"``: one token each,
    the KV cache fed from call to call; ``"prefill"``: the padded prompt, a fresh cache each call) in ``mode``
    (a ``profilable`` mode of the catalog; None: :func:`app.core.mode_catalog.profiling_mode`, jit-static).

    jit-loop's decode is one call of its loop making ``n_steps`` tokens (after ``warmup`` such calls), profiled
    per iteration (module docstring); its prefill is jit-static's prefill.

    ``warmup`` calls run first, untraced. ``bandwidth_gbs``: the machine's read bandwidth for the roofline,
    measured (:func:`read_bandwidth_gbs`, ~2 s the first time) when None. ``log_dir``: where the capture
    goes (a new temporary directory when None; it is left for export, see :func:`copy_xplane`).
    ``on_progress(str)`` is called on this thread before each phase. Compiles on first use (seconds).
    Raises :class:`InvalidSettingsError` for a bad ``step``/``n_steps`` or a mode that cannot be profiled,
    :class:`PlaygroundError` when the profiler is busy, ``ValueError`` when the capture holds no annotated
    step."""
    report = on_progress or (lambda message: None)
    mode = mode or profiling_mode()
    profilable = [info.name for info in CATALOG if info.profilable]
    if mode not in profilable:
        raise InvalidSettingsError(f"profile measures the steps of {' and '.join(profilable)}; got mode {mode!r}.")
    if not is_model_step(step):
        raise InvalidSettingsError(f"step must be {' or '.join(map(repr, STEP_CHOICES))}, got {step!r}.")
    if n_steps < 1 or warmup < 0:
        raise InvalidSettingsError(f"n_steps must be >= 1 and warmup >= 0, got {n_steps} and {warmup}.")
    label = getattr(engine, "label", "")
    if mode_info(mode).decode_loop and step == DECODE:
        report(f"compiling the {mode} decode loop")
        call = engine_loop_call(engine, prompt, n_steps)
        return profile_call(call, step, 1, warmup, bandwidth_gbs, log_dir, on_progress, label)
    report(f"compiling the {mode} {step} step")
    call = engine_step_call(engine, prompt, step, n_steps + warmup + UNTRACED_CALLS, mode)  # each decode call a position
    return profile_call(call, step, n_steps, warmup, bandwidth_gbs, log_dir, on_progress, label)


def profile_call(call: StepCall, step: str, n_steps: int = 20, warmup: int = 3, bandwidth_gbs: float | None = None,
                 log_dir: str | None = None, on_progress: Callable[[str], None] | None = None,
                 label: str = "") -> StepProfile:
    """Profile ``n_steps`` calls of a :class:`StepCall` (a model's step or a program's entry point,
    :func:`app.core.programs.compute.profile.program_step_call`) after ``warmup`` untraced ones; ``step`` names it in
    the profile. See :func:`profile_step` for the other arguments and the errors."""
    report = on_progress or (lambda message: None)
    if n_steps < 1 or warmup < 0:
        raise InvalidSettingsError(f"n_steps must be >= 1 and warmup >= 0, got {n_steps} and {warmup}.")
    each = f" (a loop of {call.iterations} tokens each)" if call.iterations > 1 else ""
    report(f"warming up: {warmup} {step} calls{each}")
    for _ in range(warmup):
        call.run()
    untraced: list[float] = []  # ms per step of a few warm calls without the profiler, to compare with the traced
    for _ in range(min(n_steps, UNTRACED_CALLS)):
        t0 = time.perf_counter()
        call.run()
        untraced.append((time.perf_counter() - t0) * 1000 / max(1, call.iterations))
    report(f"profiling {n_steps} {step} calls{each}")
    xplane = _trace(call, n_steps, log_dir or tempfile.mkdtemp(prefix="torchax-playground-profile-"))
    device = _device_of(call.compiled)
    bandwidth_probe, peak_probe = roofline_probes(getattr(device, "platform", CPU.platform))
    peak_tflops = measure(peak_probe, device, report)
    if bandwidth_gbs is None:
        bandwidth_gbs = measure(bandwidth_probe, device, report)
    report("reading the capture")
    profile = profile_from_capture(xplane, call.compiled.as_text(), call.source_map, bandwidth_gbs, step, label,
                                   peak_tflops=peak_tflops)
    profile.xla_cost = _xla_cost(call.compiled)
    profile.source_map = call.source_map
    profile.untraced_ms = statistics.median(untraced) if untraced else None
    return profile


def _device_of(compiled: jax.stages.Compiled) -> Any:
    """The ``jax.Device`` an executable runs on (JAX's default device when it does not say; None without one)."""
    import jax

    try:
        leaves = jax.tree.leaves(compiled.input_shardings)
        devices = sorted(leaves[0].device_set, key=lambda d: d.id) if leaves else []
    except Exception:  # an executable without shardings: JAX's default device
        devices = []
    devices = devices or jax.devices()[:1]
    return devices[0] if devices else None


def _xla_cost(compiled: jax.stages.Compiled) -> dict[str, float] | None:
    try:
        return cost_dict(compiled.cost_analysis())
    except Exception:  # a backend without cost analysis: no comparison figure
        return None


def profile_from_capture(xplane: str | Path | bytes, hlo_text: str, source_map: SourceMap | None = None,
                         bandwidth_gbs: float | None = None, step: str = DECODE, model: str = "",
                         platform: str | None = None, peak_tflops: float | None = None) -> StepProfile:
    """Build a :class:`StepProfile` from plain inputs: a capture (``.xplane.pb`` path or bytes) whose steps
    are annotated with :data:`STEP_ANNOTATION`, the optimized HLO text of the executable that ran
    (``Compiled.as_text()``) and, optionally, the step's source map (module paths and the source lines of
    projections, see :mod:`app.core.profile.attrib`). ``platform``: where the ops ran (``"cpu"``, ``"gpu"``,
    ``"tpu"``), None to find out from the capture's planes (:func:`app.core.profile.capture.read_capture`).
    ``bandwidth_gbs`` (GB/s) and ``peak_tflops`` (1e12 FLOP/s): the roofline's figures of the device that ran
    it, None for rows without them. Reads the file only: a GPU capture opens on a machine without a GPU.
    Raises ``ValueError`` for an unreadable HLO text or a capture without annotated steps."""
    info = parse_hlo(hlo_text)
    capture = read_capture(xplane, info.name, platform=platform)
    if capture.device:
        join_kernels(capture, info)
    loop = None
    if not capture.device:
        calls = len(capture.steps)
        split = split_loop_iterations(capture, info)
        if info.loop_callbacks():
            loop = loop_figures(capture, info, len(split.steps))
            loop["iterations"] = len(split.steps) / max(1, calls)
        capture = split
    path = "" if isinstance(xplane, (bytes, bytearray)) else str(xplane)
    profile = build_profile(capture, info, attribute(info, source_map), bandwidth_gbs, step, path, model)
    profile.hlo_text = hlo_text
    profile.peak_tflops = peak_tflops
    if loop is not None:
        profile.notes.append(loop_note(profile, loop))
    return profile


#: How a loop profile's first note starts (the GUI and the CLI can tell a per-iteration profile by it).
LOOP_NOTE = "one step = one loop iteration"


def loop_note(profile: StepProfile, loop: dict[str, float]) -> str:
    """The note of a loop profile: what a step is, and the host callback's time and share per token."""
    cb_ms = loop["callback_ms"]
    share = cb_ms / profile.step_ms if profile.step_ms else 0.0
    return (f"{LOOP_NOTE} (one token): {profile.n_steps} iterations in {int(loop['calls'])} call(s) of the compiled "
            f"loop, {loop['iterations']:.0f} per call; each call's dispatch is in its first iteration. The "
            f"host callback (token_to_host) that hands each token to the host takes {cb_ms * 1e3:.1f} µs per token "
            f"({share:.1%} of a step), counted in the host share ({profile.host_share:.1%}), not in the rows; "
            "the while instruction's own event (the whole loop) is left out: its body's instructions are the rows.")


# ------------------------------------------------------------------------------------------- export
def rows_to_csv(rows: list[ProfileRow]) -> str:
    """CSV text of profile rows, columns :data:`app.core.profile.columns.CSV_COLUMNS` (lists space-separated,
    None empty)."""
    return csv_text(CSV_COLUMNS, ([row.to_dict()[c] for c in CSV_COLUMNS] for row in rows))


def rows_to_json_lines(rows: list[ProfileRow], profile: StepProfile | None = None, by: str = "") -> str:
    """One JSON object per row (``{"event": "row", "by": …, **row}``), then, with ``profile``, one
    ``{"event": "summary", …}`` line with :meth:`StepProfile.summary`."""
    lines = [json.dumps({"event": "row", "by": by, **row.to_dict()}) for row in rows]
    if profile is not None:
        summary = profile.summary()
        if profile.notes:
            summary.setdefault("notes", list(profile.notes))
        lines.append(json.dumps({"event": "summary", "by": by, **summary}))
    return "\n".join(lines) + "\n"


def copy_xplane(profile: StepProfile, dest: str | Path) -> Path:
    """Copy the raw capture to ``dest`` (a file path, or a folder that keeps the file's name) for XProf /
    TensorBoard / Perfetto. Raises ``FileNotFoundError`` when the profile has no capture file."""
    src = Path(profile.xplane_path) if profile.xplane_path else None
    if src is None or not src.is_file():
        raise FileNotFoundError(f"The profile's capture {profile.xplane_path or '(none)'} no longer exists.")
    dest = Path(dest)
    target = dest / src.name if dest.is_dir() else dest
    shutil.copyfile(src, target)
    return target
