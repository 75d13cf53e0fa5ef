"""Plain-text tables of call records and run summaries: the one place a run's summary becomes text
(:func:`format_summary` for the CLI and exported reports, :func:`summary_line` for the window's status
line and the benchmarks)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from app.core.report.columns import CALL_COLUMNS, call_row, render_text
from app.core.units import counted, fmt, ms

if TYPE_CHECKING:
    from app.core.events import FinishedEvent, PromptEvent


#: Why a run ended (``FinishedEvent.reason``), in words.
def cap_note(prompt: PromptEvent) -> str:
    """What caps a run, said before it runs (``""`` when nothing does): a :class:`app.core.events.PromptEvent`
    whose KV cache cannot hold ``max_new_tokens`` after the prompt."""
    cap = getattr(prompt, "new_tokens_cap", None)
    if cap is None:
        return ""
    assert prompt.cache_len is not None  # a cap is set only with the cache's length
    return (f"Capped at {counted(cap, 'new token')}: the KV cache holds {counted(prompt.cache_len, 'position')} "
            f"and the prompt takes {prompt.n_tokens:,} (asked for {prompt.max_new_tokens:,}); the run ends with "
            "'KV cache full'.")


FINISH_REASONS = {
    "eos": "end of text",
    "end_of_turn": "end of the assistant's turn",
    "max_new_tokens": "max new tokens",
    "cache_full": "KV cache full",
    "stopped": "stopped",
    "calls": "all calls made",
}


def _ms(value: float | None) -> str:
    return fmt(value, ",.1f")


def format_call_table(records: list[Any], head: int = 6, tail: int = 3, input_name: str = "input_ids") -> str:
    """The CLI's call table (:data:`app.core.report.columns.CALL_COLUMNS`): the first ``head`` and last
    ``tail`` calls, compiling calls always shown, ``…`` where calls are left out. ``input_name``: the
    ``CallRecord.input_shapes`` key whose shape the input column shows (a program's ``"arg 0"``)."""
    columns = CALL_COLUMNS if input_name == "input_ids" else tuple(
        replace(c, title=input_name) if c.key == "input_ids" else c for c in CALL_COLUMNS)
    shown = [r for i, r in enumerate(records) if i < head or i >= len(records) - tail or r.compiled]
    rows, last = [], -1
    for r in shown:
        if r.index != last + 1:
            rows.append({c.key: "" for c in columns} | {"index": "…"})
        last = r.index
        row = call_row(r)
        if input_name != "input_ids":
            row["input_ids"] = "x".join(map(str, r.input_shapes.get(input_name, [])))
        rows.append(row)
    return render_text(columns, rows)


def summary_line(finished: FinishedEvent | None) -> str:
    """One line: why it ended, tokens, total time, TTFT, the steady decode rate and the compiles, e.g.
    ``Done (max new tokens): 16 tokens in 2.10 s · TTFT 1.20 s · decode 41.6 tok/s · 2 compiles (1.90 s) · cpu``
    (the last part: the device that ran it, ``Summary.device``, when known). ``finished``: a run's finished
    event (a run's ``finished`` field, None only before it ends: never passed then)."""
    assert finished is not None
    s, reason = finished.summary, finished.reason
    decode = f" · decode {s.decode_tokens_per_s:.1f} tok/s" if s.decode_tokens_per_s else ""
    device = f" · {s.device}" if getattr(s, "device", "") else ""
    return (f"Done ({FINISH_REASONS.get(reason, reason)}): {counted(s.n_tokens, 'token')} in {ms(s.total_ms)} · "
            f"TTFT {ms(s.ttft_ms)}{decode} · {counted(s.n_compiles, 'compile')} ({ms(s.compile_ms)}){device}")


def format_summary(label: str, finished: FinishedEvent) -> str:
    """The CLI's and the exported report's summary: three lines with every figure of the run."""
    s = finished.summary
    rate = f"{s.decode_tokens_per_s:,.1f}" if s.decode_tokens_per_s else "-"
    return (
        f"model {label} | mode {s.mode} | {counted(s.n_tokens, 'token')}, stopped by {finished.reason}\n"
        f"time to first token {_ms(s.ttft_ms)} ms | steady decode {_ms(s.steady_decode_ms)} ms/token "
        f"({rate} tokens/s) | overall {s.overall_tokens_per_s:,.1f} tokens/s | total {_ms(s.total_ms)} ms\n"
        f"compiles {s.n_compiles} ({_ms(s.compile_ms)} ms compiling) | calls {s.n_calls}"
    )
