"""Which models this app runs: decoder-only causal LMs. Everything else is refused from its config alone,
before any weights are loaded or any tracing starts. No Qt, no JAX."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.core.errors import UnsupportedModelError

if TYPE_CHECKING:
    from transformers import PretrainedConfig

_DECODERS = "a decoder-only causal LM (Llama, GPT-2, Qwen2, Mistral, Gemma, Phi-3, SmolLM2, …)"


def check_model_kind(config: PretrainedConfig, label: str | None = None) -> None:
    """Refuse, from the config alone, models this app cannot run as a decoder-only causal LM.

    - encoder-decoder (T5, BART, Whisper, …: ``config.is_encoder_decoder`` or a seq2seq ``model_type``);
    - encoders with an LM head (BERT, RoBERTa, …: a ``model_type`` with a masked-LM class), which
      ``AutoModelForCausalLM`` would build but whose attention is bidirectional;
    - multimodal models (a vision/audio sub-config) unless ``AutoModelForCausalLM`` maps them to a plain
      ``…ForCausalLM`` (Gemma 3 maps to ``Gemma3ForConditionalGeneration``: refused).
    Mapping tables: ``transformers/models/auto/modeling_auto.py``. Raises :class:`UnsupportedModelError`.
    """
    from transformers.models.auto import modeling_auto as auto

    model_type = getattr(config, "model_type", "?")
    what = f"{label or getattr(config, 'name_or_path', '') or type(config).__name__} ({model_type})"
    if getattr(config, "is_encoder_decoder", False) or model_type in auto.MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES:
        raise UnsupportedModelError(
            f"{what} is an encoder-decoder (sequence-to-sequence) model; this app runs {_DECODERS}: pick one."
        )
    if model_type in auto.MODEL_FOR_MASKED_LM_MAPPING_NAMES:
        raise UnsupportedModelError(
            f"{what} is an encoder with a language-modelling head (BERT-style, bidirectional attention): it "
            f"does not generate text left to right. Pick {_DECODERS}."
        )
    media = [k for k in getattr(config, "sub_configs", {}) if any(m in k for m in ("vision", "audio", "speech"))]
    if media:
        classes = auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.get(model_type)
        classes = (classes,) if isinstance(classes, str) else tuple(classes or ())
        if not any(c.endswith("ForCausalLM") for c in classes):
            built = f"builds it as {classes[0]}" if classes else "cannot build it"
            raise UnsupportedModelError(
                f"{what} is a multimodal model ({', '.join(media)}) and AutoModelForCausalLM {built}, not a plain "
                f"causal LM. Load its text-only checkpoint, or pick {_DECODERS}."
            )
