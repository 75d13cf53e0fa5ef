"""Typed events yielded by :func:`app.core.engine.engine.Engine.generate` (plain data: no Qt, no JAX objects).

The GUI's worker forwards each event over a Qt signal unchanged; the CLI prints them; ``--json`` writes
``event.to_json()`` per line. Times are wall-clock milliseconds from ``time.perf_counter`` unless named
otherwise; ``timestamp`` fields are Unix seconds (``time.time()``).
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from app.core.steps import DECODE, StepKind  # noqa: F401 (the step vocabulary, written once; re-exported)

Phase = Literal["loading", "converting", "tracing", "lowering", "compiling", "running", "profiling", "opening",
                "opening capture", "recording passes", "source map"]
#: :attr:`CallRecord.timing` of a token of an on-device loop (jit-loop): the host-side interval between callbacks.
CALLBACK_INTERVAL = "callback interval"
#: The key of :attr:`CallRecord.compile_phases` in a record's dict (session files, the report's rows).
COMPILE_PHASES_FIELD = "compile_phases"
#: ``end_of_turn``: a chat answer ended at the template's end-of-turn token (SmolLM2: ``<|im_end|>``).
#: ``calls``: a program run (``app.core.programs``) made all the calls it was asked for; ``error``: a program
#: run ended by its program's error after the calls it made.
FinishReason = Literal["eos", "end_of_turn", "max_new_tokens", "cache_full", "stopped", "calls", "error"]
#: The parts of a jitted call's wall time on the host clock (:attr:`CallRecord.host_ms` keys), in the order they
#: happen; consecutive ``time.perf_counter`` intervals, so they add up to ``wall_ms``:
#:
#: - ``transfer``: building the call's fresh inputs and copying them host → device (``jax.device_put`` of
#:   ``input_ids`` / ``position_ids``; nothing when the previous step's device outputs are fed back).
#: - ``flatten``: the call's signature in Python (``CompiledStep``: ``jax.tree_util.tree_flatten`` of the arguments
#:   and each leaf's shape / dtype, the executable-cache key); :attr:`CallRecord.leaves` counts the leaves.
#: - ``compile``: trace + lower + compile of a compiling call (0 otherwise).
#: - ``dispatch``: the call of the AOT ``jax.stages.Compiled`` until it returns — JAX's C++ ``pjit`` fast path
#:   (``Compiled.__call__`` → ``create_cpp_call``, jax/_src/stages.py and interpreters/pxla.py) flattens the
#:   arguments again in C++, checks them and enqueues the executable (asynchronous dispatch); when an output is not
#:   a plain ``ArrayImpl`` (a typed PRNG key) every call takes the Python path ``Compiled.call`` instead. On the
#:   CPU the "device" is the same cores: a dispatch that lingers (the Python path) can lose its core to XLA's
#:   compute threads and then holds device time too, so read ``dispatch`` with ``wait``. In a synchronous call
#:   (:attr:`CallRecord.synchronous`) it is the device's run (with the call's own dispatch, not separable).
#: - ``callback``: the time inside the step's host callbacks, from timestamps taken in them
#:   (:mod:`app.core.runtime.callback_clock`), carved out of ``dispatch`` (a synchronous call) or ``wait``.
#: - ``wait``: blocked until the device finishes (``block_until_ready``); for a token of jit-loop, the time from the
#:   previous token's callback returning to this one's being entered (the loop body on the device).
#: - ``token``: the token on the host: its device → host copy, ``int``, unpacking the outputs and the record (for
#:   jit-loop, the time inside the token's host callback, timestamps taken in it: the token's hand-over).
HOST_PARTS = ("transfer", "flatten", "compile", "dispatch", "callback", "wait", "token")
#: The parts that are the device's time rather than the host's (the host share leaves them out).
DEVICE_PARTS = ("wait",)
#: The parts that are the device's time in a synchronous call (:attr:`CallRecord.synchronous`).
SYNCHRONOUS_DEVICE_PARTS = ("dispatch", "wait")


class _Event:
    kind: str = "event"

    def to_json(self) -> dict[str, Any]:
        """A JSON-serialisable dict with an ``event`` key naming the event type."""
        return {"event": self.kind, **asdict(self)}  # type: ignore[call-overload]


@dataclass(frozen=True)
class PhaseEvent(_Event):
    """A phase started (``elapsed_ms`` is None) or ended (``elapsed_ms`` set).

    ``detail`` names what the phase works on, e.g. ``"decode step (1, 1)"``.
    """

    phase: Phase
    started: bool
    detail: str = ""
    elapsed_ms: float | None = None
    kind = "phase"


@dataclass(frozen=True)
class TokenEvent(_Event):
    """One generated token.

    ``index`` counts generated tokens from 0; ``text`` is the text delta made printable by this token
    (may be ``""`` while a multi-byte character is incomplete); ``call_index`` points at the
    :class:`CallRecord` of the model call that produced it; ``elapsed_ms`` is the time since generation
    started, on the clock of :attr:`Summary.ttft_ms` (the first token's ``elapsed_ms`` *is* the TTFT).
    """

    index: int
    token_id: int
    text: str
    call_index: int
    elapsed_ms: float = 0.0
    kind = "token"


@dataclass(frozen=True)
class CallRecord(_Event):
    """One call of a model step (prefill or decode step).

    ``wall_ms`` = trace + lower + compile + execute (+ host work such as sampling on the host; for the jitted
    modes, from the call's start: building its inputs, then everything up to its token as a Python int).
    ``compiled`` is True when this call traced and compiled a new executable; then ``trace_ms``,
    ``lower_ms`` and ``compile_ms`` are set. ``execute_ms`` is measured around
    ``jax.block_until_ready`` (or, in ``torch`` mode, around the eager forward). ``persistent_cache_hit``
    is True when XLA's compile was served by the persistent compilation cache, None if not compiled.
    ``compile_reason`` says why it compiled ("first call", "new input shape (1, 5) → (1, 6)", …).
    ``input_shapes`` maps argument names to shapes, e.g. ``{"input_ids": [1, 16]}``. ``mesh`` is the
    device mesh of the run (``"1 device"`` or e.g. ``"tp=4"``). ``compile_phases`` splits a compiling
    call's time into the phases its compiler reports, in order, in ms: ``{"trace", "lower", "compile"}``
    for JAX (the stages API), Dynamo / AOT autograd / Inductor phases for ``torch-compile``. ``device`` is
    the device that ran the call (``"cpu"``, ``"NVIDIA H100 80GB HBM3 (gpu:0)"``, for a PyTorch mode on a GPU
    the CUDA device, ``"… (cuda:0)"``; :meth:`app.core.engine.device.Device.label_for`); ``""`` in records made
    before devices were recorded. ``timing`` says what ``wall_ms`` / ``execute_ms`` measure: ``"call"`` (one
    model call, timed around it: every mode but jit-loop) or ``"callback interval"`` (:data:`CALLBACK_INTERVAL`:
    a token of jit-loop's on-device loop, one call for all its tokens; the time on the host between this token's
    ``io_callback`` and the previous one's — for the loop's first token, from the decode's start, its compile
    included). ``host_ms``: the call's wall time split into :data:`HOST_PARTS` (ms; they add up to ``wall_ms``;
    empty for modes that are not jitted and in records made before the meter); ``leaves``: the number of argument
    leaves the call flattened and dispatched (None when not measured; 0 for a jit-loop token, which passes none).
    ``experts``: a mixture-of-experts model's routing in this call, ``[layer][token][k]`` expert ids as its routers
    chose them (a prefill: the prompt's tokens; a decode step: its input token), ``expert_weights`` their top-k
    weights in the same layout (:mod:`app.core.inspect.routing`); None for a dense model or a mode that records
    none (torch-compile).
    ``compile_site``: where the compile was asked for, ``"mine.py:12 (main)"`` (a program's entry: its definition;
    ``""`` when not recorded); ``jax_explanation``: JAX's own closest-key diff of the tracing cache miss
    (``jax_explain_cache_misses``), None when it gave none. ``inner_compiles``: the compiles the call made inside it
    that are not its own executable — a program's entry run op by op (``--no-jit``) calling its own jitted
    functions — one dict each with this record's compile fields (``compile_site``, ``function``,
    ``compile_reason``, ``jax_explanation``, ``trace_ms``, ``lower_ms``, ``compile_ms``;
    :mod:`app.core.programs.compiles`), totalled per call site by :func:`app.core.programs.sites.compile_sites`.
    ``synchronous``: the step's program calls the host, so XLA:CPU ran it inside its call
    (:func:`app.core.runtime.compiled_step.runs_inline`, read from the program): ``host_ms["dispatch"]`` is the
    device's run, and the host's time what was measured outside the call and inside its callbacks.
    """

    index: int
    #: a model run's step, or a program run's entry point (``app.core.inspect.views.is_model_step`` tells)
    step: StepKind | str
    mode: str
    input_shapes: dict[str, list[int]]
    wall_ms: float
    execute_ms: float
    compiled: bool = False
    trace_ms: float | None = None
    lower_ms: float | None = None
    compile_ms: float | None = None
    persistent_cache_hit: bool | None = None
    compile_reason: str | None = None
    timestamp: float = 0.0
    mesh: str = "1 device"
    compile_phases: dict[str, float] = field(default_factory=dict)
    device: str = ""
    timing: str = "call"
    host_ms: dict[str, float] = field(default_factory=dict)
    leaves: int | None = None
    experts: list[list[list[int]]] | None = None
    expert_weights: list[list[list[float]]] | None = None
    compile_site: str = ""
    jax_explanation: str | None = None
    inner_compiles: list[dict[str, Any]] = field(default_factory=list)
    synchronous: bool = False
    kind = "call"

    @property
    def host_share(self) -> float | None:
        """Fraction of the call's non-compile wall time the host spent working (not waiting for the device):
        ``(wall - compile - wait) / (wall - compile)``, and for a :attr:`synchronous` call
        ``(transfer + flatten + callback + token) / (wall - compile)``; None without a breakdown."""
        return host_share(self.host_ms, self.synchronous)

    @property
    def compile_total_ms(self) -> float:
        """Compile time of this call in ms (trace + lower + compile); 0 when it did not compile."""
        return (self.trace_ms or 0.0) + (self.lower_ms or 0.0) + (self.compile_ms or 0.0)


@dataclass(frozen=True)
class IREvent(_Event):
    """IR captured at the first compile of a step kind: an :class:`app.core.inspect.ir.StepIR` of plain texts and
    figures (its ``traced_jaxpr`` is None here; the engine keeps the live jaxpr in ``Engine.ir``). ``reused``: a
    warm run's step, compiled by an earlier run, sends the IR kept from that compile (the views show what runs,
    issue 37; its source map was built then)."""

    step: StepKind | str  # a model run's step, or a program run's entry point (as CallRecord.step)
    mode: str
    ir: Any  # app.core.inspect.ir.StepIR (kept Any so events.py stays free of heavy imports)
    reused: bool = False
    kind = "ir"

    def to_json(self) -> dict[str, Any]:
        return {"event": self.kind, "step": self.step, "mode": self.mode, **self.ir.summary()}


def host_share(parts: dict[str, float], synchronous: bool = False) -> float | None:
    """``(sum - compile - device) / (sum - compile)`` of a :attr:`CallRecord.host_ms` breakdown, the device's
    parts :data:`DEVICE_PARTS` (``wait``), or :data:`SYNCHRONOUS_DEVICE_PARTS` (``dispatch`` and ``wait``) for a
    synchronous call; None if empty."""
    total = sum(parts.values()) - parts.get("compile", 0.0)
    if not parts or total <= 0:
        return None
    device = SYNCHRONOUS_DEVICE_PARTS if synchronous else DEVICE_PARTS
    return (total - sum(parts.get(k, 0.0) for k in device)) / total


def steady_host_ms(records: list[CallRecord]) -> dict[str, float]:
    """Per part of :data:`HOST_PARTS`, the median over the decode calls that did not compile and carry a breakdown
    (the stats strip's and bench/decode.py's figure); empty when there are none. The medians need not add up."""
    steady = [r.host_ms for r in records if r.step == DECODE and not r.compiled and r.host_ms]
    if not steady:
        return {}
    return {k: statistics.median(p.get(k, 0.0) for p in steady) for k in HOST_PARTS if k != "compile"}


def steady_synchronous(records: list[CallRecord]) -> bool:
    """Whether the steady decode calls ran synchronously (:attr:`CallRecord.synchronous`)."""
    return any(r.synchronous for r in records if r.step == DECODE and not r.compiled and r.host_ms)


def steady_host_share(records: list[CallRecord]) -> float | None:
    """Median :attr:`CallRecord.host_share` of the steady decode calls (None when none has a breakdown)."""
    shares = [r.host_share for r in records if r.step == DECODE and not r.compiled and r.host_ms]
    shares = [s for s in shares if s is not None]
    return statistics.median(shares) if shares else None


def steady_decode_ms(records: list[CallRecord]) -> float | None:
    """Median ``wall_ms`` of the decode calls that did not compile (None if there are none): the steady
    decode time the summary, the stats strip and the plot's label all show."""
    steady = [r.wall_ms for r in records if r.step == DECODE and not r.compiled]
    return statistics.median(steady) if steady else None


@dataclass(frozen=True)
class Summary:
    """Figures of one generation run.

    ``ttft_ms``: time to first token, from the start of generation (after loading) to the first token,
    compile included. ``steady_decode_ms``: median ``wall_ms`` of decode calls that did not compile (None
    if there were none). ``decode_tokens_per_s`` = 1000 / ``steady_decode_ms`` (the steady decode rate). ``overall_tokens_per_s``:
    generated tokens / ``total_ms`` (everything included: prefill, compiles, decode). ``compile_ms``: sum over compiling calls of trace + lower +
    compile. ``device``: the device that ran the run (its first record's, :attr:`CallRecord.device`).
    ``cache_len``: positions the run's static KV cache held at its end (jit-static and jit-loop grow it in buckets
    as decoding needs them, :data:`app.core.runtime.kv_cache.FIRST_CAPACITY`; torch-compile's is fixed); None for
    a mode on a ``DynamicCache`` (it holds exactly the tokens so far) or a program run.
    """

    mode: str
    n_tokens: int
    ttft_ms: float | None
    steady_decode_ms: float | None
    decode_tokens_per_s: float | None
    overall_tokens_per_s: float
    total_ms: float
    compile_ms: float
    n_compiles: int
    n_calls: int
    mesh: str = "1 device"
    device: str = ""
    cache_len: int | None = None

    @staticmethod
    def from_records(
        mode: str, records: list[CallRecord], n_tokens: int, ttft_ms: float | None, total_ms: float,
        cache_len: int | None = None,
    ) -> Summary:
        steady_ms = steady_decode_ms(records)
        compiles = [r for r in records if r.compiled]
        return Summary(
            mode=mode,
            n_tokens=n_tokens,
            ttft_ms=ttft_ms,
            steady_decode_ms=steady_ms,
            decode_tokens_per_s=(1000.0 / steady_ms) if steady_ms else None,
            overall_tokens_per_s=(n_tokens / (total_ms / 1000.0)) if total_ms > 0 else 0.0,
            total_ms=total_ms,
            compile_ms=sum(r.compile_total_ms for r in compiles),
            n_compiles=len(compiles),
            n_calls=len(records),
            mesh=records[0].mesh if records else "1 device",
            device=records[0].device if records else "",
            cache_len=cache_len,
        )


@dataclass(frozen=True)
class FinishedEvent(_Event):
    """Generation ended. ``reason`` is why; ``token_ids`` are all generated ids; ``text`` the decoded text
    (authoritative: it also holds a character cut by the end of generation, which token deltas never
    emit half-way). :attr:`device` is the summary's (serialised inside ``summary``)."""

    reason: FinishReason
    summary: Summary
    token_ids: list[int] = field(default_factory=list)
    text: str = ""
    kind = "finished"

    @property
    def device(self) -> str:
        """The device that ran the run (:attr:`Summary.device`; ``""`` when unknown)."""
        return getattr(self.summary, "device", "")


@dataclass(frozen=True)
class PromptEvent(_Event):
    """The prompt as the model sees it, before the first call: ``text`` is the formatted prompt (the chat
    template applied when ``chat``), ``n_tokens`` its length in tokens. ``cache_len``: the KV cache's length
    (positions) for the run; ``new_tokens_cap``: set when the cache ends the run before ``max_new_tokens``
    (``cache_len - n_tokens + 1`` new tokens at most: the prefill's, then one per free position), None when ``max_new_tokens`` fits."""

    text: str
    n_tokens: int
    chat: bool = False
    cache_len: int | None = None
    max_new_tokens: int | None = None
    new_tokens_cap: int | None = None
    kind = "prompt"


@dataclass(frozen=True)
class LaneEvent(_Event):
    """A lane of a mode race starts: ``mode`` is lane ``index`` (from 0) of ``n_lanes``; ``max_new_tokens``
    is the lane's token budget (torchax-eager is capped, see :func:`app.core.race.lane_settings`)."""

    mode: str
    index: int
    n_lanes: int
    max_new_tokens: int
    kind = "lane"


@dataclass(frozen=True)
class SteadyRoundEvent(_Event):
    """One round of a race's steady-state phase (:mod:`app.core.steady`): ``index`` (from 0); ``blocks``: its
    timed blocks in the order they ran (:class:`app.core.verdict.rounds.Block`: label, mode, ``ms_per_token``,
    ``wall_ms``, ``cpu_ms``, ``stolen_ms``, tokens, reps); ``preempted``: why a block of it counts as preempted
    judged on the rounds so far (``""``: kept; the final judgement is :class:`VerdictsEvent`'s)."""

    index: int
    blocks: tuple[Any, ...]
    preempted: str = ""
    kind = "steady_round"


@dataclass(frozen=True)
class SteadyBlockEvent(_Event):
    """A block of a race's steady-state phase starts (:mod:`app.core.steady`), for a progress line: ``round``
    (from 0; -1 while each mode is warmed and calibrated), ``label`` (the mode, or the baseline's A/A twin
    ``"torch (A/A)"``), ``elapsed_s`` since the phase started (s), ``budget_s`` (s) and ``min_rounds`` of its
    plan."""

    round: int
    label: str
    elapsed_s: float
    budget_s: float = 0.0
    min_rounds: int = 0
    kind = "steady_block"


@dataclass(frozen=True)
class VerdictsEvent(_Event):
    """The end of a race's steady-state phase: its verdicts (:mod:`app.core.verdict`).

    ``pairs``: one :class:`app.core.verdict.words.PairVerdict` per pair (``ratio``, ``ci_low``, ``ci_high``,
    ``rounds``, ``aa_noise``, ``dropped``, ``text``); ``baseline``: the mode measured twice per round (the A/A
    pair); ``modes``: the modes in the phase; ``rounds``: paired rounds kept; ``dropped``: rounds dropped as
    preempted, ``dropped_rounds`` why (``"round 3: torch: 12 ms stolen in 140 ms"``); ``aa_noise``: the A/A
    interval's half-width (± %, None when unknown); ``noisy``: wider than ±3 %; ``threads``: the thread budget
    every mode had (``torch_intra_op``: ``torch.get_num_threads()``; ``xla_cpu``: XLA:CPU's intra-op pool);
    ``load_avg``: ``os.getloadavg()`` at the end (1, 5, 15 minutes); ``budget_s`` / ``elapsed_s``: the time
    budget and the phase's time (s); ``stopped_by``: ``"precise"``, ``"budget"``, ``"max rounds"`` or
    ``"stopped"``; ``left_out``: mode → why it had no steady-state blocks (torchax-eager: too slow);
    ``tokens``: tokens per generation; ``reps``: generations per block, per mode.
    """

    pairs: tuple[Any, ...]
    baseline: str
    modes: tuple[str, ...]
    rounds: int
    dropped: int
    aa_noise: float | None
    noisy: bool
    threads: dict[str, int] = field(default_factory=dict)
    load_avg: tuple[float, ...] = ()
    budget_s: float = 0.0
    elapsed_s: float = 0.0
    stopped_by: str = ""
    left_out: dict[str, str] = field(default_factory=dict)
    dropped_rounds: tuple[str, ...] = ()
    tokens: int = 0
    reps: dict[str, int] = field(default_factory=dict)
    kind = "verdicts"

    @property
    def lines(self) -> list[str]:
        """The verdict sentences, one per pair."""
        return [p.text for p in self.pairs]


Event = PhaseEvent | PromptEvent | TokenEvent | CallRecord | IREvent | FinishedEvent | LaneEvent
#: What a mode race yields (:func:`app.core.race.race`): the engine's events, then its steady-state phase's.
RaceEvent = Event | SteadyBlockEvent | SteadyRoundEvent | VerdictsEvent
