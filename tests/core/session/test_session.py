"""The Qt-free session model and compute service: run state, load queue, races and errors without Qt."""

from __future__ import annotations

import pytest

from app.core.events import CallRecord, FinishedEvent, LaneEvent, TokenEvent
from app.core.programs.compute.requests import ProgramRequest
from app.core.race import by_lane, race, summary_rows
from app.core.requests import Request, RequestDone, RequestFailed
from app.core.session import requests as rq
from app.core.session.compute.service import ComputeService
from app.core.session.model import LiveFigures, Session
from app.core.settings import GenerationSettings


class Recorder:
    """Collects what a session submits and what its signals emit."""

    def __init__(self) -> None:
        self.sent: list[Request] = []
        self.emitted: dict[str, list] = {}

    def session(self) -> Session:
        s = Session(self.sent.append)
        for name in s.events.signals:
            getattr(s.events, name).connect(lambda *args, n=name: self.emitted.setdefault(n, []).append(args))
        return s


def test_run_waits_for_its_load_then_streams_into_one_run(llama_engine, model_dirs):
    rec = Recorder()
    session = rec.session()
    service = ComputeService()
    assert session.run("The jit", GenerationSettings(max_new_tokens=5), model_dirs("llama"))
    assert [type(r) for r in rec.sent] == [rq.LoadRequest] and session.busy and session.pending
    session.apply_all(list(service.handle(rec.sent.pop(0))))
    assert session.loaded.request.model == model_dirs("llama") and [type(r) for r in rec.sent] == [rq.RunRequest]
    assert not session.run("again", GenerationSettings(), model_dirs("llama"))  # busy: refused, nothing sent
    session.apply_all(list(service.handle(rec.sent.pop(0))))
    assert not session.busy and rec.sent == []
    run = session.current
    assert run.finished is not None and len(run.tokens) == 5 and run.records[0].compiled
    summary = run.finished.summary
    figures = session.figures()
    assert figures.ttft_ms == summary.ttft_ms == run.tokens[0].elapsed_ms  # one TTFT, one clock
    assert figures.steady_ms == summary.steady_decode_ms and figures.n_compiles == summary.n_compiles
    live = LiveFigures.of(type(run)(run.label, run.mode, records=run.records, tokens=run.tokens))
    assert live.ttft_ms == summary.ttft_ms  # the strip's live TTFT equals the summary's
    assert rec.emitted["runFinished"][-1][0] is run and rec.emitted["idle"]


def test_failed_load_drops_the_run_it_was_for_and_keeps_the_model(llama_engine, model_dirs):
    rec = Recorder()
    session = rec.session()
    service = ComputeService()
    session.load(model_dirs("llama"))
    session.apply_all(list(service.handle(rec.sent.pop(0))))
    session.run("x", GenerationSettings(max_new_tokens=2), "/no/such/folder")
    session.apply_all(list(service.handle(rec.sent.pop(0))))
    assert isinstance(session.last_error, RequestFailed) and "does not exist" in session.last_error.message
    assert rec.sent == [] and session.pending is None and not session.busy
    assert session.loaded.request.model == model_dirs("llama") and session.runs == []  # refused: no run


def test_window_and_cli_race_read_the_same_stream(llama_engine):
    settings = GenerationSettings(max_new_tokens=4)
    events = list(race(llama_engine, "The jit", ["torch", "jit-static"], settings))
    finished = {mode: e for mode, e in by_lane(iter(events)) if isinstance(e, FinishedEvent)}
    cli_rows = summary_rows(finished)
    session = Session(lambda request: None)
    session.pending = rq.RaceRequest("The jit", ("torch", "jit-static"), settings)
    session.send_pending()
    session.apply_all(events)
    assert session.race_rows() == cli_rows
    assert [r.mode for r in session.runs] == ["torch", "jit-static"] and all(r.race == 1 for r in session.runs)
    assert [len(r.tokens) for r in session.runs] == [4, 4]
    assert sum(isinstance(e, LaneEvent) for e in events) == 2


def test_stopped_race_summarises_only_finished_lanes():
    settings = GenerationSettings()
    session = Session(lambda request: None)
    request = rq.RaceRequest("p", ("torch", "jit-static"), settings)
    session.pending = request
    session.send_pending()
    messages = []
    session.events.idle.connect(messages.append)
    session.apply(LaneEvent("torch", 0, 2, 8))
    session.apply_all([CallRecord(0, "prefill", "torch", {}, 5.0, 5.0), TokenEvent(0, 1, "a", 0, 5.0)])
    from app.core.events import Summary

    rec = session.current.records
    session.apply(FinishedEvent("stopped", Summary.from_records("torch", rec, 1, 5.0, 6.0), [1], "a"))
    session.apply(RequestDone(request))
    assert [r["mode"] for r in session.race_rows()] == ["torch"] and session.active is None
    assert session.race_rows()[0]["reason"] == "stopped"
    assert messages == ["Race stopped: finished none; stopped torch; not run jit-static"]


def test_service_reports_bad_requests_as_data():
    service = ComputeService()
    events = list(service.handle(rq.RunRequest("p", GenerationSettings())))
    assert isinstance(events[0], RequestFailed) and "No model is loaded" in events[0].message
    assert isinstance(events[-1], RequestDone)
    events = list(service.handle(rq.CacheRequest("frobnicate")))
    assert "Unknown cache action" in events[0].message


@pytest.mark.parametrize("mode", ["torch", "jit-static"])
def test_stop_flag_ends_a_run_within_a_step(llama_engine, mode):
    service = ComputeService()
    service.engine = llama_engine
    calls = []

    def should_stop() -> bool:
        calls.append(1)
        return len(calls) > 2

    settings = GenerationSettings(mode=mode, max_new_tokens=50, stop_at_eos=False)
    events = list(service.handle(rq.RunRequest("The jit", settings), should_stop))
    finished = [e for e in events if isinstance(e, FinishedEvent)][0]
    assert finished.reason == "stopped" and len(finished.token_ids) == 3


def test_a_failure_names_the_input_at_fault():
    from app.core.errors import EmptyPromptError, InvalidSettingsError, ModelNotFoundError, PromptTooLongError
    from app.core.session.compute.service import failure

    run = rq.RunRequest("hi", GenerationSettings())
    assert failure(rq.LoadRequest("x/y"), ModelNotFoundError("no such model")).field == "model"
    assert failure(rq.MeshRequest("tp=3"), InvalidSettingsError("tp=3 does not divide")).field == "mesh"
    assert failure(run, PromptTooLongError("The prompt is 40 tokens")).field == "prompt"
    assert failure(run, EmptyPromptError("The prompt is empty")).field == "prompt"
    assert failure(run, InvalidSettingsError("top_p must be in (0, 1]")).field == "settings"
    unexpected = failure(run, RuntimeError("boom"))
    assert unexpected.field == "" and unexpected.message.startswith("Unexpected error: RuntimeError")


def test_the_session_keeps_the_last_runs_and_a_race_keeps_earlier_ones_unless_the_cap_forces_them_out():
    """Retention is the session's alone (the plot, the race table and exports show ``session.runs``): a race
    started after two runs keeps them beside its lanes while the cap allows, then drops the oldest and says
    so; a race's lanes always stay together: the cap counts a race as one unit (issue 37)."""
    rec = Recorder()
    session = rec.session()
    session.max_runs = 3
    for _ in range(2):
        session.active = None
        session.pending = rq.RunRequest("p", GenerationSettings())
        session.send_pending()
    assert [r.run_id for r in session.runs] == [1, 2]
    session.pending = rq.RaceRequest("p", ("torch", "jit-static", "torch-compile"), GenerationSettings())
    session.send_pending()
    session.apply(LaneEvent("torch", 0, 3, 8))
    session.apply(LaneEvent("jit-static", 1, 3, 8))
    assert [r.label for r in session.runs] == ["run 1 · jit-static", "run 2 · jit-static", "run 3 · torch",
                                               "run 4 · jit-static"]
    assert not any("left the plot" in args[0] for args in rec.emitted.get("status", []))
    session.apply(LaneEvent("torch-compile", 2, 3, 8))
    assert [r.run_id for r in session.runs] == [1, 2, 3, 4, 5]  # three units: two runs and the race
    session.active = None
    session.pending = rq.RunRequest("p", GenerationSettings())
    session.send_pending()  # a fourth unit: the oldest run leaves, never a lane of the race
    assert [r.run_id for r in session.runs] == [2, 3, 4, 5, 6]
    assert any("run 1 · jit-static left the plot" in args[0] for args in rec.emitted["status"])
    session.set_max_runs(2)  # the race (one unit, its three lanes together) and the newest run
    assert [r.run_id for r in session.runs] == [3, 4, 5, 6]
    session.set_max_runs(1)
    assert [r.run_id for r in session.runs] == [6]


def test_caps_say_so_when_they_apply():
    """A KV cache that ends the run early is said before the run; a race lane capped by the eager token cap says so."""
    from app.core.events import PromptEvent

    session = Session(lambda request: None)
    notices, statuses = [], []
    session.events.notice.connect(notices.append)
    session.events.status.connect(statuses.append)
    session.pending = rq.RaceRequest("p", ("torchax-eager", "jit-static"), GenerationSettings(max_new_tokens=100))
    session.send_pending()
    session.apply(LaneEvent("torchax-eager", 0, 2, 8))
    assert statuses[-1].startswith("Race 1/2: torchax-eager (capped at 8 tokens")
    session.apply(PromptEvent("p", 6, False, 64, 100, 59))
    assert notices and notices[-1].startswith("Capped at 59 new tokens: the KV cache holds 64 positions")
    session.apply(LaneEvent("jit-static", 1, 2, 100))
    assert "capped" not in statuses[-1]


def test_device_choice_reloads_the_model_there_and_lists_that_platform(model_dirs):
    """The window's Device picker (issue 30): the platforms this machine has are listed with the one in use; a
    choice loads the model again on that platform; the platform in use or a busy session changes nothing."""
    rec = Recorder()
    session = rec.session()
    service = ComputeService()
    session.list_devices()
    session.apply_all(list(service.handle(rec.sent.pop(0))))
    assert session.platforms == ["cpu"] and session.platform == "cpu"
    assert rec.emitted["platforms"][-1] == (["cpu"], "cpu")
    assert session.load(model_dirs("llama"))
    session.apply_all(list(service.handle(rec.sent.pop(0))))
    assert session.loaded.request.device == ""
    assert not session.set_device("cpu")  # the platform in use: nothing sent
    assert rec.sent == []
    assert session.set_device("tpu")  # no TPU here: the load fails with the platform named, the model stays
    load, listing = rec.sent
    assert isinstance(load, rq.LoadRequest) and load.device == "tpu" and isinstance(listing, rq.DevicesRequest)
    events = list(service.handle(rec.sent.pop(0)))
    failed = [e for e in events if isinstance(e, RequestFailed)]
    assert failed and "tpu" in str(failed[0].message).lower()


def test_replays_never_push_the_recorded_runs_off_the_plot():
    """Issue 29, flaw 4: a recorded race (3 lanes, opened together) replayed again and again stays on the plot;
    older replays leave it first, and the newest replay's lanes stay together."""
    session = Session(lambda request: None)
    session.max_runs = 2  # units (issue 37): the recorded race and one replay of it
    recorded = [session.begin_recorded(f"torch lane {i}", mode, "recorded here", race=1, keep=3)
                for i, mode in enumerate(("torch", "jit-static", "torch-compile"))]
    for run in recorded:
        session.end_recorded(run)
    for replay_race in (2, 3, 4):
        for mode in ("torch", "jit-static", "torch-compile"):  # one lane after another, as Demo ▸ Replay does
            lane = session.begin_recorded(f"replay {replay_race} · {mode}", mode, "recorded here", race=replay_race,
                                          replay=True)
            assert lane is not None
            session.end_recorded(lane)
        kept = [r.label for r in session.runs]
        assert all(r.label in kept for r in recorded), kept  # the recording stays, torch lane included
        assert [r.race for r in session.runs if r.replay] == [replay_race] * 3, kept  # older replays left first


def test_a_program_stopped_before_its_first_call_does_not_repeat_the_previous_summary(monkeypatch):
    """Issue 29, flaw 19: Esc in an infinite loop (the request ends before any call) says it stopped before the
    first call, not the previous program run's summary."""
    from app.core.session import model as session_model

    monkeypatch.setattr(session_model, "program_line", lambda run: f"summary of {run.label}")
    rec = Recorder()
    session = rec.session()
    first = ProgramRequest("def f(x):\n    return x\n", name="a.py")
    assert session.run_program(first)
    session.apply(LaneEvent("jit", 0, 1, 3))
    session.runs[-1].finished = object()  # its calls ended
    session.apply(RequestDone(first))
    assert rec.emitted["idle"][-1][0].startswith("summary of run 1")
    second = ProgramRequest("while True:\n    pass\n", name="b.py")
    assert session.run_program(second)
    session.apply(RequestDone(second))  # stopped while loading: no lane, no call
    assert rec.emitted["idle"][-1][0] == "Stopped before the first call ended."


def test_a_replay_started_on_a_full_plot_stays():
    """Found by the random-walk journeys: with the plot full, a replay just started was dropped from the session
    at once (replays leave first) while the window still drew it."""
    session = Session(lambda request: None)
    session.max_runs = 2
    for i in range(2):
        run = session.begin_recorded(f"recorded {i}", "jit-static", "recorded here", keep=2)
        session.end_recorded(run)
    replay = session.begin_recorded("replay", "jit-static", "recorded here", replay=True)
    assert replay is not None and session.runs[-1] is replay


def test_a_replay_of_a_live_race_keeps_every_lane_of_the_race():
    """Issue 37: the cap counts a race as one unit, so a race of three lanes and its replay (six runs) stay on a
    plot that keeps five; a cap of one keeps the newest whole race, never part of one."""
    session = Session(lambda request: None)
    session.max_runs = 5
    session.pending = rq.RaceRequest("p", ("torch", "jit-static", "torch-compile"), GenerationSettings())
    session.send_pending()
    for i, mode in enumerate(("torch", "jit-static", "torch-compile")):
        session.apply(LaneEvent(mode, i, 3, 8))
    session.active = None
    race = list(session.runs)
    for mode in ("torch", "jit-static", "torch-compile"):
        lane = session.begin_recorded(f"replay · {mode}", mode, "recorded here", race=session.new_race_id(),
                                      replay=True) if mode == "torch" else session.begin_recorded(
            f"replay · {mode}", mode, "recorded here", race=session.runs[-1].race, replay=True)
        assert lane is not None
        session.end_recorded(lane)
    assert len(session.runs) == 6 and all(r in session.runs for r in race)
    session.set_max_runs(1)
    assert [r.mode for r in session.runs] == ["torch", "jit-static", "torch-compile"]
    assert all(r.replay for r in session.runs)  # the newest unit: the whole replayed race
