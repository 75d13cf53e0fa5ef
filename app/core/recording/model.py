"""A recorded run and a session file's content as plain data, and their JSON form (schema version 1).

A :class:`RecordedRun` keeps a run the way the window's views consume it: the typed events of
:mod:`app.core.events` (:class:`PromptEvent`, :class:`TokenEvent`, :class:`CallRecord`,
:class:`FinishedEvent`), one :class:`app.core.inspect.ir.StepIR` per compiled step, the source maps and
the profile. :meth:`RecordedRun.to_dict` / :meth:`RecordedRun.from_dict` are the JSON schema documented in
docs/session-files.md ("Format"); times are milliseconds, ``timestamp`` / ``started_at`` Unix seconds.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import zlib
from dataclasses import asdict, dataclass, field
from typing import Any

from app.core.events import CallRecord, Event, FinishedEvent, IREvent, PromptEvent, Summary, TokenEvent
from app.core.inspect import source_map_io
from app.core.inspect.ir import StepIR
from app.core.inspect.views import MODEL_STEPS, is_model_step, keys
from app.core.profile.model import ProfileRow, StepProfile, Timeline, TimelineBar
from app.core.recording.environment import machine_label, recorded_label

#: The session format this code writes and the newest it reads.
FORMAT_VERSION = 1
#: Value of the top-level ``format`` key: what tells a session file from any other zip of JSON.
FORMAT_NAME = "torchax-playground-session"
#: A run's key of its recorded pass pipeline (:class:`RecordedPasses`), as version 1 files have it.
PASSES_FIELD = "passes"


def _known(cls: type, d: dict[str, Any]) -> dict[str, Any]:
    """The keys of ``d`` that are fields of dataclass ``cls`` (keys added by a later version 1 writer are
    ignored; a missing required field raises TypeError in ``cls(**…)``)."""
    names = {f.name for f in dataclasses.fields(cls)}
    return {k: v for k, v in d.items() if k in names}


#: The :class:`StepIR` fields a session file leaves out: the live jaxpr, and any IR text the catalog does not
#: record (:data:`app.core.inspect.views.IR_VIEWS`, ``recorded``; none today).
_NOT_RECORDED = ("traced_jaxpr", *keys(kind="text", recorded=False))


def _ir_to_dict(ir: StepIR) -> dict[str, Any]:
    return {f.name: getattr(ir, f.name) for f in dataclasses.fields(StepIR) if f.name not in _NOT_RECORDED}


def _profile_to_dict(p: StepProfile) -> dict[str, Any]:
    d = {f.name: getattr(p, f.name) for f in dataclasses.fields(StepProfile) if f.name != "source_map"}
    d["rows"] = [asdict(r) for r in p.rows]
    d["timeline"] = asdict(p.timeline)
    return d


def profile_from_dict(d: dict[str, Any]) -> StepProfile:
    """The :class:`StepProfile` of a session's ``profile`` dict (``source_map`` left None: the run's
    ``source_maps`` hold it). Raises KeyError / TypeError on a malformed dict."""
    t = d["timeline"]
    timeline = Timeline(**{**_known(Timeline, t), "bars": [TimelineBar(**_known(TimelineBar, b)) for b in t["bars"]]})
    return StepProfile(**{**_known(StepProfile, d), "rows": [ProfileRow(**_known(ProfileRow, r)) for r in d["rows"]],
                          "timeline": timeline})


def _plain(value: object) -> Any:
    """``value`` as JSON data (tuples as lists, anything else JSON cannot hold as its text)."""
    return json.loads(json.dumps(value, default=str))


def _pack(text: str | None) -> str | None:
    return None if text is None else base64.b64encode(zlib.compress(text.encode("utf-8"), 9)).decode("ascii")


def _unpack(data: str | None) -> str | None:
    return None if data is None else zlib.decompress(base64.b64decode(data)).decode("utf-8")


@dataclass
class RecordedPasses:
    """XLA's pass pipeline as recorded for one step (the window's Passes tab,
    :class:`app.core.session.requests.PassesReady`), as plain data: ``step``, ``mode``, ``module`` (the HLO
    module's name), ``compile_ms``; ``rows``: :func:`app.core.passes.query.pass_rows`; ``snapshots``: each
    snapshot's summary (``index``, ``pipeline``, ``pass``, ``n_instructions``, ``n_fusions``, …), ``before``
    and ``final`` included; ``breakdown``: the compile time's parts; ``fusions`` and ``decisions``: the
    final module's fusions and the fusion log; ``seconds``: recording time; ``initial_hlo`` /
    ``final_hlo``: the module before the first pass and after the last (stored zlib-compressed, base64, as
    ``initial_hlo_z`` / ``final_hlo_z``)."""

    step: str
    mode: str
    module: str = ""
    compile_ms: float | None = None
    rows: list[dict[str, Any]] = field(default_factory=list)
    snapshots: list[dict[str, Any]] = field(default_factory=list)
    breakdown: dict[str, Any] = field(default_factory=dict)
    fusions: list[dict[str, Any]] = field(default_factory=list)
    decisions: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    initial_hlo: str | None = None
    final_hlo: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
             if f.name not in ("initial_hlo", "final_hlo")}
        return {**_plain(d), "initial_hlo_z": _pack(self.initial_hlo), "final_hlo_z": _pack(self.final_hlo)}

    @staticmethod
    def from_dict(d: dict[str, Any]) -> RecordedPasses:
        """Raises TypeError / ValueError on a malformed dict (damaged compressed HLO included)."""
        try:
            initial, final = _unpack(d.get("initial_hlo_z")), _unpack(d.get("final_hlo_z"))
        except zlib.error as exc:
            raise ValueError(f"passes: compressed HLO is damaged ({exc})") from exc
        return RecordedPasses(**_known(RecordedPasses, d), initial_hlo=initial, final_hlo=final)

    @property
    def n_changed(self) -> int:
        """Passes that changed the module."""
        return sum(1 for r in self.rows if r.get("changed"))


@dataclass
class RecordedRun:
    """One run (or one lane of a race) as recorded.

    ``label``: e.g. ``"run 1 · jit-static"``; ``mode``: the execution mode; ``race``: the number of the
    race it was a lane of (None for a single run); ``model``: the engine's label (``"pydoc-llama"``,
    ``"SmolLM2-135M-Instruct · Q4_1 → float32"``) or a program's name; ``model_id``: what was loaded
    (built-in name, hub id, folder); ``config``: a summary of the model config (``model_type``,
    ``hidden_size``, ``num_hidden_layers``, … see :func:`config_summary`); ``settings``: the
    :class:`app.core.settings.GenerationSettings` as a dict; ``prompt``: the user's prompt text.
    ``prompt_event``: the prompt as the model saw it (chat template applied) and its length in tokens.
    ``tokens``: every :class:`TokenEvent` (``elapsed_ms``: arrival time in ms since the run started, the
    clock of ``Summary.ttft_ms``); ``records``: every :class:`CallRecord` (``timestamp``: Unix seconds at the
    call's end); ``finished``: the :class:`FinishedEvent` (reason, :class:`Summary`, token ids, text), None
    when the run did not end. ``ir``: step kind (``"prefill"``, ``"decode"``) → :class:`StepIR` (texts and
    figures; ``traced_jaxpr`` is None); ``source_maps``: step kind →
    :class:`app.core.inspect.source_map.SourceMap`; ``profile``: a measured
    :class:`app.core.profile.model.StepProfile` or None; ``passes``: XLA's pass pipeline of a step as
    recorded in the window's Passes tab (:class:`RecordedPasses`) or None. ``environment``: the recording machine
    (:func:`app.core.recording.environment.environment` plus ``mesh`` and ``persistent_cache_hits``);
    ``recorded_at``: ISO 8601 UTC time of the run's end; ``started_at``: Unix seconds at its start (None
    when unknown).
    """

    label: str
    mode: str
    model: str
    model_id: str = ""
    config: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    prompt: str = ""
    race: int | None = None
    prompt_event: PromptEvent | None = None
    tokens: list[TokenEvent] = field(default_factory=list)
    records: list[CallRecord] = field(default_factory=list)
    finished: FinishedEvent | None = None
    ir: dict[str, StepIR] = field(default_factory=dict)
    source_maps: dict[str, Any] = field(default_factory=dict)
    profile: StepProfile | None = None
    passes: RecordedPasses | None = None
    environment: dict[str, Any] = field(default_factory=dict)
    recorded_at: str = ""
    started_at: float | None = None

    # -- what the views read ----------------------------------------------------------------------------
    @property
    def summary(self) -> Summary | None:
        return self.finished.summary if self.finished else None

    @property
    def token_ids(self) -> list[int]:
        """Generated token ids (the finished run's, else those of the token events)."""
        return list(self.finished.token_ids) if self.finished else [t.token_id for t in self.tokens]

    @property
    def text(self) -> str:
        """Generated text (the finished run's, else the token deltas joined)."""
        return self.finished.text if self.finished else "".join(t.text for t in self.tokens)

    @property
    def mesh(self) -> str:
        return self.records[0].mesh if self.records else self.environment.get("mesh", "1 device")

    @property
    def machine(self) -> str:
        """Where it ran, e.g. ``"CPU × 1 · jax 0.10.2"``: the key to group and colour runs by machine."""
        return machine_label(self.environment)

    @property
    def recorded_label(self) -> str:
        """``"recorded on CPU × 1 · jax 0.10.2 · 2026-11-25"``."""
        return recorded_label(self.environment, self.recorded_at)

    @property
    def persistent_cache_hits(self) -> int:
        """Compiles of this run served by JAX's persistent compilation cache."""
        return sum(1 for r in self.records if r.persistent_cache_hit)

    def ir_events(self) -> list[IREvent]:
        """One :class:`IREvent` per recorded step, in step order (prefill first)."""
        first = MODEL_STEPS[0]
        return [IREvent(step, self.mode, ir) for step, ir in sorted(self.ir.items(), key=lambda kv: kv[0] != first)]

    def events(self) -> list[Event]:
        """The run's events in the order the engine yielded them: the prompt, then per call its
        :class:`CallRecord`, the step's :class:`IREvent` after the first call of that step kind that
        compiled, the call's tokens; the :class:`FinishedEvent` last. What ``Session.apply_all`` and the CLI
        consume (no :class:`PhaseEvent`: see :func:`app.core.recording.replay.replay_schedule` for those)."""
        out: list[Event] = [self.prompt_event] if self.prompt_event else []
        by_call: dict[int, list[TokenEvent]] = {}
        for t in self.tokens:
            by_call.setdefault(t.call_index, []).append(t)
        pending_ir = dict(self.ir)
        for r in self.records:
            out.append(r)
            if r.compiled and r.step in pending_ir:
                out.append(IREvent(r.step, self.mode, pending_ir.pop(r.step)))
            out.extend(by_call.pop(r.index, []))
        out.extend(t for ts in by_call.values() for t in ts)  # tokens of calls not recorded (none normally)
        out.extend(IREvent(step, self.mode, ir) for step, ir in pending_ir.items())
        if self.finished:
            out.append(self.finished)
        return out

    # -- JSON -------------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The run as JSON-ready data (schema in docs/session-files.md, "Format")."""
        p = self.prompt_event
        return {
            "label": self.label, "mode": self.mode, "race": self.race, "model": self.model,
            "model_id": self.model_id, "config": self.config, "settings": self.settings, "prompt": self.prompt,
            "prompt_formatted": None if p is None else {"text": p.text, "n_tokens": p.n_tokens, "chat": p.chat},
            "text": self.text, "token_ids": self.token_ids,
            "finish_reason": self.finished.reason if self.finished else None,
            "tokens": {
                "index": [t.index for t in self.tokens], "token_id": [t.token_id for t in self.tokens],
                "text": [t.text for t in self.tokens], "call_index": [t.call_index for t in self.tokens],
                "elapsed_ms": [t.elapsed_ms for t in self.tokens],
            },
            "records": [asdict(r) for r in self.records],
            "summary": asdict(self.finished.summary) if self.finished else None,
            "ir": {step: _ir_to_dict(ir) for step, ir in self.ir.items()},
            "source_maps": {step: source_map_io.to_dict(sm) for step, sm in self.source_maps.items()},
            "profile": _profile_to_dict(self.profile) if self.profile is not None else None,
            PASSES_FIELD: self.passes.to_dict() if self.passes is not None else None,
            "environment": self.environment, "recorded_at": self.recorded_at, "started_at": self.started_at,
        }

    @staticmethod
    def from_dict(d: dict[str, Any]) -> RecordedRun:
        """The run of a :meth:`to_dict` dict. Raises KeyError, TypeError or ValueError on a malformed one
        (:func:`app.core.recording.store.load` turns those into :class:`SessionFileError`)."""
        tk = d["tokens"]
        columns = [tk["index"], tk["token_id"], tk["text"], tk["call_index"], tk["elapsed_ms"]]
        if len({len(c) for c in columns}) > 1:
            raise ValueError("token columns differ in length")
        tokens = [TokenEvent(int(i), int(t), str(s), int(c), float(e)) for i, t, s, c, e in zip(*columns)]
        records = [CallRecord(**_known(CallRecord, r)) for r in d["records"]]
        p = d.get("prompt_formatted")
        finished = None
        if d.get("summary") is not None:
            finished = FinishedEvent(d["finish_reason"], Summary(**_known(Summary, d["summary"])),
                                     [int(i) for i in d["token_ids"]], str(d["text"]))
        return RecordedRun(
            label=str(d["label"]), mode=str(d["mode"]), model=str(d["model"]), model_id=d.get("model_id", ""),
            config=dict(d.get("config") or {}), settings=dict(d.get("settings") or {}), prompt=d.get("prompt", ""),
            race=d.get("race"),
            prompt_event=None if p is None else PromptEvent(p["text"], int(p["n_tokens"]), bool(p.get("chat"))),
            tokens=tokens, records=records, finished=finished,
            ir={step: StepIR(**_known(StepIR, ir)) for step, ir in (d.get("ir") or {}).items()},
            source_maps={s: source_map_io.from_dict(m) for s, m in (d.get("source_maps") or {}).items()},
            profile=profile_from_dict(d["profile"]) if d.get("profile") else None,
            passes=RecordedPasses.from_dict(d[PASSES_FIELD]) if d.get(PASSES_FIELD) else None,
            environment=dict(d.get("environment") or {}), recorded_at=str(d.get("recorded_at", "")),
            started_at=d.get("started_at"),
        )


#: Config attributes kept in :attr:`RecordedRun.config` (those a model has).
CONFIG_KEYS = (
    "model_type", "architectures", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
    "num_key_value_heads", "head_dim", "vocab_size", "max_position_embeddings", "tie_word_embeddings",
    "sliding_window", "torch_dtype", "dtype", "n_embd", "n_layer", "n_head", "n_positions",
)


def config_summary(config: object) -> dict[str, Any]:
    """The JSON-ready figures of a model config (a ``transformers`` ``PretrainedConfig`` or any object with
    those attributes): the :data:`CONFIG_KEYS` it has, values made plain (dtypes as their names)."""
    out: dict[str, Any] = {}
    for key in CONFIG_KEYS:
        value = getattr(config, key, None)
        if value is None:
            continue
        if not isinstance(value, (bool, int, float, str, list, tuple)):
            value = str(value).removeprefix("torch.")
        out[key] = list(value) if isinstance(value, tuple) else value
    return out


def is_program_run(run: RecordedRun) -> bool:
    """A run of the user's program (calls of an entry point), not of a model (prompt, prefill, decode,
    tokens): no prompt or tokens, and calls of a step other than prefill / decode (a run with no calls:
    the program settings it recorded)."""
    if run.prompt_event is not None or run.tokens:
        return False
    if run.records:
        return not any(is_model_step(r.step) for r in run.records)
    return "calls" in run.settings and "max_new_tokens" not in run.settings
