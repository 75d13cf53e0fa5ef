"""Search across the snapshots of a recorded :class:`~app.core.passes.model.PassPipeline`, where an instruction
is first defined, and its history through the pipeline (created, opcode changed, moved into a fusion,
removed). Pure Python over the recorded texts."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from app.core.inspect.text_index import HLO_INSTRUCTION
from app.core.passes.model import PassPipeline


@dataclass
class SearchHit:
    """``snapshot`` (dump index), its label, the 1-based ``line`` and its text."""

    snapshot: int
    label: str
    line: int
    text: str


def search(pipeline: PassPipeline, text: str, *, regex: bool = False, first_only: bool = True) -> list[SearchHit]:
    """Lines containing ``text`` (a substring, or a regular expression with ``regex``) in every snapshot,
    in pipeline order; with ``first_only`` one hit per snapshot (its first line). Raises ``re.error`` for a
    bad expression."""
    pattern = re.compile(text) if regex else None
    hits = []
    for s in pipeline.all_snapshots():
        for i, line in enumerate(s.text.splitlines()):
            if (pattern.search(line) if pattern else text in line):
                hits.append(SearchHit(s.index, s.label, i + 1, line))
                if first_only:
                    break
    return hits


def _definition(text: str, name: str) -> tuple[int, str] | None:
    define = re.compile(rf"^\s+(?:ROOT )?%?{re.escape(name)} = ")
    for i, line in enumerate(text.splitlines()):
        if define.match(line):
            return i + 1, line
    return None


def first_appearance(pipeline: PassPipeline, name: str) -> SearchHit | None:
    """Where instruction ``name`` (``fusion.12``, ``ynn_fusion.3``) is first defined: the first snapshot
    whose text has a line ``%name = …``, and that line; None when no snapshot defines it."""
    for s in pipeline.all_snapshots():
        if found := _definition(s.text, name):
            return SearchHit(s.index, s.label, found[0], found[1])
    return None


# -------------------------------------------------------------------------------------------- history
@dataclass
class HistoryEvent:
    """What happened to an instruction at snapshot ``snapshot`` (its label; ``pass_name`` the pass that
    wrote it): ``what`` is ``created``, ``opcode`` (changed), ``moved`` (into another computation, e.g. a
    fused computation: ``detail`` names the computation and the fusion that calls it) or ``removed``."""

    snapshot: int
    label: str
    pass_name: str
    what: str
    detail: str = ""


@dataclass
class InstructionHistory:
    """An instruction's path through the pipeline; ``decisions``: fusion log entries naming it as producer
    or consumer (empty without a fusion log)."""

    name: str
    events: list[HistoryEvent]
    decisions: list = field(default_factory=list)

    @property
    def created_by(self) -> HistoryEvent | None:
        return next((e for e in self.events if e.what == "created"), None)


def _locate(text: str, name: str) -> tuple[str, str] | None:
    """(opcode, computation) of instruction ``name`` in a module text, or None."""
    lines = text.splitlines()
    define = re.compile(rf"^\s+(?:ROOT )?%?{re.escape(name)} = ")
    for i, line in enumerate(lines):
        if define.match(line):
            m = HLO_INSTRUCTION.match(line)
            comp = ""
            for j in range(i - 1, -1, -1):
                if lines[j] and not lines[j][0].isspace() and lines[j].rstrip().endswith("{"):
                    comp = lines[j].split(" ", 1)[0] if not lines[j].startswith("ENTRY") else "ENTRY"
                    break
            return (m.group(3) if m else ""), comp.lstrip("%")
    return None


def _caller(text: str, computation: str) -> str:
    m = re.search(rf"^\s+(?:ROOT )?%?([\w.\-]+) = .*\bcalls=%?{re.escape(computation)}\b", text, re.M)
    return m.group(1) if m else ""


def instruction_history(pipeline: PassPipeline, name: str) -> InstructionHistory:
    """Each snapshot where instruction ``name`` appears, changes opcode, moves to another computation (a
    fusion absorbing it) or disappears, with the pass that wrote that snapshot; and the fusion decisions
    about it."""
    events: list[HistoryEvent] = []
    prev: tuple[str, str] | None = None
    for s in pipeline.all_snapshots():
        if name not in s.text:
            now = None
        else:
            now = _locate(s.text, name)
        if now and not prev:
            events.append(HistoryEvent(s.index, s.label, s.pass_name, "created", f"{now[0]} in {now[1]}"))
        elif prev and not now:
            events.append(HistoryEvent(s.index, s.label, s.pass_name, "removed"))
        elif prev and now and now[0] != prev[0]:
            events.append(HistoryEvent(s.index, s.label, s.pass_name, "opcode", f"{prev[0]} → {now[0]}"))
        if prev and now and now[1] != prev[1]:
            caller = _caller(s.text, now[1])
            events.append(HistoryEvent(s.index, s.label, s.pass_name, "moved",
                                       f"into {now[1]}" + (f" (called by {caller})" if caller else "")))
        prev = now
    decisions = [d for d in pipeline.fusion_log if name in (d.producer, d.consumer, d.fusion)]
    return InstructionHistory(name, events, decisions)
