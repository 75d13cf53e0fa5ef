"""Model sources: built-in models in ``assets/``, Hugging Face hub ids, local folders, random weights.

One :class:`ModelSpec` type describes all four; :func:`parse_model` turns what a user typed (CLI
``--model`` or the GUI picker) into one, and :func:`load_model` loads it through the ordinary
``from_pretrained`` / ``from_config`` paths of ``transformers``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core.errors import InsufficientMemoryError, ModelNotFoundError, UnsupportedModelError

ASSETS = Path(__file__).resolve().parents[2] / "assets"
MODELS_DIR = ASSETS / "models"

#: Built-in models: name → description. Each lives in ``assets/models/<name>/`` in Hugging Face format.
BUILTIN_MODELS: dict[str, str] = {
    "pydoc-llama": "small Llama trained here on Python/NumPy/JAX/PyTorch docstrings (offline default)",
}
DEFAULT_MODEL = "pydoc-llama"

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
RANDOM_PREFIX = "random:"
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")
_DTYPE_BYTES = {"float32": 4, "bfloat16": 2}


@dataclass(frozen=True)
class ModelSpec:
    """Where a model comes from.

    ``kind``: ``"builtin"`` (``source`` = name), ``"hub"`` (hub id), ``"folder"`` (absolute path) or
    ``"random"`` (``source`` = a shape preset name, a config.json / folder path, or a hub id whose config
    is fetched without weights). ``dtype``: ``"float32"`` or ``"bfloat16"``.
    """

    kind: str
    source: str
    dtype: str = "float32"

    @property
    def random_weights(self) -> bool:
        return self.kind == "random"

    @property
    def label(self) -> str:
        """Display name; random-weight models are labelled so everywhere they appear."""
        name = Path(self.source).name if self.kind == "folder" else self.source
        return f"{name} (random weights)" if self.random_weights else name

    @property
    def path_or_id(self) -> str:
        return str(MODELS_DIR / self.source) if self.kind == "builtin" else self.source


def parse_model(text: str, dtype: str = "float32") -> ModelSpec:
    """Resolve a user's model string: built-in name, ``random:<preset|config|hub id>``, folder, or hub id.

    Raises :class:`ModelNotFoundError` for an empty string, a missing folder, or text that is not a valid
    hub id.
    """
    text = (text or "").strip()
    if dtype not in _DTYPE_BYTES:
        from app.core.errors import InvalidSettingsError

        raise InvalidSettingsError(f"Unknown dtype {dtype!r}: choose float32 or bfloat16.")
    if not text:
        raise ModelNotFoundError("No model given: pass a built-in name, a hub id or a folder.")
    if text.startswith(RANDOM_PREFIX):
        source = text[len(RANDOM_PREFIX) :].strip()
        if not source:
            raise ModelNotFoundError(
                f"'random:' needs a shape preset ({', '.join(SHAPE_PRESETS)}), a config.json or a hub id."
            )
        return ModelSpec("random", source, dtype)
    if text in BUILTIN_MODELS:
        return ModelSpec("builtin", text, dtype)
    path = Path(os.path.expanduser(text))
    if path.is_dir():
        return ModelSpec("folder", str(path.resolve()), dtype)
    if text.startswith(("/", "./", "../", "~")) or os.sep in text.rstrip("/").split("/", 1)[-1]:
        raise ModelNotFoundError(f"Folder {text!r} does not exist: pass an existing Hugging Face model folder.")
    if not _HUB_ID.match(text):
        raise ModelNotFoundError(
            f"{text!r} is not a built-in model, a folder or a valid hub id (like 'gpt2' or 'Qwen/Qwen2.5-0.5B')."
        )
    return ModelSpec("hub", text, dtype)


def _offline_hint(model_id: str) -> str:
    return (
        f"Could not load {model_id!r} from the Hugging Face hub (offline, or no such model). "
        f"Download it on a connected machine (`hf download {model_id}`) and copy the HF cache, or pass a "
        f"local folder, or use the built-in '{DEFAULT_MODEL}'."
    )


def load_config(spec: ModelSpec) -> Any:
    """The model's ``PretrainedConfig`` without loading weights. Raises :class:`ModelNotFoundError`."""
    import transformers

    if spec.kind == "random" and spec.source in SHAPE_PRESETS:
        arch, kwargs = SHAPE_PRESETS[spec.source]
        return transformers.AutoConfig.for_model(arch, **kwargs)
    source = spec.path_or_id
    if spec.kind == "random" and source.endswith(".json"):
        if not Path(source).is_file():
            raise ModelNotFoundError(f"Config file {source!r} does not exist.")
        config_dict = transformers.PretrainedConfig.get_config_dict(source)[0]
        return transformers.AutoConfig.for_model(**config_dict)
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
    import socket
    from urllib.parse import urlparse

    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE:
        return False
    url = urlparse(constants.ENDPOINT)
    try:
        with socket.create_connection((url.hostname, url.port or 443), timeout=timeout_s):
            return True
    except OSError:
        return False


def parameter_count(config: Any) -> int:
    """Number of parameters, counted on the ``meta`` device (no memory allocated)."""
    import torch
    import transformers

    try:
        with torch.device("meta"):
            model = transformers.AutoModelForCausalLM.from_config(config)
    except ValueError as exc:
        raise UnsupportedModelError(
            f"{type(config).__name__} ({getattr(config, 'model_type', '?')}) is not a causal language model "
            "that AutoModelForCausalLM can build: pick a decoder-only LM."
        ) from exc
    return sum(p.numel() for p in model.parameters())


def available_memory_bytes() -> int | None:
    """``MemAvailable`` from ``/proc/meminfo`` in bytes, or None where it cannot be read."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def check_memory(n_params: int, dtype: str, label: str) -> int:
    """Refuse a model whose weights (kept twice: PyTorch and JAX copies) cannot fit in free memory.

    Returns the parameter bytes. Raises :class:`InsufficientMemoryError` with the figures.
    """
    param_bytes = n_params * _DTYPE_BYTES[dtype]
    needed = 2 * param_bytes
    free = available_memory_bytes()
    if free is not None and needed > free:
        raise InsufficientMemoryError(
            f"{label} has {n_params / 1e6:,.0f} M parameters: {param_bytes / 2**30:.1f} GiB in {dtype}, "
            f"{needed / 2**30:.1f} GiB with the PyTorch and JAX copies, but only {free / 2**30:.1f} GiB is free. "
            "Pick a smaller model, use bfloat16, or close other programs."
        )
    return param_bytes


@dataclass
class LoadedModel:
    """A loaded PyTorch model with its tokenizer. ``model`` is in eval mode on the CPU."""

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

    def __init__(self, base: Any, vocab_size: int) -> None:
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


def load_model(spec: ModelSpec, on_progress: Callable[[str], None] | None = None) -> LoadedModel:
    """Load weights and tokenizer. Raises :class:`ModelNotFoundError`, :class:`UnsupportedModelError` or
    :class:`InsufficientMemoryError`; nothing is loaded when it raises."""
    import torch
    import transformers

    config = load_config(spec)
    n_params = parameter_count(config)
    param_bytes = check_memory(n_params, spec.dtype, spec.label)
    torch_dtype = getattr(torch, spec.dtype)
    if on_progress:
        on_progress(f"{spec.label}: {n_params / 1e6:.1f} M parameters, {param_bytes / 2**20:.0f} MiB")
    try:
        if spec.random_weights:
            torch.manual_seed(0)
            model = transformers.AutoModelForCausalLM.from_config(config, dtype=torch_dtype)
            tokenizer = _random_model_tokenizer(config)
        else:
            model = transformers.AutoModelForCausalLM.from_pretrained(spec.path_or_id, dtype=torch_dtype)
            tokenizer = transformers.AutoTokenizer.from_pretrained(spec.path_or_id)
    except OSError as exc:
        raise ModelNotFoundError(_offline_hint(spec.path_or_id) if spec.kind == "hub" else f"{spec.label}: {exc}") from exc
    except ValueError as exc:
        raise UnsupportedModelError(f"{spec.label} cannot be loaded as a causal LM: {exc}") from exc
    model.eval()
    return LoadedModel(spec, model, tokenizer, model.config, n_params, param_bytes)


def _random_model_tokenizer(config: Any) -> Any:
    import transformers

    base = transformers.AutoTokenizer.from_pretrained(str(MODELS_DIR / DEFAULT_MODEL))
    return _ModuloTokenizer(base, int(getattr(config, "vocab_size", len(base))))
