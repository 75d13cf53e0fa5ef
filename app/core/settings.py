"""Typed generation settings shared by the CLI, the GUI and the benchmarks (no Qt, no JAX)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any, NoReturn

from app.core.errors import InvalidSettingsError
from app.core.mode_catalog import DEFAULT_MODE, MODE_NAMES, PLATFORMS

#: Mode names in display order, from the catalog (:data:`app.core.mode_catalog.CATALOG`).
MODES: tuple[str, ...] = MODE_NAMES
#: Devices a run can be placed on: JAX platform names (``--device``; :mod:`app.core.engine.device`).
DEVICES: tuple[str, ...] = PLATFORMS
DTYPES: tuple[str, ...] = ("float32", "bfloat16")


@dataclass(frozen=True)
class GenerationSettings:
    """What to generate and how.

    Attributes
    ----------
    mode : one of :data:`MODES` (the catalog's names).
    max_new_tokens : number of tokens to generate at most (>= 1).
    temperature : 0 means greedy (argmax); > 0 samples from ``softmax(logits / temperature)``.
    top_k : keep the k most likely tokens before sampling; 0 disables.
    top_p : nucleus sampling, keep the smallest set whose probability mass reaches ``top_p``; 1.0 disables.
    seed : seed of the JAX PRNG key (``jax.random.key(seed)``) used for sampling, in every mode.
    max_cache_len : static KV-cache length in tokens (prompt + generated), ``None`` = prompt bucket +
        ``max_new_tokens`` rounded up to a multiple of 64.
    capture_ir : capture jaxpr / StableHLO / HLO texts for the first compile of each step kind.
    stop_at_eos : stop at the model's end-of-sequence token (benchmarks turn it off to time a fixed
        number of decode steps).
    repetition_penalty : transformers' definition (``RepetitionPenaltyLogitsProcessor``, Keskar et al. 2019):
        the logit ``s`` of a token already in the prompt or the output becomes ``s / penalty`` (``s * penalty``
        when negative) before selection, inside the jitted step; 1.0 disables it.
    chat : format the prompt with the tokenizer's chat template (a user turn, the generation prompt);
        None = on for instruct models that have a template (:func:`app.core.engine.chat.is_instruct`).
    system_prompt : the system turn of a chat prompt ("" = none).
    """

    mode: str = DEFAULT_MODE
    max_new_tokens: int = 64
    temperature: float = 0.0
    top_k: int = 0
    top_p: float = 1.0
    seed: int = 0
    max_cache_len: int | None = None
    capture_ir: bool = True
    stop_at_eos: bool = True
    repetition_penalty: float = 1.0
    chat: bool | None = None
    system_prompt: str = ""

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0

    def validated(self) -> GenerationSettings:
        """Return ``self`` if every field is in range. Raises :class:`InvalidSettingsError` whose message names the
        field as the window and ``--help`` do ("Top-p", "KV cache"; issue 55: no attribute names such as
        ``max_cache_len``) with its limit and why; ``error.field`` is the attribute's name, for the window to put
        the message beside that field."""
        if self.mode not in MODES:
            _refuse("mode", f"Unknown mode {self.mode!r}: choose one of {', '.join(MODES)}.")
        if not isinstance(self.max_new_tokens, int) or self.max_new_tokens < 1:
            _refuse("max_new_tokens", f"Max new tokens must be a whole number >= 1 (a run makes one new token or "
                                      f"more), got {self.max_new_tokens!r}.")
        if not self.temperature >= 0.0:
            _refuse("temperature", f"Temperature must be >= 0 (0 = greedy), got {self.temperature!r}.")
        if not isinstance(self.top_k, int) or self.top_k < 0:
            _refuse("top_k", f"Top-k must be a whole number >= 0 (0 disables it), got {self.top_k!r}.")
        if not 0.0 < self.top_p <= 1.0:
            _refuse("top_p", f"Top-p must be in (0, 1]: it is a share of the probability mass (1 disables it), "
                             f"got {self.top_p!r}.")
        if self.max_cache_len is not None and (not isinstance(self.max_cache_len, int) or self.max_cache_len < 2):
            _refuse("max_cache_len", f"The KV cache must hold at least 2 positions (the prompt's last token and one "
                                     f"new token; leave it on auto to size it), got {self.max_cache_len!r}.")
        if not 0.0 < self.repetition_penalty <= 10.0:
            _refuse("repetition_penalty", f"Repetition penalty must be in (0, 10] (1.0 disables it; logits are "
                                          f"divided by it), got {self.repetition_penalty!r}.")
        if not isinstance(self.seed, int) or self.seed < 0:
            _refuse("seed", f"Seed must be a whole number >= 0, got {self.seed!r}.")
        return self

    def with_(self, **changes: Any) -> GenerationSettings:
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def refused(field: str, message: str) -> InvalidSettingsError:
    """An :class:`InvalidSettingsError` with ``message`` and ``error.field = field``, the attribute of
    :class:`GenerationSettings` refused (the window says the message beside that field)."""
    error = InvalidSettingsError(message)
    error.field = field  # type: ignore[attr-defined]
    return error


def _refuse(field: str, message: str) -> NoReturn:
    raise refused(field, message)
