"""A model's typed requests to the compute service and the events it answers with (plain data: no Qt, no JAX).

The window sends one request type per action to the one worker on the compute thread
(:mod:`app.gui.worker`), which executes it with :class:`app.core.session.compute.service.ComputeService`; the answers are
the engine events of :mod:`app.core.events` plus the events below. The protocol every request follows — the
:class:`~app.core.requests.Request` base, :class:`~app.core.requests.RequestDone`,
:class:`~app.core.requests.RequestFailed`, :class:`~app.core.requests.Notice`,
:class:`~app.core.requests.SourceMapReady` — is :mod:`app.core.requests`'; a program's requests are
:mod:`app.core.programs.compute.requests`', a settings race's progress
:class:`app.core.compile_settings.progress.SettingsRaceLanes`: each is imported from its own module (issue 57: one
home per concept), not from here."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.core.inspect.views import PASSES
from app.core.race import EAGER_TOKENS, SteadyPlan
from app.core.requests import Request
from app.core.settings import GenerationSettings
from app.core.steps import DECODE


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
    label = PASSES  # named after the view it records


@dataclass(frozen=True)
class DevicesRequest(Request):
    """List the devices JAX sees."""

    label = "devices"


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
    """A recorded pass pipeline (:func:`app.core.session.compute.passes.passes_ready`), as plain data:
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


#: A model's requests and answers, read here by the window, the command line and the tests. The protocol's
#: (``Request``, ``RequestDone``, ...) are imported from app.core.requests, a program's from
#: app.core.programs.compute.requests, a settings race's progress from app.core.compile_settings.progress: one home each.
__all__ = [
    "CacheInfo", "CacheRequest", "CaptureRequest", "CollectivesReady", "DevicesListed", "DevicesRequest",
    "LoadRequest", "MeshChanged", "MeshRequest", "ModelLoaded", "OpenSessionsRequest", "PassesReady",
    "PassesRequest", "ProfileReady", "ProfileRequest", "RaceRequest", "RunRequest", "SessionsRead",
    "SettingsRaceRequest",
]
