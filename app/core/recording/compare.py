"""Comparing recorded runs: a summary table labelled by machine, and a line diff of two runs' IR texts."""

from __future__ import annotations

import difflib
import re
from dataclasses import replace
from typing import Any

from app.core.inspect.location import SourceLocation
from app.core.inspect.text_index import hlo_instructions
from app.core.inspect.views import HLO, JAXPR_SOURCE, STABLEHLO, keys
from app.core.recording.model import RecordedRun, is_program_run
from app.core.report.columns import RACE_COLUMNS, Column, render_text
from app.core.units import fmt

#: The IR texts a diff can compare (attributes of :class:`app.core.inspect.ir.StepIR`): the catalog's
#: ``diffable`` views (:data:`app.core.inspect.views.IR_VIEWS`).
IR_TEXTS = keys(diffable=True)

#: The comparison table: the run and its machine, then the race summary's figures.
COMPARE_COLUMNS: tuple[Column, ...] = (
    Column("run", "run", align="left"),
    Column("machine", "machine", align="left"),
    Column("recorded", "recorded", align="left"),
    # each fits at 1280 px; a race's token parity is a lane's against its race, not a comparison's
    *(c for c in RACE_COLUMNS if c.key not in ("mode", "speedup_vs_torch", "speedup_ci", "cache_len", "parity")),
)


#: The comparison table of program runs (``program --save-session``): calls, not tokens.
PROGRAM_COMPARE_COLUMNS: tuple[Column, ...] = tuple(
    replace(c, title="first call", short="first call") if c.key == "ttft_ms"
    else replace(c, title="steady call", short="steady call") if c.key == "steady_ms_per_token"
    else replace(c, key="n_calls", title="calls", short="calls") if c.key == "n_tokens" else c
    for c in COMPARE_COLUMNS if c.key != "decode_tokens_per_s")


def compare_rows(runs: list[RecordedRun]) -> list[dict[str, Any]]:
    """One row per run, keyed as :data:`COMPARE_COLUMNS`: ``run`` (label and mode), ``machine``
    (``"CPU × 1 · jax 0.10.2"``), ``recorded`` (date), ``ttft_ms``, ``compile_ms``, ``n_compiles``,
    ``steady_ms_per_token``, ``decode_tokens_per_s``, ``total_ms`` (ms), ``n_tokens``, ``n_calls``. A run that did not
    finish has None figures."""
    rows = []
    for run in runs:
        s = run.summary
        rows.append({
            "run": run.label if run.mode in run.label else f"{run.label} · {run.mode}",
            "machine": run.machine, "recorded": run.recorded_at[:10],
            "ttft_ms": s.ttft_ms if s else None, "compile_ms": s.compile_ms if s else None,
            "n_compiles": s.n_compiles if s else None,
            "steady_ms_per_token": s.steady_decode_ms if s else None,
            "decode_tokens_per_s": s.decode_tokens_per_s if s else None,
            "total_ms": s.total_ms if s else None, "n_tokens": s.n_tokens if s else len(run.tokens),
            "n_calls": s.n_calls if s else len(run.records),
        })
    return rows


def format_compare(runs: list[RecordedRun]) -> str:
    """The comparison table as text (the CLI's ``show-session --compare``), with the best value of each
    figure named below it when runs come from more than one machine or mode. Runs of the user's programs
    only (:func:`app.core.recording.model.is_program_run`): :data:`PROGRAM_COMPARE_COLUMNS`, in calls."""
    rows = compare_rows(runs)
    columns = PROGRAM_COMPARE_COLUMNS if runs and all(is_program_run(r) for r in runs) else COMPARE_COLUMNS
    lines = [render_text(columns, rows)]
    for c in columns:
        values = [(r[c.key], r["run"], r["machine"]) for r in rows if isinstance(r.get(c.key), (int, float))]
        if c.best and len(values) > 1:
            best = (min if c.best == "low" else max)(values, key=lambda v: v[0])
            lines.append(f"best {c.title}: {c.format(best[0])} {c.unit} — {best[1]} on {best[2]}".replace("  ", " "))
    return "\n".join(lines)


_HLO_ID = re.compile(r"(?<=[A-Za-z_])\.\d+\b")  # %fusion.12 → %fusion.#
_SSA = re.compile(r"%\d+\b")  # StableHLO %12 → %#
_LOC = re.compile(r"\s*(loc\(#loc\d*\)|metadata=\{[^}]*\})")  # source locations and metadata


def normalize_line(line: str, which: str) -> str:
    """The line as the diff aligns it: instruction numbers (``fusion.12``), SSA values (``%12``), source
    locations and metadata dropped, so the same program on two machines aligns line by line and only
    real differences (shapes, ops, layouts, fusions) remain."""
    line = _LOC.sub("", line).rstrip()
    if which in (HLO, STABLEHLO):
        return _SSA.sub("%#", _HLO_ID.sub(".#", line))
    return line


#: How :func:`ir_diff` pairs lines: ``"text"`` in text order, ``"source"`` by source location.
ALIGNS = ("text", "source")
#: The IR texts whose lines carry their source location (what ``align="source"`` needs): the catalog's
#: ``source_lines`` views.
SOURCE_TEXTS = keys(diffable=True, source_lines=True)
NO_SOURCE = "(no source location)"
_JAXPR_LOC = re.compile(r"#\s*(\S+?):(\d+)(?::\d+)?(?:\s+\([^)]*\))?\s*$")


def _location_key(file: str, line: int) -> str:
    """``file:line`` as two machines share it: the path after ``site-packages/``, else the file's name
    (a home folder or checkout path differs between machines)."""
    label = SourceLocation(file, line).label
    if label.startswith("/") or ":\\" in label[:3]:
        label = label.replace("\\", "/").rsplit("/", 1)[-1]
    return label


def source_keys(text: str, which: str) -> list[str]:
    """Each line's source location (``"model.py:12"``, :data:`NO_SOURCE` when it has none): from an
    equation's ``# file:line:col (function)`` comment in ``jaxpr_source`` (continuation lines and the lines
    after belong to the equation above), from an instruction's metadata in ``hlo`` (``stack_frame_id``
    through the module's tables, or ``source_file`` / ``source_line``). Raises KeyError for another
    ``which``."""
    lines = text.splitlines()
    if which == HLO:
        by_line = {ins.text_line: _location_key(ins.file, ins.line) for ins in hlo_instructions(text) if ins.file}
        return [by_line.get(i + 1, NO_SOURCE) for i in range(len(lines))]
    if which == JAXPR_SOURCE:
        keys, current = [], NO_SOURCE
        for line in lines:
            m = _JAXPR_LOC.search(line)
            if m and "=" in line.split("#", 1)[0]:  # an equation's line with its location comment
                current = _location_key(m.group(1), int(m.group(2)))
            elif line.strip().startswith(("{", "in ")) or line.strip() == "}":
                current = NO_SOURCE
            keys.append(current)
        return keys
    raise KeyError(f"aligning by source line needs a text with source locations ({', '.join(SOURCE_TEXTS)}), "
                   f"not {which}")


def _source_normalized(line: str, which: str) -> str:
    """:func:`normalize_line`, and for ``jaxpr_source`` the location comment dropped (the location is what
    the lines are grouped by; its path differs between machines)."""
    if which == JAXPR_SOURCE:
        line = line.split("#", 1)[0]
    return normalize_line(line, which)


def _source_diff(texts: list[list[str]], which: str, header: list[str]) -> str:
    """Lines grouped by source location, each location's lines of both runs diffed (normalized)."""
    groups: list[dict[str, list[str]]] = []
    for lines in texts:
        g: dict[str, list[str]] = {}
        for key, line in zip(source_keys("\n".join(lines), which), lines):
            g.setdefault(key, []).append(line)
        groups.append(g)
    order = list(groups[0]) + [k for k in groups[1] if k not in groups[0]]
    body: list[str] = []
    same = removed = added = n_same = n_differ = 0
    for key in order:
        la, lb = groups[0].get(key, []), groups[1].get(key, [])
        na, nb = [_source_normalized(x, which) for x in la], [_source_normalized(x, which) for x in lb]
        matcher = difflib.SequenceMatcher(None, na, nb, autojunk=False)
        aligned = sum(m.size for m in matcher.get_matching_blocks())
        same += aligned
        if na == nb:
            n_same += 1
            continue
        n_differ += 1
        where = "only in the first" if not lb else "only in the second" if not la else f"{aligned} lines align"
        body.append(f"@@ {key} ({len(la)} → {len(lb)} lines, {where}) @@")
        for tag, a1, a2, b1, b2 in matcher.get_opcodes():
            if tag == "equal":
                body += [" " + x for x in la[a1:a2]]
                continue
            body += ["-" + x for x in la[a1:a2]] + ["+" + x for x in lb[b1:b2]]
            removed += a2 - a1
            added += b2 - b1
    summary = (f"aligned by source line: {len(order)} locations, {n_same} the same, {n_differ} differ · "
               f"{same} lines align, {removed} only in the first, {added} only in the second"
               + (" (identical after normalizing)" if not removed and not added else ""))
    return "\n".join([*header, summary, *body])


def ir_diff(a: RecordedRun, b: RecordedRun, step: str, which: str = HLO, context: int = 3,
            align: str = "text") -> str:
    """A unified diff of ``step``'s ``which`` text (one of :data:`IR_TEXTS`) in runs ``a`` and ``b``,
    aligned on normalized lines (:func:`normalize_line`) and printed with the original lines; a header
    names both runs and machines and counts the lines that differ. ``align="source"`` pairs the lines by
    their source location instead of text order (:func:`source_keys`; ``which`` one of
    :data:`SOURCE_TEXTS`): one hunk per ``file:line`` whose lines differ, headed by it, so a reordered or
    re-fused module still lines up with the code it came from. Raises KeyError naming what is missing
    when either run has no such step or text, or ``which`` has no source locations to align by."""
    if which not in IR_TEXTS:
        raise KeyError(f"unknown IR text {which!r} (one of {', '.join(IR_TEXTS)})")
    if align not in ALIGNS:
        raise KeyError(f"unknown alignment {align!r} (one of {', '.join(ALIGNS)})")
    if align == "source" and which not in SOURCE_TEXTS:
        raise KeyError(f"aligning by source line needs a text with source locations "
                       f"({', '.join(SOURCE_TEXTS)}), not {which}")
    texts = []
    for run in (a, b):
        ir = run.ir.get(step)
        if ir is None:
            raise KeyError(f"{run.label} has no IR of the {step} step (it has: {', '.join(run.ir) or 'none'})")
        text = ir.text(which)
        if text is None:
            raise KeyError(f"{run.label} has no {which} text of the {step} step")
        texts.append(text.splitlines())
    if align == "source":
        return _source_diff(texts, which, [
            f"--- {a.label} · {a.machine}  ({step} {which}, {len(texts[0])} lines)",
            f"+++ {b.label} · {b.machine}  ({step} {which}, {len(texts[1])} lines)"])
    norm = [[normalize_line(x, which) for x in t] for t in texts]
    matcher = difflib.SequenceMatcher(None, norm[0], norm[1], autojunk=False)
    out = [f"--- {a.label} · {a.machine}  ({step} {which}, {len(texts[0])} lines)",
           f"+++ {b.label} · {b.machine}  ({step} {which}, {len(texts[1])} lines)"]
    removed = added = 0
    for group in matcher.get_grouped_opcodes(context):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        out.append(f"@@ -{i1 + 1},{i2 - i1} +{j1 + 1},{j2 - j1} @@")
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                out += [" " + x for x in texts[0][a1:a2]]
                continue
            out += ["-" + x for x in texts[0][a1:a2]]
            out += ["+" + x for x in texts[1][b1:b2]]
            removed += a2 - a1
            added += b2 - b1
    same = sum(m.size for m in matcher.get_matching_blocks())
    out.insert(2, f"{same} lines align, {removed} only in the first, {added} only in the second"
                  + (" (identical after normalizing)" if not removed and not added else ""))
    return "\n".join(out)


def ir_figures(run: RecordedRun) -> list[str]:
    """One line per recorded step: its counts and cost, e.g. ``decode: 412 equations · 96 StableHLO ops ·
    80 HLO instructions (12 fusions) · 1.2 GFLOP · 40.1 MB accessed``."""
    lines = []
    for step, ir in run.ir.items():
        s = ir.summary()
        parts = [f"{fmt(s['n_equations'], ',d')} equations", f"{fmt(s['n_stablehlo_ops'], ',d')} StableHLO ops",
                 f"{fmt(s['n_hlo_instructions'], ',d')} HLO instructions ({fmt(s['n_fusions'], ',d')} fusions)"]
        if s["flops"] is not None:
            parts.append(f"{s['flops'] / 1e9:,.3f} GFLOP")
        if s["bytes_accessed"] is not None:
            parts.append(f"{s['bytes_accessed'] / 1e6:,.1f} MB accessed")
        texts = [w for w in IR_TEXTS if ir.text(w)]
        lines.append(f"{step}: " + " · ".join(parts) + f" · texts: {', '.join(texts) or 'none'}")
    return lines
