"""Chat templates: turn a user message into the prompt an instruct model was trained on, and know where its
answer ends. No Qt and no JAX.

A Hugging Face tokenizer carries its chat template (a Jinja string, ``tokenizer.chat_template``, saved as
``chat_template.jinja``); ``apply_chat_template`` renders a list of ``{"role", "content"}`` messages with
it (transformers/tokenization_utils_base.py). SmolLM2-135M-Instruct uses ChatML::

    <|im_start|>system
    You are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>
    <|im_start|>user
    What is JAX?<|im_end|>
    <|im_start|>assistant

and ends its turn with ``<|im_end|>`` (id 2). Its template inserts that default system message when none
is given.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from app.core.errors import InvalidSettingsError

if TYPE_CHECKING:
    from transformers import GenerationConfig, PretrainedConfig, PreTrainedTokenizerBase

# Name parts of models tuned to follow instructions: "…-Instruct", "…-chat", "gemma-2b-it", "…-sft".
_INSTRUCT_NAME = re.compile(r"(instruct|chat|assistant|(?<![a-z])(it|sft|dpo|rlhf)(?![a-z]))", re.IGNORECASE)
# End-of-turn markers of common chat formats: ChatML, Llama 3, Gemma, Phi-3, GPT-style end of text.
END_OF_TURN_TOKENS = ("<|im_end|>", "<|eot_id|>", "<end_of_turn>", "<|end|>", "<|endoftext|>")


def has_chat_template(tokenizer: object) -> bool:
    """Whether ``tokenizer`` carries a chat template (False for tokenizers without the attribute)."""
    template = getattr(tokenizer, "chat_template", None)
    return bool(template)


def is_instruct(name: str, tokenizer: object = None) -> bool:
    """Default of the Chat toggle: True for an instruct/chat model.

    ``name``: the model's name or label (``"smollm2-135m-instruct"``, ``"SmolLM2-135M-Instruct · Q4_1 →
    float32"``, a hub id). True when the name says instruct/chat/it/sft/dpo and, if ``tokenizer`` is
    given, the tokenizer has a chat template (base models may ship a template too, so the template alone
    does not decide)."""
    if tokenizer is not None and not has_chat_template(tokenizer):
        return False
    return bool(_INSTRUCT_NAME.search(name or ""))


def format_chat(tokenizer: PreTrainedTokenizerBase, user_text: str, system: str | None = None) -> str:
    """The prompt text for one user turn, ending where the assistant's answer starts.

    ``tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)`` with a
    ``system`` message only when ``system`` is given (a template may still insert its own default, as
    SmolLM2's does). The text contains the template's special tokens (``<|im_start|>`` …) and possibly
    the BOS token: encode it with ``add_special_tokens=False`` so no second BOS is prepended.
    Raises :class:`InvalidSettingsError` when the tokenizer has no chat template.
    """
    if not has_chat_template(tokenizer):
        raise InvalidSettingsError(
            "This model's tokenizer has no chat template: turn Chat off and write a plain prompt, or load an "
            "instruct model (e.g. smollm2-135m-instruct)."
        )
    messages = [{"role": "system", "content": system}] if system else []
    messages.append({"role": "user", "content": user_text})
    prompt = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    assert isinstance(prompt, str)  # tokenize=False on one conversation: the rendered text
    return prompt


def end_of_turn_ids(tokenizer: PreTrainedTokenizerBase, config: PretrainedConfig | None = None,
                    generation_config: GenerationConfig | None = None) -> list[int]:
    """Token ids that end the assistant's turn, in priority order, without duplicates.

    The ``eos_token_id`` of ``generation_config``, ``config`` and ``tokenizer`` (an int or a list each),
    then the ids of :data:`END_OF_TURN_TOKENS` the tokenizer knows as single special tokens. Ids outside
    the model's vocabulary (``config.vocab_size`` when known) are dropped. SmolLM2-135M-Instruct: ``[2, 0]``
    (``<|im_end|>``, ``<|endoftext|>``).
    """
    vocab = _vocab_size(config)
    found: list[int] = []

    def add(value: object) -> None:
        for v in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(v, int) and v >= 0 and (vocab is None or v < vocab) and v not in found:
                found.append(v)

    for source in (generation_config, config, tokenizer):
        add(getattr(source, "eos_token_id", None))
    specials = set(getattr(tokenizer, "all_special_tokens", []) or [])
    for token in END_OF_TURN_TOKENS:
        if token in specials:
            add(tokenizer.convert_tokens_to_ids(token))
    return found


def _vocab_size(config: PretrainedConfig | None) -> int | None:
    if config is None:
        return None
    text = config.get_text_config(decoder=True) if hasattr(config, "get_text_config") else config
    size = getattr(text, "vocab_size", None)
    return size if isinstance(size, int) and size > 0 else None
