"""Human-readable numbers for the views (pure Python)."""

from __future__ import annotations


def si(value: float | None, unit: str = "", base: int = 1000) -> str:
    """``si(1.5e9, "FLOP")`` → ``"1.50 GFLOP"``; ``si(None)`` → ``"–"``."""
    if value is None:
        return "–"
    prefixes = ["", "k", "M", "G", "T", "P"]
    v, i = float(value), 0
    while abs(v) >= base and i < len(prefixes) - 1:
        v /= base
        i += 1
    digits = 0 if i == 0 else (2 if abs(v) < 10 else 1 if abs(v) < 100 else 0)
    return f"{v:.{digits}f} {prefixes[i]}{unit}".strip()


def nbytes(value: float | None) -> str:
    """Bytes with binary prefixes: ``nbytes(3 * 2**20)`` → ``"3.00 MB"`` (MiB shown as MB)."""
    return si(value, "B", base=1024)


def ms(value: float | None) -> str:
    """Milliseconds, switching to seconds above 1 s: ``ms(1234)`` → ``"1.23 s"``."""
    if value is None:
        return "–"
    if value >= 1000:
        return f"{value / 1000:.2f} s"
    if value >= 100:
        return f"{value:.0f} ms"
    return f"{value:.1f} ms"
