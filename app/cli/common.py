"""What the subcommands share: the model and generation arguments, settings from them, loading the engine
onto ``--mesh``, phase printing, the JSON lines of ``generate --json``, the persistent caches."""

from __future__ import annotations

import argparse
import json
import logging
import threading
import warnings
from dataclasses import asdict, replace
from typing import TYPE_CHECKING, Any, TextIO

from app.cli.hosts import add_distributed_args, process_fields
from app.core.compile_cache.switch import use_persistent_caches
from app.core.compile_cache.xla import default_cache_dir
from app.core.engine.device import resolve_device
from app.core.errors import InvalidSettingsError
from app.core.events import CallRecord, FinishedEvent, PromptEvent, TokenEvent
from app.core.inspect.ir import NOT_AVAILABLE
from app.core.inspect.views import IR_VIEWS
from app.core.mode_catalog import DEFAULT_MODE, MODE_NAMES
from app.core.models.sources import DEFAULT_MODEL
from app.core.parallel.hosts import process_count as count
from app.core.parallel.mesh import parse_mesh
from app.core.programs.gallery import example
from app.core.recording import RunRecorder, config_summary
from app.core.recording.perfetto import write_trace
from app.core.recording.text import bound_fields
from app.core.report.text import cap_note
from app.core.requests import Notice, SourceMapReady
from app.core.session.compute.service import ComputeService
from app.core.settings import DTYPES, GenerationSettings
from app.core.units import counted
from app.options import add_device_arg, add_devices_arg

if TYPE_CHECKING:
    from app.core.engine.engine import Engine
    from app.core.inspect.ir import StepIR
    from app.core.profile.bound import MemoryBound
    from app.core.recording.store import SessionFile


def count_arg(least: int = 1, what: str = "calls") -> Any:
    """An argparse ``type`` for a count of ``what`` that must be at least ``least``: ``--calls 0`` is refused by
    argparse (exit 2) with ``"argument --calls: at least 1 of the calls is needed, got 0"`` instead of running
    one call anyway (issue 55)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"a whole number of {what} is needed, got {text!r}") from None
        if value < least:
            raise argparse.ArgumentTypeError(f"at least {least} of the {what} is needed, got {value}")
        return value

    parse.__name__ = what  # argparse names the type in its messages
    return parse


def add_model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", default=DEFAULT_MODEL,
                   help="built-in name, hub id, folder, or random:<preset|config.json|hub id> "
                        f"(default: {DEFAULT_MODEL})")
    p.add_argument("--dtype", choices=DTYPES, default="float32",
                   help="weights dtype (bfloat16 is ~10x slower on XLA:CPU)")
    p.add_argument("--mode", choices=MODE_NAMES, default=DEFAULT_MODE)
    p.add_argument("--prompt", default="What is the capital of France?",
                   help="the user's text (inside the chat template for instruct models)")
    p.add_argument("--max-new-tokens", type=int, default=64)
    p.add_argument("--temperature", type=float, default=0.0, help="0 = greedy")
    p.add_argument("--top-k", type=int, default=0, help="0 disables")
    p.add_argument("--top-p", type=float, default=1.0, help="1.0 disables")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-cache-len", type=int, default=None,
                   help="static KV-cache positions (default: prompt bucket + max new tokens, rounded to 64)")
    p.add_argument("--ignore-eos", action="store_true", help="generate max-new-tokens even past the end token")
    p.add_argument("--chat", action=argparse.BooleanOptionalAction, default=None,
                   help="format the prompt with the model's chat template (default: on for instruct models)")
    p.add_argument("--system", default="", metavar="TEXT", help="system prompt of a chat (default: none)")
    p.add_argument("--repetition-penalty", type=float, default=1.0, metavar="P",
                   help="transformers' repetition penalty, applied inside the jitted step (1.0 = off)")
    p.add_argument("--mesh", default=None, metavar="AXES",
                   help="device mesh for tensor parallelism, e.g. tp=4 (needs that many devices)")
    add_devices_arg(p)
    add_device_arg(p)
    add_distributed_args(p)
    p.add_argument("--persistent-cache", nargs="?", const="default", default=None, metavar="DIR",
                   help="use JAX's persistent compilation cache and Inductor's disk caches beside it "
                        "(default dir: the platform cache dir)")


def settings_from_args(args: argparse.Namespace, **overrides: object) -> GenerationSettings:
    values = dict(
        mode=args.mode, max_new_tokens=args.max_new_tokens, temperature=args.temperature, top_k=args.top_k,
        top_p=args.top_p, seed=args.seed, max_cache_len=args.max_cache_len, stop_at_eos=not args.ignore_eos,
        chat=args.chat, system_prompt=args.system, repetition_penalty=args.repetition_penalty,
    )
    values.update(overrides)
    return GenerationSettings(**values).validated()


def quiet_libraries() -> None:
    import transformers

    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    logging.getLogger("huggingface_hub").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", category=FutureWarning)


def command_modes(args: argparse.Namespace) -> list[str]:
    """The modes this command will run: ``--modes`` (race) or ``--mode``."""
    modes = getattr(args, "modes", None)
    return list(modes) if modes else [m for m in [getattr(args, "mode", None)] if m]


def device_for(args: argparse.Namespace) -> Any:
    """The :class:`app.core.engine.device.Device` of ``--device`` (JAX's default backend without it), after
    checking that every mode of the command can run there. Raises :class:`InvalidSettingsError` naming the
    missing platform or the refused mode (exit status 2, one line)."""
    device = resolve_device(getattr(args, "device", None))
    for mode in command_modes(args):
        device.check(mode)
    return device


def device_line(engine: Engine) -> str:
    """``device cpu`` or ``device NVIDIA H100 80GB HBM3 (gpu:0) · torch NVIDIA H100 80GB HBM3 (cuda:0)``."""
    d = engine.device
    torch_part = f" · torch {d.torch_label}" if d.torch_label and d.torch_label != d.label else (
        "" if d.torch_label else " · torch: none (the PyTorch modes cannot run here)")
    return f"device {d.label}{torch_part}"


def load_engine_for(args: argparse.Namespace, err: TextIO, on_event=None) -> Engine:
    """Load the engine on ``--device`` and place it on ``--mesh``; print its warnings, its device (with
    ``on_event``) and, for a mesh, bytes per device. The device and the modes are checked before the slow load."""
    from app.core.engine.engine import load_engine  # noqa: PLC0415 - heavy: jax
    mesh = parse_mesh(args.mesh)  # bad text fails before the slow load
    device = device_for(args)
    processes = process_count()
    if processes > 1:  # the mesh spans every process: records name it ("tp=2 across 2 processes")
        mesh = replace(mesh, processes=processes)
    engine = load_engine(args.model, args.dtype, on_event=on_event, device=device)
    if on_event is not None:
        print(f"[device] {device_line(engine)}", file=err, flush=True)
    for warning in engine.warnings:
        print(f"warning: {warning}", file=err)
    if mesh.n_devices > 1:
        engine.set_mesh(mesh)
        per_device = engine.device_bytes()["weights"]
        sizes = ", ".join(f"{d} {b / 2**20:.1f} MiB" for d, b in per_device.items())
        mine = " (this process's devices)" if processes > 1 else ""
        print(f"[mesh] {mesh}: weights per device{mine}: {sizes}", file=err)
    return engine


def _process_fields() -> dict[str, Any]:
    return process_fields()


def process_count() -> int:
    """``jax.process_count()`` (1 unless the processes of a run across hosts joined)."""
    return count()


def phase_printer(err: TextIO):
    def on_event(event) -> None:
        if event.started:
            print(f"[{event.phase}] {event.detail}…", file=err, flush=True)
        elif event.elapsed_ms is not None:
            print(f"[{event.phase}] {event.detail}: {event.elapsed_ms:,.0f} ms", file=err, flush=True)

    return on_event


def note_cap(event: object, err: TextIO) -> None:
    """On stderr, before the run, what caps it (``note: Capped at 511 new tokens: the KV cache holds 512
    positions …``) when ``event`` is a :class:`app.core.events.PromptEvent` whose KV cache cannot hold
    ``--max-new-tokens`` after the prompt (the model's maximum positions); nothing otherwise."""
    if isinstance(event, PromptEvent) and (note := cap_note(event)):
        print(f"note: {note}", file=err, flush=True)


def write_json_event(out: TextIO, event: object, model: str, bound: MemoryBound | None = None) -> None:
    """One JSON line per token, call record and the final summary, and the formatted prompt of a chat
    (other events are not printed). ``bound`` (:class:`app.core.profile.bound.MemoryBound`): the summary also
    carries ``bound_ms`` (the decode step's memory-bandwidth floor), ``x_bound`` (steady ms/token over it) and
    ``bandwidth_gbs``."""
    if isinstance(event, (TokenEvent, CallRecord)) or (isinstance(event, PromptEvent) and event.chat):
        out.write(json.dumps(event.to_json()) + "\n")
    elif isinstance(event, FinishedEvent):
        extra = {} if bound is None else bound_fields(bound.bound_ms, bound.bandwidth_gbs,
                                                      event.summary.steady_decode_ms)
        out.write(json.dumps({"event": "summary", "reason": event.reason, "model": model,
                              **vars(event.summary), **extra, **_process_fields(), "token_ids": event.token_ids,
                              "text": event.text}) + "\n")
    out.flush()


def use_persistent_cache(args: argparse.Namespace, err: TextIO) -> None:
    if getattr(args, "persistent_cache", None):
        path = default_cache_dir() if args.persistent_cache == "default" else args.persistent_cache
        used, inductor_used = use_persistent_caches(path)
        print(f"[cache] persistent compilation caches: JAX {used}, Inductor {inductor_used}", file=err)


def main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def add_session_args(p: argparse.ArgumentParser) -> None:
    """``--save-session PATH`` and ``--perfetto PATH`` (``generate``, ``race`` and ``program``)."""
    p.add_argument("--save-session", default=None, metavar="PATH",
                   help="write the run(s) to a session file (open with show-session or the window)")
    p.add_argument("--perfetto", default=None, metavar="PATH",
                   help="write a Chrome / Perfetto trace (JSON; .json.gz compressed) of the run(s)")


def compute_service(engine: Engine, args: argparse.Namespace) -> Any:
    """The window's :class:`app.core.session.compute.service.ComputeService` with ``engine`` (loaded here with the
    CLI's options) as its model: ``generate`` and ``race`` send it the same requests as the window and
    iterate the same events (``handle(request, …, reraise=True)``: a failure is raised, not an event)."""
    service = ComputeService()
    service.adopt(engine, args.model, args.dtype, getattr(args, "device", None) or "")
    return service


def record_event(recorder: RunRecorder | None, event: object, err: TextIO | None = None) -> None:
    """Feed one event of a request's stream to the session file's ``recorder`` (None: nothing to record):
    engine events through :meth:`app.core.recording.RunRecorder.feed`, a step's source map (built after the
    run, :meth:`ComputeService.after_run`) to the newest run with IR of that step — as the window's
    :class:`app.core.live_recording.LiveRecording` does; a :class:`Notice` is printed on ``err``."""
    if isinstance(event, Notice):
        if err is not None:
            print(f"warning: {event.text}", file=err)
    elif recorder is None:
        return
    elif isinstance(event, SourceMapReady):
        recorder.add_source_map(event.step, event.source_map)
    else:
        recorder.feed(event)


def session_recorder(args: argparse.Namespace, engine: Engine, settings: GenerationSettings,
                     err: TextIO | None = None):
    """A :class:`app.core.recording.RunRecorder` for this command's run(s), or None when neither
    ``--save-session`` nor ``--perfetto`` was given. With ``--save-session`` the file is recorded as the
    command goes (:func:`autosave_recorder`); with ``err`` each rewrite says so there."""
    if not (getattr(args, "save_session", None) or getattr(args, "perfetto", None)):
        return None
    recorder = RunRecorder(engine.label, engine.model_id, config_summary(engine.config), asdict(settings),
                           args.prompt)
    return autosave_recorder(args, recorder, err)


def autosave_recorder(args: argparse.Namespace, recorder: RunRecorder | None, err: TextIO | None = None) -> Any:
    """Make ``recorder`` rewrite ``--save-session`` each time a run ends (write-then-rename: a process killed
    mid-race leaves a readable file with the runs finished so far) and write it now with no runs, so a file of
    an earlier command at that path is never taken for this one's and a path that cannot be written fails
    before the runs. With ``err`` (and no ``--json``) each rewrite prints ``[session] … so far`` there. The
    final write (:func:`write_session_outputs`) still adds what comes at the end (source maps)."""
    path = getattr(args, "save_session", None)
    if recorder is None or not path:
        return recorder

    def note(session: SessionFile, size: int) -> None:
        if session.runs:
            print(f"[session] {counted(len(session.runs), 'run')} so far in {path} ({size / 1e6:.2f} MB)", file=err,
                  flush=True)

    recorder.autosave_to = path
    recorder.on_autosave = note if err is not None and not getattr(args, "json", False) else None
    recorder.autosave()
    return recorder


def write_session_outputs(args: argparse.Namespace, recorder: RunRecorder | None, err: TextIO) -> None:
    """Write ``--save-session`` and ``--perfetto`` from ``recorder`` (nothing when it is None): the runs as
    recorded, with the source maps that came after them (:func:`record_event`)."""
    if recorder is None:
        return
    session = recorder.session()
    if args.save_session:
        size = session.save(args.save_session)
        print(f"[session] wrote {args.save_session} ({counted(len(session.runs), 'run')}, {size / 1e6:.2f} MB)", file=err)
    if args.perfetto:
        n = write_trace(args.perfetto, session.runs)
        print(f"[perfetto] wrote {args.perfetto} ({n} events; open in ui.perfetto.dev)", file=err)


def program_target(args: argparse.Namespace) -> tuple[str, str | None]:
    """``(path, entry or None)`` of ``program``'s target: ``FILE.py[:ENTRY]`` or ``--example NAME [ENTRY]``.
    Raises InvalidSettingsError when there is neither or the example is unknown."""
    if args.example:
        try:
            path = example(args.example).path
        except KeyError as exc:
            raise InvalidSettingsError(str(exc.args[0])) from None
        entry = args.target or None  # ``--example loops fori``: the positional names the entry point
        return path, entry
    if not args.target:
        raise InvalidSettingsError("Give a program FILE.py[:ENTRY], or --example NAME (see --list-examples).")
    path, sep, entry = args.target.rpartition(":")
    if sep and entry.isidentifier() and path:  # FILE.py:ENTRY (a Windows drive letter has no identifier after ':')
        return path, entry
    return args.target, None


def step_ir_text(step_ir: StepIR, what: str) -> str:
    """The text ``inspect`` / ``program --what`` print for ``what`` (a ``--what`` name of the IR-view catalog,
    :data:`app.core.inspect.views.IR_VIEWS`) of a StepIR: its ``figures`` views (``cost``, ``memory``) as JSON,
    else the IR text (``jaxpr``, ``jaxpr-source``, ``stablehlo``, ``hlo``, …); "not available" when missing."""
    row = next((v for v in IR_VIEWS if v.cli == what), None)
    key = row.key if row is not None else what.replace("-", "_")
    if row is not None and row.kind == "figures":
        data = getattr(step_ir, key)
        return json.dumps(data, indent=2) if data is not None else NOT_AVAILABLE
    text = step_ir.text(key)
    return text if text is not None else NOT_AVAILABLE


def write_text_output(text: str, output: str | None, out: TextIO, err: TextIO) -> None:
    """``text`` to the file ``output`` (saying so on ``err``), or to ``out`` ending with a newline."""
    if output:
        with open(output, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote {len(text):,} characters to {output}", file=err)
    else:
        out.write(text if text.endswith("\n") else text + "\n")

