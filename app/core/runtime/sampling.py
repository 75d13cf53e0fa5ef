"""Next-token selection in JAX: greedy, temperature, top-k and top-p (nucleus) sampling.

The same function runs inside the jitted prefill/decode steps and, jitted on its own, on the logits of
the ``torch`` and ``torchax-eager`` modes, so one seed gives the same tokens in every mode (up to the
last-ulp differences in logits between backends).

Top-p follows Holtzman et al. 2019, "The Curious Case of Neural Text Degeneration": keep the smallest
set of most likely tokens whose cumulative probability reaches ``top_p``.
"""

from __future__ import annotations

import functools

import jax  # noqa: TID253 - a heavy module: its users import it inside functions
import jax.numpy as jnp  # noqa: TID253 - a heavy module: its users import it inside functions


def select_token(logits, key, temperature, top_k, top_p, *, greedy: bool):
    """Pick the next token for each batch row.

    Parameters
    ----------
    logits : ``(batch, vocab)`` float array, the last position's logits.
    key : JAX PRNG key (typed key array or uint32[2]).
    temperature : scalar float32 > 0 (ignored when ``greedy``).
    top_k : scalar int32; 0 keeps every token.
    top_p : scalar float32 in (0, 1]; 1.0 keeps every token.
    greedy : static flag; ``True`` takes ``argmax`` and leaves ``key`` unchanged.

    Returns
    -------
    tokens : ``(batch,)`` int32.
    key : the key to use for the next step.
    """
    logits = logits.astype(jnp.float32)
    if greedy:
        return jnp.argmax(logits, axis=-1).astype(jnp.int32), key
    vocab = logits.shape[-1]
    logits = logits / jnp.maximum(temperature, 1e-6)
    sorted_logits = -jnp.sort(-logits, axis=-1)  # descending
    k = jnp.where(top_k > 0, jnp.minimum(top_k, vocab), vocab)
    ranks = jnp.arange(vocab)
    sorted_logits = jnp.where(ranks[None, :] < k, sorted_logits, -jnp.inf)
    probs = jax.nn.softmax(sorted_logits, axis=-1)
    mass_before = jnp.cumsum(probs, axis=-1) - probs
    keep = (mass_before < top_p) & (ranks[None, :] < k)
    threshold = jnp.min(jnp.where(keep, sorted_logits, jnp.inf), axis=-1, keepdims=True)
    masked = jnp.where(logits >= threshold, logits, -jnp.inf)
    key, sub = jax.random.split(key)
    return jax.random.categorical(sub, masked, axis=-1).astype(jnp.int32), key


@functools.lru_cache(maxsize=2)
def jitted_pick_token(greedy: bool):
    """:func:`pick_token` jitted on its own, for the modes whose model call is not jitted."""
    return jax.jit(functools.partial(pick_token, greedy=greedy))


def sampling_args(temperature: float, top_k: int, top_p: float, repetition_penalty: float = 1.0) -> tuple:
    """The traced scalar arguments of :func:`pick_token` (fixed dtypes, so changing them never recompiles):
    ``temperature, top_k, top_p, repetition_penalty``."""
    return (jnp.float32(temperature), jnp.int32(top_k), jnp.float32(top_p), jnp.float32(repetition_penalty))


def pick_token(logits, key, seen, temperature, top_k, top_p, penalty, *, greedy: bool):
    """:func:`apply_repetition_penalty`, then :func:`select_token`; marks the picked token as seen.

    ``logits`` ``(batch, vocab)``; ``seen`` ``(batch, vocab)`` bool. Returns ``(tokens (batch,) int32, key,
    seen)``. Runs inside the jitted steps and, jitted on its own, for the un-jitted modes."""
    logits = apply_repetition_penalty(logits.astype(jnp.float32), seen, penalty)
    token, key = select_token(logits, key, temperature, top_k, top_p, greedy=greedy)
    seen = seen.at[jnp.arange(seen.shape[0]), token].set(True)
    return token, key, seen


def seen_mask(token_ids: list[int], vocab: int):
    """``(1, vocab)`` bool numpy array, True at ``token_ids`` (ids outside the vocabulary ignored)."""
    import numpy as np

    seen = np.zeros((1, vocab), dtype=bool)
    ids = [i for i in token_ids if 0 <= i < vocab]
    seen[0, ids] = True
    return seen


def apply_repetition_penalty(logits, seen, penalty):
    """Penalize tokens already present in the prompt or the generated text (Keskar et al. 2019, CTRL).

    Same definition as transformers' ``RepetitionPenaltyLogitsProcessor``
    (transformers/generation/logits_process.py): a seen token's logit ``s`` becomes ``s * penalty`` if
    ``s < 0`` else ``s / penalty``; other logits are unchanged. ``penalty`` 1.0 is the identity (exactly),
    > 1 discourages repeats, < 1 encourages them. Pure ``jnp.where``: jit-friendly, no shape changes.

    Parameters
    ----------
    logits : ``(batch, vocab)`` float array, the last position's logits (before temperature).
    seen : ``(batch, vocab)`` bool array, True for token ids in the prompt or generated so far. Keep it in
        the loop state: ``seen.at[jnp.arange(batch), tokens].set(True)`` after each step.
    penalty : scalar float32 > 0 (traced, so changing it never recompiles).

    Returns
    -------
    ``(batch, vocab)`` array of ``logits``' dtype.
    """
    penalty = jnp.asarray(penalty, dtype=logits.dtype)
    penalized = jnp.where(logits < 0, logits * penalty, logits / penalty)
    return jnp.where(seen, penalized, logits)
