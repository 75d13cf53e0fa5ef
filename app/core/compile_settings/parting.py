"""Where two compiler settings part: the same ``jax.stages.Lowered`` compiled under each setting with XLA's pass
dumps on (:func:`app.core.passes.record.record_pipeline`), the two pass pipelines walked in lockstep, and the first
pass whose output HLO differs named, with the diff of the two modules after it and the fusions each final module
kept.

Lockstep: XLA dumps the module after a pass only when the pass changed it (and once at each pipeline's start), so a
pipeline is a list of ``(pipeline, pass)`` snapshots. The two lists are aligned on those keys (the n-th run of a pass
in a pipeline pairs with the other side's n-th; ``difflib.SequenceMatcher``), a key on one side only is a pass that
changed the module under one setting and not under the other. Walking the rows, each side's current module is its
latest snapshot; the first row after which the two current modules differ is where the settings part.

The compile options of a setting do not change tracing or lowering, so one ``Lowered`` serves both sides; a
``jax.config`` pair (:attr:`CompileSetting.config`) is set around its compile but cannot change a program already
lowered. :func:`part` is pure Python (no JAX); :func:`where_settings_part` and :func:`settings_partings` compile,
so they run on the compute thread.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.core.compile_settings.catalog import CompileSetting, parse_setting
from app.core.compile_settings.race import applied
from app.core.errors import InvalidSettingsError
from app.core.inspect.text_index import HLO_KIND
from app.core.passes.diff import SnapshotDiff, diff_snapshots
from app.core.passes.model import PassPipeline, Snapshot
from app.core.passes.record import record_pipeline

#: The field of :meth:`Parting.to_json` with each side's fusions counted by kind.
FUSION_COUNTS_FIELD = "fusions"

#: An instruction line of a fusion: ``  %fusion.3 = f32[8]{0} fusion(…), kind=kLoop, …`` (its name in group 1).
_FUSION = re.compile(r"^\s+(?:ROOT )?%?([\w.\-]+) = .*?\bfusion\(")
#: The pass named for a row of the module before XLA's passes (both sides lowered alike unless a ``jax.config``
#: pair changed the lowering of a program lowered under it) and for the optimized module.
BEFORE, FINAL = "before optimizations", "after optimizations"


@dataclass
class PassPair:
    """One row of the lockstep view: the snapshot each side wrote for one run of a pass (``a`` / ``b``; None on the
    side where that pass did not change the module, or did not run), ``differs``: the two sides' current modules
    (their latest snapshots) differ after this row."""

    a: Snapshot | None
    b: Snapshot | None
    differs: bool

    @property
    def pipeline(self) -> str:
        shown = self.a or self.b
        return shown.pipeline if shown is not None else ""

    @property
    def pass_name(self) -> str:
        shown = self.a or self.b
        return shown.pass_name if shown is not None else ""

    @property
    def side(self) -> str:
        """``"both"``, ``"a"`` or ``"b"``: which settings' pipelines have this row's snapshot."""
        return "both" if self.a is not None and self.b is not None else "a" if self.a is not None else "b"


@dataclass
class Parting:
    """Two settings' pass pipelines side by side (``labels``: the setting names, baseline first).

    ``pairs``: the lockstep rows (:class:`PassPair`), the module before the passes first and the optimized module
    last. ``first``: index in ``pairs`` of the first row after which the modules differ (None: no pass differs —
    the optimized modules are the same text). ``diff``: the two current modules after that row, a → b (None when
    none differs). ``fusions``: ``(name, kind)`` of each side's final fusions (``kLoop``, ``kCustom``, …; text
    order). ``pipelines``: the two recordings."""

    labels: tuple[str, str]
    pairs: list[PassPair]
    first: int | None
    diff: SnapshotDiff | None
    fusions: tuple[list[tuple[str, str]], list[tuple[str, str]]]
    pipelines: tuple[PassPipeline, PassPipeline] = field(repr=False)

    @property
    def parting(self) -> PassPair | None:
        """The row where the settings part, or None."""
        return None if self.first is None else self.pairs[self.first]

    @property
    def pass_name(self) -> str | None:
        """The first pass whose output differs (``"dot-library-rewriter"``), or None."""
        row = self.parting
        return None if row is None else row.pass_name

    def fusion_counts(self) -> tuple[dict[str, int], dict[str, int]]:
        """Each side's final fusions counted by kind."""
        a, b = self.fusions
        return dict(Counter(k for _, k in a)), dict(Counter(k for _, k in b))

    def only(self) -> tuple[list[str], list[str]]:
        """Fusion names (``name kind``) kept by one side only, a's then b's."""
        a, b = ({f"{n} {k}" for n, k in side} for side in self.fusions)
        return sorted(a - b), sorted(b - a)

    def sentence(self) -> str:
        """One line: ``"cpu-no-ynn parts from default at dot-library-passes / dot-library-rewriter (default's pass
        changed the module, cpu-no-ynn's did not); fusions kept: default 2 (kCustom 1, kLoop 1), cpu-no-ynn 1
        (kLoop 1)"``, or ``"O3 and default: no pass differs; …"``."""
        a, b = self.labels
        counts = self.fusion_counts()
        kept = "; fusions kept: " + ", ".join(
            f"{label} {sum(c.values())}" + (f" ({', '.join(f'{k} {n}' for k, n in sorted(c.items()))})" if c else "")
            for label, c in zip(self.labels, counts))
        row = self.parting
        if row is None:
            return f"{b} and {a}: no pass differs" + kept
        where = {"both": "both ran it, outputs differ", "a": f"{a}'s pass changed the module, {b}'s did not",
                 "b": f"{b}'s pass changed the module, {a}'s did not"}[row.side]
        return f"{b} parts from {a} at {row.pipeline} / {row.pass_name} ({where})" + kept

    def to_json(self) -> dict[str, Any]:
        """A JSON-able summary: ``baseline``, ``setting``, ``pass`` / ``pipeline`` / ``side`` (None without a
        parting), ``snapshots`` (each side's snapshot label there), ``added`` / ``removed`` (diff lines), ``fusions``
        (each side's counts by kind), ``only`` (fusions one side kept), ``text`` (:meth:`sentence`)."""
        row = self.parting
        only_a, only_b = self.only()
        return {"baseline": self.labels[0], "setting": self.labels[1],
                "pass": row.pass_name if row else None, "pipeline": row.pipeline if row else None,
                "side": row.side if row else None,
                "snapshots": [s.label if s else None for s in (row.a, row.b)] if row else None,
                "added": self.diff.added if self.diff else 0, "removed": self.diff.removed if self.diff else 0,
                FUSION_COUNTS_FIELD: list(self.fusion_counts()), "only": [only_a, only_b], "text": self.sentence()}


def _keys(snapshots: list[Snapshot]) -> list[tuple[str, str, int]]:
    """``(pipeline, pass, n)``: the n-th snapshot of that pass in that pipeline (fixpoint pipelines rerun passes)."""
    seen: Counter[tuple[str, str]] = Counter()
    keys = []
    for s in snapshots:
        seen[(s.pipeline, s.pass_name)] += 1
        keys.append((s.pipeline, s.pass_name, seen[(s.pipeline, s.pass_name)]))
    return keys


def _aligned(a: list[Snapshot], b: list[Snapshot]) -> list[tuple[Snapshot | None, Snapshot | None]]:
    matcher = difflib.SequenceMatcher(None, _keys(a), _keys(b), autojunk=False)
    rows: list[tuple[Snapshot | None, Snapshot | None]] = []
    for tag, a1, a2, b1, b2 in matcher.get_opcodes():
        if tag == "equal":
            rows += list(zip(a[a1:a2], b[b1:b2]))
        else:
            rows += [(s, None) for s in a[a1:a2]] + [(None, s) for s in b[b1:b2]]
    return rows


def _same(x: Snapshot | None, y: Snapshot | None) -> bool:
    """Whether two snapshots hold the same module text (the compressed bytes first: equal texts compress alike)."""
    if x is None or y is None:
        return x is y
    return x.compressed == y.compressed or x.text == y.text


def part(a: PassPipeline, b: PassPipeline, labels: tuple[str, str] = ("a", "b"), context: int = 3) -> Parting:
    """Walk two recorded pipelines in lockstep and find where they part (see the module's docstring). ``labels``
    name the sides (the settings; the baseline first); ``context``: unchanged lines around each hunk of the diff.
    Pure Python over the recorded texts: any thread. Raises nothing for recordings without snapshots (their rows
    are then only the modules before and after)."""
    rows: list[tuple[Snapshot | None, Snapshot | None]] = [(a.before, b.before), *_aligned(a.snapshots, b.snapshots),
                                                           (a.final, b.final)]
    pairs: list[PassPair] = []
    cur_a = cur_b = None
    first = None
    diff = None
    for sa, sb in rows:
        cur_a, cur_b = sa or cur_a, sb or cur_b
        differs = not _same(cur_a, cur_b)
        pairs.append(PassPair(sa, sb, differs))
        if differs and first is None:
            first = len(pairs) - 1
            if cur_a is not None and cur_b is not None:
                diff = diff_snapshots(cur_a, cur_b, context)
    return Parting(labels, pairs, first, diff, (final_fusions(a), final_fusions(b)), (a, b))


def final_fusions(pipeline: PassPipeline) -> list[tuple[str, str]]:
    """``(name, kind)`` of every fusion instruction of the recording's optimized module, in text order (empty without
    one). Reads the final text only (:func:`app.core.passes.fusions.fusion_table` also finds where each fusion was
    made, searching every snapshot: minutes on a model step's 850 fusions)."""
    if pipeline.final is None:
        return []
    found = []
    for line in pipeline.final.text.splitlines():
        m = _FUSION.match(line)
        if m:
            kind = HLO_KIND.search(line)
            found.append((m.group(1), kind.group(1) if kind else ""))
    return found


def record_setting(lowered: Any, setting: CompileSetting, *, should_stop: Callable[[], bool] | None = None,
                   on_progress: Callable[[str], None] | None = None) -> PassPipeline:
    """``lowered`` (a ``jax.stages.Lowered``) compiled again under ``setting`` with XLA's pass dumps on: its
    compile options go to :func:`app.core.passes.record.record_pipeline`, its ``jax.config`` pairs are set around
    it. Compute thread. Raises :class:`app.core.passes.record.RecordingError` (XLA refused the options, a profiler
    session already running, ``should_stop``)."""
    with applied(setting):
        return record_pipeline(lowered, should_stop=should_stop, on_progress=on_progress,
                               compiler_options=dict(setting.options))


def where_settings_part(lowered: Any, baseline: CompileSetting | str, setting: CompileSetting | str, *,
                        should_stop: Callable[[], bool] | None = None,
                        on_progress: Callable[[str], None] | None = None,
                        baseline_pipeline: PassPipeline | None = None) -> Parting:
    """Where ``setting`` parts from ``baseline`` on ``lowered``.

    ``lowered``: a ``jax.stages.Lowered`` — a model step's (``app.core.passes.lowered.lowered_for(engine, "decode",
    "jit-static")``, after a run that captured IR) or a program entry's (``lowered_for(ProgramRunner(prepared))``).
    ``baseline`` / ``setting``: :class:`CompileSetting` s or what :func:`app.core.compile_settings.catalog.
    parse_setting` reads (a catalog name such as ``"O3"``, an ``XLA_FLAGS`` string, a ``jax.config`` pair), checked
    for JAX's default backend. ``baseline_pipeline``: the baseline's recording when the caller has it already (it
    is then not compiled again). ``should_stop``: polled before and after each compile (a compile itself cannot be
    interrupted); ``on_progress``: a line per stage.

    Returns a :class:`Parting` (``first`` None when no pass differs). Compiles twice (once with a
    ``baseline_pipeline``), each ~the step's compile time plus its dumps: call it on the compute thread, never the
    GUI's. Raises :class:`app.core.errors.InvalidSettingsError` for a setting refused by name (an Inductor one too) and
    :class:`app.core.passes.record.RecordingError` (and its ``RecordingStopped``) from the recordings."""
    base, other = _setting(baseline), _setting(setting)
    for s in (base, other):
        if s.compiler != "XLA":
            raise InvalidSettingsError(f"{s.name} is an Inductor setting: it compiles PyTorch, not through XLA's pass "
                                       "pipeline, so there is no pass where it parts; compare two XLA settings.")
    a = baseline_pipeline if baseline_pipeline is not None else record_setting(
        lowered, base, should_stop=should_stop, on_progress=on_progress)
    b = record_setting(lowered, other, should_stop=should_stop, on_progress=on_progress)
    return part(a, b, (base.name, other.name))


def settings_partings(lowered: Any, settings: Sequence[CompileSetting], *,
                      should_stop: Callable[[], bool] | None = None,
                      on_progress: Callable[[str], None] | None = None) -> Iterator[Parting]:
    """For each XLA setting of ``settings[1:]``, where it parts from ``settings[0]`` (the baseline, recorded once) on
    ``lowered`` (see :func:`where_settings_part`), in order; a generator, so a caller can stop between settings.
    Compute thread; raises as :func:`where_settings_part`."""
    settings = [s for s in settings if s.compiler == "XLA"]  # an Inductor lane has no XLA pass pipeline
    if len(settings) < 2:
        return
    base = record_setting(lowered, settings[0], should_stop=should_stop, on_progress=on_progress)
    for setting in settings[1:]:
        yield where_settings_part(lowered, settings[0], setting, should_stop=should_stop, on_progress=on_progress,
                                  baseline_pipeline=base)


def _setting(value: CompileSetting | str) -> CompileSetting:
    if isinstance(value, CompileSetting):
        return value
    import jax

    return parse_setting(value, jax.default_backend())
