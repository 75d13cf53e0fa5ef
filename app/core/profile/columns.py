"""The profile's table, defined once: the title of each aggregation (``by``), every column (key, title,
unit, formatter) and the CSV columns. The CLI's text table (:func:`profile_columns`), the Qt table (which
takes :data:`PROFILE_COLUMNS` and :data:`BY_TITLES` as plain data) and the CSV/JSON exports render these.
Row keys are those of :meth:`app.core.profile.model.ProfileRow.to_dict`.
"""

from __future__ import annotations

from app.core.report.columns import Column
from app.core.units import fixed, percent


def _text(value: object) -> str:
    return str(value) if value else "–"


#: Aggregation key → the title of the rows' first column.
BY_TITLES: dict[str, str] = {"line": "source line", "op": "ATen op", "fusion": "HLO instruction", "module": "module"}

#: Every column of the profile table, left to right (``key``'s title follows ``by``: :data:`BY_TITLES`).
PROFILE_COLUMNS: tuple[Column, ...] = (
    Column("key", BY_TITLES["line"], format=str, align="left"),
    Column("us_per_step", "µs/step", "µs", fixed(1)),
    Column("share", "% of step", "%", percent),
    Column("gbs", "GB/s", "GB/s", fixed(1)),
    Column("bandwidth_share", "% of read BW", "%", percent),
    Column("gflops", "GFLOP/s", "GFLOP/s", fixed(2)),
    Column("calls_per_step", "calls", format=fixed(0)),
    Column("kind", "kind", format=_text, align="left"),
    Column("source", "source", format=_text, align="left"),
    Column("module", "module", format=_text, align="left"),
)

#: Columns of the CSV export, in order (every figure of a row).
CSV_COLUMNS = ("key", "us_per_step", "wall_us_per_step", "share", "calls_per_step", "bytes_per_step",
               "flops_per_step", "gbs", "gflops", "bandwidth_share", "bound_us", "source", "module", "aten",
               "kind", "instructions", "threads", "hlo_line", "via")


def key_column(by: str) -> Column:
    """The first column for rows aggregated ``by``."""
    return Column("key", BY_TITLES.get(by, by), format=str, align="left")


def profile_columns(by: str) -> tuple[Column, ...]:
    """Columns of the CLI's text table for rows aggregated ``by``: the figures, then the key, then where it is
    (the module of a source line; the source line of anything else)."""
    figures = tuple(c for c in PROFILE_COLUMNS if c.key not in ("key", "source", "module"))
    where = next(c for c in PROFILE_COLUMNS if c.key == ("module" if by == "line" else "source"))
    return (*figures, key_column(by), where)
