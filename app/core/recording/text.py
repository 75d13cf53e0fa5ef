"""A recorded run as readable text (``show-session``), and as the JSON lines ``generate --json`` printed."""

from __future__ import annotations

import json
from typing import Any

from app.core.events import CallRecord, FinishedEvent, PromptEvent, TokenEvent
from app.core.inspect.views import MODEL_STEPS  # noqa: F401 (re-exported: the old import path)
from app.core.recording.compare import ir_figures
from app.core.recording.model import RecordedRun, is_program_run
from app.core.recording.store import SessionFile
from app.core.report.text import FINISH_REASONS, format_call_table, format_summary
from app.core.units import ms
from app.core.verdict.words import format_verdicts


def bound_fields(bound_ms: float | None, bandwidth_gbs: float | None, steady_ms: float | None) -> dict[str, Any]:
    """What a JSON summary adds for the memory-bandwidth bound (issue 38): ``bound_ms``, ``x_bound`` (steady
    ms/token over it) and ``bandwidth_gbs``; nothing without a bound. ``generate --json`` and
    ``show-session --json`` both write it."""
    if not bound_ms:
        return {}
    return {"bound_ms": bound_ms, "x_bound": steady_ms / bound_ms if steady_ms else None,
            "bandwidth_gbs": bandwidth_gbs}


def json_lines(run: RecordedRun) -> list[str]:
    """The lines ``generate --json`` printed for this run, in order (a chat's formatted prompt, then each
    call record and its tokens, the summary last): ``json.dumps`` of each event's ``to_json()``, the summary
    as ``{"event": "summary", "reason", "model", **Summary, "token_ids", "text"}``."""
    out = []
    for event in run.events():
        if isinstance(event, (TokenEvent, CallRecord)) or (isinstance(event, PromptEvent) and event.chat):
            out.append(json.dumps(event.to_json()))
        elif isinstance(event, FinishedEvent):
            bound = run.settings.get("bound") or {}
            extra = bound_fields(bound.get("bound_ms"), bound.get("bandwidth_gbs"), event.summary.steady_decode_ms)
            out.append(json.dumps({"event": "summary", "reason": event.reason, "model": run.model,
                                   **vars(event.summary), **extra, "token_ids": event.token_ids, "text": event.text}))
    return out


def _settings_line(settings: dict[str, Any]) -> str:
    keys = ("max_new_tokens", "temperature", "top_k", "top_p", "seed", "max_cache_len", "repetition_penalty",
            "chat", "stop_at_eos")
    return " · ".join(f"{k} {settings[k]}" for k in keys if k in settings)


#: The settings a program run records (``program --save-session``), in the order they are printed.
PROGRAM_SETTINGS = ("calls", "args", "static", "static_values", "seed", "sweep", "sweep_arg", "bucket")



def _shape(dims: list[int]) -> str:
    return f"[{','.join(map(str, dims))}]"


def _setting(value: object) -> str:
    return "; ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)


def argument_shapes(records: list[CallRecord]) -> list[str]:
    """Per argument of a program's calls, its shapes in call order, each change shown:
    ``arg 0 [1,8] → [2,8] → [4,8]`` (``arg 0 [4,8]`` when every call had the same; ``[]``: a scalar)."""
    shapes: dict[str, list[str]] = {}
    for r in records:
        for name, dims in r.input_shapes.items():
            seen = shapes.setdefault(name, [])
            if not seen or seen[-1] != _shape(dims):
                seen.append(_shape(dims))
    return [f"{name} {' → '.join(seen)}" for name, seen in shapes.items()]


def format_program_summary(label: str, finished: FinishedEvent) -> str:
    """A program run's summary in calls (no tokens): why it ended, the first call (its compile included),
    the steady call (median of the calls that did not compile), the compiles and the total."""
    s, reason = finished.summary, FINISH_REASONS.get(finished.reason, finished.reason)
    return (f"program {label} | mode {s.mode} | {s.n_calls} calls, {reason}\n"
            f"first call {ms(s.ttft_ms)} | steady call {ms(s.steady_decode_ms)} | compiles {s.n_compiles} "
            f"({ms(s.compile_ms)} compiling) | total {ms(s.total_ms)}")


def _head(run: RecordedRun, what: str) -> list[str]:
    env = run.environment
    pk = env.get("packages") or {}
    versions = " · ".join(f"{k} {v}" for k, v in pk.items() if v)
    return [f"== {run.label} · {run.recorded_label}",
            f"{what} {run.model}" + (f" ({run.model_id})" if run.model_id and run.model_id != run.model else "")
            + f" · mode {run.mode} · mesh {run.mesh}" + (f" · race {run.race}" if run.race else ""),
            f"machine {env.get('cpu_model') or '?'} · {env.get('cpu_count') or '?'} cores · {env.get('os', '?')}",
            f"versions {versions or '–'}" + (f" · XLA_FLAGS {env['xla_flags']}" if env.get("xla_flags") else "")]


def format_run(run: RecordedRun) -> str:
    """Several lines: label, model, where it was recorded, settings, prompt, generated text, the call table,
    the summary and the IR figures of each recorded step. A program's run (:func:`is_program_run`) speaks
    of calls instead: its settings, the shapes of its arguments, the call table with its first argument's
    column, first call / steady call / compiles."""
    if is_program_run(run):
        shown = {k: run.settings[k] for k in PROGRAM_SETTINGS
                 if run.settings.get(k) is not None and run.settings[k] is not False and run.settings[k] != ""
                 and run.settings[k] != []}
        if not shown.get("sweep"):
            shown.pop("sweep_arg", None)
        settings = " · ".join(f"{k.replace('_', ' ')} {_setting(v)}" for k, v in shown.items())
        lines = [*_head(run, "program"), f"settings {settings or '–'}"]
        if run.records:
            lines.append("arguments " + (" · ".join(argument_shapes(run.records)) or "no arrays"))
            first = next(iter(run.records[0].input_shapes), None)
            table = (
                format_call_table(run.records, input_name=first) if first else format_call_table(run.records)
            )
            lines += ["", table]
        lines += ["", format_program_summary(run.model, run.finished)] if run.finished else \
            ["(the run did not finish)"]
    else:
        lines = [*_head(run, "model"), f"settings {_settings_line(run.settings) or '–'}",
                 f"prompt {run.prompt!r}" + (f" ({run.prompt_event.n_tokens} tokens)" if run.prompt_event else ""),
                 f"text {run.text!r}"]
        if run.tokens:
            lines.append(f"tokens {len(run.tokens)}: first at {ms(run.tokens[0].elapsed_ms)}, "
                         f"last at {ms(run.tokens[-1].elapsed_ms)}")
        if run.records:
            lines += ["", format_call_table(run.records)]
        if run.finished:
            lines += ["", format_summary(run.model, run.finished)]
        else:
            lines.append("(the run did not finish)")
    if run.persistent_cache_hits:
        lines.append(f"persistent cache served {run.persistent_cache_hits} compile(s)")
    lines += [f"IR {line}" for line in ir_figures(run)]
    for step in run.source_maps:
        lines.append(f"source map of the {step} step: {len(run.source_maps[step].groups)} source lines")
    if run.profile is not None:
        p = run.profile
        lines.append(f"profile of the {p.step} step: {p.n_steps} steps, {p.step_ms:,.3f} ms per step, "
                     f"{len(p.rows)} instructions")
    return "\n".join(lines)


def format_verdict_record(doc: dict[str, Any]) -> str:
    """A race's kept verdicts (:func:`app.core.recording.recorder.verdict_record`): where they were measured
    (CPU model, cores, load average, thread budget, versions), then :func:`app.core.verdict.words.format_verdicts`."""
    env = doc.get("environment") or {}
    load = " ".join(f"{x:.2f}" for x in doc.get("load_avg") or []) or "–"
    versions = " · ".join(f"{k} {v}" for k, v in (env.get("packages") or {}).items() if v)
    race = doc.get("race")
    return "\n".join(["== verdicts" + (f" of race {race}" if race else ""),
                      f"machine {env.get('cpu_model') or '?'} · {env.get('cpu_count') or '?'} cores · load {load}",
                      f"versions {versions or '–'}", format_verdicts(doc)])


def format_session(session: SessionFile) -> str:
    """Every run of the session (:func:`format_run`), after a header naming the file and its runs, and the
    steady-state verdicts of its races (:func:`format_verdict_record`)."""
    head = f"{session.path or 'session'}: {len(session.runs)} run(s), format {session.format_version}"
    if session.created_at:
        head += f", written {session.created_at}"
    return "\n\n".join([head, *(format_run(r) for r in session.runs),
                         *(format_verdict_record(v) for v in session.verdicts)])
