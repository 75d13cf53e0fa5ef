"""CSV and JSON export of a :class:`app.core.inspect.source_map.SourceMap` (no Qt).

JSON holds everything (equations and groups) and round-trips exactly: ``from_json(to_json(m)) == m``.
CSV holds one row per :class:`OpGroup` (what a spreadsheet wants); lists are space-separated, the
primitive counts ``name=count`` pairs; :func:`groups_from_csv` reads it back into equal groups.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from app.core.inspect.source_map import EquationInfo, OpGroup, SourceMap
from app.core.units import csv_text

#: The CSV column of :attr:`OpGroup.fusions`.
FUSIONS_COLUMN = "fusions"
CSV_COLUMNS = (
    "module", "file", "line", "function", "scope", "n_equations", "primitives", "out_shapes", "flops",
    "repeats", "stablehlo_lines", "hlo_lines", "hlo_instructions", FUSIONS_COLUMN, "equations",
)
#: The list fields of :class:`OpGroup`, space-separated in a CSV cell.
_INT_LISTS = tuple(f.name for f in fields(OpGroup) if f.type == "list[int]")
_STR_LISTS = tuple(f.name for f in fields(OpGroup) if f.type == "list[str]")


def to_dict(sm: SourceMap) -> dict:
    return {
        "step": sm.step, "folded": sm.folded, "input_labels": sm.input_labels,
        "equations": [asdict(e) for e in sm.equations], "groups": [asdict(g) for g in sm.groups],
    }


def to_json(sm: SourceMap, indent: int | None = None) -> str:
    return json.dumps(to_dict(sm), indent=indent)


def from_json(text: str) -> SourceMap:
    return from_dict(json.loads(text))


def from_dict(d: dict) -> SourceMap:
    """The :class:`SourceMap` of a :func:`to_dict` dict (raises KeyError / TypeError on a malformed one)."""
    return SourceMap(
        step=d["step"], folded=d.get("folded", False), input_labels=d.get("input_labels", []),
        equations=[EquationInfo(**e) for e in d["equations"]], groups=[OpGroup(**g) for g in d["groups"]],
    )


def _cell(g: OpGroup, col: str) -> Any:
    if col == "n_equations":
        return len(g.equations)
    if col == "primitives":
        return " ".join(f"{k}={v}" for k, v in g.primitives.items())
    if col == "flops":
        return repr(float(g.flops))
    return getattr(g, col)  # lists are space-separated by csv_text


def to_csv(sm: SourceMap) -> str:
    """CSV text of the map's groups, columns :data:`CSV_COLUMNS`."""
    return csv_text(CSV_COLUMNS, ([_cell(g, col) for col in CSV_COLUMNS] for g in sm.groups))


def groups_from_csv(text: str) -> list[OpGroup]:
    out = []
    for row in csv.DictReader(io.StringIO(text)):
        kw: dict = {}
        for f in fields(OpGroup):
            v = row.get(f.name, "")
            if f.name in _INT_LISTS:
                kw[f.name] = [int(x) for x in v.split()]
            elif f.name in _STR_LISTS:
                kw[f.name] = v.split()
            elif f.name == "primitives":
                kw[f.name] = {k: int(n) for k, n in (p.rsplit("=", 1) for p in v.split())}
            elif f.name in ("line", "repeats"):
                kw[f.name] = int(v)
            elif f.name == "flops":
                kw[f.name] = float(v)
            else:
                kw[f.name] = v
        out.append(OpGroup(**kw))
    return out


def write(sm: SourceMap, path: str | Path) -> str:
    """Write ``.json`` (full map) or anything else as CSV (groups). Returns the format written."""
    path = Path(path)
    if path.suffix.lower() == ".json":
        path.write_text(to_json(sm, indent=1), encoding="utf-8")
        return "json"
    path.write_text(to_csv(sm), encoding="utf-8")
    return "csv"
