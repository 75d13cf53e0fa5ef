"""The memory-bandwidth bound of a decode step, where people look (issue 38): decoding one token reads every
weight once, so no step of a model can take less than ``weight bytes ÷ memory bandwidth`` (the roofline's
memory floor; Williams, Waterman and Patterson, "Roofline", CACM 2009). The stats strip shows the steady
decode's share of it live ("71 % of memory bandwidth"), the race table and ``--json`` summaries its ``× bound``.

The bandwidth is measured at most once a day per machine and kept with the date it was last measured, in the user's
cache folder (``bandwidth.json`` under :func:`app.core.paths.cache_dir`); the figure kept is the best measured so
far, since a probe taken while other work reads memory measures low, and a bound from it would show a steady decode
above 100 % of the bandwidth (26 Nov: 18.4 GB/s kept on a machine that reads 43, the gauge at 148 %). By the probe
the backend row names
(:func:`app.core.backends.roofline_probes`: the CPU's memory read bandwidth, a device's copy bandwidth), on a
1 GiB array, as ``bench/decode.py`` measures it. No Qt.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core.backends import CPU, roofline_probes
from app.core.paths import cache_dir
from app.core.profile.probes import read_bandwidth_gbs, read_device_bandwidth_gbs

if TYPE_CHECKING:
    from app.core.engine.engine import Engine

#: Bytes the measurement reads (``bench/decode.py``'s figure): far larger than the CPU caches, ~1 s here, once.
PROBE_BYTES = 1 << 30


@dataclass(frozen=True)
class MemoryBound:
    """``weight_bytes`` (the weights' bytes on each device), ``bandwidth_gbs`` (1e9 bytes/s, ``probe``: how it
    was measured, on ``measured_on``: ``YYYY-MM-DD``) and ``bound_ms``: one decode step's floor in ms."""

    weight_bytes: int
    bandwidth_gbs: float
    probe: str
    measured_on: str

    @property
    def bound_ms(self) -> float:
        return self.weight_bytes / (self.bandwidth_gbs * 1e9) * 1000

    def share(self, steady_ms: float | None) -> float | None:
        """The share of the bandwidth a steady decode step of ``steady_ms`` uses (``bound_ms / steady_ms``:
        0.71 is 71 %), None without a steady step."""
        return self.bound_ms / steady_ms if steady_ms else None

    def explain(self) -> str:
        """The arithmetic, for a tool tip: ``"538 MB of weights ÷ 30.5 GB/s (host read, measured 2026-11-26)
        = 17.6 ms per token"``."""
        return (f"{self.weight_bytes / 1e6:,.0f} MB of weights ÷ {self.bandwidth_gbs:,.1f} GB/s ({self.probe}, "
                f"measured {self.measured_on}) = {self.bound_ms:,.1f} ms per token: decoding a token reads every "
                "weight once, so no step that reads them from memory can be faster (weights that fit in the CPU's "
                "caches are read faster than the probe's memory: a share over 100 %)")


def _store() -> Path:
    return cache_dir() / "bandwidth.json"


def machine_bandwidth(platform: str, device: object = None, kind: str = "") -> tuple[float, str, str]:
    """``(GB/s, probe, measured on)`` of ``platform``'s memory (``device``: a ``jax.Device`` for a device probe;
    ``kind``: its device kind): measured on the first call of a day (~1 s), kept on disk with that date, the best
    of that measurement and the one kept before; a file that cannot be read or written only means measuring again."""
    probe = roofline_probes(platform)[0]
    key = f"{platform}:{kind}:{os.cpu_count()}:{probe}"
    path = _store()
    try:
        known = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        known = {}
    entry = known.get(key)
    kept: dict[str, Any] = entry if isinstance(entry, dict) else {}
    today = time.strftime("%Y-%m-%d")
    if kept.get("gbs") and kept.get("date") == today:
        return float(kept["gbs"]), probe, today
    gbs = (read_bandwidth_gbs(PROBE_BYTES) if probe == "host read"
           else read_device_bandwidth_gbs(device, PROBE_BYTES))
    gbs = max(gbs, float(kept.get("gbs") or 0.0))  # a probe beside other work reads low: the best figure stays
    known[key] = {"gbs": gbs, "date": today}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(known, indent=1), encoding="utf-8")
    except OSError:
        pass
    return gbs, probe, known[key]["date"]


def memory_bound(engine: Engine) -> MemoryBound | None:
    """The decode bound of ``engine``'s model (:class:`app.core.engine.engine.Engine`): the largest share of
    its weights one device holds (a ``tp`` mesh splits them) over its platform's bandwidth; None when it cannot
    be measured."""
    try:
        per_device = engine.device_bytes().get("weights") or {}
        weight_bytes = max(per_device.values()) if per_device else 0
        device = getattr(engine, "device", None)
        platform = getattr(device, "platform", CPU.platform) or CPU.platform
        jax_device = getattr(device, "jax_device", None)
        gbs, probe, date = machine_bandwidth(platform, jax_device, str(getattr(jax_device, "device_kind", "")))
    except Exception:  # noqa: BLE001 — a missing figure hides the gauge, nothing else
        return None
    return MemoryBound(int(weight_bytes), gbs, probe, date) if weight_bytes and gbs > 0 else None


def as_dict(bound: MemoryBound | None) -> dict[str, Any]:
    """``{"bound_ms", "bandwidth_gbs", "weight_bytes", …}`` for JSON lines (empty without a bound)."""
    return {} if bound is None else {**asdict(bound), "bound_ms": bound.bound_ms}
