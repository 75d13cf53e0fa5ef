"""The profile's table and its one-line summary, defined once: the title of each aggregation (``by``), every column (key, title,
unit, formatter) and the CSV columns. The CLI's text table (:func:`profile_columns`), the Qt table (which
takes :data:`PROFILE_COLUMNS` and :data:`BY_TITLES` as plain data) and the CSV/JSON exports render these.
Row keys are those of :meth:`app.core.profile.model.ProfileRow.to_dict`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from app.core.profile.experts import experts_split
from app.core.report.columns import Column
from app.core.units import fixed, ms, percent

if TYPE_CHECKING:
    from app.core.profile.model import ProfileRow, StepProfile


def _text(value: object) -> str:
    return str(value) if value else "–"


#: The aggregations of a profile (``by``): per source line (``file:line``), per ATen op, per HLO instruction (the
#: profile's own rows) and per module path. The CLI's ``--by`` choices, the session's and the window's row sets
#: and :func:`app.core.profile.build.aggregate` read these names.
BY_LINE, BY_OP, BY_FUSION, BY_MODULE = "line", "op", "fusion", "module"
#: Aggregation key → the title of the rows' first column.
BY_TITLES: dict[str, str] = {BY_LINE: "source line", BY_OP: "ATen op", BY_FUSION: "HLO instruction",
                             BY_MODULE: "module"}

#: Every column of the profile table, left to right (``key``'s title follows ``by``: :data:`BY_TITLES`).
PROFILE_COLUMNS: tuple[Column, ...] = (
    Column("key", BY_TITLES[BY_LINE], format=str, align="left"),
    Column("us_per_step", "µs/step", "µs", fixed(1)),
    Column("share", "% of step", "%", percent, help="Share of the step's wall time during which this row's ops run"),
    Column("gbs", "GB/s", "GB/s", fixed(1)),
    Column("bandwidth_share", "% of read BW", "%", percent, help=(
        "GB/s over the machine's measured read bandwidth (a sum over an array far larger than the CPU caches). Over 100 %: the op's bytes "
        "were (partly) in the CPU caches, which are faster than DRAM; the estimate counts them as read from memory.")),
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
    where = next(c for c in PROFILE_COLUMNS if c.key == ("module" if by == BY_LINE else "source"))
    return (*figures, key_column(by), where)


def _bandwidth_share(row: ProfileRow | dict[str, Any]) -> float:
    value = row.get("bandwidth_share") if isinstance(row, dict) else getattr(row, "bandwidth_share", None)
    return float(value or 0.0)


def rows_over_bandwidth(rows: list[Any]) -> list[Any]:
    """The rows whose ``% of read BW`` exceeds 100 % (``bandwidth_share > 1``): the one definition the
    note (:func:`bandwidth_note`) and the table's row count use, counted over the rows they are given — the
    rows the table shows (issue 29, flaw 16: the note counted the instruction rows over a table of source
    lines)."""
    return [r for r in rows if _bandwidth_share(r) > 1.0]


def bandwidth_note(rows: list[Any], bandwidth_gbs: float | None) -> str:
    """Why some rows read faster than the machine can (``""`` when none does): the read bandwidth is measured
    from DRAM (an array far larger than the caches, :func:`app.core.profile.capture.read_bandwidth_gbs`), while an op whose bytes are
    still in the CPU caches reads them faster — its ``% of read BW`` then exceeds 100 %. ``rows``: profile rows
    (objects or dicts with ``bandwidth_share``, a fraction), those shown."""
    over = rows_over_bandwidth(rows)
    if not over or not bandwidth_gbs:
        return ""
    top = max(_bandwidth_share(r) for r in over)
    return (f"{len(over)} row{'s' if len(over) > 1 else ''} above 100 % of read BW (up to {top:.0%}): "
            f"{bandwidth_gbs:.1f} GB/s is DRAM's read bandwidth, and bytes already in the CPU caches are read faster.")


def ops_running(p: StepProfile) -> str:
    """``ops running 84%``: the one "ops running" figure of a profile (header, status line, CLI and the
    timeline's line): ``attributed_share``, the time during which at least one op of the step runs over the
    steps' wall time, summed over all ``n_steps`` profiled steps (the mean step's share, not the drawn one's)."""
    return f"ops running {p.attributed_share:.0%}"


def timeline_ops_running(p: StepProfile) -> str:
    """The timeline's line about the same figure, with its denominator: ``ops running 84% of the wall time of
    the 20 steps``."""
    n = p.n_steps
    return f"{ops_running(p)} of the wall time of the {n} steps" if n != 1 else f"{ops_running(p)} of the step's wall time"


def profile_summary(p: StepProfile) -> str:
    """One line of a :class:`app.core.profile.model.StepProfile`'s step figures, the same in the window's
    Profile tab, its status line and the CLI: step wall time, the share covered by ops, idle (host + between
    ops), bytes read per step and the bandwidth bound, e.g. ``decode step 29.1 ms per step · ops running 84% ·
    idle 16% (host 10%, between ops 6%) · 538 MB read per step · bound 16.0 ms at 33.6 GB/s (1.82× the bound)``;
    a mixture-of-experts step adds its experts' matmuls against the other ops (:mod:`app.core.profile.experts`)."""
    bound = (f" · {p.bytes_per_step / 1e6:,.0f} MB read per step · bound {ms(p.bound_ms)} at "
             f"{p.bandwidth_gbs:.1f} GB/s ({p.step_ms / p.bound_ms:.2f}× the bound)") if p.bound_ms else ""
    split = experts_split(p)  # a mixture-of-experts step: its experts' matmuls against the other ops (issue 42)
    experts = f" · {split.line()}" if split is not None else ""
    untraced = getattr(p, "untraced_ms", None)  # medians against medians: a traced step's outliers stay out
    traced = ""
    if untraced:
        added = (f": the profiler's events add {p.step_ms_median / untraced - 1:.0%}"
                 if p.step_ms_median > untraced else "")
        traced = f" (median {ms(p.step_ms_median)}, untraced {ms(untraced)}{added})"
    return (f"{p.step} step {ms(p.step_ms)} per step (mean of {p.n_steps}){traced} · {ops_running(p)} · idle "
            f"{p.idle_share:.0%} (host {p.host_share:.0%}, between ops {p.between_ops_share:.0%}){bound}{experts}")
