"""The figures of a settings race, computed once for the CLI table, its JSON lines and the trade-off plot: one
:class:`SettingLane` per setting, the Pareto set over (compile ms, steady ms per call), and the break-even number of
calls of a setting that compiles slower and runs faster than the baseline. Pure Python: no JAX."""

from __future__ import annotations

import math
import statistics
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from app.core.report.columns import Column, render_text
from app.core.units import nbytes
from app.core.verdict.words import short_verdict


@dataclass
class SettingLane:
    """One setting's lane of a race, in ms and bytes.

    ``trace_ms`` / ``lower_ms`` / ``compile_ms``: the raced step's compile split (``jit(f).trace`` → ``.lower()`` →
    ``.compile()``, :class:`app.core.runtime.compiled_step.CompiledStep`'s or the program runner's timers), None when
    it did not compile. ``steady_ms``: median ms per call of the calls that did not compile (per token for a
    model's decode step). ``unit``: ``"token"`` or ``"call"``. ``outputs_equal``: its outputs equal the baseline's
    (the tokens of a model, every output array of a program; True for the baseline itself). ``changes_results``:
    the setting may change outputs (fast math). ``peak_bytes``: the compiled step's peak memory
    (``Compiled.memory_analysis().peak_memory_in_bytes``; None where the backend does not say).
    ``persistent_cache_hit``: its compile came from JAX's disk cache (the race turns that cache off: False).
    ``outputs``: the token ids, or a digest of a program's outputs, compared between lanes (not printed).
    ``passes_ms`` / ``codegen_ms`` split ``compile_ms`` (XLA's HLO passes, then code generation and the rest);
    ``autotune_ms`` / ``ptxas_ms`` are XLA:GPU's autotuning (inside the passes) and ptxas (inside codegen); None
    where not measured (:mod:`app.core.compile_settings.split`; an Inductor lane has its own phases)."""

    name: str
    sets: str
    trace_ms: float | None
    lower_ms: float | None
    compile_ms: float | None
    steady_ms: float | None
    n_calls: int
    unit: str = "token"
    outputs_equal: bool | None = None
    changes_results: bool = False
    peak_bytes: int | None = None
    persistent_cache_hit: bool = False
    stopped: bool = False
    #: how many rounds of the race the figures are the median of (:func:`merge_rounds`)
    rounds: int = 1
    passes_ms: float | None = None
    codegen_ms: float | None = None
    autotune_ms: float | None = None
    ptxas_ms: float | None = None
    #: a hash of the optimized HLO with names normalised (:func:`app.core.compile_settings.paired.hlo_fingerprint`)
    hlo_hash: str | None = None
    #: the paired verdict against the baseline (:func:`app.core.compile_settings.paired.pair_fields`; for the
    #: baseline: its A/A floor), None where no paired rounds ran (an old file, ``--no-steady``)
    verdict: dict[str, Any] | None = None
    outputs: list[Any] = field(default_factory=list, repr=False)

    @property
    def compile_total_ms(self) -> float | None:
        """``trace_ms + lower_ms + compile_ms`` (None without a compile)."""
        parts = (self.trace_ms, self.lower_ms, self.compile_ms)
        return None if any(p is None for p in parts) else sum(p for p in parts if p is not None)

    def to_json(self) -> dict[str, Any]:
        """The lane as one JSON-able dict (``outputs`` left out), with ``compile_total_ms``."""
        out = asdict(self)
        out.pop("outputs")
        out["compile_total_ms"] = self.compile_total_ms
        return out


def merge_rounds(lanes: list[SettingLane]) -> list[SettingLane]:
    """One lane per setting name, in first-seen order, from several rounds of a race: the median of each timing
    (trace, lower, compile, steady ms), the calls summed, outputs equal only if equal in every round."""
    groups: dict[str, list[SettingLane]] = {}
    for lane in lanes:
        groups.setdefault(lane.name, []).append(lane)

    def median(values: list[float | None]) -> float | None:
        known = [v for v in values if v is not None]
        return statistics.median(known) if known else None

    merged = []
    for group in groups.values():
        first = group[0]
        equal = [g.outputs_equal for g in group]
        merged.append(replace(
            first, trace_ms=median([g.trace_ms for g in group]), lower_ms=median([g.lower_ms for g in group]),
            compile_ms=median([g.compile_ms for g in group]), steady_ms=median([g.steady_ms for g in group]),
            n_calls=sum(g.n_calls for g in group), outputs_equal=None if None in equal else all(equal),
            persistent_cache_hit=any(g.persistent_cache_hit for g in group), stopped=any(g.stopped for g in group),
            rounds=len(group)))
    return merged


def break_even_calls(base: SettingLane, lane: SettingLane) -> int | None:
    """Calls after which ``lane`` has paid for its slower compile with its faster calls: ``ceil(extra compile ms /
    saving per call)``. None unless ``lane`` compiles slower *and* runs faster than ``base``."""
    extra = _minus(lane.compile_total_ms, base.compile_total_ms)
    saving = _minus(base.steady_ms, lane.steady_ms)
    if extra is None or saving is None or extra <= 0 or saving <= 0:
        return None
    return math.ceil(extra / saving)


def _minus(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


def pareto_names(lanes: list[SettingLane]) -> list[str]:
    """The settings no other setting beats on both compile ms and steady ms per call (at least as good on both,
    better on one), in the order given. A lane without both figures is never on the front."""
    points = [(lane.name, lane.compile_total_ms, lane.steady_ms) for lane in lanes]
    full = [(n, c, s) for n, c, s in points if c is not None and s is not None]
    front = []
    for name, c, s in full:
        beaten = any(c2 <= c and s2 <= s and (c2 < c or s2 < s) for n2, c2, s2 in full if n2 != name)
        if not beaten:
            front.append(name)
    return front


def break_even_text(base: SettingLane, lane: SettingLane) -> str | None:
    """``"O3 pays for its extra 2.1 s after 180 tokens"``, or None (see :func:`break_even_calls`)."""
    calls = break_even_calls(base, lane)
    extra = _minus(lane.compile_total_ms, base.compile_total_ms)
    if calls is None or extra is None:
        return None
    unit = lane.unit + ("" if calls == 1 else "s")
    spent = f"{extra / 1000:.1f} s" if extra >= 1000 else f"{extra:.0f} ms"
    return f"{lane.name} pays for its extra {spent} after {calls:,} {unit}"


def summary(lanes: list[SettingLane]) -> dict[str, Any]:
    """What a race found: ``baseline``, ``pareto`` (:func:`pareto_names`), ``break_even`` (name → calls, for each
    setting that compiles slower and runs faster), ``break_even_text`` (the same as sentences), ``unequal``
    (settings whose outputs differ from the baseline's)."""
    if not lanes:
        return {"baseline": None, "pareto": [], "break_even": {}, "break_even_text": [], "unequal": []}
    base = lanes[0]
    calls = {lane.name: n for lane in lanes[1:] if (n := break_even_calls(base, lane)) is not None}
    texts = [t for lane in lanes[1:] if (t := break_even_text(base, lane)) is not None]
    return {"baseline": base.name, "pareto": pareto_names(lanes), "break_even": calls, "break_even_text": texts,
            "unequal": [lane.name for lane in lanes if lane.outputs_equal is False]}


def plot_points(lanes: list[SettingLane]) -> list[dict[str, Any]]:
    """The lanes with both figures as the trade-off plot's points (``widgets.demo.tradeoff_plot.TradeoffPoint``'s
    fields): ``name``, ``compile_ms`` (total), ``steady_ms``, ``split`` (trace / lower / compile ms), ``baseline``
    (the first lane), ``pareto``, ``break_even`` (sentence or ""), ``equal``, ``unit``, ``detail`` (the compile's
    own parts that were measured: :func:`compile_detail`), ``versus`` (:func:`versus_baseline`), ``verdict_line``
    (:func:`verdict_line`) and ``verdict``
    (the paired verdict's numbers, :data:`VERDICT_KEYS`; {} without paired rounds)."""
    front = set(pareto_names(lanes))
    base = lanes[0] if lanes else None
    return [{"name": lane.name, "compile_ms": lane.compile_total_ms, "steady_ms": lane.steady_ms,
             "split": {"trace": lane.trace_ms, "lower": lane.lower_ms, "compile": lane.compile_ms},
             "baseline": lane is base, "pareto": lane.name in front,
             "break_even": (break_even_text(base, lane) or "") if base is not None else "",
             "equal": lane.outputs_equal, "unit": lane.unit, "detail": compile_detail(lane),
             "versus": versus_baseline(base, lane) if base is not None else "",
             "verdict_line": verdict_line(base, lane) if base is not None else "",
             "verdict": {k: (lane.verdict or {}).get(k) for k in VERDICT_KEYS} if lane.verdict else {}}
            for lane in lanes if lane.compile_total_ms is not None and lane.steady_ms is not None]


#: A lane's paired-verdict numbers as exports and ``--json`` name them (``rounds``: paired rounds kept).
VERDICT_KEYS = ("ratio", "ci_low", "ci_high", "rounds", "aa_noise", "dropped", "noisy")


def compile_detail(lane: SettingLane) -> dict[str, float]:
    """The measured parts of ``lane``'s compile, in ms: ``XLA passes`` (``autotune`` inside), ``codegen``
    (``ptxas`` inside); {} where none was measured."""
    named = (("XLA passes", lane.passes_ms), ("autotune", lane.autotune_ms), ("codegen", lane.codegen_ms),
             ("ptxas", lane.ptxas_ms))
    return {name: ms for name, ms in named if ms is not None}


def detail_text(detail: dict[str, float]) -> str:
    """``"XLA passes 29 (autotune 5) + codegen 502 (ptxas 102)"`` ms, or ""."""
    def part(name: str, inner: str) -> str:
        extra = f" ({inner} {detail[inner]:,.0f})" if inner in detail else ""
        return f"{name} {detail[name]:,.0f}{extra}" if name in detail else ""

    return " + ".join(p for p in (part("XLA passes", "autotune"), part("codegen", "ptxas")) if p)


def _ms(v: float | None) -> str:
    return "—" if v is None else f"{v:,.0f}"


def _split(lane: SettingLane) -> str:
    if lane.compile_total_ms is None:
        return "—"
    return f"{_ms(lane.compile_total_ms)} ({_ms(lane.trace_ms)}/{_ms(lane.lower_ms)}/{_ms(lane.compile_ms)})"


def _equal(lane: SettingLane) -> str:
    if lane.outputs_equal is None:
        return "—"
    if lane.outputs_equal:
        return "yes"
    return "no (fast math)" if lane.changes_results else "NO"


def same_hlo(base: SettingLane, lane: SettingLane) -> bool:
    """``lane`` compiled to the baseline's optimized HLO (names normalised); False when either is unknown."""
    return lane is not base and lane.hlo_hash is not None and lane.hlo_hash == base.hlo_hash


def versus_baseline(base: SettingLane, lane: SettingLane) -> str:
    """What the "vs baseline" column, the plot and the exports say of ``lane``: the paired verdict in the verdict
    module's words (:func:`app.core.verdict.words.short_verdict`: ``"O3 1.25× faster than default (95 % CI
    1.20–1.30)"``, ``"O0 vs default: no clear difference (0.98–1.06)"``), ``" · noisy machine"`` when the A/A floor
    is wider than ±3 %; ``"baseline (A/A ±1.8 %)"`` for the baseline; then ``" · same optimized HLO"`` where it
    compiled to the baseline's program. Without paired rounds (``--no-steady``, an old file, a lane left out): the
    one-pass speed-up — the baseline's steady ms over the lane's, read the same way — marked ``"(one pass, no
    CI)"``; ``"—"`` without figures."""
    v = lane.verdict
    if lane is base:
        aa = (v or {}).get("aa_noise")
        text = "baseline" + (f" (A/A ±{aa:.1f} %)" if aa is not None else "")
        return text + (" · noisy machine" if (v or {}).get("noisy") else "")
    if v is not None and v.get("ratio"):
        text = short_verdict({**v, "mode": lane.name, "against": base.name})
        text += " · noisy machine" if v.get("noisy") else ""
    elif (r := one_pass_speedup(base, lane)) is not None:
        text = (f"{lane.name} {r:.2f}× faster" if r >= 1.0 else f"{lane.name} {1 / r:.2f}× slower") + \
            f" than {base.name} (one pass, no CI)"
    else:
        text = "—"
    return text + (f" · {SAME_HLO}" if same_hlo(base, lane) else "")


def verdict_line(base: SettingLane, lane: SettingLane) -> str:
    """The paired verdict as the trade-off plot writes it under ``lane``'s name (presentation mode included): the
    verdict module's words without the name the label already says (``"1.25× faster than default (95 % CI
    1.20–1.30)"``, ``"no clear difference (0.98–1.06)"``, ``"default 1.10× faster than O0 (…)"``), ``"A/A ±1.8 %"``
    for the baseline; ``""`` without paired rounds (no one-pass ratio on a plot). A noisy machine is said once, by
    the plot's title or caption (``verdict["noisy"]``), not under every point (issue 55)."""
    v = lane.verdict or {}
    if lane is base:
        return f"A/A ±{v['aa_noise']:.1f} %" if v.get("aa_noise") is not None else ""
    if not v.get("ratio"):
        return ""
    text = short_verdict({**v, "mode": lane.name, "against": base.name})
    for said in (f"{lane.name} vs {base.name}: ", f"{lane.name} "):
        text = text.removeprefix(said)
    return text


def one_pass_speedup(base: SettingLane, lane: SettingLane) -> float | None:
    """The baseline's steady ms over ``lane``'s from the cold lanes alone (> 1: ``lane`` faster), None without
    both; no interval — what a race without paired rounds can say."""
    return base.steady_ms / lane.steady_ms if base.steady_ms and lane.steady_ms else None


#: Said beside a ratio when the setting compiled to the baseline's optimized HLO.
SAME_HLO = "same optimized HLO"


def table_rows(lanes: list[SettingLane]) -> list[dict[str, Any]]:
    """One row per lane for :data:`COLUMNS`: ``setting`` (``*`` after a name on the Pareto front), ``compile``
    (``"total (trace/lower/compile)"`` ms), ``steady_ms``, ``x_baseline`` (:func:`versus_baseline`: the paired
    verdict's words), ``equal``, ``peak_bytes``, ``break_even`` (calls, or None)."""
    if not lanes:
        return []
    base = lanes[0]
    front = set(pareto_names(lanes))
    return [{"setting": lane.name + (" *" if lane.name in front else ""), "compile": _split(lane),
             "steady_ms": lane.steady_ms, "x_baseline": versus_baseline(base, lane),
             "equal": _equal(lane), "peak_bytes": lane.peak_bytes, "break_even": break_even_calls(base, lane)}
            for lane in lanes]


def _opt(fmt: str) -> Any:
    return lambda v: "—" if v is None else format(v, fmt)


#: The CLI table's columns (rows: :func:`table_rows`).
COLUMNS = (
    Column("setting", "setting", align="left"),
    Column("compile", "compile ms (trace/lower/compile)"),
    Column("steady_ms", "steady ms/call", format=_opt(",.3f"), best="low"),
    Column("x_baseline", "vs baseline (paired rounds, 95 % CI)", align="left"),
    Column("equal", "equal outputs"),
    Column("peak_bytes", "peak memory", format=lambda v: "—" if v is None else nbytes(v)),
    Column("break_even", "break-even calls", format=_opt(",d")),
)


def format_table(lanes: list[SettingLane]) -> str:
    """The race as the CLI prints it: :data:`COLUMNS`, then one line per break-even sentence."""
    text = render_text(COLUMNS, table_rows(lanes))
    notes = summary(lanes)["break_even_text"]
    return "\n".join([text, *notes])
