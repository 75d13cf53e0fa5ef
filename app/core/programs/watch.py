"""``program FILE:ENTRY --watch``: compile the entry again on every save of its file and say what changed — the
jaxpr equations and optimized-HLO instructions added, removed and changed, the compile's cause and its trace / lower
/ compile ms. The file's modification time is polled (no extra dependency); :func:`watch_file` is the loop, driven
by the CLI and by tests alike.
"""

from __future__ import annotations

import difflib
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from app.core.inspect.ir import capture
from app.core.inspect.text_index import HLO_INSTRUCTION
from app.core.jax_private import is_literal, jaxprs_in_params, open_jaxpr
from app.core.programs.errors import ProgramError
from app.core.programs.runner import ProgramRunner

if TYPE_CHECKING:
    from jax.extend.core import Jaxpr


@dataclass(frozen=True)
class IRChange:
    """Counts of what changed between two compiles: ``added`` / ``removed`` / ``changed`` items and the new
    ``total``. An item is a jaxpr equation (primitive with its input and output types; nested bodies included) or an
    HLO instruction (opcode and shape; names are ignored, as XLA renumbers them)."""

    added: int = 0
    removed: int = 0
    changed: int = 0
    total: int = 0

    def __str__(self) -> str:
        return f"+{self.added} −{self.removed} ~{self.changed} (of {self.total})"


def ir_change(old: list[str], new: list[str]) -> IRChange:
    """The :class:`IRChange` from item signatures ``old`` to ``new`` (``difflib`` opcodes: a replaced run counts
    its common length as changed, the rest as added or removed)."""
    added = removed = changed = 0
    for tag, a0, a1, b0, b1 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        n_old, n_new = a1 - a0, b1 - b0
        if tag == "replace":
            changed += min(n_old, n_new)
            added += max(0, n_new - n_old)
            removed += max(0, n_old - n_new)
        elif tag == "insert":
            added += n_new
        elif tag == "delete":
            removed += n_old
    return IRChange(added, removed, changed, len(new))


def equation_signatures(traced_jaxpr: Jaxpr) -> list[str]:
    """``"mul f32[4] f32[4] -> f32[4]"`` per equation of a traced jaxpr, nested jaxprs (scan / while / cond
    bodies, inner jit) walked in place."""
    out: list[str] = []

    def walk(jaxpr: Jaxpr) -> None:
        for eqn in jaxpr.eqns:
            ins = " ".join(str(v.aval.str_short()) if not is_literal(v) else repr(v) for v in eqn.invars)
            outs = " ".join(str(v.aval.str_short()) for v in eqn.outvars)
            out.append(f"{eqn.primitive.name} {ins} -> {outs}")
            for sub in jaxprs_in_params(eqn.params):
                walk(sub)

    walk(open_jaxpr(traced_jaxpr))
    return out


def hlo_signatures(hlo_text: str | None) -> list[str]:
    """``"multiply f32[4]{0}"`` per optimized-HLO instruction (opcode and shape, not its name)."""
    out = []
    for line in (hlo_text or "").splitlines():
        m = HLO_INSTRUCTION.match(line)
        if m:
            out.append(f"{m.group(3)} {m.group(2)}")
    return out


@dataclass
class WatchStep:
    """One compile of the watched entry: ``cause`` (``"first compile"``, ``"file saved: lines 12, 14 edited"``, an
    argument change), ``phases`` (ms: trace, lower, compile), ``jaxpr`` / ``hlo`` changes since the previous good
    compile (None for the first), ``error`` (the program's error at its line; the previous IR is kept)."""

    cause: str
    phases: dict[str, float] = field(default_factory=dict)
    jaxpr: IRChange | None = None
    hlo: IRChange | None = None
    error: str | None = None

    def lines(self) -> list[str]:
        if self.error:
            return [f"[watch] {self.cause}", f"  error: {self.error} (keeping the last good IR)"]
        cost = " · ".join(f"{k} {v:.0f} ms" for k, v in self.phases.items())
        out = [f"[watch] compiled: {self.cause}", f"  cost: {cost} (total {sum(self.phases.values()):.0f} ms)"]
        if self.jaxpr is not None and self.hlo is not None:
            out.append(f"  jaxpr equations {self.jaxpr} · HLO instructions {self.hlo}")
        return out


def edited_lines(old: str, new: str) -> list[int]:
    """1-based lines of ``new`` that differ from ``old`` (inserted or replaced)."""
    out: list[int] = []
    for tag, _, _, b0, b1 in difflib.SequenceMatcher(None, old.splitlines(), new.splitlines()).get_opcodes():
        if tag in ("replace", "insert"):
            out.extend(range(b0 + 1, b1 + 1))
    return out


def _cause(old_text: str | None, new_text: str) -> str:
    if old_text is None:
        return "first compile"
    lines = edited_lines(old_text, new_text)
    if not lines:
        return "file saved: lines removed" if old_text != new_text else "file saved unchanged"
    shown = ", ".join(map(str, lines[:6])) + (", …" if len(lines) > 6 else "")
    return f"file saved: line{'s' if len(lines) > 1 else ''} {shown} edited (a new function identity)"


def compile_text(prepare: Callable[[str], Any], text: str, should_stop: Callable[[], bool] | None) -> tuple:
    """Prepare ``text`` (``prepare(text)`` → a :class:`app.core.programs.loader.PreparedCall`), trace, lower and
    compile its entry: ``(equation signatures, HLO signatures, ms per phase)``. Raises the program's errors."""
    prepared = prepare(text)
    runner = ProgramRunner(prepared)
    traced, lowered, compiled, phases = runner.stages(prepared.args, should_stop)
    ir = capture(traced, lowered, compiled, runner.input_labels())
    return equation_signatures(traced.jaxpr), hlo_signatures(ir.hlo), phases


def watch_file(path: str, prepare: Callable[[str], Any], should_stop: Callable[[], bool] = lambda: False,
               poll_s: float = 0.25, max_steps: int | None = None) -> Iterator[WatchStep]:
    """Yield a :class:`WatchStep` for the file's current text, then one per save (a new modification time or
    size), until ``should_stop()`` or ``max_steps`` steps. An error in the program (it does not parse, trace or
    compile) yields a step with ``error`` set and keeps the previous good IR to compare the next save with."""
    seen: tuple[int, int] | None = None
    good: tuple[list[str], list[str]] | None = None
    good_text: str | None = None
    steps = 0
    while not should_stop() and (max_steps is None or steps < max_steps):
        try:
            st = os.stat(path)
        except OSError:
            time.sleep(poll_s)
            continue
        stamp = (st.st_mtime_ns, st.st_size)
        if stamp == seen:
            time.sleep(poll_s)
            continue
        seen = stamp
        with open(path, encoding="utf-8") as f:
            text = f.read()
        cause = _cause(good_text, text)
        steps += 1
        try:
            eqns, hlo, phases = compile_text(prepare, text, should_stop)
        except ProgramError as exc:
            yield WatchStep(cause, error=str(exc))
            continue
        step = WatchStep(cause, phases)
        if good is not None:
            step.jaxpr, step.hlo = ir_change(good[0], eqns), ir_change(good[1], hlo)
        good, good_text = (eqns, hlo), text
        yield step
