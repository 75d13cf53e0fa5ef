"""The one lane runner of a program request (issue 57, item 2): :class:`app.core.programs.lanes.LaneRun` yields the
events the window's service forwards, and the CLI's ``program`` folds the same run into a ``RunResult`` per lane."""

from __future__ import annotations

import io

from app.cli.parser import main
from app.core.events import CallRecord, FinishedEvent, IREvent, LaneEvent
from app.core.programs import lanes as lanes_module
from app.core.programs.compute.requests import ProgramRequest
from app.core.programs.compute.service import ProgramService
from app.core.programs.lanes import LaneRun, plan_lanes, run_lanes
from app.core.programs.loader import load_program

SMALL = '''import jax.numpy as jnp


def f(x):
    return jnp.sin(x) * 2.0


def f_args():
    return (jnp.ones((4, 8)),)
'''


def _kinds(events: list[object]) -> list[str]:
    return [type(e).__name__ for e in events]


def test_one_lane_run_yields_the_windows_events_and_keeps_the_clis_results():
    prepared = load_program(source=SMALL, name="small.py").prepare()
    run = LaneRun(prepared, plan_lanes(prepared, n_calls=2, mode="compare"), capture_ir=True)
    events = list(run)
    assert _kinds(events) == ["LaneEvent", "CallRecord", "IREvent", "CallRecord", "FinishedEvent",
                              "LaneEvent", "CallRecord", "CallRecord", "FinishedEvent"]
    lanes = [e for e in events if isinstance(e, LaneEvent)]
    assert [(e.mode, e.index, e.n_lanes) for e in lanes] == [("jit", 0, 2), ("no-jit", 1, 2)]
    finished = [e for e in events if isinstance(e, FinishedEvent)]
    assert [r.summary for r in run.results] == [f.summary for f in finished]  # one measurement, two readings
    assert [len(r.records) for r in run.results] == [2, 2] and run.results[0].stages is not None
    assert run.ir is not None and next(e for e in events if isinstance(e, IREvent)).mode == "jit"


def test_a_lane_the_stop_left_unstarted_is_no_event_but_an_empty_stopped_result():
    prepared = load_program(source=SMALL, name="small.py").prepare()
    plan = plan_lanes(prepared, n_calls=2, mode="compare")
    made: list[CallRecord] = []
    events = []
    for e in LaneRun(prepared, plan, should_stop=lambda: len(made) >= 2):
        events.append(e)
        if isinstance(e, CallRecord):
            made.append(e)
    assert [e.mode for e in events if isinstance(e, LaneEvent)] == ["jit"]  # the window starts no second run
    made.clear()
    results = list(run_lanes(prepared, plan, lambda: len(made) >= 2, on_record=made.append))
    assert [(r.mode, len(r.records), r.stopped) for r in results] == [("jit", 2, False), ("no-jit", 0, True)]


def test_the_window_and_the_cli_run_their_lanes_through_the_one_lane_run(tmp_path, monkeypatch):
    runs: list[str] = []
    iterate = lanes_module.LaneRun.__iter__

    def counted(self):
        runs.append(self.lanes[0].mode)
        return iterate(self)

    monkeypatch.setattr(lanes_module.LaneRun, "__iter__", counted)
    list(ProgramService().handle(ProgramRequest(SMALL, name="small.py", n_calls=2, mode="no-jit"), lambda: False))
    path = tmp_path / "small.py"
    path.write_text(SMALL)
    assert main(["program", str(path), "--calls", "2", "--json"], io.StringIO(), io.StringIO()) == 0
    assert runs == ["no-jit", "jit"]
