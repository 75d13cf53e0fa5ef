"""Compare two compilations (prefill vs decode, two modes, the same step under two XLA flag sets), and the
XLA flags a recording may compile with. No Qt.

Flag validation: XLA prints no list of its flags (``XLA_FLAGS=--helpfull`` aborts with "Unknown flag in
XLA_FLAGS", jaxlib 0.10.2), and a list copied from ``xla/debug_options_flags.cc`` would go stale with the
next jaxlib. So :func:`validate_xla_flags` asks XLA itself: each flag is passed on its own as a compile
option of a trivial function (``jax.jit(lambda x: x)``, ~8 ms a flag); XLA answers "No such compile option:
'xla_…'" for a name it does not know and "While setting option …, '…' is not a valid bool value." for a bad
value. JAX is imported, so call it on the compute thread. :func:`parse_xla_flags` (pure Python) checks the
syntax first: ``--xla_name=value`` separated by spaces, names starting with ``xla_``.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Any

from app.core.errors import InvalidSettingsError
from app.core.inspect.hlo_diff import HloDiff, diff_hlo
from app.core.passes.model import PassPipeline
from app.core.passes.query import SnapshotDiff, compile_breakdown, diff_snapshots

_FLAG = re.compile(r"^(?:--?)?(xla_[A-Za-z0-9_]+)(?:=(.*))?$", re.S)
#: Dump options the recorder sets itself: refused in a flag field (they would redirect its dumps).
RESERVED = ("xla_dump_to", "xla_dump_hlo_pass_re", "xla_dump_hlo_as_text")


class XlaFlagError(InvalidSettingsError):
    """A flag field that XLA does not accept: ``flag`` names the offending flag ("" for a syntax error)."""

    def __init__(self, message: str, flag: str = ""):
        super().__init__(message)
        self.flag = flag


def _value(text: str) -> Any:
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"  # XLA parses a bool option's string as "1"/"0" only: give it a bool
    return text


def parse_xla_flags(text: str) -> dict[str, Any]:
    """``"--xla_cpu_enable_fast_math=true --xla_backend_optimization_level=1"`` → ``{"xla_cpu_enable_fast_math":
    True, "xla_backend_optimization_level": "1"}`` (a bare ``--xla_flag`` means ``=true``; values other than
    true/false are left as text, XLA parses them). Raises :class:`XlaFlagError` naming the bad word."""
    out: dict[str, Any] = {}
    try:
        words = shlex.split(text or "")
    except ValueError as exc:
        raise XlaFlagError(f"Cannot read the XLA flags: {exc}.") from None
    for word in words:
        m = _FLAG.match(word)
        if not m:
            raise XlaFlagError(f"Not an XLA flag: {word!r} (write --xla_name=value).", word)
        name, value = m.group(1), m.group(2)
        if name in RESERVED:
            raise XlaFlagError(f"{name} is set by the recording itself: leave it out.", name)
        out[name] = True if value is None else _value(value)
    return out


def validate_xla_flags(options: dict[str, Any]) -> None:
    """Ask XLA whether it knows each option and accepts its value (see the module's docstring). Raises
    :class:`XlaFlagError` naming the first refused flag, with XLA's words. Imports JAX: compute thread."""
    import jax
    import jax.numpy as jnp

    if not options:
        return
    lowered = jax.jit(lambda x: x).lower(jnp.zeros((), jnp.float32))
    for name, value in options.items():
        try:
            lowered.compile(compiler_options={name: value})
        except Exception as exc:  # JaxRuntimeError: INVALID_ARGUMENT
            msg = str(exc)
            if "No such compile option" in msg:
                raise XlaFlagError(f"Unknown XLA flag --{name}: XLA has no such option.", name) from None
            raise XlaFlagError(f"XLA refused --{name}={value}: {msg.split(': ', 1)[-1]}", name) from None


def flags_text(options: dict[str, Any]) -> str:
    """The options back as a flag line (``--xla_a=true --xla_b=1``)."""
    return " ".join(f"--{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in options.items())


@dataclass
class Comparison:
    """Two recordings side by side: ``labels`` (e.g. the model's steps,
    :data:`app.core.inspect.views.MODEL_STEPS`), ``counts``: rows of
    ``(what, a, b)`` (instructions, fusions by kind, snapshots, passes that changed the module, compile ms,
    HLO passes ms, …), ``diff``: the final modules' line diff (a → b), ``options``: each side's compiler
    options, ``structural``: the final modules' structural diff (:func:`app.core.inspect.hlo_diff.diff_hlo`, the
    one ``compare`` and the settings race use: renamed or reordered instructions are not changes; None when either
    has no final module)."""

    labels: tuple[str, str]
    counts: list[tuple[str, float | int | None, float | int | None]]
    diff: SnapshotDiff | None
    options: tuple[dict, dict]
    structural: HloDiff | None = None

    def program_line(self) -> str:
        """``"Optimized HLO (structural diff): the same optimized HLO (412 instructions matched, names aside)"`` or
        its changes."""
        if self.structural is None:
            return "Optimized HLO: a recording has no final module, no structural diff"
        return f"Optimized HLO (structural diff): {self.structural.summary()}"

    def table(self) -> str:
        a, b = self.labels
        width = max(len(r[0]) for r in self.counts) if self.counts else 10
        lines = [f"{'':<{width}} {a:>14} {b:>14}"]
        for what, x, y in self.counts:
            lines.append(f"{what:<{width}} {_fmt(x):>14} {_fmt(y):>14}")
        lines.append(self.program_line())
        return "\n".join(lines) + "\n"

    def summary(self) -> dict:
        return {"labels": list(self.labels), "counts": [list(r) for r in self.counts],
                "options": [dict(o) for o in self.options],
                "diff": {"added": self.diff.added, "removed": self.diff.removed} if self.diff else None,
                "structural": ({k: v for k, v in self.structural.to_dict().items() if k != "changes"}
                               if self.structural is not None else None)}


def _fmt(v: float | int | None) -> str:
    if v is None:
        return "-"
    return f"{v:,.1f}" if isinstance(v, float) else f"{v:,}"


def _counts(p: PassPipeline, kinds: list[str]) -> dict[str, float | int | None]:
    final = p.final
    b = compile_breakdown(p)
    groups = b.by_group()
    row: dict[str, float | int | None] = {
        "instructions (final)": final.n_instructions if final else None,
        "fusions (final)": final.n_fusions if final else None,
    }
    for kind in kinds:
        row[f"  {kind}"] = final.fusion_kinds.get(kind, 0) if final else None
    row.update({
        "custom calls (final)": len(final.custom_calls) if final else None,
        "snapshots": len(p.snapshots),
        "passes that changed it": sum(1 for t in p.pass_times if t.changed),
        "pass runs": sum(t.count for t in p.pass_times),
        "compile ms": float(p.compile_ms),
        "HLO passes ms": float(groups.get("HLO passes", 0.0)),
        "backend ms": float(groups.get("backend", 0.0)),
        "other ms": float(groups.get("other", 0.0)),
    })
    return row


def compare_pipelines(a: PassPipeline, b: PassPipeline, labels: tuple[str, str] = ("a", "b"),
                      context: int = 3) -> Comparison:
    """Compare two recordings: counts side by side (the union of both sides' rows, fusion kinds included)
    and the diff of their final modules (:func:`app.core.passes.query.diff_snapshots`, line by line, and
    :func:`app.core.inspect.hlo_diff.diff_hlo`, by graph; None when either has no final module)."""
    kinds = sorted({k for p in (a, b) if p.final for k in p.final.fusion_kinds})
    ca, cb = _counts(a, kinds), _counts(b, kinds)
    counts = [(k, ca[k], cb[k]) for k in ca]
    fa, fb = a.final, b.final
    diff = diff_snapshots(fa, fb, context) if fa is not None and fb is not None else None
    structural = diff_hlo(fa.text, fb.text) if fa is not None and fb is not None else None
    return Comparison(labels, counts, diff, (dict(a.compiler_options), dict(b.compiler_options)), structural)
