"""Typed requests to the compute service and the events it answers with (plain data: no Qt, no JAX).

The window sends one request type per action to the one worker on the compute thread
(:mod:`app.gui.worker`), which executes it with :class:`app.core.session.service.ComputeService`; the answers are
the engine events of :mod:`app.core.events` plus the events below. Every request ends with exactly one
:class:`RequestDone`; a failure adds one :class:`RequestFailed` naming the request."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.core.race import EAGER_TOKENS, SteadyPlan
from app.core.settings import GenerationSettings
from app.core.steps import DECODE


class Request:
    """Base of every request. ``label`` names it in messages (``"load"``, ``"run"``, ``"race"``, …)."""

    label = "request"


@dataclass(frozen=True)
class LoadRequest(Request):
    """Load ``model`` (built-in name, hub id, folder, GGUF file or ``random:…``) in ``dtype`` on ``device`` (a JAX
    platform, ``"cpu"`` / ``"gpu"`` / ``"tpu"``; ``""``: JAX's default backend)."""

    model: str
    dtype: str = "float32"
    device: str = ""
    label = "load"


@dataclass(frozen=True)
class RunRequest(Request):
    """Generate from ``prompt`` with ``settings`` on the loaded model. ``source_maps``: build each captured
    step's source map after the run (~0.5 s per step on SmolLM2; the CLI asks only when it saves a session
    file)."""

    prompt: str
    settings: GenerationSettings
    source_maps: bool = True
    label = "run"


@dataclass(frozen=True)
class RaceRequest(Request):
    """Run ``prompt`` through ``modes`` one after another (:func:`app.core.race.race`), each cold unless
    ``cold`` is False (the CLI's ``--warm``: compiled steps kept between modes); ``source_maps`` as in
    :class:`RunRequest`; ``steady``: a closing steady-state phase and its verdicts (:mod:`app.core.steady`)."""

    prompt: str
    modes: tuple[str, ...]
    settings: GenerationSettings
    eager_tokens: int = EAGER_TOKENS
    cold: bool = True
    source_maps: bool = True
    steady: SteadyPlan | None = None
    label = "race"


@dataclass(frozen=True)
class SettingsRaceRequest(RaceRequest):
    """Race jit-static's decode step of the loaded model under compiler settings (:func:`app.core.compile_settings.
    race.settings_race`): ``modes`` holds the settings' names (catalog rows, ``--xla_…`` strings, ``jax_…=value``
    pairs), each lane is a run named after its setting; :class:`SettingsRaceLanes` follows each lane."""

    label = "settings race"


@dataclass(frozen=True)
class SettingsRaceLanes:
    """A settings race's progress: ``lanes`` the finished lanes so far (:class:`app.core.compile_settings.figures.
    SettingLane`, plain data, the baseline first), ``running`` the setting of the lane starting (``""`` after a
    lane), ``index`` / ``n_lanes`` its place (0-based) among the race's lanes; ``request`` the race's (a
    :class:`SettingsRaceRequest`, or a program's :class:`app.core.session.settings_race_service.ProgramSettingsRaceRequest`)."""

    request: Request
    lanes: tuple[Any, ...]
    running: str = ""
    index: int = 0
    n_lanes: int = 0


@dataclass(frozen=True)
class CacheRequest(Request):
    """A compilation-cache action: ``action`` is ``"persistent_on"``, ``"persistent_off"``,
    ``"clear_memory"``, ``"clear_disk"`` or ``"refresh"``; ``directory`` the persistent cache's."""

    action: str
    directory: str = ""
    label = "cache"


@dataclass(frozen=True)
class MeshRequest(Request):
    """Place the loaded model on mesh ``text`` (``"tp=2"``; ``""`` or ``"tp=1"`` = one device)."""

    text: str
    label = "mesh"


@dataclass(frozen=True)
class ProfileRequest(Request):
    """Profile ``n_steps`` steady calls of the loaded model's jit-static ``step`` (``"decode"`` or
    ``"prefill"``) on ``prompt`` under ``jax.profiler`` (:func:`app.core.profile.step.profile_step`) — or, with
    ``program`` (a :class:`ProgramRequest`), ``n_steps`` calls of the program's entry point
    (:func:`app.core.programs.compute.profile.program_step_call`; ``prompt`` and ``step`` unused)."""

    prompt: str
    step: str = DECODE
    n_steps: int = 20
    program: Any = None
    #: the profilable mode whose step is measured (``"jit-loop"``: its loop, one step per iteration); ``""``:
    #: :func:`app.core.mode_catalog.profiling_mode` (jit-static)
    mode: str = ""
    label = "profile"


@dataclass(frozen=True)
class CaptureRequest(Request):
    """Open what another machine recorded (no model needed): ``path`` a profiler capture (``.xplane.pb`` or
    ``.xplane.pb.gz``) of a step, read with ``hlo`` (its optimized HLO text; ``""``: the one beside the capture,
    :func:`app.core.profile.offline.profile_capture`) → a :class:`ProfileReady`; or a folder of XLA dumps with,
    optionally, a capture of that compile (:func:`app.core.passes.dumps.open_dumps`) → a :class:`PassesReady`."""

    path: str
    hlo: str = ""
    label = "capture"


@dataclass(frozen=True)
class OpenSessionsRequest(Request):
    """Read session files (``paths``, in order) off the GUI thread: JSON only, no JAX, torch or model, so it
    never starts JAX on a window that only shows session files → one :class:`SessionsRead`."""

    paths: tuple[str, ...] = ()
    label = "open sessions"


@dataclass(frozen=True)
class SessionsRead:
    """The answer to an :class:`OpenSessionsRequest`: ``files`` (:class:`app.core.recording.SessionFile`, in
    the order asked) and ``read_ms`` (wall ms to read and parse them); or ``error`` (the first bad file's
    :class:`app.core.errors.SessionFileError` message, ``"<path>: <problem>"``) and no files."""

    request: OpenSessionsRequest
    files: list[Any]
    read_ms: float
    error: str = ""


@dataclass(frozen=True)
class PassesRequest(Request):
    """Record XLA's pass pipeline of the loaded model's compiled ``step`` (``"decode"`` or ``"prefill"``) in
    ``mode`` (``""``: the latest XLA-compiled mode that has the step) with
    :func:`app.core.passes.record.record_pipeline`; ``fusion_log``: in a child process with XLA's fusion
    log (slower); ``xla_flags``: further XLA options as flag text (``--xla_cpu_enable_fast_math=true``),
    validated by XLA before the recording (:mod:`app.core.passes.compare`; unknown flags refused by name)."""

    step: str = DECODE
    fusion_log: bool = False
    mode: str = ""
    xla_flags: str = ""
    #: the user's program (a :class:`ProgramRequest`): record its entry point's passes instead of a model step
    program: Any = None
    label = "passes"


@dataclass(frozen=True)
class DevicesRequest(Request):
    """List the devices JAX sees."""

    label = "devices"


@dataclass(frozen=True)
class ProgramRequest(Request):
    """Run the user's program (:mod:`app.core.programs`): ``source`` is the editor's text of the file ``path``
    (``""`` for text never saved, compiled as ``name``); ``entry`` the entry point (``""``: the first);
    ``spec`` an argument spec (``""``: the file's ``X_args()``); ``n_calls`` timed calls in ``mode``
    (``"jit"``, ``"no-jit"`` or ``"compare"``: the jit run, then the no-jit run, as two runs); ``sweep`` a
    shape sweep of one argument's first axis (``"1:16"``: the first array argument; ``"x=1:16"`` / ``"1=1:16"``:
    the one named; ``""``: none), with ``bucket`` the same sweep padded to power-of-two buckets as a second run;
    ``static_values`` one call per value of static arguments; ``static`` the static argument indices instead of
    the file's; ``seed`` the seed of the random data of ``spec`` and of the sweep. The lanes follow
    :func:`app.core.programs.lanes.plan_lanes`, as the CLI's ``program`` does. ``trace_only``: no timed calls, only the entry point's trace, lower
    and compile for the IR views and the source map (the editor's "as you type")."""

    source: str
    path: str = ""
    name: str = "untitled.py"
    entry: str = ""
    spec: str = ""
    n_calls: int = 10
    mode: str = "jit"
    sweep: str = ""
    bucket: bool = False
    seed: int = 0
    trace_only: bool = False
    #: ``--static-values`` texts (``"n=3,4,4"``, one per static argument varied): one call per value
    static_values: tuple[str, ...] = ()
    #: static argument indices (``--static``; the window's Static field) instead of the file's; None: the file's
    static: tuple[int, ...] | None = None
    label = "program"


# -- answers ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ModelLoaded:
    """A model is ready. ``seconds`` is 0.0 when it was already loaded; ``warnings`` are one-line notes
    (bfloat16 on CPU, random weights, a mesh that does not fit); ``mesh`` the mesh it runs on;
    ``chat_template``: its tokenizer has one; ``chat_default``: an instruct model (Chat on by default);
    ``tp_sizes``: the tensor-parallel sizes the model's heads and MLP width allow on the devices present
    (:func:`app.core.parallel.mesh.tp_sizes`)."""

    request: LoadRequest
    label: str
    model_id: str
    seconds: float
    warnings: tuple[str, ...] = ()
    mesh: str = "1 device"
    chat_template: bool = False
    chat_default: bool = False
    tp_sizes: tuple[int, ...] = (1,)
    #: the decode step's memory-bandwidth floor (:class:`app.core.profile.bound.MemoryBound`), None if unmeasured
    bound: Any = None


@dataclass(frozen=True)
class ProgramEntryInfo:
    """One entry point of a loaded program: ``name``, ``kind`` (``"function"``, ``"jit-function"``,
    ``"module"``), 1-based ``line``, first line of its docstring, and whether the file gives its example
    arguments (``has_args``; else an argument spec is needed)."""

    name: str
    kind: str
    line: int = 0
    doc: str = ""
    has_args: bool = True


@dataclass(frozen=True)
class ProgramLoaded:
    """The program of ``request`` loaded: ``path`` the file its code was compiled from (the jaxpr's source
    lines name it), ``entries`` its entry points, ``entry`` the one run, ``args`` its arguments as a spec
    (``f32[1000,1000]``), ``backend`` ``"jax"`` or ``"torchax"``."""

    request: ProgramRequest
    path: str
    display_name: str
    entries: tuple[ProgramEntryInfo, ...]
    entry: str = ""
    args: str = ""
    backend: str = "jax"


@dataclass(frozen=True)
class ProgramFailed:
    """An error in the user's program (:class:`app.core.programs.errors.ProgramError` as plain data), sent
    before the request's :class:`RequestFailed`: ``file`` / ``line`` / ``column`` where it is (``""`` / 0 when
    no frame was in the program), ``stage`` (``"load"``, ``"args"``, ``"trace"``, ``"lower"``, ``"compile"``,
    ``"execute"``), ``error_type`` (``"SyntaxError"``, ``"TracerBoolConversionError"``…), ``message`` JAX's or
    Python's text, ``headline`` one line, ``details`` the traceback."""

    request: ProgramRequest
    message: str
    error_type: str
    file: str = ""
    line: int = 0
    column: int = 0
    stage: str = "load"
    entry: str = ""
    headline: str = ""
    details: str = ""


@dataclass(frozen=True)
class RequestFailed:
    """``request`` failed: ``message`` is one line saying what to do; ``details`` a traceback; ``field``
    the input at fault, where the window shows the message inline: ``"model"``, ``"prompt"``, ``"mesh"``,
    ``"settings"``, ``"program"`` (the editor marks the line of the :class:`ProgramFailed` before it) or
    ``""`` (no one input)."""

    request: Request
    message: str
    details: str = ""
    field: str = ""


@dataclass(frozen=True)
class RequestDone:
    """``request`` is finished, successfully or not (always the last answer to a request)."""

    request: Request


@dataclass(frozen=True)
class Notice:
    """Something optional failed (a source map, bytes per device); the request itself went on."""

    text: str


@dataclass(frozen=True)
class SourceMapReady:
    """The :class:`app.core.inspect.source_map.SourceMap` of a step whose IR arrived in the run, built after the
    run's last token (so building it never counts in the run's timings)."""

    step: str
    source_map: Any


@dataclass(frozen=True)
class CollectivesReady:
    """Collectives (:class:`app.core.parallel.mesh.Collective`) in a step's optimized HLO (empty on 1 device)."""

    step: str
    collectives: list[Any] = field(default_factory=list)


@dataclass(frozen=True)
class DevicesListed:
    """The devices of the platform the engine runs on (:class:`app.core.parallel.devices.DeviceInfo`), the JAX
    platforms this machine has (``["cpu", "gpu"]``) and the one in use."""

    devices: list[Any]
    platforms: list[str] = field(default_factory=list)
    platform: str = ""


@dataclass(frozen=True)
class MeshChanged:
    """The mesh the engine runs on (``"1 device"``, ``"tp=2"``) and bytes per device:
    ``{"weights": {"cpu:0": bytes}, "kv_cache": {...}}``; ``bound``: the decode step's memory-bandwidth floor
    on that mesh (:class:`app.core.profile.bound.MemoryBound`: a ``tp`` mesh splits the weights each device
    reads), None when it cannot be measured."""

    label: str
    device_bytes: dict[str, dict[str, int]] = field(default_factory=dict)
    bound: Any = None


@dataclass(frozen=True)
class ProfileReady:
    """A finished profile: ``profile`` (:class:`app.core.profile.model.StepProfile`, plain data) and its
    rows aggregated four ways, as dicts (``rows["line" | "op" | "fusion" | "module"]``, layers folded for
    ``module``), plus the step's timeline as a dict (:meth:`Timeline.to_dict`) and ``ir``: the plain
    :class:`app.core.inspect.ir.StepIR` the engine keeps for the profiled step (None when it has none; its ``hlo``
    equals ``profile.hlo_text`` when it is the profiled executable's)."""

    profile: Any
    rows: dict[str, list[dict[str, Any]]]
    timeline: dict[str, Any]
    ir: Any = None
    #: where it was recorded when it was not measured here (``"capture x.xplane.pb · gpu"``), else ``""``
    origin: str = ""
    #: read from a session file (``origin``: ``"recorded on CPU × 1 · …"``), not measured or captured
    recorded: bool = False


@dataclass(frozen=True)
class PassesReady:
    """A recorded pass pipeline (:func:`app.core.session.passes_service.passes_ready`), as plain data:
    ``pipeline`` the :class:`app.core.passes.model.PassPipeline` itself (snapshot texts zlib-compressed,
    decompressed on first use; no JAX), ``rows`` :func:`app.core.passes.query.pass_rows`, ``snapshots`` each
    snapshot's :meth:`Snapshot.summary` (``before`` and ``final`` included, in order), ``breakdown``
    ``{"total_ms", "parts": [{"label", "ms", "group", "source"}], "by_group", "fusion_compile_ms",
    "n_fusion_compiles"}``, ``fusions``: one dict per fusion of the final module (``name``, ``kind``,
    ``created_by``, ``created_in``, ``source``, ``absorbed`` as ``[name, opcode, "file:line"]``,
    ``decisions``, ``has_llvm_ir``), ``decisions``: the whole fusion log's, ``seconds``: recording time."""

    request: PassesRequest
    step: str
    mode: str
    pipeline: Any
    rows: list[dict[str, Any]]
    snapshots: list[dict[str, Any]]
    breakdown: dict[str, Any]
    fusions: list[dict[str, Any]]
    decisions: list[dict[str, Any]]
    seconds: float = 0.0
    #: where it was recorded when it was opened from dumps made elsewhere (``"dumps DIR · gpu"``), else ``""``
    origin: str = ""
    #: read from a session file (``origin``: ``"recorded on CPU × 1 · …"``), not recorded here
    recorded: bool = False


@dataclass(frozen=True)
class CacheInfo:
    """State of the compilation caches after a cache request or a run. ``enabled``: the persistent cache is
    on; ``directory``: the directory measured; ``n_files`` / ``n_bytes``: what it holds; ``message``: one
    line about the request (bytes freed, …)."""

    enabled: bool
    directory: str
    n_files: int
    n_bytes: int
    message: str = ""
