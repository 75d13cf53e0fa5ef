"""Plain-text tables of call records and run summaries (CLI, benchmarks, exported reports)."""

from __future__ import annotations

from typing import Any

from app.core.units import fmt


def _ms(value: float | None) -> str:
    return fmt(value, ",.1f")


def format_call_table(records: list[Any], head: int = 6, tail: int = 3) -> str:
    """One row per call (first ``head`` and last ``tail`` rows, compiling calls always shown)."""
    header = f"{'call':>4} {'step':<7} {'input_ids':<9} {'wall ms':>9} {'trace':>8} {'lower':>8} {'compile':>9} {'execute':>9}  note"
    lines = [header, "-" * len(header)]
    shown = [r for i, r in enumerate(records) if i < head or i >= len(records) - tail or r.compiled]
    last = -1
    for r in shown:
        if r.index != last + 1:
            lines.append(f"{'…':>4}")
        last = r.index
        shape = "x".join(map(str, r.input_shapes.get("input_ids", [])))
        note = ""
        if r.compiled:
            note = "compiled" + (" (persistent cache)" if r.persistent_cache_hit else "")
            if r.compile_reason:
                note += f": {r.compile_reason}"
        lines.append(
            f"{r.index:>4} {r.step:<7} {shape:<9} {_ms(r.wall_ms):>9} {_ms(r.trace_ms):>8} "
            f"{_ms(r.lower_ms):>8} {_ms(r.compile_ms):>9} {_ms(r.execute_ms):>9}  {note}"
        )
    return "\n".join(lines)


def format_summary(label: str, finished: Any) -> str:
    s = finished.summary
    rate = f"{s.decode_tokens_per_s:,.1f}" if s.decode_tokens_per_s else "-"
    return (
        f"model {label} | mode {s.mode} | {s.n_tokens} tokens, stopped by {finished.reason}\n"
        f"time to first token {_ms(s.ttft_ms)} ms | steady decode {_ms(s.steady_decode_ms)} ms/token "
        f"({rate} tokens/s) | overall {s.tokens_per_s:,.1f} tokens/s | total {_ms(s.total_ms)} ms\n"
        f"compiles {s.n_compiles} ({_ms(s.compile_ms)} ms compiling) | calls {s.n_calls}"
    )
