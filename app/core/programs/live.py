"""Live compiles of the Code workspace, without Qt: what changed in the IR since the previous good compile, and
which compile is the current one.

- :func:`diff_text`: the lines of a new IR text added, changed and removed since the old one
  (:class:`difflib.SequenceMatcher` on the lines, then again on each differing block with SSA names and source
  metadata blanked, so renumbered variables ``b → c`` or ``%add.3 → %add.4`` do not read as changes:
  :func:`opcodes`), and the same count for the view's units —
  the jaxpr's equations, StableHLO's ops, the optimized HLO's instructions (:class:`Counts`).
- :func:`compare`: a :class:`Comparison` of two :class:`Snapshot` (IR texts, cost and memory of a compile): one
  :class:`TextChanges` per view and the delta of each figure of the cost and memory summary (:class:`FigureDelta`).
- :class:`Generations`: the bookkeeping that lets typing never wait for a compile: every edit is a new
  generation; a compile is sent for the latest one; a result of an older generation (a compile superseded
  while it ran: an XLA compile cannot be interrupted) is dropped.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any

from app.core.inspect.text_index import HLO_INSTRUCTION, STABLEHLO_OP
from app.core.inspect.views import HLO, JAXPR, KIND_FIGURES, STABLEHLO, view, views
from app.core.units import nbytes, si

#: The IR views a live compile updates (``StepIR`` fields; :func:`unit_keys` finds their elements), and each
#: one's unit and name in a line of figures, as the IR-view catalog writes them (``unit_abbr``, ``short_title``).
VIEWS = (JAXPR, STABLEHLO, HLO)
UNITS = {v: view(v).unit_abbr for v in VIEWS}
TITLES = {v: view(v).short_title for v in VIEWS}

# a jaxpr equation: its binders (``b:f32[4]``, ``_:f32[]``), "=", its primitive, and the rest of its line
_EQN = re.compile(r"(?:(?<=\s)|(?<=;))((?:[a-z_]+:[^\s=;]+\s+)+)=\s+([a-z_][\w\-]*)([^;\n]*)")
_BINDER = re.compile(r"(?<![\w.])([a-z]+)(?=:[a-z]\w*\[)")
_WORD = re.compile(r"(?<![\w.%])([a-z]+)\b(?![(\[=])")
_SSA = re.compile(r"%[\w.#\-]+")
_LOC = re.compile(r"\s*loc\(.*\)\s*$")
_HLO_META = re.compile(r",?\s*metadata=\{[^}]*\}")
_HLO_NAME = re.compile(r"%[\w.\-]+")


def _jaxpr_key(text: str) -> Any:
    """A function blanking the jaxpr's variable names in a line (``b:f32[4] = sin a`` → ``_:f32[4] = sin _``)."""
    names = set(_BINDER.findall(text))

    def key(line: str) -> str:
        return _WORD.sub(lambda m: "_" if m.group(1) in names else m.group(1), line)

    return key


def _stablehlo_key(line: str) -> str:
    return _SSA.sub("%", _LOC.sub("", line))


def _hlo_key(line: str) -> str:
    return _HLO_NAME.sub("%", _HLO_META.sub("", line))


def line_keys(view: str, text: str) -> list[str]:
    """One matching key per line of ``text`` (view ``"jaxpr"``, ``"stablehlo"`` or ``"hlo"``): the line with
    its SSA names blanked and its source metadata dropped."""
    lines = text.splitlines()
    if view == JAXPR:
        key = _jaxpr_key(text)
        return [key(s) for s in lines]
    if view == STABLEHLO:
        return [_stablehlo_key(s) for s in lines]
    if view == HLO:
        return [_hlo_key(s) for s in lines]
    return lines


def _units(view: str, text: str) -> tuple[list[str], list[str]]:
    """``(raw, keys)`` of the view's units in order (see :func:`unit_keys`)."""
    if view == JAXPR:
        key = _jaxpr_key(text)
        raw, keys = [], []
        for m in _EQN.finditer(text):
            types = " ".join(b.split(":", 1)[1] for b in m.group(1).split())
            rest = m.group(3).split(" in (")[0]
            raw.append(m.group(0))
            keys.append(f"{types} = {m.group(2)}{key(rest)}")
        return raw, keys
    if view == STABLEHLO:
        raw = [s for s in text.splitlines() if (m := STABLEHLO_OP.match(s)) and m.group(1) != "call"]
        return raw, [_stablehlo_key(s) for s in raw]
    if view == HLO:
        raw = [s for s in text.splitlines() if HLO_INSTRUCTION.match(s)]
        return raw, [_hlo_key(s) for s in raw]
    return [], []


def unit_keys(view: str, text: str) -> list[str]:
    """The view's units in order, as matching keys: the jaxpr's equations (sub-jaxprs' included), StableHLO's
    ops (``call`` lines excepted), the HLO's instructions (fused computations' included)."""
    return _units(view, text)[1]


#: Up to this many line pairs, the keys are diffed at once; above, the raw lines anchor the diff first (time: the
#: keys of a model's IR repeat once per layer, which makes difflib slow).
DIRECT_LIMIT = 6_000_000
#: Above this many line pairs, a block of differing raw lines is left as it is (not diffed again on its keys).
INNER_LIMIT = 4_000_000

Opcode = tuple[str, int, int, int, int]


def opcodes(raw_a: list[str], raw_b: list[str], key_a: list[str], key_b: list[str]) -> list[Opcode]:
    """:meth:`difflib.SequenceMatcher.get_opcodes` of two line lists compared by their keys (SSA names blanked: a
    line that only got renamed is equal). Past :data:`DIRECT_LIMIT` line pairs (a large model's IR) it runs in two
    passes: the raw lines first (mostly unique, so fast), then each differing block again on its keys, a block
    over :data:`INNER_LIMIT` pairs left as it is. Measured here on an unrolled 40-layer loop with one op added per
    layer: jaxpr 289 lines, 40 equations added, in 51 ms on this 2-core machine; HLO 700 lines, 120 instructions
    added, 56 ms; 7,000 HLO lines with one added, 0.19 s."""
    if len(key_a) * len(key_b) <= DIRECT_LIMIT:
        matcher = difflib.SequenceMatcher(None, key_a, key_b, autojunk=len(key_b) > 2000)
        return [(str(t), i1, i2, j1, j2) for t, i1, i2, j1, j2 in matcher.get_opcodes()]
    out: list[Opcode] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, raw_a, raw_b, autojunk=False).get_opcodes():
        if tag == "equal" or (i2 - i1) * (j2 - j1) == 0 or (i2 - i1) * (j2 - j1) > INNER_LIMIT:
            out.append((tag, i1, i2, j1, j2))
            continue
        inner = difflib.SequenceMatcher(None, key_a[i1:i2], key_b[j1:j2], autojunk=False)
        out += [(t, i1 + a1, i1 + a2, j1 + b1, j1 + b2) for t, a1, a2, b1, b2 in inner.get_opcodes()]
    return out


@dataclass(frozen=True)
class Counts:
    """Units (equations, ops or instructions) added, removed and changed."""

    added: int = 0
    removed: int = 0
    changed: int = 0

    @property
    def any(self) -> bool:
        return bool(self.added or self.removed or self.changed)

    def text(self, unit: str) -> str:
        """``"+1 −0 ~2 eqns"``."""
        return f"+{self.added} −{self.removed} ~{self.changed} {unit}"


def _counts(old: tuple[list[str], list[str]], new: tuple[list[str], list[str]]) -> Counts:
    added = removed = changed = 0
    for tag, i1, i2, j1, j2 in opcodes(old[0], new[0], old[1], new[1]):
        if tag == "replace":
            n = min(i2 - i1, j2 - j1)
            changed += n
            added += j2 - j1 - n
            removed += i2 - i1 - n
        elif tag == "insert":
            added += j2 - j1
        elif tag == "delete":
            removed += i2 - i1
    return Counts(added, removed, changed)


@dataclass(frozen=True)
class TextChanges:
    """The change of one IR text. ``added`` / ``changed``: 1-based lines of the new text; ``removed``: 1-based
    lines of the new text before which old lines were removed (``len(lines) + 1``: at the end), with
    ``n_removed`` old lines in all; ``units``: the view's units counted (:func:`unit_keys`)."""

    view: str
    added: tuple[int, ...] = ()
    changed: tuple[int, ...] = ()
    removed: tuple[int, ...] = ()
    n_removed: int = 0
    units: Counts = field(default_factory=Counts)

    @property
    def any(self) -> bool:
        return bool(self.added or self.changed or self.removed or self.units.any)

    def text(self) -> str:
        """``"+1 −0 ~2 eqns · lines +1 −0 ~2"``."""
        return (f"{self.units.text(UNITS.get(self.view, 'units'))} · lines +{len(self.added)} −{self.n_removed} "
                f"~{len(self.changed)}")


def diff_text(view: str, old: str, new: str) -> TextChanges:
    """The lines of ``new`` added and changed since ``old``, where old lines were removed, and the view's units
    added / removed / changed (:class:`TextChanges`). ``view``: ``"jaxpr"``, ``"stablehlo"`` or ``"hlo"``."""
    raw_a, raw_b = old.splitlines(), new.splitlines()
    a, b = line_keys(view, old), line_keys(view, new)
    added: list[int] = []
    changed: list[int] = []
    removed: list[int] = []
    n_removed = 0
    for tag, i1, i2, j1, j2 in opcodes(raw_a, raw_b, a, b):
        if tag == "equal":
            continue
        n = min(i2 - i1, j2 - j1) if tag == "replace" else 0
        changed += range(j1 + 1, j1 + n + 1)
        added += range(j1 + n + 1, j2 + 1)
        if i2 - i1 > n:
            removed.append(j1 + n + 1)
            n_removed += i2 - i1 - n
    return TextChanges(view, tuple(added), tuple(changed), tuple(removed), n_removed,
                       _counts(_units(view, old), _units(view, new)))


#: The cost and memory summary's figures: (name, where, key, kind) — kind ``"count"`` or ``"bytes"``; the
#: ``figures`` views' :class:`app.core.inspect.views.Figure` s.
FIGURES = tuple((f.label, v.key, f.key, f.kind) for v in views(kind=KIND_FIGURES) for f in v.figures)


@dataclass(frozen=True)
class FigureDelta:
    """One figure of the cost and memory summary before and after (None: not reported by the backend)."""

    name: str
    old: float | None
    new: float | None
    kind: str = "count"

    @property
    def delta(self) -> float | None:
        return None if self.old is None or self.new is None else self.new - self.old

    def text(self) -> str:
        """``"FLOPs 4 → 8 (+4)"``; ``"temp 0 B (=)"`` when unchanged."""
        f = nbytes if self.kind == "bytes" else si
        d = self.delta
        if d is None:
            return f"{self.name} {f(self.old)} → {f(self.new)}"
        if d == 0:
            return f"{self.name} {f(self.new)} (=)"
        sign = "+" if d > 0 else "−"
        return f"{self.name} {f(self.old)} → {f(self.new)} ({sign}{f(abs(d))})"


@dataclass(frozen=True)
class Snapshot:
    """What a live compile shows: the IR texts (``jaxpr``, ``stablehlo``, ``hlo``; None where not captured),
    ``cost`` (``cost_analysis()``: ``flops``, ``bytes accessed``) and ``memory`` (bytes: ``argument``,
    ``output``, ``temp``)."""

    texts: dict[str, str | None]
    cost: dict[str, float] | None = None
    memory: dict[str, int] | None = None

    @classmethod
    def of(cls, ir: object) -> Snapshot:
        """The snapshot of a :class:`app.core.inspect.ir.StepIR` (or anything with its fields)."""
        return cls({v: getattr(ir, v, None) for v in VIEWS}, getattr(ir, "cost", None), getattr(ir, "memory", None))

    def figure(self, where: str, key: str) -> float | None:
        value = (getattr(self, where) or {}).get(key)
        return float(value) if isinstance(value, (int, float)) else None


@dataclass(frozen=True)
class Comparison:
    """A good compile against the previous good one: ``views`` per IR view its :class:`TextChanges` (a view with
    no text on either side is absent), ``figures`` the summary's :class:`FigureDelta` s; ``first``: there was no
    previous good compile (nothing is marked)."""

    views: dict[str, TextChanges]
    figures: tuple[FigureDelta, ...] = ()
    first: bool = False

    def changes_text(self) -> str:
        """``"jaxpr +1 −0 ~1 eqns · HLO +2 −1 ~0 instrs"`` (``"no change in the IR"``; ``""`` for the first)."""
        if self.first:
            return ""
        parts = [f"{TITLES[v]} {c.units.text(UNITS[v])}" for v, c in self.views.items() if c.any]
        return " · ".join(parts) or "no change in the IR"

    def figures_text(self, changed_only: bool = True) -> str:
        """The summary's figures that changed (all with ``changed_only=False``), ``" · "``-joined."""
        return " · ".join(d.text() for d in self.figures if not changed_only or d.delta != 0)


def compare(previous: Snapshot | None, new: Snapshot) -> Comparison:
    """``new`` against ``previous`` (None: the first good compile, nothing marked). Pure Python; the texts can be
    megabytes, so call it off the GUI thread (the compute thread does, :mod:`app.core.programs.compute.service`)."""
    if previous is None:
        return Comparison({}, (), first=True)
    views = {v: diff_text(v, previous.texts.get(v) or "", new.texts.get(v) or "")
             for v in VIEWS if previous.texts.get(v) is not None or new.texts.get(v) is not None}
    figures = tuple(FigureDelta(name, previous.figure(where, key), new.figure(where, key), kind)
                    for name, where, key, kind in FIGURES
                    if previous.figure(where, key) is not None or new.figure(where, key) is not None)
    return Comparison(views, figures)


class Generations:
    """Which live compile is current. Every edit is a new generation (:meth:`edit`); a compile is sent for the
    text as it is (:meth:`send`, with the text's ``key``: any hashable value, e.g. the text and the argument
    specs); a newer send supersedes the compile in flight (:meth:`superseded`: stop it; its Python tracing ends at
    the program's next line, an XLA compile finishes but is ignored). A result is taken (:meth:`accept`) only when
    it is the latest compile sent and the text is still the one it compiled: a result of an older generation, or
    of a text edited since, is dropped (the edited text compiles after the next pause). ``good``: the
    :class:`Snapshot` of the last good compile, the one the next result is compared with."""

    def __init__(self) -> None:
        self.generation = 0
        self.sent = 0  # the generation of the latest compile sent (0: none)
        self.sent_key: Any = None  # the key of the text it compiles (None: compile whatever the text is)
        self.in_flight: int | None = None
        self.good: Snapshot | None = None

    def edit(self) -> int:
        """An edit: a new generation. Returns it."""
        self.generation += 1
        return self.generation

    def needs_compile(self, key: object) -> bool:
        """The text ``key`` is not the one compiled or compiling."""
        return key != self.sent_key

    def ran(self, key: object) -> None:
        """A Run was sent for the text ``key``: it traces, lowers and compiles that text itself, so no live
        compile follows for it (one after the Run would replace the Run's figures in the status line with
        "not run"); the next edit compiles again, compared with :attr:`good`."""
        self.sent_key = key

    def superseded(self) -> bool:
        """A compile of an older generation than the latest edit is in flight."""
        return self.in_flight is not None and self.in_flight != self.generation

    def send(self, key: object = None) -> int:
        """A compile of the text ``key`` (the latest generation) is sent, superseding the one in flight. Returns
        its generation."""
        self.sent = self.in_flight = self.generation
        self.sent_key = key
        return self.generation

    def accept(self, generation: int, key: object = None) -> bool:
        """The result (or error) of ``generation`` arrived while the text is ``key``: True to show it; False to
        drop it — a newer compile was sent since, or the text changed since it was sent (then the next
        :meth:`needs_compile` is True, even for the same text again)."""
        if generation == self.in_flight:
            self.in_flight = None
        if generation != self.sent or generation <= 0:
            return False
        if key != self.sent_key:
            self.sent_key = None
            return False
        return True

    def keep(self, generation: int, key: object, snapshot: Snapshot) -> bool:
        """Keep ``snapshot`` as the last good compile when :meth:`accept` takes it."""
        if not self.accept(generation, key):
            return False
        self.good = snapshot
        return True

    def forget(self) -> None:
        """Another program: the next good compile is a first one (nothing to compare with)."""
        self.good = None
        self.sent_key = None
