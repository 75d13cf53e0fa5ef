"""``torchax-playground generate``: stream a model's text to stdout, then its call table and summary
(``--json``: one JSON object per token, call record and the summary)."""

from __future__ import annotations

import argparse
import signal
import threading
from typing import TextIO

from app.cli.common import (
    add_model_args,
    add_session_args,
    compute_service,
    load_engine_for,
    main_thread,
    note_cap,
    phase_printer,
    process_count,
    record_event,
    session_recorder,
    settings_from_args,
    write_json_event,
    write_session_outputs,
)
from app.core.events import CallRecord, FinishedEvent, PhaseEvent, PromptEvent, TokenEvent
from app.core.profile.bound import memory_bound
from app.core.report.text import format_call_table, format_summary
from app.core.session.requests import RunRequest


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    gen = sub.add_parser("generate", help="stream text to stdout, then a timing table")
    add_model_args(gen)
    gen.add_argument("--json", action="store_true",
                     help="one JSON object per line: tokens, call records, then a summary")
    gen.add_argument("--no-ir", action="store_true", help="skip IR capture (faster first calls)")
    add_session_args(gen)
    return gen


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    settings = settings_from_args(args, capture_ir=not args.no_ir)
    on_phase = phase_printer(err) if not args.json else None
    engine = load_engine_for(args, err, on_event=on_phase)
    stop = threading.Event()
    # Stop between steps on one process; across processes Ctrl-C ends every process (one stopping alone would
    # leave the others waiting in the next step's collectives)
    previous = (signal.signal(signal.SIGINT, lambda *_: stop.set())
                if main_thread() and process_count() == 1 else None)
    records: list[CallRecord] = []
    recorder = session_recorder(args, engine, settings)  # the run written when it ends, source maps at the end
    bound = memory_bound(engine)  # the decode step's memory-bandwidth floor (measured at most once a day, the best figure kept)
    if recorder is not None and bound is not None:  # kept with the run: show-session --json writes it back
        recorder.settings["bound"] = {"bound_ms": bound.bound_ms, "bandwidth_gbs": bound.bandwidth_gbs}
    # the window's request through the window's service: the run, then (saving a session) its source maps
    request = RunRequest(args.prompt, settings, source_maps=bool(args.save_session))
    try:
        for event in compute_service(engine, args).handle(request, stop.is_set, on_phase, reraise=True):
            record_event(recorder, event, err)
            note_cap(event, err)  # a KV cache too short for --max-new-tokens says so before the run
            if args.json:
                write_json_event(out, event, engine.label, bound)
            elif isinstance(event, PromptEvent):
                print(event.text, end="", file=out, flush=True)  # what the model reads (chat template applied)
            elif isinstance(event, TokenEvent):
                print(event.text, end="", file=out, flush=True)
            elif isinstance(event, CallRecord):
                records.append(event)
            elif isinstance(event, PhaseEvent) and on_phase and event.phase != "running":
                on_phase(event)
            elif isinstance(event, FinishedEvent):
                print("\n", file=out)
                print(format_call_table(records), file=out)
                print(format_summary(engine.label, event), file=out)
                print(f"device {event.device}", file=out)
                if bound is not None and event.summary.steady_decode_ms:
                    share = bound.share(event.summary.steady_decode_ms) or 0.0
                    print(f"memory bandwidth {share:.0%} used: {bound.explain()}", file=err)
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    write_session_outputs(args, recorder, err)
    return 0


