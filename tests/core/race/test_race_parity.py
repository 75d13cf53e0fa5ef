"""The race summary's parity row: whether each lane's tokens equal the baseline's (issue 55: the CLI printed
"identical tokens across modes", the window's summary said nothing)."""

from __future__ import annotations

from app.core.events import FinishedEvent, Summary
from app.core.race import format_race_table, parity, summary_rows


def _finished(mode: str, ids: list[int]) -> FinishedEvent:
    summary = Summary(mode=mode, n_tokens=len(ids), ttft_ms=10.0, steady_decode_ms=2.0, decode_tokens_per_s=500.0,
                      overall_tokens_per_s=100.0, total_ms=50.0, compile_ms=0.0, n_compiles=0, n_calls=len(ids))
    return FinishedEvent("max_new_tokens", summary, token_ids=ids)


def test_each_lane_says_whether_it_made_the_baselines_tokens():
    finished = {"jit-static": _finished("jit-static", [5, 6, 7, 8]), "torch": _finished("torch", [5, 6, 7, 8]),
                "jit-loop": _finished("jit-loop", [5, 6, 9, 8]), "torchax-eager": _finished("torchax-eager", [5, 6]),
                "jit-dynamic": _finished("jit-dynamic", [])}
    assert parity(finished) == {"torch": "baseline", "jit-static": "same", "jit-loop": "differs at token 3",
                                "torchax-eager": "same", "jit-dynamic": None}  # eager's capped lane: its 2 tokens
    rows = summary_rows(finished)
    assert [r["parity"] for r in rows] == ["same", "baseline", "differs at token 3", "same", None]
    assert "same tokens" in format_race_table(rows).splitlines()[0]


def test_without_torch_the_first_lane_is_the_baseline():
    finished = {"jit-static": _finished("jit-static", [1, 2]), "jit-loop": _finished("jit-loop", [1, 3])}
    assert parity(finished) == {"jit-static": "baseline", "jit-loop": "differs at token 2"}

