"""The Profile tab's two busy figures, named for what they are (issue 37: the window showed "ops running" only,
while a profile carries two busy figures that disagree — on the H200 capture 96.5 µs summed and 87.2 µs as a
union — and the CLI's ``profile`` explained them, the window did not). Plain text; no Qt.

- **ops' time summed** (:attr:`StepProfile.busy_ms`): every op event's duration added up, per step — what the
  table's ``µs/step`` column adds up to. Ops that run at the same time (host threads on XLA:CPU, streams on a
  GPU) each count in full.
- **busy, union on the timeline** (:attr:`StepProfile.op_ms`; a device profile's ``device_busy_ms``): the time
  during which at least one op runs, overlaps counted once — the "ops running" share's numerator.
"""

from __future__ import annotations

from typing import Any


def duration(value_ms: float) -> str:
    """A per-step time with the digits a short op needs: ``96.5 µs`` below 1 ms, ``2.629 ms`` above."""
    return f"{value_ms * 1e3:,.1f} µs" if abs(value_ms) < 1 else f"{value_ms:,.3f} ms"


def shown(value_ms: float) -> float:
    """``value_ms`` rounded as :func:`duration` shows it (so a difference of two shown figures adds up)."""
    return round(value_ms * 1e3, 1) / 1e3 if abs(value_ms) < 1 else round(value_ms, 3)


def union_ms(profile: Any) -> float:
    """The busy time as a union on the timeline (ms per step): a device profile's ``device_busy_ms``, else
    ``op_ms``."""
    gaps = getattr(profile, "launch_gaps", None) or {}
    return float(gaps.get("device_busy_ms", profile.op_ms))


def union_name(profile: Any) -> str:
    """``device busy`` for a device profile (kernels on a GPU or TPU plane), ``ops busy`` for XLA:CPU."""
    return "device busy" if getattr(profile, "device", "") else "ops busy"


def busy_figures(profile: Any) -> str:
    """The two figures as one line of the summary: ``ops' time summed 96.5 µs · device busy (union on the
    timeline) 87.2 µs per step``. ``profile``: a :class:`app.core.profile.model.StepProfile` (``busy_ms``,
    ``op_ms`` in ms per step)."""
    return (f"ops' time summed {duration(profile.busy_ms)} · {union_name(profile)} (union on the timeline) "
            f"{duration(union_ms(profile))} per step")


def busy_arithmetic(profile: Any) -> str:
    """The tool tip of :func:`busy_figures`: how each figure is added up, over how many steps, and what their
    difference is (plain text, one paragraph per figure)."""
    n, union = profile.n_steps, union_ms(profile)
    steps = f"the {n} profiled steps" if n != 1 else "the profiled step"
    where = f" on {profile.device}" if getattr(profile, "device", "") else ""
    overlap = ("host threads" if not getattr(profile, "device", "") else "streams")
    share = union / profile.step_ms if profile.step_ms else 0.0
    lines = [
        f"ops' time summed = Σ of every op event's duration in {steps} ÷ {n} = {duration(profile.busy_ms)} per "
        f"step: the sum of the table's µs/step column. Ops that run at the same time (on several {overlap}) each "
        "count in full.",
        f"{union_name(profile)} (union on the timeline) = the time{where} during which at least one op runs, "
        f"overlaps counted once, ÷ {n} = {duration(union)} per step = {share:.1%} of the {duration(profile.step_ms)} "
        "step (the \"ops running\" share).",
    ]
    extra = shown(profile.busy_ms) - shown(union)  # of the figures as shown: 96.5 − 87.2 = 9.3, not 9.2
    if extra > 0:
        lines.append(f"{duration(profile.busy_ms)} − {duration(union)} = {duration(extra)} per step of ops running "
                     "while another op runs.")
    return "\n\n".join(lines)
