"""The Qt-free engine of torchax-playground: model loading, torchax conversion, pytrees, jitted
prefill/decode, sampling, timing records and IR capture.

Heavy modules (jax, torch, transformers) are imported by the submodules that need them, so importing
``app.core`` itself is cheap. Entry point: :func:`app.core.engine.engine.load_engine`.
"""

from app.core.errors import (
    InsufficientMemoryError,
    InvalidSettingsError,
    ModelNotFoundError,
    PlaygroundError,
    PromptTooLongError,
    UnsupportedModelError,
)
from app.core.settings import MODES, GenerationSettings

__all__ = [
    "MODES",
    "GenerationSettings",
    "InsufficientMemoryError",
    "InvalidSettingsError",
    "ModelNotFoundError",
    "PlaygroundError",
    "PromptTooLongError",
    "UnsupportedModelError",
]
