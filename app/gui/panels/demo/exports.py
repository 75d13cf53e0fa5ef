"""Exports of the demo kit: the latency plot (PNG / SVG / PDF), call records (CSV / JSON), a Markdown run report.

Plain functions over the session's runs (:class:`app.core.session.model.RunState`); the window asks for file
names and reports the result.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core.events import CallRecord
from app.core.race import summary_rows
from app.core.report.columns import COMPILE_COLUMNS, compile_rows, render_markdown
from app.core.report.export import (
    machine_info,
    markdown_report,
    verdict_section,
    write_records_csv,
    write_records_json,
    write_verdicts_csv,
)
from app.core.session.model import RunState
from widgets.demo.phase_bars import PhaseCall
from widgets.plot.plot_export import export_plot

if TYPE_CHECKING:
    import pyqtgraph as pg

PHASES_PER_RUN = 4  # jit-dynamic compiles at every step: its first few bars tell the story


def compiler_parts(record: CallRecord) -> tuple[tuple[str, float], ...]:
    """A compile's own split when the compiler reports one beyond trace / lower / compile (torch-compile:
    Dynamo, AOT autograd, Inductor lowering and codegen, C++ compile; ms), else ``()``."""
    parts = {k: v for k, v in (record.compile_phases or {}).items() if k not in ("trace", "lower", "compile")}
    return tuple(parts.items())


def phase_calls(runs: list[RunState], per_run: int = PHASES_PER_RUN) -> list[PhaseCall]:
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
                    compiler_parts(r),
                )
            )
    return calls


def records_by_run(runs: list[RunState]) -> dict[str, list[CallRecord]]:
    return {run.label: run.records for run in runs if run.records}


def summary(runs: list[RunState]) -> list[dict[str, Any]]:
    """``summary_rows`` of the finished runs (the latest run per mode when a mode appears twice)."""
    return summary_rows({run.mode: run.finished for run in runs if run.finished is not None})


def run_metadata(
    runs: list[RunState], model: str, dtype: str, mesh: str, generation: dict[str, Any],
    verdicts: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """What a JSON export says about the runs: model, dtype, mesh, the generation settings, each run's
    mode, race and end, the machine (:func:`app.core.report.export.machine_info`) and the races' steady-state
    ``verdicts`` (:func:`plot_verdicts`; ``[]`` when none ran)."""
    return {
        "model": model,
        "dtype": dtype,
        "mesh": mesh,
        "generation": generation,
        "runs": [
            {
                "label": run.label,
                "mode": run.mode,
                "race": run.race,
                "finished": run.finished.reason if run.finished else None,
            }
            for run in runs
        ],
        "machine": machine_info(),
        "verdicts": list(verdicts or []),
    }


def plot_verdicts(race_verdicts: dict[int, dict[str, Any]], runs: list[RunState]) -> list[dict[str, Any]]:
    """The steady-state verdicts (``race_verdicts``: the session's, race number → JSON form) of the races among
    ``runs``, oldest race first."""
    races = {run.race for run in runs if run.race is not None}
    return [doc for race, doc in sorted(race_verdicts.items()) if race in races]


def save_verdicts_csv(path: str | Path, verdicts: list[dict[str, Any]]) -> Path | None:
    """Beside a call-record CSV at ``path``, the newest race's verdicts as ``<stem>-verdicts.csv`` (one row per
    pair: :data:`app.core.report.export.VERDICT_FIELDS`); None (nothing written) without verdicts."""
    if not verdicts:
        return None
    beside = Path(path).with_name(f"{Path(path).stem}-verdicts.csv")
    write_verdicts_csv(beside, verdicts[-1])
    return beside


def save_records(path: str | Path, runs: list[RunState], meta: dict[str, Any] | None = None) -> int:
    """CSV, or JSON for a ``.json`` suffix (with ``meta`` as its ``metadata``). Returns the number of
    records written."""
    data = records_by_run(runs)
    if Path(path).suffix.lower() == ".json":
        return write_records_json(path, data, meta)
    return write_records_csv(path, data)


def compile_lines(runs: list[RunState]) -> list[str]:
    """A Markdown table of the compiling calls (:data:`app.core.report.columns.COMPILE_COLUMNS`)."""
    rows = compile_rows((run.label, run.records) for run in runs)
    if not rows:
        return []
    return ["", "## Why it compiled", "", *render_markdown(COMPILE_COLUMNS, rows)]


def save_report(path: str | Path, runs: list[RunState], plot: pg.PlotWidget, model: str, prompt: str,
                verdicts: list[dict[str, Any]] | None = None) -> Path:
    """Write a Markdown report at ``path`` (with a section per race's steady-state ``verdicts``) and the plot as a
    PNG next to it (same stem). Returns the PNG."""
    path = Path(path)
    png = export_plot(plot, path.with_suffix(".png"))
    last = next((run.finished for run in reversed(runs) if run.finished is not None), None)
    text = last.text if last is not None else ""
    modes = ", ".join(dict.fromkeys(run.mode for run in runs))
    title = "Mode race" if len({run.race for run in runs} - {None}) else "Run report"
    report = markdown_report(f"{title}: {modes}", model, prompt, summary(runs), images=[png.name], text=text)
    steady = [line for doc in verdicts or [] for line in verdict_section(doc)]
    path.write_text(report + "\n".join(steady + compile_lines(runs)) + "\n", encoding="utf-8")
    return png
