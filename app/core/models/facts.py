"""Facts about a loaded model that the engine needs before a run: its end-of-sequence ids and the
warnings a user should read first. Plain functions of :class:`app.core.models.sources.LoadedModel`; no Qt."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.core.backends import BACKENDS

if TYPE_CHECKING:
    from app.core.models.sources import LoadedModel


def warnings_for(loaded: LoadedModel) -> list[str]:
    """Things a user should know before running: the default backend row's ``bfloat16_note`` for a bfloat16 model
    (XLA:CPU is ~10x slower in bfloat16 than float32: every weight is converted to f32 each step; measured here,
    docs/models.md)."""
    import jax

    found = []
    row = BACKENDS.get(jax.default_backend())
    if loaded.spec.dtype == "bfloat16" and row is not None and row.bfloat16_note:
        found.append(row.bfloat16_note)
    if loaded.spec.random_weights:
        found.append(f"{loaded.spec.label}: random weights, so the text is noise; timings are real.")
    return found


def eos_ids(loaded: LoadedModel) -> list[int]:
    """End-of-sequence ids from the generation config, the model config and the tokenizer, keeping only
    ids inside the model's vocabulary (a random-weight config may keep another vocabulary's EOS)."""
    vocab = loaded.model.get_input_embeddings().weight.shape[0]
    found: list[int] = []
    for source in (getattr(loaded.model, "generation_config", None), loaded.model.config, loaded.tokenizer):
        value = getattr(source, "eos_token_id", None)
        for v in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(v, int) and 0 <= v < vocab and v not in found:
                found.append(v)
    return found
