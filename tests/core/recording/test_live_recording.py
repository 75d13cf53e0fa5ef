"""Live recording (issue 35): a real Session fed the compute thread's event lists, followed by a
:class:`LiveRecording` — what each run records, where source maps, profiles and pass pipelines go, runs that
leave the plot freed, and a program run recorded under its ``FILE.py:ENTRY``. No Qt, no JAX."""

from __future__ import annotations

import dataclasses

from session_helpers import passes_ready

from app.core.events import CallRecord, FinishedEvent, IREvent, LaneEvent, PromptEvent, Summary, TokenEvent
from app.core.live_recording import LiveRecording, LiveRunInfo, race_keys, short_origin
from app.core.profile.model import StepProfile, Timeline
from app.core.programs.compute.requests import ProgramLoaded, ProgramRequest
from app.core.recording import RecordedRun
from app.core.recording.model import is_program_run
from app.core.requests import Request, RequestDone, SourceMapReady
from app.core.session import requests as rq
from app.core.session.model import Session
from app.core.settings import GenerationSettings

PROMPT = "The jit"


def _session() -> tuple[Session, list[Request], LiveRecording, list[int]]:
    """A session with a model loaded (nothing runs: what it submits is collected), a live recording following
    it, and how many times the recording asked the front end for the form (``asked``)."""
    sent: list[Request] = []
    session = Session(sent.append)
    session.loaded = rq.ModelLoaded(rq.LoadRequest("tiny"), "tiny-llama · float32", "tiny", 0.0)
    asked: list[int] = []

    def form() -> LiveRunInfo:
        asked.append(1)
        return LiveRunInfo(PROMPT, GenerationSettings(max_new_tokens=3))

    return session, sent, LiveRecording(session, form), asked


def _stream(mode: str, n_tokens: int = 2, step_ir: bool = True) -> list:
    """A run's events as the compute thread sends them: the prompt, a prefill, decode steps, tokens, the IR of
    the compiled steps and the end."""
    records = [CallRecord(0, "prefill", mode, {}, 30.0, 30.0, compiled=mode != "torch")]
    records += [CallRecord(i, "decode", mode, {}, 5.0, 5.0) for i in range(1, n_tokens)]
    tokens = [TokenEvent(i, 10 + i, f"t{i}", i, 30.0 + 5 * i) for i in range(n_tokens)]
    events: list = [PromptEvent(PROMPT, 4)]
    if step_ir:
        events.append(IREvent("prefill", mode, {"hlo": f"{mode} prefill"}))
        events.append(IREvent("decode", mode, {"hlo": f"{mode} decode"}))
    events += records + tokens
    events.append(FinishedEvent("eos", Summary.from_records(mode, records, n_tokens, 30.0, 40.0),
                                [t.token_id for t in tokens], "".join(t.text for t in tokens)))
    return events


def _run(session: Session, sent: list[Request], mode: str = "jit-static", **kw) -> None:
    assert session.run(PROMPT, GenerationSettings(mode=mode, max_new_tokens=3), "tiny")
    request = sent.pop()
    session.apply_all(_stream(mode, **kw) + [RequestDone(request)])


def _race(session: Session, sent: list[Request], modes: tuple[str, ...]) -> None:
    assert session.race(PROMPT, list(modes), GenerationSettings(max_new_tokens=3), 3, "tiny")
    request = sent.pop()
    events: list = []
    for i, mode in enumerate(modes):
        events += [LaneEvent(mode, i, len(modes), 3)] + _stream(mode, step_ir=mode != "torch")
    session.apply_all(events + [RequestDone(request)])


def _profile(step: str = "decode") -> StepProfile:
    return StepProfile(step, "jit_step", 2, 5.0, 5.0, 4.0, 4.0, 0.8, 0.2, 0.1, 0.1, None, 0, 0, None, [], {},
                       Timeline(0, 5000.0, []))


def test_a_live_run_is_recorded_as_it_streams_with_the_front_ends_prompt_and_settings():
    session, sent, live, asked = _session()
    _run(session, sent)
    state = session.current
    run = live.recorded[state.run_id]
    assert asked == [1]  # asked once, when the run started
    assert run.label == state.label == "run 1 · jit-static" and run.model == "tiny-llama · float32"
    assert run.model_id == "tiny" and run.prompt == PROMPT and run.prompt_event == PromptEvent(PROMPT, 4)
    assert run.settings["mode"] == "jit-static" and run.settings["max_new_tokens"] == 3
    assert [r.step for r in run.records] == ["prefill", "decode"] and len(run.tokens) == 2
    assert set(run.ir) == {"prefill", "decode"} and run.finished is state.finished and run.environment
    assert live.recorder.runs == [run] and live.recorder.current is None
    assert live.runs_on_plot() == [run] and live.ir_origin(state) == short_origin(run, state.run_id)
    assert live.ir_origin(state).startswith(f"run {state.run_id} · jit-static · recorded on ")  # issue 55
    assert not is_program_run(run)


def test_a_form_that_cannot_be_read_records_the_run_without_settings():
    sent: list[Request] = []
    session = Session(sent.append)
    session.loaded = rq.ModelLoaded(rq.LoadRequest("tiny"), "tiny-llama", "tiny", 0.0)

    def broken() -> LiveRunInfo:
        raise ValueError("the form changed")

    live = LiveRecording(session, broken)
    _run(session, sent)
    run = live.recorded[session.current.run_id]
    assert run.settings == {} and run.prompt == "" and run.finished is not None


def test_race_lanes_each_get_their_run_and_the_pass_pipeline_goes_to_the_lane_of_its_mode():
    session, sent, live, _ = _session()
    _race(session, sent, ("jit-static", "torch"))
    lanes = [live.recorded[s.run_id] for s in session.runs]
    assert [r.mode for r in lanes] == ["jit-static", "torch"] and [r.race for r in lanes] == [1, 1]
    assert [r.settings["mode"] for r in lanes] == ["jit-static", "torch"]  # a lane's own mode, not the form's
    assert lanes[0].ir and not lanes[1].ir and all(r.finished is not None for r in lanes)
    session.apply(passes_ready("jit-static"))  # the Passes tab recorded jit-static's decode step
    assert lanes[0].passes is not None and lanes[0].passes.mode == "jit-static" and lanes[1].passes is None
    session.apply(passes_ready("torch-compile"))  # no lane of that mode: the newest live run
    assert lanes[1].passes is not None and lanes[1].passes.mode == "torch-compile"


def test_source_maps_and_profiles_go_to_the_newest_live_run_with_that_steps_ir():
    session, sent, live, _ = _session()
    _race(session, sent, ("jit-static", "torch"))
    jit, torch = (live.recorded[s.run_id] for s in session.runs)
    source_map = object()
    session.apply(SourceMapReady("decode", source_map))
    assert jit.source_maps == {"decode": source_map} and torch.source_maps == {}
    session.apply(rq.ProfileReady(_profile(), {}, {}))
    assert jit.profile is not None and jit.profile.step == "decode" and torch.profile is None
    elsewhere = dataclasses.replace(_profile(), step_ms=99.0)
    session.apply(rq.ProfileReady(elsewhere, {}, {}, origin="capture x.xplane.pb · gpu"))  # not measured here
    session.apply(dataclasses.replace(passes_ready(), origin="dumps DIR · gpu"))
    assert jit.profile.step_ms == 5.0 and jit.passes is None and torch.passes is None


def test_runs_that_leave_the_plot_are_freed():
    session, sent, live, _ = _session()
    session.set_max_runs(2)
    for mode in ("torch", "jit-static", "jit-loop"):
        _run(session, sent, mode)
    assert [s.run_id for s in session.runs] == [2, 3]
    assert sorted(live.recorded) == [2, 3]
    assert [r.mode for r in live.recorder.runs] == ["jit-static", "jit-loop"]  # run 1 is no longer kept
    assert [r.label for r in live.runs_on_plot()] == ["run 2 · jit-static", "run 3 · jit-loop"]


def test_a_stopped_run_is_recorded_as_stopped_and_later_ir_is_no_runs():
    session, sent, live, _ = _session()
    assert session.run(PROMPT, GenerationSettings(max_new_tokens=30), "tiny")
    request = sent.pop()
    session.apply_all(_stream("jit-static", 3)[:-1])  # no FinishedEvent yet
    assert session.abandon()  # Esc during a compile: ends as stopped with what it has
    run = live.recorded[session.current.run_id]
    assert run.finished is not None and run.finished.reason == "stopped" and len(run.tokens) == 3
    session.apply_all([RequestDone(request)])
    session.apply(IREvent("decode", "jit-static", {"hlo": "a trace as you type"}))  # after its end
    assert run.ir["decode"] == {"hlo": "jit-static decode"} and live.recorder.current is None
    assert live.recorder.runs == [run]


def test_a_program_run_is_recorded_as_file_colon_entry_not_as_the_loaded_model():
    """Issue 37: the window recorded program runs under the loaded model (SmolLM2); the CLI's ``program``
    names them ``FILE.py:ENTRY``."""
    session, sent, live, asked = _session()
    request = ProgramRequest("def selu(x):\n    return x\n", path="/work/prog/act.py", name="act.py",
                                entry="selu", n_calls=2, spec="f32[8]")
    assert session.run_program(request)
    records = [CallRecord(0, "selu", "jit", {}, 40.0, 40.0, compiled=True),
               CallRecord(1, "selu", "jit", {}, 1.0, 1.0)]
    session.apply_all([ProgramLoaded(request, "/work/prog/act.py", "act.py", (), "selu", "f32[8]", "jax"),
                       LaneEvent("jit", 0, 1, 0), *records, IREvent("selu", "jit", {"hlo": "selu"}),
                       FinishedEvent("calls", Summary.from_records("jit", records, 0, 40.0, 41.0)),
                       SourceMapReady("selu", "map"), RequestDone(request)])
    state = session.current
    run = live.recorded[state.run_id]
    assert state.program == "selu" and run.label == state.label
    assert run.model == "act.py:selu"  # not "tiny-llama · float32"
    assert run.model_id == "/work/prog/act.py" and run.config == {"backend": "jax"}
    assert run.prompt == "" and asked == []  # the model form is not asked for a program run
    assert run.settings["calls"] == 2 and run.settings["args"] == "f32[8]" and run.settings["mode"] == "jit"
    assert is_program_run(run) and len(run.records) == 2 and run.source_maps == {"selu": "map"}
    _run(session, sent)  # a model run after it is the model's again
    assert live.recorded[session.current.run_id].model == "tiny-llama · float32"


def test_opened_runs_are_kept_beside_live_ones_and_named_as_the_plot_names_them():
    session, sent, live, _ = _session()
    _run(session, sent)
    opened = RecordedRun(label="run 7 · torch", mode="torch", model="m", environment={"backend": "tpu"})
    seen: list = []
    session.events.runStarted.connect(lambda s: seen.append((live.recorded_of(s), live.ir_origin(s))))
    state = live.begin_recorded(opened, opened.label)
    assert state is not None and live.recorded[state.run_id] is opened and live.pending is None
    assert seen == [(opened, short_origin(opened, state.run_id))]  # known while the session announces it
    session.apply_all(opened.events())
    session.end_recorded(state)
    live_run = live.recorded[1]
    assert state.run_id == 7  # issue 37: a reopened run keeps its file's number while it is free
    assert [r.label for r in live.runs_on_plot()] == ["run 1 · jit-static", "run 7 · torch"]
    assert live.runs_on_plot()[0] is live_run
    assert live.recorder.runs == [live_run]  # an opened run is no live run
    assert [runs for _, runs in live.replay_groups()] == [[live_run], [opened]]
    assert live.replay_source() == [opened]
    replay = live.begin_recorded(opened, "replay", replay=True)
    assert replay is not None and session.busy
    session.end_recorded(replay)
    shown = live.runs_on_plot()[-1]
    assert shown.label == "run 8 · torch ▶ replay of run 7 · torch" and shown.finished is not None
    assert live.replay_source() == [opened]  # a replay is not replayed


def test_a_race_opened_twice_is_saved_as_two_races_not_one():
    """The lanes of the same recorded race shown twice (a file opened twice) are two races on the plot, and what
    Save session writes keeps them two: each lane carries the race the plot shows it in, not its file's number
    (the walk, seed 336: three copies of "race 1" were read back as one nine-lane race)."""
    session, _sent, live, _ = _session()
    lanes = [RecordedRun(label=f"run {i + 1} · {mode}", mode=mode, model="m", race=1)
             for i, mode in enumerate(("torch", "jit-static"))]
    for _copy in range(2):
        race = session.new_race_id()
        for lane in lanes:
            state = live.begin_recorded(lane, lane.label, race)
            assert state is not None
            session.apply_all(lane.events())
            session.end_recorded(state)
    saved = live.runs_on_plot()
    assert [s.race for s in session.runs] == [r.race for r in saved]  # as the plot groups them
    assert len({r.race for r in saved}) == 2 and all(lane.race == 1 for lane in lanes)  # the file's runs unchanged


def test_a_file_holding_copies_of_one_race_number_opens_them_as_separate_races():
    def lane(mode: str, race: int | None) -> RecordedRun:
        return RecordedRun(label=f"run · {mode}", mode=mode, model="m", race=race)

    copies = [lane(m, 1) for m in ("torch", "jit-static")] * 3  # as files saved before as_shown kept the race
    runs = [(0, lane("jit", None)), *[(0, r) for r in copies], (1, lane("torch", 1)), (1, lane("jit-static", 1))]
    keys = race_keys(runs)
    assert keys[0] is None
    assert keys[1:7] == [(0, 1, 0), (0, 1, 0), (0, 1, 1), (0, 1, 1), (0, 1, 2), (0, 1, 2)]
    assert keys[7] == keys[8] == (1, 1, 0)  # another file's race 1 is another race
