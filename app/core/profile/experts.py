"""The experts' matmuls of a mixture-of-experts step against the rest of its ops (issue 42). No Qt, no JAX.

A MoE layer's experts run as ``aten::_grouped_mm`` (transformers' ``grouped_mm`` experts implementation,
lowered by :mod:`app.core.runtime.moe_ops`); every HLO instruction made from it keeps that ATen scope, so a
profile's attribution parts (``StepProfile.parts``: instruction → ``{"fraction", "aten", …}``) say which share
of each instruction's measured time is the experts'. Fusions that XLA built from the grouped matmul and its
neighbours are split by those fractions, as every other per-op view of the profile is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.core.profile.model import StepProfile

#: The ATen op of transformers' grouped experts (``torch._grouped_mm``).
EXPERTS_ATEN = "aten::_grouped_mm"


@dataclass(frozen=True)
class ExpertsSplit:
    """Per step, in ms of wall time charged to ops (:attr:`ProfileRow.wall_us_per_step`): ``experts_ms`` for the
    experts' grouped matmuls, ``rest_ms`` for every other op; ``share`` = experts / (experts + rest)."""

    experts_ms: float
    rest_ms: float

    @property
    def share(self) -> float:
        total = self.experts_ms + self.rest_ms
        return self.experts_ms / total if total > 0 else 0.0

    def line(self) -> str:
        """``experts' matmuls 1.20 ms (31% of op time) · other ops 2.70 ms``."""
        return (f"experts' matmuls {self.experts_ms:.2f} ms ({self.share:.0%} of op time) · other ops "
                f"{self.rest_ms:.2f} ms")


def experts_split(profile: StepProfile) -> ExpertsSplit | None:
    """The :class:`ExpertsSplit` of a :class:`app.core.profile.model.StepProfile`, None when no op of the step
    comes from :data:`EXPERTS_ATEN` (a dense model) or the profile has no attribution parts."""
    parts: dict[str, list[dict[str, Any]]] = getattr(profile, "parts", None) or {}
    experts = rest = 0.0
    for row in getattr(profile, "rows", []):
        wall = row.wall_us_per_step
        share = sum(float(p.get("fraction", 0.0)) for p in parts.get(row.key, [])
                    if str(p.get("aten", "")).startswith(EXPERTS_ATEN))
        share = min(share, 1.0)
        experts += wall * share
        rest += wall * (1.0 - share)
    if experts <= 0:
        return None
    return ExpertsSplit(experts / 1000, rest / 1000)
