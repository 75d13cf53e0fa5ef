"""Exports of the demo kit: the latency plot (PNG / SVG), call records (CSV / JSON), a Markdown run report.

Plain functions over :class:`RunLog` lists; the window asks for file names and reports the result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.export import markdown_report, write_records_csv, write_records_json
from app.core.race import summary_rows
from widgets.format import ms
from widgets.phase_bars import PhaseCall
from widgets.plot_export import export_plot


@dataclass
class RunLog:
    """One run shown on the plot: its label (``"run 3 · jit-static"``), mode, call records, the finished
    event once it ends, and the race it belongs to (None for a single run)."""

    label: str
    mode: str
    records: list[Any] = field(default_factory=list)
    finished: Any = None
    race: int | None = None


PHASES_PER_RUN = 4  # jit-dynamic compiles at every step: its first few bars tell the story


def phase_calls(runs: list[RunLog], per_run: int = PHASES_PER_RUN) -> list[PhaseCall]:
    """The first ``per_run`` compiling calls of each run, as phase-bar rows."""
    calls = []
    for run in runs:
        for r in [r for r in run.records if r.compiled][:per_run]:
            calls.append(
                PhaseCall(
                    f"{run.mode} · {r.step} #{r.index}",
                    r.trace_ms or 0.0,
                    r.lower_ms or 0.0,
                    r.compile_ms or 0.0,
                    r.execute_ms or 0.0,
                    bool(r.persistent_cache_hit),
                )
            )
    return calls


def records_by_run(runs: list[RunLog]) -> dict[str, list[Any]]:
    return {run.label: run.records for run in runs if run.records}


def summary(runs: list[RunLog]) -> list[dict[str, Any]]:
    """``summary_rows`` of the finished runs (the latest run per mode when a mode appears twice)."""
    return summary_rows({run.mode: run.finished for run in runs if run.finished is not None})


def save_records(path: str | Path, runs: list[RunLog]) -> int:
    """CSV, or JSON for a ``.json`` suffix. Returns the number of records written."""
    data = records_by_run(runs)
    if Path(path).suffix.lower() == ".json":
        return write_records_json(path, data)
    return write_records_csv(path, data)


def compile_lines(runs: list[RunLog]) -> list[str]:
    """A Markdown table of the compiling calls: run, call, step, why, trace / lower / compile, disk hit."""
    rows = [(run, r) for run in runs for r in run.records if getattr(r, "compiled", False)]
    if not rows:
        return []
    lines = [
        "",
        "## Why it compiled",
        "",
        "| run | call | step | why | trace | lower | compile | disk cache |",
        "|---|---:|---|---|---:|---:|---:|---|",
    ]
    for run, r in rows:
        hit = "hit" if r.persistent_cache_hit else ("miss" if r.persistent_cache_hit is False else "–")
        lines.append(
            f"| {run.label} | {r.index} | {r.step} | {r.compile_reason or '–'} | {ms(r.trace_ms)} | "
            f"{ms(r.lower_ms)} | {ms(r.compile_ms)} | {hit} |"
        )
    return lines


def save_report(path: str | Path, runs: list[RunLog], plot: Any, model: str, prompt: str) -> Path:
    """Write a Markdown report at ``path`` and the plot as a PNG next to it (same stem). Returns the PNG."""
    path = Path(path)
    png = export_plot(plot, path.with_suffix(".png"))
    finished = [run for run in runs if run.finished is not None]
    text = finished[-1].finished.text if finished else ""
    modes = ", ".join(dict.fromkeys(run.mode for run in runs))
    title = "Mode race" if len({run.race for run in runs} - {None}) else "Run report"
    report = markdown_report(f"{title}: {modes}", model, prompt, summary(runs), images=[png.name], text=text)
    path.write_text(report + "\n".join(compile_lines(runs)) + "\n", encoding="utf-8")
    return png
