"""Demo-kit core: mode race, persistent compilation cache, compile reasons, exports, CLI race."""

from __future__ import annotations

import csv
import io
import json

import pytest

from app.cli import main
from app.core.compile_cache import xla as cc
from app.core.events import CallRecord, FinishedEvent, LaneEvent
from app.core.race import by_lane, format_race_table, race, summary_rows
from app.core.report.export import markdown_report, write_records_csv, write_records_json
from app.core.settings import GenerationSettings


def test_race_gives_identical_greedy_tokens_and_expected_compiles(llama_engine):
    finished, records, lanes = {}, {}, []
    settings = GenerationSettings(max_new_tokens=4)  # jit-dynamic compiles every step: a token more, a compile more
    stream = race(llama_engine, "The jit function", ["torch", "jit-dynamic", "jit-static"], settings)
    for mode, event in by_lane(stream):
        if isinstance(event, LaneEvent):
            lanes.append((event.mode, event.index, event.n_lanes))
        elif isinstance(event, FinishedEvent):
            finished[mode] = event
        elif isinstance(event, CallRecord):
            assert event.mode == mode
            records.setdefault(mode, []).append(event)
    assert lanes == [("torch", 0, 3), ("jit-dynamic", 1, 3), ("jit-static", 2, 3)]
    assert len({tuple(f.token_ids) for f in finished.values()}) == 1
    assert all(r.compiled for r in records["jit-dynamic"])
    assert sum(r.compiled for r in records["jit-static"]) == 2
    assert not any(r.compiled for r in records["torch"])
    rows = summary_rows(finished)
    assert [r["mode"] for r in rows] == ["torch", "jit-dynamic", "jit-static"]
    torch_ms = finished["torch"].summary.steady_decode_ms
    static_ms = finished["jit-static"].summary.steady_decode_ms
    assert rows[2]["speedup_vs_torch"] == pytest.approx(torch_ms / static_ms)
    assert rows[1]["speedup_vs_torch"] is None  # jit-dynamic compiles every step: no steady decode
    table = format_race_table(rows)
    assert "jit-static" in table and "TTFT (ms)" in table and f"{torch_ms / static_ms:.2f}×" in table


def test_race_caps_the_torchax_eager_lane(llama_engine):
    # A cap of one token: the eager lane runs the prefill alone (torchax-eager compiles each op of each new shape on
    # its own; a decode step would add every op again at its one-token shape), which is enough to show the cap.
    settings = GenerationSettings(max_new_tokens=6)
    events = list(race(llama_engine, "The jit", ["torchax-eager", "jit-static"], settings, eager_tokens=1))
    lanes = [e for e in events if isinstance(e, LaneEvent)]
    assert [(lane.mode, lane.max_new_tokens) for lane in lanes] == [("torchax-eager", 1), ("jit-static", 6)]
    done = [e for e in events if isinstance(e, FinishedEvent)]
    assert [len(f.token_ids) for f in done] == [1, 6] and done[1].token_ids[:1] == done[0].token_ids


def test_race_rejects_unknown_modes(llama_engine):
    from app.core.errors import InvalidSettingsError

    with pytest.raises(InvalidSettingsError, match="Race modes"):
        list(race(llama_engine, "x", ["torch", "nope"], GenerationSettings()))


def test_cleared_caches_and_static_arguments_are_named(llama_engine):
    list(llama_engine.generate("The jit", GenerationSettings(max_new_tokens=2)))  # compiled once…
    llama_engine.clear_compiled()  # …then dropped: the next compile says so
    first = [e for e in llama_engine.generate("The jit", GenerationSettings(max_new_tokens=2))
             if isinstance(e, CallRecord)]
    assert first[0].compile_reason == "first call after caches were cleared"
    sampled = [e for e in llama_engine.generate("The jit", GenerationSettings(max_new_tokens=2, temperature=0.7))
               if isinstance(e, CallRecord)]
    assert sampled[0].compile_reason == "new static argument: greedy=False"


def test_persistent_cache_serves_a_cleared_engine(llama_engine, tmp_path):
    try:
        cc.set_persistent_cache(tmp_path / "jax-cache")
        llama_engine.clear_compiled()
        cold = [e for e in llama_engine.generate("The jit", GenerationSettings(max_new_tokens=3))
                if isinstance(e, CallRecord) and e.compiled]
        assert cold and not any(r.persistent_cache_hit for r in cold)
        n_files, n_bytes = cc.disk_cache_size(tmp_path / "jax-cache")
        assert n_files >= 2 and n_bytes > 0
        llama_engine.clear_compiled()  # cold in memory, warm on disk: "Replay cold start"
        warm = [e for e in llama_engine.generate("The jit", GenerationSettings(max_new_tokens=3))
                if isinstance(e, CallRecord) and e.compiled]
        assert len(warm) == 2 and all(r.persistent_cache_hit for r in warm)
        assert cc.clear_disk_cache(tmp_path / "jax-cache") == n_bytes
        assert cc.disk_cache_size(tmp_path / "jax-cache") == (0, 0)
    finally:
        cc.set_persistent_cache(None)
    assert cc.persistent_cache_dir() is None


def test_exports_round_trip(llama_engine, tmp_path):
    events = list(llama_engine.generate("The jit", GenerationSettings(max_new_tokens=4)))
    records = [e for e in events if isinstance(e, CallRecord)]
    assert write_records_csv(tmp_path / "calls.csv", {"run 1": records}) == 4
    with open(tmp_path / "calls.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows[0]["run"] == "run 1" and rows[0]["step"] == "prefill" and float(rows[1]["wall_ms"]) > 0
    assert write_records_json(tmp_path / "calls.json", {"run 1": records}) == 4
    data = json.loads((tmp_path / "calls.json").read_text())
    assert data["run 1"][0]["input_shapes"]["input_ids"] == [1, 16]
    report = markdown_report("Run", "tiny", "The jit", summary_rows({"jit-static": events[-1]}),
                             images=["plot.png"], text=events[-1].text)
    assert "| jit-static |" in report and "![plot](plot.png)" in report


def test_cli_race_json(model_dirs):
    """A real race with its steady-state phase (a 2 s budget): the lanes' rows, then the pair's verdict with its
    interval, rounds, A/A floor and dropped rounds, and the phase's thread budget."""
    out, err = io.StringIO(), io.StringIO()
    code = main(["race", "--model", model_dirs("llama"), "--modes", "torch", "jit-static",
                 "--max-new-tokens", "4", "--json", "--steady-budget", "2"], out=out, err=err)
    assert code == 0, err.getvalue()
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    rows = [r for r in lines if r["event"] == "race"]
    assert [r["mode"] for r in rows] == ["torch", "jit-static"]
    assert rows[0]["token_ids"] == rows[1]["token_ids"] and rows[1]["n_compiles"] == 2
    (verdict,) = [r for r in lines if r["event"] == "verdict"]
    assert (verdict["mode"], verdict["against"], verdict["baseline"]) == ("jit-static", "torch", "torch")
    assert verdict["ci_low"] <= verdict["ratio"] <= verdict["ci_high"]
    assert verdict["rounds"] + verdict["dropped"] >= 9 and verdict["aa_noise"] > 0
    assert verdict["text"].startswith(("jit-static is", "torch is", "jit-static vs torch: no clear difference"))
    (steady,) = [r for r in lines if r["event"] == "steady"]
    assert steady["threads"]["torch_intra_op"] == steady["threads"]["xla_cpu"] >= 1
    assert steady["rounds"] + steady["dropped"] >= 9 and steady["tokens"] == 4 and len(steady["load_avg"]) == 3
    assert lines[-1] is steady


def test_cli_race_table_compares_the_capped_eager_lane_on_its_prefix(model_dirs):
    out, err = io.StringIO(), io.StringIO()
    code = main(["race", "--model", model_dirs("llama"), "--modes", "torch", "torchax-eager", "--eager-tokens", "1",
                 "--max-new-tokens", "4", "--ignore-eos", "--steady-budget", "0", "--steady-rounds", "2"],
                out=out, err=err)  # the eager lane capped at its prefill's token (its op-by-op compiles: one shape)
    assert code == 0, err.getvalue()
    text = out.getvalue()
    assert "identical tokens across modes (first 1): yes" in text
    assert "[race] 2/2 torchax-eager" in err.getvalue()
    assert "steady state: " in text and "baseline torch" in text  # torch against its A/A copy only
    assert "(torchax-eager left out: capped lane, seconds per token: too slow for rounds)" in text
