"""Table columns defined once: key, title, unit and formatter of every figure the app tabulates.

The CLI (:func:`render_text`), the Markdown report (:func:`render_markdown`) and the Qt tables (which take
these :class:`Column` objects as plain data) render the same definitions, so a title or a number format
changes in one place. Rows are plain dicts keyed by :attr:`Column.key`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.core import units
from app.core.events import COMPILE_PHASES_FIELD

if TYPE_CHECKING:
    from app.core.events import CallRecord


@dataclass(frozen=True)
class Column:
    """One column. ``format(value)`` gives the cell text (``–`` for None); ``best`` says which value of a
    row of modes is best (``"low"``, ``"high"`` or None); ``short`` is the title for narrow tables."""

    key: str
    title: str
    unit: str = ""
    format: Callable[[Any], str] = str
    best: str | None = None
    short: str = ""
    align: str = "right"
    #: The cell text with its unit, for tables read aloud or from afar (the race summary in the window:
    #: ``75.87 s`` rather than ``75,868.4`` under a "ms" header); None = :attr:`format` and the header's unit.
    spoken: Callable[[Any], str] | None = None
    #: What the column means, for a header's tool tip ("" = the title says it all).
    help: str = ""
    #: The widest cell text the column is expected to show (a layout reserves its width, so the table keeps its
    #: width whatever the values are); "" = none reserved.
    widest: str = ""

    def spoken_text(self, value: object) -> str:
        return (self.spoken or self.format)(value)

    def text(self, row: dict[str, Any]) -> str:
        return self.format(row.get(self.key))

    @property
    def header(self) -> str:
        return f"{self.title} ({self.unit})" if self.unit and self.unit not in self.title else self.title


def _fixed(digits: int) -> Callable[[Any], str]:
    return lambda v: "" if v == "" else units.fmt(v, f",.{digits}f")  # "": a row's blank cell (a gap marker)


def _plain(value: object) -> str:
    return "–" if value is None else str(value)


def _per_token(value: float | None) -> str:
    return "–" if value is None else f"{value:,.2f} ms/token" if value < 10 else f"{value:,.1f} ms/token"


def _count(value: int | None) -> str:
    return "–" if value is None else f"{value:,}"


def _interval(value: Sequence[float] | None) -> str:
    """``(2.30, 2.52)`` → ``"2.30–2.52"``; ``–`` without an interval."""
    return "–" if not value else f"{value[0]:.2f}–{value[1]:.2f}"


def _rate(value: float | None) -> str:
    return "–" if value is None else f"{value:,.1f} tok/s"


#: Race summary, one row per mode (rows from :func:`app.core.race.summary_rows`).
RACE_COLUMNS: tuple[Column, ...] = (
    Column("mode", "mode", format=_plain, align="left"),
    Column("ttft_ms", "TTFT", "ms", _fixed(1), "low", short="TTFT", spoken=units.ms, widest="888.88 s"),
    Column("compile_ms", "compile", "ms", _fixed(1), short="compile", spoken=units.ms, widest="888.88 s"),
    Column("n_compiles", "compiles", format=_plain, short="compiles"),
    Column("steady_ms_per_token", "steady ms/token", "ms", _fixed(2), "low", short="steady decode",
           spoken=_per_token, widest="888.8 ms/token"),
    Column("decode_tokens_per_s", "decode tokens/s", "tokens/s", _fixed(1), "high", short="decode rate",
           spoken=_rate, widest="8,888.8 tok/s"),
    Column("total_ms", "total", "ms", _fixed(1), "low", short="total", spoken=units.ms, widest="888.88 s"),
    Column("n_tokens", "tokens", format=_plain, short="tokens"),
    Column("speedup_vs_torch", "× torch", format=units.times, best="high", short="× torch", widest="88.88×",
           help="steady decode against PyTorch eager: from the race's paired steady-state rounds when it ran them "
                "(95 % CI beside it), else one pass of each lane (no interval: not a verdict)"),
    Column("speedup_ci", "95 % CI", format=_interval, short="95 % CI", widest="88.88–88.88",
           help="the × torch ratio's 95 % confidence interval over the paired steady-state rounds (app/core/verdict)"),
    Column("x_bound", "× bound", format=units.times, best="low", short="× bound"),
    Column("cache_len", "KV cache", "positions", _count, short="KV cache", spoken=_count,
           help="the static KV cache's positions at the lane's end: attention reads what it holds (issue 38)"),
    Column("parity", "same tokens", format=_plain, short="same tokens",
           help="whether the lane generated the baseline's tokens (torch's when it ran, else the first lane's) "
                "over the tokens both made: same, or the first token that differs (app/core/race.py parity)"),
)


def _phases(value: dict[str, float] | None) -> str:
    """The phases the compiler reported, in order: ``{"trace": 210.0, "lower": 40.0, "compile": 760.0}``
    (JAX's stages) → ``"trace 210 ms · lower 40.0 ms · compile 760 ms"``; Dynamo / AOT autograd / Inductor
    phases for torch-compile."""
    return " · ".join(f"{name} {units.ms(ms)}" for name, ms in (value or {}).items()) or "–"


def _disk(value: bool | None) -> str:
    return "◆ hit" if value is True else ("miss" if value is False else "–")


#: Every field of a call record as exported (CSV / JSON): :func:`app.core.report.export.record_rows`.
RECORD_FIELDS = (
    "run", "index", "step", "mode", "input_ids_shape", "wall_ms", "execute_ms", "compiled", "trace_ms",
    "lower_ms", "compile_ms", COMPILE_PHASES_FIELD, "persistent_cache_hit", "compile_reason", "timestamp", "mesh",
)

#: One model call (rows from :func:`call_row`): the CLI's call table and the plot's call tool tip. Timing
#: columns are keyed by the :class:`app.core.events.CallRecord` field they show.
CALL_COLUMNS: tuple[Column, ...] = (
    Column("index", "call", format=_plain),
    Column("step", "step", format=_plain, align="left"),
    Column("input_ids", "input_ids", format=_plain, align="left"),
    Column("wall_ms", "wall", "ms", _fixed(1)),
    Column("trace_ms", "trace", "ms", _fixed(1)),
    Column("lower_ms", "lower", "ms", _fixed(1)),
    Column("compile_ms", "compile", "ms", _fixed(1)),
    Column("execute_ms", "execute", "ms", _fixed(1)),
    Column("note", "note", format=lambda v: v or "", align="left"),
)


def call_row(record: CallRecord) -> dict[str, Any]:
    """The :data:`CALL_COLUMNS` row of one :class:`app.core.events.CallRecord`."""
    note = ""
    if record.compiled:
        note = "compiled" + (" (persistent cache)" if record.persistent_cache_hit else "")
        if record.compile_reason:
            note += f": {record.compile_reason}"
    return {
        "index": record.index, "step": record.step, "input_ids": "x".join(map(str, record.input_shapes.get("input_ids", []))),
        "wall_ms": record.wall_ms, "trace_ms": record.trace_ms, "lower_ms": record.lower_ms,
        "compile_ms": record.compile_ms, "execute_ms": record.execute_ms, "note": note,
    }


#: Compiling calls (rows from :func:`compile_rows`): why each call compiled and what it cost.
COMPILE_COLUMNS: tuple[Column, ...] = (
    Column("run", "run", format=_plain, align="left"),
    Column("call", "call", format=_plain),
    Column("step", "step", format=_plain, align="left"),
    Column("reason", "why it compiled", format=lambda v: v or "–", align="left"),
    Column("compile_total_ms", "compile", "ms", units.ms),
    Column(COMPILE_PHASES_FIELD, "phases", format=_phases, align="left"),
    Column("disk_cache", "disk cache", format=_disk),
)


def compile_row(run: str, record: CallRecord) -> dict[str, Any]:
    """The :data:`COMPILE_COLUMNS` row of one compiling :class:`app.core.events.CallRecord`."""
    return {
        "run": run, "call": record.index, "step": record.step, "reason": record.compile_reason,
        "compile_total_ms": record.compile_total_ms,
        COMPILE_PHASES_FIELD: record.compile_phases,
        "disk_cache": record.persistent_cache_hit,
        "input_shapes": record.input_shapes,
    }


def call_compile_rows(run: str, record: CallRecord) -> list[dict[str, Any]]:
    """The :data:`COMPILE_COLUMNS` rows of one call: its own compile, then each compile it made inside it (a
    program's entry run as written calling jitted functions: :attr:`app.core.events.CallRecord.inner_compiles`,
    the reason naming the function and its call site)."""
    rows = [compile_row(run, record)] if record.compiled else []
    for c in getattr(record, "inner_compiles", None) or ():
        phases = {k: c[f"{k}_ms"] for k in ("trace", "lower", "compile") if c.get(f"{k}_ms") is not None}
        where = f" ({c['compile_site']})" if c.get("compile_site") else ""
        rows.append({"run": run, "call": record.index, "step": record.step,
                     "reason": f"{c.get('function') or 'jit'}{where}: {c.get('compile_reason') or 'compiled'}",
                     "compile_total_ms": sum(phases.values()), COMPILE_PHASES_FIELD: phases,
                     "disk_cache": c.get("persistent_cache_hit"), "input_shapes": {}})
    return rows


def compile_rows(runs: Iterable[tuple[str, Sequence[Any]]]) -> list[dict[str, Any]]:
    """Rows of every compile of ``runs`` (pairs of run label and call records), inner compiles included."""
    return [row for label, records in runs for r in records for row in call_compile_rows(label, r)]


def render_text(columns: Sequence[Column], rows: Sequence[dict[str, Any]]) -> str:
    """An aligned plain-text table with a header and a rule (the CLI's)."""
    cells = [[c.header for c in columns]] + [[c.text(row) for c in columns] for row in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(columns))]

    def line(values: list[str]) -> str:
        return " ".join(
            v.ljust(w) if c.align == "left" else v.rjust(w) for v, w, c in zip(values, widths, columns)
        ).rstrip()

    header = line(cells[0])
    return "\n".join([header, "-" * len(header), *(line(values) for values in cells[1:])])


def render_markdown(columns: Sequence[Column], rows: Sequence[dict[str, Any]]) -> list[str]:
    """A Markdown table, one string per line."""
    lines = ["| " + " | ".join(c.header for c in columns) + " |"]
    lines.append("|" + "|".join("---" if c.align == "left" else "---:" for c in columns) + "|")
    lines += ["| " + " | ".join(c.text(row) for c in columns) + " |" for row in rows]
    return lines
