"""Export call records and runs: CSV, JSON, and a Markdown run report (for talks and issues)."""

from __future__ import annotations

import json
import os
import platform
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from importlib import metadata
from pathlib import Path
from typing import Any

from app.core.events import COMPILE_PHASES_FIELD
from app.core.report.columns import RACE_COLUMNS, RECORD_FIELDS, render_markdown
from app.core.units import csv_text
from app.core.verdict.words import format_verdicts


def record_rows(records: Iterable[Any], run: str = "") -> list[dict[str, Any]]:
    """Flat dicts (one per :class:`CallRecord`) with the columns of :data:`RECORD_FIELDS`."""
    rows = []
    for r in records:
        d = asdict(r)
        d["run"] = run
        d["input_ids_shape"] = "x".join(map(str, r.input_shapes.get("input_ids", [])))
        d[COMPILE_PHASES_FIELD] = json.dumps(r.compile_phases) if r.compile_phases else ""
        rows.append({k: d.get(k) for k in RECORD_FIELDS})
    return rows


def write_records_csv(path: str | Path, runs: dict[str, list[Any]]) -> int:
    """Write every run's records to CSV; ``runs`` maps a run label to its records. Returns rows written."""
    rows = [row for label, records in runs.items() for row in record_rows(records, label)]
    Path(path).write_text(csv_text(RECORD_FIELDS, ([row[k] for k in RECORD_FIELDS] for row in rows)),
                          encoding="utf-8")
    return len(rows)


VERSIONED = ("jax", "jaxlib", "torch", "torchax", "transformers")


def machine_info() -> dict[str, Any]:
    """Where the figures were measured: OS, CPU architecture and processor, logical cores, Python and the
    versions of the JAX / PyTorch packages (``importlib.metadata``; None when not installed)."""

    def version(name: str) -> str | None:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return None

    return {
        "os": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor() or None,
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "packages": {name: version(name) for name in VERSIONED},
    }


def write_records_json(
    path: str | Path, runs: dict[str, list[Any]], meta: dict[str, Any] | None = None
) -> int:
    """Write ``{label: [record, …]}`` as JSON (full records, input shapes included); with ``meta`` (e.g.
    model, modes, mesh, :func:`machine_info`) the file is ``{"metadata": meta, "runs": {label: […]}}``.
    Returns the number of records written."""
    data = {label: [asdict(r) for r in records] for label, records in runs.items()}
    out = data if meta is None else {"metadata": meta, "runs": data}
    Path(path).write_text(json.dumps(out, indent=2, default=str), encoding="utf-8")
    return sum(len(v) for v in data.values())


def markdown_report(
    title: str,
    model: str,
    prompt: str,
    rows: list[dict[str, Any]],
    images: Sequence[str] = (),
    text: str = "",
) -> str:
    """A Markdown run report: model, prompt, a summary table (rows as from
    :func:`app.core.race.summary_rows`, columns :data:`app.core.report.columns.RACE_COLUMNS`), linked figures and
    the generated text."""
    lines = [f"# {title}", "", f"- model: `{model}`", f"- prompt: {prompt!r}", ""]
    lines += render_markdown(RACE_COLUMNS, rows)
    for image in images:
        lines += ["", f"![{Path(image).stem}]({image})"]
    if text:
        lines += ["", "## Generated text", "", "```", text, "```"]
    return "\n".join(lines) + "\n"


#: The columns of a verdicts CSV: one row per pair (:class:`app.core.verdict.words.PairVerdict`'s fields).
VERDICT_FIELDS = ("mode", "against", "ratio", "ci_low", "ci_high", "rounds", "aa_noise", "dropped", "noisy", "text")


def write_verdicts_csv(path: str | Path, doc: dict[str, Any]) -> int:
    """Write a race's steady-state verdicts (its JSON form, :meth:`app.core.events.VerdictsEvent.to_json` or a
    session file's copy) as CSV, one row per pair (:data:`VERDICT_FIELDS`). Returns the rows written."""
    pairs = doc.get("pairs") or []
    Path(path).write_text(csv_text(VERDICT_FIELDS, ([p.get(k) for k in VERDICT_FIELDS] for p in pairs)),
                          encoding="utf-8")
    return len(pairs)


def verdict_section(doc: dict[str, Any] | None) -> list[str]:
    """A run report's steady-state section (Markdown lines; none without verdicts): the phase's head line (rounds,
    A/A floor, threads, why it stopped) and one bullet per pair (:func:`app.core.verdict.words.format_verdicts`)."""
    if not doc:
        return []
    head, *rest = format_verdicts(doc).splitlines()
    return ["", "## Steady-state verdicts", "", head, "", *(f"- {line.strip()}" for line in rest)]
