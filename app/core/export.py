"""Export call records and runs: CSV, JSON, and a Markdown run report (for talks and issues)."""

from __future__ import annotations

import csv
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any, Iterable

from app.core.report import fmt

RECORD_FIELDS = (
    "run", "index", "step", "mode", "input_ids_shape", "wall_ms", "execute_ms", "compiled", "trace_ms",
    "lower_ms", "compile_ms", "persistent_cache_hit", "compile_reason", "timestamp",
)


def record_rows(records: Iterable[Any], run: str = "") -> list[dict[str, Any]]:
    """Flat dicts (one per :class:`CallRecord`) with the columns of :data:`RECORD_FIELDS`."""
    rows = []
    for r in records:
        d = asdict(r)
        d["run"] = run
        d["input_ids_shape"] = "x".join(map(str, r.input_shapes.get("input_ids", [])))
        rows.append({k: d.get(k) for k in RECORD_FIELDS})
    return rows


def write_records_csv(path: str | Path, runs: dict[str, list[Any]]) -> int:
    """Write every run's records to CSV; ``runs`` maps a run label to its records. Returns rows written."""
    rows = [row for label, records in runs.items() for row in record_rows(records, label)]
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=RECORD_FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    return len(rows)


def write_records_json(path: str | Path, runs: dict[str, list[Any]]) -> int:
    """Write ``{label: [record, …]}`` as JSON (full records, input shapes included). Returns records written."""
    data = {label: [asdict(r) for r in records] for label, records in runs.items()}
    Path(path).write_text(json.dumps(data, indent=2), encoding="utf-8")
    return sum(len(v) for v in data.values())


def markdown_report(
    title: str, model: str, prompt: str, rows: list[dict[str, Any]], images: list[str] = (), text: str = ""
) -> str:
    """A Markdown run report: model, prompt, a summary table (rows as from
    :func:`app.core.race.summary_rows`), linked figures and the generated text."""
    def f(value: Any, spec: str) -> str:
        return fmt(value, spec, missing="–")

    lines = [f"# {title}", "", f"- model: `{model}`", f"- prompt: {prompt!r}", ""]
    lines += ["| mode | TTFT ms | compile ms | steady ms/token | tokens/s | total ms | compiles | × torch |",
              "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(
            f"| {r['mode']} | {f(r['ttft_ms'], ',.1f')} | {f(r['compile_ms'], ',.1f')} | "
            f"{f(r['steady_ms_per_token'], ',.2f')} | {f(r['tokens_per_s'], ',.1f')} | {f(r['total_ms'], ',.1f')} | "
            f"{r['n_compiles']} | {f(r['speedup_vs_torch'], '.2f')} |"
        )
    for image in images:
        lines += ["", f"![{Path(image).stem}]({image})"]
    if text:
        lines += ["", "## Generated text", "", "```", text, "```"]
    return "\n".join(lines) + "\n"
