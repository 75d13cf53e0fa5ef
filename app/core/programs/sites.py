"""Compiles per call site: where a run's compiles were asked for, how many, what they cost and why — from its call
records alone (no JAX: ``show-session`` prints it from a session file).

A compile is either a record's own (:attr:`CallRecord.compiled`: a model step's or a program entry's executable) or
one of its :attr:`CallRecord.inner_compiles` (the jitted functions a program's entry called itself). Sites are
keyed by (``compile_site``, function) and sorted by total compile ms, the costliest first.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from app.core import units

if TYPE_CHECKING:
    from app.core.events import CallRecord


@dataclass
class CompileSite:
    """One call site. ``site``: ``"mine.py:12 (main)"`` (the line that called the jitted function; a model step or
    a program's entry: its name or definition); ``function``: what compiled there; ``n_compiles``; ``compile_ms``:
    trace + lower + compile summed (ms), ``trace_ms`` / ``lower_ms`` / ``backend_ms`` its parts; ``causes``: each
    compile's cause in order (``"first call"``, ``"static argument n changed: 2 → 3"``, …)."""

    site: str
    function: str
    n_compiles: int = 0
    compile_ms: float = 0.0
    trace_ms: float = 0.0
    lower_ms: float = 0.0
    backend_ms: float = 0.0
    causes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _compiles(record: CallRecord) -> Iterable[dict[str, Any]]:
    if record.compiled:
        yield {"compile_site": record.compile_site or str(record.step), "function": str(record.step),
               "compile_reason": record.compile_reason, "trace_ms": record.trace_ms, "lower_ms": record.lower_ms,
               "compile_ms": record.compile_ms}
    yield from getattr(record, "inner_compiles", None) or ()


def compile_sites(records: Sequence[Any]) -> list[CompileSite]:
    """The :class:`CompileSite` table of ``records`` (:class:`app.core.events.CallRecord`), costliest first."""
    sites: dict[tuple[str, str], CompileSite] = {}
    for record in records:
        for c in _compiles(record):
            key = (str(c.get("compile_site") or "(unknown)"), str(c.get("function") or ""))
            s = sites.get(key) or sites.setdefault(key, CompileSite(*key))
            parts = [float(c.get(k) or 0.0) for k in ("trace_ms", "lower_ms", "compile_ms")]
            s.n_compiles += 1
            s.trace_ms, s.lower_ms, s.backend_ms = (s.trace_ms + parts[0], s.lower_ms + parts[1],
                                                    s.backend_ms + parts[2])
            s.compile_ms += sum(parts)
            s.causes.append(str(c.get("compile_reason") or "–"))
    return sorted(sites.values(), key=lambda s: -s.compile_ms)


def n_inner_compiles(records: Sequence[Any]) -> int:
    """How many compiles ``records`` made inside their calls (:attr:`CallRecord.inner_compiles`)."""
    return sum(len(getattr(r, "inner_compiles", None) or ()) for r in records)


def cause_summary(causes: Sequence[str], limit: int = 4) -> str:
    """``"first call; static argument n changed: 2 → 3; …"`` — repeated causes counted (``×2``), at most
    ``limit`` shown."""
    counts: dict[str, int] = {}
    for c in causes:
        counts[c] = counts.get(c, 0) + 1
    parts = [c + (f" ×{n}" if n > 1 else "") for c, n in counts.items()]
    more = f"; +{len(parts) - limit} more" if len(parts) > limit else ""
    return "; ".join(parts[:limit]) + more


def format_site_table(sites: Sequence[CompileSite]) -> str:
    """The per-site table as aligned text (the CLI's and ``show-session``'s): site, function, compiles, compile
    ms (trace / lower / compile), causes."""
    if not sites:
        return "compiles per call site: none"
    rows = [(s.site, s.function, str(s.n_compiles), units.ms(s.compile_ms),
             f"{s.trace_ms:.0f} / {s.lower_ms:.0f} / {s.backend_ms:.0f}", cause_summary(s.causes)) for s in sites]
    head = ("call site", "function", "compiles", "compile", "trace / lower / compile ms", "causes")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(5)]
    lines = ["compiles per call site (costliest first):"]
    for r in [head, *rows]:
        lines.append("  ".join(r[i].ljust(widths[i]) if i in (0, 1) else r[i].rjust(widths[i])
                               for i in range(5)) + "  " + r[5])
    return "\n".join(lines)
