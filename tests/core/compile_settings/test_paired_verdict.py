"""The settings race's "vs baseline" ratio (issue 54): paired, interleaved rounds of synthetic timings through the
one verdict module — its ratio, 95 % interval and words; two identical settings → "no clear difference"; a
preempted round dropped and counted; the one-pass fallback read the same way as the paired ratio; the JSON and
saved-session fields; same optimized HLO after name normalisation."""

import json
import random

from app.core.compile_settings.figures import SettingLane, format_table, plot_points, versus_baseline
from app.core.compile_settings.paired import (
    SettingsVerdicts,
    Timer,
    attach,
    hlo_fingerprint,
    paired_phase,
    paired_rounds,
)
from app.core.compile_settings.saved import format_race, json_lines, lanes_of, race_document
from app.core.events import SteadyBlockEvent
from app.core.steady import SteadyPlan
from app.core.verdict import Block, paired_ratio, verdict_text

PLAN = SteadyPlan(budget_s=0.0, min_rounds=9)


def synthetic(ms: dict[str, float], seed: int = 1, stolen: dict[tuple[int, str], float] | None = None):
    """Timers whose blocks report ``ms[name]`` ms per call with ±2 % noise and a drift shared by a round; the
    figures each label got, round by round (``seen``)."""
    rng = random.Random(seed)
    seen: dict[str, list[float]] = {}
    calls = {"n": 0}

    def timer(name: str) -> Timer:
        def block(reps: int, label: str) -> Block:
            round_no = len(seen.get(label, []))
            drift = 1.0 + 0.2 * (round_no % 3)  # the machine's speed moves between rounds, alike for every lane
            figure = ms[name] * drift * rng.uniform(0.98, 1.02)
            seen.setdefault(label, []).append(figure)
            calls["n"] += 1
            wall = figure * reps
            return Block(label, name, figure, wall, wall, (stolen or {}).get((round_no, label)), reps=reps)

        return Timer(lambda _block_ms: 4, block)

    return {name: timer(name) for name in ms}, seen


def run(timers, plan=PLAN):
    events = list(paired_rounds(timers, "default", plan))
    assert isinstance(events[-1], SettingsVerdicts)
    assert all(isinstance(e, SteadyBlockEvent) for e in events[:-1])
    return events, events[-1].doc


def test_ratio_interval_and_words_follow_the_verdict_module():
    timers, seen = synthetic({"default": 1.0, "O3": 0.8, "O0": 1.25})
    events, doc = run(timers)
    assert doc["rounds"] == 9 and doc["dropped"] == 0 and doc["stopped_by"] in ("precise", "budget")
    assert [e.round for e in events[:3]] == [-1, -1, -1]  # each setting warmed and calibrated first
    assert {e.label for e in events[:-1] if e.round == 0} == {"default", "O3", "O0", "default (A/A)"}
    o3 = doc["pairs"]["O3"]
    expected = paired_ratio(seen["default"], seen["O3"])  # the baseline's ms over the setting's: a speed-up
    assert (o3["ratio"], o3["ci_low"], o3["ci_high"]) == (expected.ratio, expected.ci_low, expected.ci_high)
    assert 1.2 < o3["ci_low"] < o3["ratio"] < o3["ci_high"] < 1.3
    assert o3["text"] == verdict_text("O3", "default", expected, doc["aa_noise"], 0)
    assert o3["text"].startswith("O3 is 1.25× faster than default (95 % CI ")
    assert doc["pairs"]["O0"]["text"].startswith("default is 1.25× faster than O0")
    assert doc["aa_noise"] == paired_ratio(seen["default"], seen["default (A/A)"]).half_width_pct


def test_the_closing_phase_of_both_races_puts_the_verdicts_on_the_lanes_before_saying_them():
    """One phase for a model step's race and a program entry's (issue 57, item 2): nothing without a plan, a
    baseline's timer or a second setting; else the rounds, each lane's verdict set when the verdicts come."""
    timers, _ = synthetic({"default": 1.0, "O3": 0.8})
    lanes = [SettingLane("default", "", None, None, None, 1.0, 1), SettingLane("O3", "", None, None, None, 0.8, 1)]
    never = lambda: False  # noqa: E731
    for skipped in (paired_phase(timers, lanes, "default", None, never),
                    paired_phase({"O3": timers["O3"]}, lanes, "default", PLAN, never),
                    paired_phase(timers, lanes, "default", PLAN, lambda: True)):
        assert list(skipped) == []
    seen_verdicts = []
    phase = paired_phase(timers, lanes, "default", PLAN, never)
    while True:
        try:
            event = next(phase)
        except StopIteration as done:
            assert done.value is True
            break
        if isinstance(event, SettingsVerdicts):
            seen_verdicts.append([lane.verdict["short"] for lane in lanes])
    assert seen_verdicts[0][0] == "baseline" and seen_verdicts[0][1] is not None


def test_two_identical_settings_say_no_clear_difference():
    timers, _ = synthetic({"default": 1.0, "O1": 1.0}, seed=3)
    _, doc = run(timers)
    pair = doc["pairs"]["O1"]
    assert pair["ci_low"] <= 1.0 <= pair["ci_high"]
    assert pair["text"].startswith("O1 vs default: no clear difference (")
    lanes = [SettingLane("default", "", 1.0, 2.0, 3.0, 1.0, 10), SettingLane("O1", "", 1.0, 2.0, 3.0, 0.9, 10)]
    attach(lanes, doc)
    assert versus_baseline(lanes[0], lanes[1]).startswith("O1 vs default: no clear difference (")
    assert "one pass" not in versus_baseline(lanes[0], lanes[1])  # the one-pass figure (0.9 ms) is not what is said


def test_a_preempted_round_is_dropped_and_counted():
    timers, _ = synthetic({"default": 1.0, "O3": 0.8}, stolen={(2, "O3"): 50.0})  # 50 ms stolen in a 3 ms block
    _, doc = run(timers)
    assert doc["dropped"] == 1 and doc["rounds"] == 9 and doc["dropped_rounds"][0].startswith("round 3: O3")
    assert doc["pairs"]["O3"]["dropped"] == 1 and "1 dropped" in doc["pairs"]["O3"]["text"]


def test_stop_ends_the_rounds_with_the_rounds_so_far():
    timers, seen = synthetic({"default": 1.0, "O3": 0.8})
    blocks = {"n": 0}

    def stop() -> bool:
        blocks["n"] += 1
        return blocks["n"] > 40

    doc = list(paired_rounds(timers, "default", SteadyPlan(budget_s=30.0), stop))[-1].doc
    assert doc["stopped_by"] == "stopped" and 2 <= doc["rounds"] < 9
    assert doc["rounds"] == len(seen["default (A/A)"]) or doc["rounds"] == len(seen["default (A/A)"]) - 1


def test_one_pass_fallback_reads_the_same_way_as_the_paired_ratio():
    base = SettingLane("default", "", 1.0, 2.0, 3.0, 1.0, 10)
    fast = SettingLane("O3", "", 1.0, 2.0, 3.0, 0.5, 10)  # half the baseline's time: 2× faster, both ways
    assert versus_baseline(base, fast) == "O3 2.00× faster than default (one pass, no CI)"
    assert versus_baseline(base, SettingLane("O0", "", 1.0, 2.0, 3.0, 1.25, 10)).startswith("O0 1.25× slower")
    fast.verdict = {"ratio": 2.0, "ci_low": 1.9, "ci_high": 2.1, "rounds": 9, "aa_noise": 1.0, "dropped": 0,
                    "noisy": False}
    assert versus_baseline(base, fast) == "O3 2.00× faster than default (95 % CI 1.90–2.10)"


HLO = """HloModule {m}, entry_computation_layout={{(f32[], f32[])->f32[]}}

ENTRY %main ({p1}: f32[], {p2}: f32[]) -> f32[] {{
  %{p1} = f32[] parameter(0){meta}
  %{p2} = f32[] parameter(1)
  %{add} = f32[] add(f32[] %{p1}, f32[] %{p2}){meta}
  ROOT %{r} = f32[] multiply(f32[] %{add}, f32[] %{p2})
}}
"""


def test_json_and_session_fields_keep_rounds_and_add_the_paired_ones():
    timers, _ = synthetic({"default": 1.0, "O3": 0.8})
    _, doc = run(timers)
    a = HLO.format(m="jit_f_1", p1="p.1", p2="p.2", add="add.3", r="r.4", meta=', metadata={op_name="x"}')
    b = HLO.format(m="jit_f_7", p1="q.5", p2="q.6", add="sum.9", r="out.8", meta="")  # renamed, no metadata
    lines = a.splitlines()
    swapped = "\n".join(lines[:3] + [lines[4], lines[3]] + lines[5:])  # the two parameters in the other order
    assert hlo_fingerprint(a) == hlo_fingerprint(b) == hlo_fingerprint(swapped)  # the structural diff's sameness
    assert hlo_fingerprint(a) != hlo_fingerprint(a.replace("add(", "subtract("))
    lanes = [SettingLane("default", "", 1.0, 2.0, 3.0, 1.0, 10, rounds=2, hlo_hash=hlo_fingerprint(a)),
             SettingLane("O3", "", 1.0, 2.0, 3.0, 0.8, 10, rounds=2, hlo_hash=hlo_fingerprint(b))]
    attach(lanes, doc)
    saved = json.loads(json.dumps(race_document("t", "decode", lanes)))  # as a session file keeps it
    base_line, o3_line, summary = (json.loads(x) for x in json_lines(saved))
    assert o3_line["rounds"] == 2  # the cold lanes merged, as before
    assert (o3_line["ratio"], o3_line["ci_low"], o3_line["ci_high"], o3_line["paired_rounds"], o3_line["dropped"]) == (
        doc["pairs"]["O3"]["ratio"], doc["pairs"]["O3"]["ci_low"], doc["pairs"]["O3"]["ci_high"], 9, 0)
    assert o3_line["aa_noise"] == doc["aa_noise"] and o3_line["same_hlo"] is True
    assert o3_line["verdict_text"] == doc["pairs"]["O3"]["text"] and o3_line["verdict_text"].startswith("O3 is 1.2")
    assert base_line["ratio"] == 1.0 and base_line["ci_low"] is None
    assert summary["paired"]["rounds"] == 9 and summary["paired"]["baseline"] == "default"
    assert lanes_of(saved)[1].verdict["rounds"] == 9
    text = format_race(saved)  # what show-session prints
    assert f"O3 {doc['pairs']['O3']['ratio']:.2f}× faster than default (95 % CI" in text
    assert "· same optimized HLO" in text and doc["pairs"]["O3"]["text"] in text
    assert "paired rounds: 9 kept (0 dropped), baseline default twice per round, A/A ±" in text
    assert plot_points(lanes_of(saved))[1]["verdict"]["rounds"] == 9


def test_old_file_without_verdicts_still_opens_and_says_one_pass():
    doc = race_document("t", "decode", [SettingLane("default", "", 1.0, 2.0, 3.0, 1.0, 10),
                                        SettingLane("O3", "", 1.0, 2.0, 3.0, 0.5, 10)])
    for lane in doc["lanes"]:
        lane.pop("verdict"), lane.pop("hlo_hash")
    doc.pop("paired")
    lanes = lanes_of(doc)
    assert lanes[1].verdict is None
    assert "O3 2.00× faster than default (one pass, no CI)" in format_table(lanes)
    assert json.loads(json_lines(doc)[1])["ratio"] is None
    assert "one pass per lane, no confidence interval" in format_race(doc)
