"""Human-readable numbers, the one formatter of the app: CLI tables, reports and every view.

Pure Python (no Qt, no JAX), so the Qt widgets may use it too (the one ``app`` module they import; see the
import-linter contracts in ``pyproject.toml``). Missing figures show as ``–``.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable, Sequence
from typing import Any


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
    """Bytes with binary prefixes, named as such: ``nbytes(3 * 2**20)`` → ``"3.00 MiB"``, ``nbytes(160e9)`` →
    ``"149 GiB"``, ``nbytes(512)`` → ``"512 B"``; ``nbytes(None)`` → ``"–"`` (issue 55: "149 GB" was 149 GiB)."""
    text = si(value, "B", base=1024)
    if value is None or text[-2:-1] not in ("k", "M", "G", "T", "P"):
        return text
    return text[:-2] + text[-2:-1].upper() + "iB"


def counted(n: int, word: str, plural: str | None = None) -> str:
    """A count and its noun, singular for one: ``counted(1, "call")`` → ``"1 call"``, ``counted(2, "call")`` →
    ``"2 calls"``, ``counted(1200, "position")`` → ``"1,200 positions"``, ``counted(2, "box", "boxes")``."""
    return f"{n:,} {word if n == 1 else (plural or word + 's')}"


def ms(value: float | None) -> str:
    """Milliseconds, switching to seconds above 1 s: ``ms(1234)`` → ``"1.23 s"``, and to microseconds where one
    decimal would read "0.0 ms": ``ms(0.012)`` → ``"12 µs"`` (a fast program call)."""
    if value is None:
        return "–"
    if 0 < value < 0.05:
        return f"{value * 1000:.0f} µs"
    if value >= 1000:
        return f"{value / 1000:.2f} s"
    if value >= 100:
        return f"{value:.0f} ms"
    return f"{value:.1f} ms"


def fmt(value: Any, spec: str, missing: str = "–") -> str:
    """``format(value, spec)``, or ``missing`` for None (a figure a run could not produce)."""
    return missing if value is None else format(value, spec)


def fixed(digits: int) -> Callable[[Any], str]:
    """A formatter with ``digits`` decimals and thousands separators: ``fixed(1)(1234.56)`` → ``"1,234.6"``."""
    return lambda value: fmt(value, f",.{digits}f")


def percent(fraction: float | None) -> str:
    """A fraction as a percentage with one decimal, no sign: ``percent(0.123)`` → ``"12.3"``."""
    return fmt(None if fraction is None else fraction * 100, ".1f")


def csv_cell(value: Any) -> Any:
    """A CSV cell: lists space-separated, None empty, anything else as is."""
    return " ".join(map(str, value)) if isinstance(value, (list, tuple)) else ("" if value is None else value)


def csv_text(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """CSV text (``\n`` line ends) of ``header`` then ``rows``, each cell through :func:`csv_cell`: the one
    CSV writer of the app (profile rows, source maps, call records, the Qt tables' exports)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow([csv_cell(v) for v in row])
    return buf.getvalue()


def flops(value: float | None) -> str:
    """A FLOP count with decimal prefixes, three significant digits: ``flops(1.234e9)`` → ``"1.23 G"``."""
    if value is None:
        return "–"
    for div, unit in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= div:
            return f"{value / div:.3g} {unit}"
    return f"{value:.0f}"


def times(value: float | None) -> str:
    """A ratio: ``times(1.876)`` → ``"1.88×"``."""
    return fmt(value, ".2f") + ("×" if value is not None else "")


def source_label(file: str, line: int) -> str:
    """The one ``file:line`` text of a source location (:class:`app.core.inspect.location.SourceLocation`
    uses it; so do the widgets, which receive plain fields): ``transformers/models/llama/modeling_llama.py:243``,
    ``""`` when the file is unknown."""
    return f"{short_file(file)}:{line}" if file else ""


def elide_start(text: str, max_chars: int) -> str:
    """``text`` cut at its start to fit ``max_chars``, so a ``file:line`` keeps its line number:
    ``…/llama/modeling_llama.py:243``."""
    return text if len(text) <= max_chars else "…" + text[len(text) - max(1, max_chars - 1):]


def short_file(path: str) -> str:
    """A source path shortened after ``site-packages/``: ``transformers/models/llama/modeling_llama.py``."""
    for marker in ("site-packages/", "dist-packages/"):
        if marker in path:
            return path.split(marker, 1)[1]
    return path
